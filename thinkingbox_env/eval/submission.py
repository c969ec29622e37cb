"""A run's results in a versioned form a leaderboard can take (``thinkingbox submit prepare`` / ``validate``).

A run file holds everything a trial did (traces, diffs, timings) and rows of any schema; a
leaderboard needs less and needs it fixed: who was evaluated (the agent's model and endpoint, the
simulated user, the judge), on exactly which tasks (each task's content hash, the task set
versions, and one hash over them all), by which package version and when, and every task's trials
(outcome and verdict). :func:`prepare` builds that record from a run's rows, refusing rows of more
than one configuration; :func:`validate` checks one read back (its fields, its own hashes, and its
tasks against the tasks installed here), so two results are comparable exactly when their
``task_set.content_hash`` agree.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..version import __version__
from .metrics import is_unjudged, is_valid, row_outcome, summarize

FORMAT: Literal["thinkingbox-result"] = "thinkingbox-result"
FORMAT_VERSION: Literal[1] = 1

Outcome = Literal["pass", "fail", "unjudged", "system_error"]


class SubmissionError(ValueError):
    """Rows that cannot make one result, or a result that does not hold; the message names what is wrong."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TrialResult(_Strict):
    """One trial of a task: its outcome (``pass``, ``fail``, ``unjudged``, ``system_error``) and verdict."""

    trial: int = Field(ge=0)
    outcome: Outcome
    verdict: float | None = Field(default=None, ge=0.0, le=1.0)


class TaskResult(_Strict):
    """A task's content hash (its spec as graded) and its trials, in trial order."""

    task_hash: str = Field(min_length=16)
    task_set_version: int | None = None
    trials: list[TrialResult] = Field(min_length=1)


class TaskSet(_Strict):
    """Which tasks: the task set version of each domain, the number of tasks and one hash over every task's hash."""

    versions: dict[str, int | None]
    tasks: int = Field(ge=1)
    content_hash: str = Field(min_length=64, max_length=64)


class Result(_Strict):
    """A run as a leaderboard takes it (``format_version`` 1)."""

    format: Literal["thinkingbox-result"]
    format_version: Literal[1]
    created: str = Field(description="when the result was prepared, ISO 8601 UTC")
    package_version: str
    model: str | None = Field(description="the evaluated agent's model (None for a built-in agent such as the oracle)")
    endpoint: str | None = Field(description="the agent's endpoint (its base URL), None for a local agent")
    agent: dict[str, Any]
    user: dict[str, Any]
    judge: dict[str, Any] | None
    no_judge: bool = False
    task_set: TaskSet
    tasks: dict[str, TaskResult]
    summary: dict[str, Any]


def task_set_hash(task_hashes: dict[str, str]) -> str:
    """One SHA-256 over every task id and its content hash, in id order: equal exactly when the task sets are."""
    text = "".join(f"{task_id} {digest}\n" for task_id, digest in sorted(task_hashes.items()))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def run_task_set(rows: list[dict[str, Any]]) -> str | None:
    """The task set hash of a run's rows (None when a row has no ``task_hash``, as rows before schema 2)."""
    hashes = {r["task_id"]: r.get("task_hash") for r in rows}
    return task_set_hash(hashes) if hashes and all(hashes.values()) else None  # type: ignore[arg-type]


def _identity(config: dict[str, Any]) -> str:
    # what makes two rows one configuration: everything but the seed, which differs per trial on purpose
    return json.dumps({k: v for k, v in config.items() if k != "seed"}, sort_keys=True)


def prepare(rows: list[dict[str, Any]], now: dt.datetime | None = None) -> Result:
    """The result of one run's rows; refuses rows of several configurations, package versions or task versions."""
    rows = [r for r in rows if "task_id" in r]
    if not rows:
        raise SubmissionError("the run has no trial rows")
    configs = {_identity(r.get("config") or {}) for r in rows}
    if len(configs) > 1:
        raise SubmissionError(f"the rows hold {len(configs)} configurations (agent, user, judge or limits differ); "
                              "a result is one configuration: prepare each run file on its own")
    versions = {r.get("package_version") for r in rows}
    if len(versions) > 1 or None in versions:
        raise SubmissionError(f"the rows were written by package versions {sorted(map(str, versions))}; a result needs one")
    tasks: dict[str, TaskResult] = {}
    for r in sorted(rows, key=lambda r: (r["task_id"], r["trial"])):
        digest = r.get("task_hash")
        if not digest:
            raise SubmissionError(f"row {r['task_id']} trial {r['trial']} has no task_hash (a row before schema 2)")
        trial = TrialResult.model_validate({"trial": r["trial"], "outcome": row_outcome(r), "verdict": r.get("verdict")})
        entry = tasks.get(r["task_id"])
        if entry is None:
            tasks[r["task_id"]] = TaskResult(task_hash=digest, task_set_version=r.get("task_set_version"), trials=[trial])
        elif entry.task_hash != digest:
            raise SubmissionError(f"task {r['task_id']} was run in two versions (its task hashes differ); "
                                  "a result is over one task set")
        else:
            entry.trials.append(trial)
    config = json.loads(next(iter(configs)))
    agent = config.get("agent") or {}
    s = summarize(rows)
    summary = {"pass@1": s["pass@1"]["overall"], "pass_k": s.get("pass_k"), "trials_per_task": s.get("trials_per_task"),
               "pass_k_tasks_left_out": s.get("pass_k_tasks_left_out") or [],
               "trials": len(rows), "valid_trials": sum(1 for r in rows if is_valid(r) and not is_unjudged(r)),
               "unjudged": s["unjudged"]["count"], "system_errors": s["system_errors"]["count"]}
    when = (now or dt.datetime.now(dt.timezone.utc)).replace(microsecond=0).isoformat()
    return Result(format=FORMAT, format_version=FORMAT_VERSION, created=when, package_version=str(next(iter(versions))),
                  model=agent.get("model"), endpoint=agent.get("base_url"), agent=agent, user=config.get("user") or {},
                  judge=config.get("judge"), no_judge=bool(config.get("no_judge")),
                  task_set=TaskSet(versions={d: v for d, v in sorted({(t.split("/")[0], e.task_set_version)
                                                                          for t, e in tasks.items()})},
                                   tasks=len(tasks), content_hash=task_set_hash({t: e.task_hash for t, e in tasks.items()})),
                  tasks=tasks, summary=summary)


def load(data: Any) -> Result:
    """A result read back (a parsed JSON value); a field that does not hold is named by its path."""
    if not isinstance(data, dict):
        raise SubmissionError(f"a result is a JSON object, not {type(data).__name__}")
    if data.get("format") != FORMAT:
        raise SubmissionError(f"not a thinkingbox result: format is {data.get('format')!r}, expected {FORMAT!r}")
    if data.get("format_version") != FORMAT_VERSION:
        raise SubmissionError(f"result format_version {data.get('format_version')!r} is not one this package reads "
                              f"({FORMAT_VERSION}; package {__version__})")
    try:
        return Result.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'result'}: {e['msg']}" for e in exc.errors()[:10])
        raise SubmissionError(f"the result does not hold: {problems}") from exc


def check(result: Result, installed: dict[str, str | None] | None = None) -> list[str]:
    """What does not hold in ``result``: its own counts and hashes, and (given) its tasks against the installed ones.

    ``installed`` maps a task id to the content hash of the task installed here (None: not installed); a
    task whose hash differs was graded on another version of the task, so its trials are not comparable.
    """
    problems = []
    if result.task_set.tasks != len(result.tasks):
        problems.append(f"task_set.tasks is {result.task_set.tasks} but the result holds {len(result.tasks)} tasks")
    recomputed = task_set_hash({t: e.task_hash for t, e in result.tasks.items()})
    if recomputed != result.task_set.content_hash:
        problems.append(f"task_set.content_hash {result.task_set.content_hash[:12]}... is not the hash of its tasks "
                        f"({recomputed[:12]}...)")
    for task_id, entry in result.tasks.items():
        trials = [t.trial for t in entry.trials]
        if trials != sorted(set(trials)):
            problems.append(f"{task_id}: trials {trials} are not distinct and in order")
    if installed is not None:
        missing = sorted(t for t in result.tasks if installed.get(t) is None)
        changed = sorted(t for t in result.tasks if installed.get(t) not in (None, result.tasks[t].task_hash))
        if missing:
            problems.append(f"{len(missing)} task(s) are not installed here: {', '.join(missing[:10])}")
        if changed:
            problems.append(f"{len(changed)} task(s) differ from the ones installed here (another task set version): "
                            f"{', '.join(changed[:10])}")
    return problems
