"""``evaluate(...)``: one evaluation run as a library call, shared by the command line and training.

It selects tasks, opens (or resumes) the run file, runs the missing trials locally or
on Ray, writes one row per trial as it finishes, and returns a short summary. The
command line adds only its progress bar and messages (through ``on_row``); training
scripts call it directly instead of going through the command line's argument parser.
"""

from __future__ import annotations

import fnmatch
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..domain import domain_dirs
from ..registry import UnknownTaskError, list_tasks, load_task
from .runner import EvalConfig, RowWriter, RunFileError, plan_trials, prepare_resume, run_local, run_ray

log = logging.getLogger(__name__)

__all__ = ["EvalSummary", "evaluate", "select_tasks"]


def select_tasks(patterns: Sequence[str], split: str | None = None) -> list[str]:
    """Task ids from ids, domain names and glob patterns (``retail/ST030_*``); all tasks if none.

    ``split`` keeps only the tasks of that split (``test`` or ``train``).
    """
    every = list_tasks()
    chosen: list[str] = []
    if not patterns:
        chosen = list(every)
    for pat in patterns:
        if pat in domain_dirs():
            matched = [t for t in every if t.startswith(pat + "/")]
        elif any(ch in pat for ch in "*?["):
            matched = fnmatch.filter(every, pat)
        else:
            known = domain_dirs()
            head = pat.split("/", 1)[0]
            if head not in known:
                what = f"unknown domain '{head}'" if "/" in pat else f"'{pat}' is neither a domain nor a task id"
                raise UnknownTaskError(f"{what}; the domains are {', '.join(known)} (thinkingbox list --domains), "
                                       "and task ids look like 'retail/ST030_001'")
            load_task(pat)  # raises with suggestions when unknown
            matched = [pat]
        if not matched:
            raise UnknownTaskError(f"no task matches '{pat}'")
        chosen += [t for t in matched if t not in chosen]
    if split is not None:
        if split not in ("test", "train"):
            raise ValueError(f"split must be 'test' or 'train', got {split!r}")
        allowed = set(list_tasks(split=split))
        chosen = [t for t in chosen if t in allowed]
    return chosen


@dataclass
class EvalSummary:
    """What one ``evaluate`` call did. ``pass_rate`` is over this call's valid trials (system errors left out)."""

    output: Path
    planned: int
    kept: int
    passed: int = 0
    valid: int = 0
    system_errors: int = 0
    rows: list[dict[str, Any]] = field(default_factory=list, repr=False)

    @property
    def pass_rate(self) -> float:
        return self.passed / self.valid if self.valid else 0.0


def evaluate(
    tasks: Iterable[str],
    config: EvalConfig | None = None,
    *,
    out: str | Path,
    trials: int = 1,
    resume: bool = False,
    concurrency: int = 1,
    ray: bool = False,
    ray_address: str | None = None,
    on_row: Callable[[dict[str, Any]], None] | None = None,
    on_start: Callable[[EvalSummary], None] | None = None,
    keep_rows: bool = False,
) -> EvalSummary:
    """Run ``trials`` trials of every task (ids, as :func:`select_tasks` returns them) into the run file ``out``.

    An existing, non-empty ``out`` is refused unless ``resume``; with ``resume`` its good
    rows are kept and only the missing (task, trial) pairs run, and a file written with
    another configuration is refused (:class:`RunFileError`). ``on_row`` sees every row
    right after it is written, ``on_start`` the summary once the plan is known (rows kept, trials to
    run); ``keep_rows`` also returns them in the summary.
    """
    config = config or EvalConfig()
    task_ids = list(tasks)
    if not task_ids:
        raise ValueError("no tasks to evaluate")
    if trials < 1:
        raise ValueError(f"trials must be >= 1, got {trials}")
    patterns = [t for t in task_ids if not isinstance(t, str) or any(ch in t for ch in "*?[") or "/" not in t]
    if patterns:
        raise UnknownTaskError(f"not task ids: {patterns[:5]}{' ...' if len(patterns) > 5 else ''}; "
                               "resolve ids, domains and globs with select_tasks() first")
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    done: set[tuple[str, int]] = set()
    if path.exists() and path.stat().st_size > 0:
        if not resume:
            raise RunFileError(f"{path} exists; pass resume=True (--resume) to complete it, or choose another file")
        done = prepare_resume(path, config)
    plan = plan_trials(task_ids, trials, done)
    summary = EvalSummary(output=path, planned=len(plan), kept=len(done))
    log.info("evaluating %d tasks x %d trials into %s (%d rows kept, %d to run)", len(task_ids), trials, path, len(done), len(plan))
    if on_start is not None:
        on_start(summary)
    writer = RowWriter(path)

    def record(row: dict[str, Any]) -> None:
        writer.write(row)
        if row["status"] == "ok":
            summary.valid += 1
            summary.passed += row["verdict"] == 1.0
        else:
            summary.system_errors += 1
        if keep_rows:
            summary.rows.append(row)
        if on_row is not None:
            on_row(row)

    try:
        if ray or ray_address:
            run_ray(config, plan, record, address=ray_address, concurrency=concurrency)
        else:
            run_local(config, plan, record, concurrency=concurrency)
    finally:
        writer.close()
    return summary
