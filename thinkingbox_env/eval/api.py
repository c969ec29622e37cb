"""``evaluate(...)``: one evaluation run as a library call, shared by the command line and training.

It selects tasks, opens (or resumes) the run file, runs the missing trials locally or
on Ray, writes one row per trial as it finishes, and returns a short summary. The
command line adds only its signal handling, progress bar and messages (through
``control``, ``on_start`` and ``on_row``) and maps the summary to an exit code; training
scripts call it directly instead of going through the command line's argument parser.
"""

from __future__ import annotations

import fnmatch
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..agents.registry import AGENTS
from ..contracts.records import EvalRow
from ..tasks.domain import domain_dirs
from ..tasks.lookup import UnknownTaskError, list_tasks, load_task, split_task_version
from .config import EvalConfig, check_config
from .context_fit import ON_OVERFLOW, ContextFit, check_context, compact_savings
from .executors import RunControl, plan_trials, run_local, run_ray
from .preflight import PreflightError, preflight, preflight_roles, resolve_agent_model
from .run_files import RowWriter, RunFileError, RunLock, prepare_resume

log = logging.getLogger(__name__)

__all__ = ["ContextTooShortError", "EvalSummary", "PreflightError", "RunControl", "RunFileError", "evaluate", "select_tasks"]


def select_tasks(patterns: Sequence[str], split: str | None = None) -> list[str]:
    """Task ids from ids, domain names and glob patterns (``retail/ST030_*``); all tasks if none.

    ``split`` keeps only the tasks of that split (``test`` or ``train``).
    """
    every = list_tasks()
    chosen: list[str] = []
    if not patterns:
        chosen = list(every)
    for pat in patterns:
        if split_task_version(pat)[1] is not None:
            matched = _select_versioned(pat)
        elif pat in domain_dirs():
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


def _select_versioned(pattern: str) -> list[str]:
    """``retail@v2``, ``retail/ST030_*@v2`` or ``retail/ST030_001@v2``: tasks of one task-set version of a domain."""
    base, version = split_task_version(pattern)
    domain = base.split("/", 1)[0]
    if domain not in domain_dirs():
        raise UnknownTaskError(f"unknown domain '{domain}'; the domains are {', '.join(domain_dirs())}")
    assert version is not None
    ids = list_tasks(domain, task_set_version=version)
    if base == domain:
        return ids
    plain = {split_task_version(t)[0]: t for t in ids}
    if any(ch in base for ch in "*?["):
        return [plain[t] for t in fnmatch.filter(list(plain), base)]
    load_task(pattern)  # raises with suggestions when unknown
    return [plain.get(base, pattern)]


@dataclass
class EvalSummary:
    """What one ``evaluate`` call did. ``pass_rate`` is over this call's judged trials (system errors and unjudged left out).

    ``stop_reason`` tells a caller why the run ended early, so it can choose what to say
    and which exit code to use: ``None`` (every planned trial ran), ``"errors"`` (too many
    system errors in a row; ``first_error`` is the first of them), or whatever the caller
    passed to :meth:`RunControl.stop` (the command line passes the signal's name).
    """

    output: Path
    planned: int
    kept: int
    total: int = 0
    passed: int = 0
    valid: int = 0
    system_errors: int = 0
    unjudged: int = 0  # valid trials whose only open checks are unevaluated rubric questions (outside pass_rate)
    judge_unparsed: int = 0  # judge answers that did not parse (each left its check unjudged)
    unverified: int = 0  # valid trials with a dialogue check the reader could not decide (inside pass_rate)
    # the openings measured against the served context before the run (None: not measured; see context_note)
    context: ContextFit | None = None
    context_note: str | None = None  # why the openings were not measured, when they were not
    skipped: list[str] = field(default_factory=list)  # tasks left out because their opening cannot fit (on_overflow="skip")
    # with compact tool schemas: per domain, its longest opening's characters (and tokens, where measured), full and compact
    compact_savings: dict[str, dict[str, Any]] = field(default_factory=dict)
    first_error: dict[str, Any] | None = None
    stop_reason: str | None = None
    rows: list[EvalRow] = field(default_factory=list, repr=False)

    @property
    def judged(self) -> int:
        """Valid trials with a pass or a fail: the denominator of ``pass_rate``."""
        return self.valid - self.unjudged

    @property
    def pass_rate(self) -> float:
        return self.passed / self.judged if self.judged else 0.0

    @property
    def written(self) -> int:
        """Rows this call wrote (valid or not)."""
        return self.valid + self.system_errors

    @property
    def saved(self) -> int:
        """Rows the run file holds now: those kept from before and those written."""
        return self.kept + self.written


class ContextTooShortError(PreflightError):
    """Selected tasks cannot fit their opening in the agent model's served context; the message names them and the figures."""

    def __init__(self, fit: ContextFit):
        super().__init__(fit.describe())
        self.fit = fit


@dataclass
class _Measured:
    """What the context check found, for the summary."""

    fit: ContextFit | None = None
    note: str | None = None
    skipped: list[str] = field(default_factory=list)
    savings: dict[str, dict[str, Any]] = field(default_factory=dict)

    def check(self, config: EvalConfig, task_ids: list[str], context_length: int | None, on_overflow: str) -> list[str]:
        """The tasks to run: all, or without those that cannot fit (``skip``); raises for ``stop`` when some cannot."""
        self.fit = check_context(config, task_ids, context_length)
        if self.fit is None:
            self.note = ("the agent endpoint does not state its context, so the openings were not measured against it; "
                         "pass --context-length N to measure them")
            if config.compact_tools:
                self.savings = compact_savings(config, task_ids)
            return task_ids
        self.savings = self.fit.savings
        bad = {o.task_id for o in self.fit.overflowing}
        if not bad or on_overflow == "run":
            return task_ids
        if on_overflow == "stop" or len(bad) == len(task_ids):
            raise ContextTooShortError(self.fit)
        self.skipped = [t for t in task_ids if t in bad]
        return [t for t in task_ids if t not in bad]


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
    on_row: Callable[[EvalRow], None] | None = None,
    on_start: Callable[[EvalSummary], None] | None = None,
    keep_rows: bool = False,
    control: RunControl | None = None,
    check_endpoint: bool = False,
    check_tools: bool = True,
    context_length: int | None = None,
    on_overflow: str = "stop",
    label: str | None = None,
) -> EvalSummary:
    """Run ``trials`` trials of every task (ids, as :func:`select_tasks` returns them) into the run file ``out``.

    The run file is locked (:class:`RunLock`) before anything reads it, so a second writer
    or a resume under a running writer is refused. An existing, non-empty ``out`` is
    refused unless ``resume``; with ``resume`` its good rows are kept and only the missing
    (task, trial) pairs run, and a file written with another configuration is refused
    (:class:`RunFileError`). For the ``openai`` agent without a model, the only model the
    endpoint serves is used; ``check_endpoint`` also sends one test request first, so a
    wrong model or a dead server fails once (:class:`PreflightError`) instead of once per trial.
    That request carries a trivial tool and needs it, unless ``check_tools`` is False: an
    endpoint that returns no tool call is refused too (``ToolsIgnoredError``, a ``PreflightError``).
    Then each task's opening is measured against the served context (the server's own
    figure, or ``context_length``; :mod:`.context_fit`): tasks whose opening cannot fit with
    the answer's token budget are refused (``ContextTooShortError`` naming them and the
    figures) when ``on_overflow`` is ``"stop"``, left out (``summary.skipped``) when it is
    ``"skip"``, and run (they end as ``context_overflow`` failures) when it is ``"run"``.

    ``control`` stops the run cleanly (a signal handler calls ``control.stop``, or its
    ``max_consecutive_errors`` is reached): nothing more is launched, finished rows are all
    kept, and the summary's ``stop_reason`` says why. A ``KeyboardInterrupt`` during the
    run is treated as ``control.stop("SIGINT")``. ``on_row`` sees every row (an :class:`EvalRow`) right after it
    is written, ``on_start`` the summary once the plan is known (rows kept, trials to run);
    ``keep_rows`` also returns the rows in the summary; ``label`` names the run in every row.
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

    def refuse_existing() -> None:
        if path.exists() and path.stat().st_size > 0 and not resume:
            raise RunFileError(f"{path} exists; pass resume=True (--resume) to complete it, or choose another file")

    refuse_existing()
    # the endpoint is asked before the lock is taken, so a dead or refusing endpoint leaves no lock file behind
    check_config(config)  # an unknown backend or a refused option is named before anything is written
    if on_overflow not in ON_OVERFLOW:
        raise ValueError(f"on_overflow must be one of {', '.join(ON_OVERFLOW)}, got {on_overflow!r}")
    if context_length is not None and (isinstance(context_length, bool) or not isinstance(context_length, int)
                                       or context_length < 1):
        raise ValueError(f"context_length must be a positive number of tokens, got {context_length!r}")
    measured = _Measured()
    if AGENTS.get(config.agent).capabilities.needs_endpoint:
        config.agent_endpoint.model = resolve_agent_model(config.agent_endpoint)
        if check_endpoint:
            preflight(config, check_tools=check_tools)
            task_ids = measured.check(config, task_ids, context_length, on_overflow)
    if check_endpoint:
        preflight_roles(config)  # the user's, judge's and reader's endpoints, whatever the agent
    lock = RunLock(path)  # before anything reads the file: a resume must not rewrite it under another writer
    path = lock.real_path  # a resume through a symlink rewrites the file it names, and leaves the link a link
    try:
        done: set[tuple[str, int]] = set()
        refuse_existing()  # again under the lock: another run may have started meanwhile
        if path.exists() and path.stat().st_size > 0:
            done = prepare_resume(path, config)
    except BaseException:
        lock.release()
        raise
    plan = plan_trials(task_ids, trials, done)
    summary = EvalSummary(output=path, planned=len(plan), kept=len(done), total=len(task_ids) * trials,
                          context=measured.fit, context_note=measured.note, skipped=measured.skipped,
                          compact_savings=measured.savings)
    log.info("evaluating %d tasks x %d trials into %s (%d rows kept, %d to run)", len(task_ids), trials, path, len(done), len(plan))
    control = control or RunControl()
    writer = RowWriter(path, lock)

    def record(row: EvalRow) -> None:
        if label:
            row.label = label
        writer.write(row)
        if row.status == "ok":
            summary.valid += 1
            summary.passed += row.verdict == 1.0
            summary.unjudged += row.outcome == "unjudged"
            summary.unverified += bool(row.unverified)
            summary.judge_unparsed += sum(1 for c in row.judge_calls if c.get("ok") and c.get("parsed") is False)
        else:
            summary.system_errors += 1
            summary.first_error = summary.first_error or row.system_error
        if keep_rows:
            summary.rows.append(row)
        if on_row is not None:
            on_row(row)

    try:
        if on_start is not None:
            on_start(summary)
        if ray or ray_address:
            run_ray(config, plan, record, address=ray_address, concurrency=concurrency, control=control)
        else:
            run_local(config, plan, record, concurrency=concurrency, control=control)
    except KeyboardInterrupt:
        control.stop("SIGINT")
    finally:
        writer.close()
        lock.release()
    if control.stopped:
        summary.stop_reason = control.reason
        if control.reason == "errors":
            summary.first_error = control.first_error or summary.first_error
    log.info("%d trials written (%d kept) -> %s; pass@1 %.3f, system errors %d%s", summary.written, summary.kept, path,
             summary.pass_rate, summary.system_errors, f"; stopped: {summary.stop_reason}" if summary.stop_reason else "")
    return summary
