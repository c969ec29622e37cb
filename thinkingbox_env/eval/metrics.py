"""Metrics over run rows: pass@1, pass@k / pass^k, bootstrap intervals, failure shares, costs.

Everything here is a pure function of the rows that ``thinkingbox eval`` writes,
so a run can be re-aggregated at any time. The estimators follow the paper's
appendix C.5: for a task with ``n`` trials and ``c`` successes,

- pass@k (unbiased) = 1 - C(n-c, k) / C(n, k); plug-in: 1 - (1 - c/n)^k;
- pass^k (unbiased) = C(c, k) / C(n, k); plug-in: (c/n)^k,

averaged over tasks. pass@k and pass^k need the same ``n`` for every task, and
are refused otherwise. Intervals are 95% percentile intervals of a task-cluster
bootstrap: tasks are resampled with replacement, each keeping all its trials.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..checks import FAILURE_CATEGORIES, trial_outcome
from ..contracts.events import is_message, is_tool_call, tool_calls
from ..users import DONE_MARKER

BOOTSTRAP_SAMPLES = 2000
BOOTSTRAP_SEED = 0


class UnequalTrialsError(ValueError):
    """pass@k and pass^k are only defined here when every task has the same number of trials."""


# --------------------------------------------------------------------------- estimators


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased probability that at least one of k trials drawn without replacement passes."""
    if not 0 < k <= n:
        raise ValueError(f"k must be in 1..{n}, got {k}")
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_at_k_plugin(n: int, c: int, k: int) -> float:
    """The plug-in estimate ``1 - (1 - c/n)^k``, biased upward for small n; kept to compare with the unbiased estimator."""
    return 1.0 - (1.0 - c / n) ** k


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased probability that all of k trials pass (zero whenever c < k)."""
    if not 0 < k <= n:
        raise ValueError(f"k must be in 1..{n}, got {k}")
    return math.comb(c, k) / math.comb(n, k)


def pass_hat_k_plugin(n: int, c: int, k: int) -> float:
    """The plug-in estimate (c/n)^k, which stays above zero when 0 < c < k."""
    return (c / n) ** k


def bootstrap_interval(successes: np.ndarray, trials: np.ndarray, samples: int = BOOTSTRAP_SAMPLES,
                       seed: int = BOOTSTRAP_SEED, level: float = 0.95) -> tuple[float, float]:
    """Percentile interval of the micro-averaged pass rate, resampling tasks (clusters) with replacement."""
    successes = np.asarray(successes, dtype=float)
    trials = np.asarray(trials, dtype=float)
    if len(trials) == 0 or trials.sum() == 0:
        return (float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(trials), size=(samples, len(trials)))
    rates = successes[idx].sum(axis=1) / trials[idx].sum(axis=1)
    tail = (1.0 - level) / 2 * 100
    lo, hi = np.percentile(rates, [tail, 100 - tail])
    return float(lo), float(hi)


def bootstrap_mean_interval(values: np.ndarray, samples: int = BOOTSTRAP_SAMPLES, seed: int = BOOTSTRAP_SEED,
                            level: float = 0.95) -> tuple[float, float]:
    """Percentile interval of a mean over tasks (used for paired per-task differences)."""
    values = np.asarray(values, dtype=float)
    if len(values) == 0:
        return (float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, len(values), size=(samples, len(values)))].mean(axis=1)
    tail = (1.0 - level) / 2 * 100
    lo, hi = np.percentile(means, [tail, 100 - tail])
    return float(lo), float(hi)


# --------------------------------------------------------------------------- outcomes


@dataclass
class TaskOutcome:
    """A task's counted trials in order, from which every pass@k and pass^k of the task is derived."""
    task_id: str
    domain: str
    passes: list[bool]  # in trial order

    @property
    def n(self) -> int:
        return len(self.passes)

    @property
    def c(self) -> int:
        return sum(self.passes)


def is_valid(row: dict[str, Any]) -> bool:
    """Whether a row measures the agent; system errors measure the infrastructure and are left out of the rates by default."""
    return row.get("status") == "ok"


def row_outcome(row: dict[str, Any]) -> str:
    """``pass``, ``fail``, ``unjudged`` or ``system_error``; rows written before the ``outcome`` field derive it."""
    if not is_valid(row):
        return "system_error"
    return row.get("outcome") or trial_outcome(row.get("verdict"), row.get("check_details"))


def is_unjudged(row: dict[str, Any]) -> bool:
    """A valid trial whose verdict is 0 only because rubric questions went unevaluated: counted apart, like system errors."""
    return row_outcome(row) == "unjudged"


def task_outcomes(rows: Iterable[dict[str, Any]], system_errors_as_failures: bool = False) -> dict[str, TaskOutcome]:
    """Per task, the pass / fail of each counted trial. System errors are left out unless asked; unjudged trials always."""
    out: dict[str, TaskOutcome] = {}
    for row in sorted(rows, key=lambda r: (r["task_id"], r["trial"])):
        if is_unjudged(row) or (not is_valid(row) and not system_errors_as_failures):
            continue
        o = out.setdefault(row["task_id"], TaskOutcome(row["task_id"], row.get("domain", row["task_id"].split("/")[0]), []))
        o.passes.append(is_valid(row) and row.get("verdict") == 1.0)
    return out


def trials_per_task(outcomes: dict[str, TaskOutcome]) -> int:
    """The common number of trials; raises ``UnequalTrialsError`` naming the counts when they differ."""
    counts = Counter(o.n for o in outcomes.values())
    if len(counts) != 1:
        shown = ", ".join(f"{n} trials: {m} tasks" for n, m in sorted(counts.items()))
        raise UnequalTrialsError(
            f"pass@k and pass^k need the same number of trials for every task, but the counts differ ({shown}); "
            "complete the run with `thinkingbox eval --resume`, or count system errors as failures "
            "(unjudged trials are never counted: run with a judge to count them)"
        )
    return next(iter(counts))


def pass_k_table(outcomes: dict[str, TaskOutcome], ks: Iterable[int] | None = None) -> dict[str, dict[int, float]]:
    """Mean over tasks of every estimator, for k = 1..n (or the given ks)."""
    n = trials_per_task(outcomes)
    ks = list(ks) if ks is not None else list(range(1, n + 1))
    table: dict[str, dict[int, float]] = {"pass@k": {}, "pass@k_plugin": {}, "pass^k": {}, "pass^k_plugin": {}}
    for k in ks:
        os_ = list(outcomes.values())
        table["pass@k"][k] = float(np.mean([pass_at_k(n, o.c, k) for o in os_]))
        table["pass@k_plugin"][k] = float(np.mean([pass_at_k_plugin(n, o.c, k) for o in os_]))
        table["pass^k"][k] = float(np.mean([pass_hat_k(n, o.c, k) for o in os_]))
        table["pass^k_plugin"][k] = float(np.mean([pass_hat_k_plugin(n, o.c, k) for o in os_]))
    return table


def pass_at_1(outcomes: Iterable[TaskOutcome]) -> dict[str, Any]:
    """Micro-averaged pass@1 (successes over trials) with its task-cluster bootstrap interval."""
    os_ = list(outcomes)
    c = np.array([o.c for o in os_], dtype=float)
    n = np.array([o.n for o in os_], dtype=float)
    value = float(c.sum() / n.sum()) if n.sum() else float("nan")
    lo, hi = bootstrap_interval(c, n)
    return {"value": value, "ci95": [lo, hi], "trials": int(n.sum()), "tasks": len(os_)}


# --------------------------------------------------------------------------- trace-derived measures

_KEY_RE = re.compile(r"\[[^\]]*\]|#\d+$")


def check_family(name: str) -> str:
    """A check name without the row key and the insert ordinal, so it can be pooled across tasks."""
    return _KEY_RE.sub("", name)


def row_messages(row: dict[str, Any]) -> list[dict[str, Any]]:
    """The chat messages of a trial, as the agent saw them: stored in schema 1 rows, rebuilt from the trace since.

    Every message is a trace event; a tool message takes its ``tool_call_id`` and
    ``name`` from the tool call recorded just before it.
    """
    if isinstance(row.get("messages"), list):
        return row["messages"]
    out: list[dict[str, Any]] = []
    last_call: Mapping[str, Any] | None = None
    for event in row.get("trace") or []:
        if is_tool_call(event):
            last_call = event
        elif is_message(event):
            message = {k: v for k, v in event.items()
                       if k not in ("type", "source", "model_call", "usage", "reasoning", "content_ref")}
            if event.get("role") == "tool" and last_call is not None:
                message = {"role": "tool", "tool_call_id": last_call.get("id"), "name": last_call.get("name"),
                           **{k: v for k, v in message.items() if k != "role"}}
                last_call = None
            out.append(message)
    return out


def final_agent_text(row: dict[str, Any]) -> str:
    """The agent's last plain message in a row, what a reader or a judge sees as its answer to the customer."""
    for m in reversed(row_messages(row)):
        if m.get("role") == "assistant" and m.get("content") and not m.get("tool_calls"):
            return m["content"]
    return ""


def weak_evaluator_signals(row: dict[str, Any]) -> dict[str, bool]:
    """The completion proxies of the paper's Table 12 and the diff evidence, for one trial."""
    text = final_agent_text(row)
    clean = bool(text.replace(DONE_MARKER, "").strip()) and DONE_MARKER in text and "?" not in text
    calls = tool_calls(row.get("trace") or [])
    wrote = any(c.get("ok") and c.get("writes") for c in calls)
    last_ok = bool(calls) and bool(calls[-1].get("ok"))
    wrong = missing = extra = False
    for d in row.get("check_details") or []:
        if d["passed"] is not False:
            continue
        if d["kind"] == "no_collateral":
            extra = True
        elif d["kind"] == "effect":
            detail = d.get("detail", "")
            if detail.startswith("fields differ: "):
                try:
                    fields = json.loads(detail[len("fields differ: "):])
                except json.JSONDecodeError:
                    fields = {}
                if fields and all(f.get("actual") == "<unchanged>" for f in fields.values()):
                    missing = True  # the row was never updated
                else:
                    wrong = True
            elif "closest created row differs" in detail:
                wrong = True
            else:
                missing = True
    return {"clean_termination": clean, "clean_and_write": clean and wrote, "clean_write_no_error": clean and wrote and last_ok,
            "wrong_field_value": wrong, "missing_effect": missing, "extra_effect": extra}


def user_reply_summary(rows: Iterable[dict[str, Any]]) -> dict[str, int]:
    """The simulated user's flagged replies over the trials that checked them (an LLM user's): quoted its prompt, cut at the cap.

    A run where many replies are flagged measures its user model as much as the agent.
    """
    checked = [r["user_replies"] for r in rows if isinstance(r.get("user_replies"), dict)]
    return {"trials": len(checked), "replies": sum(int(c.get("replies", 0)) for c in checked),
            "quoted_prompt": sum(len(c.get("quoted_prompt") or []) for c in checked),
            "cut": sum(len(c.get("cut") or []) for c in checked),
            "trials_flagged": sum(1 for c in checked if c.get("quoted_prompt") or c.get("cut"))}


def trial_cost(usage: dict[str, Any], prices: dict[str, float]) -> float:
    """Dollars for one trial: uncached input, cached input and output tokens at per-million rates."""
    cached = usage.get("cached", 0)
    uncached = usage.get("input", 0) - cached
    return (uncached * prices["input"] + cached * prices.get("cached", prices["input"]) + usage.get("output", 0) * prices["output"]) / 1e6


# --------------------------------------------------------------------------- the summary


def row_unverified(row: dict[str, Any]) -> list[str]:
    """The dialogue checks of a row the reader could not decide (from ``check_details`` where the field is absent)."""
    if row.get("unverified") is not None:
        return list(row["unverified"])
    return [d["name"] for d in row.get("check_details") or [] if d.get("undetermined")]


def unverified_summary(valid: list[dict[str, Any]]) -> dict[str, Any]:
    """How much of the score rests on text no reader decided: trials with an undetermined dialogue check.

    Counted apart like unjudged rubric tasks, but not left out of the rates: such a trial's
    verdict is what the checks that were decided say (unless the run was strict). ``passed``
    is the number of passes among them, the share of the pass rate a user should read as
    "dialogue unverified".
    """
    marked = [r for r in valid if row_unverified(r)]
    passed = [r for r in marked if row_outcome(r) == "pass"]
    checks = Counter(check_family(n) for r in marked for n in row_unverified(r))
    by_domain: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in valid:
        by_domain[r["domain"]][1] += 1
        by_domain[r["domain"]][0] += bool(row_unverified(r))
    return {
        "count": len(marked),
        "share": len(marked) / len(valid) if valid else 0.0,
        "passed": len(passed),
        "passes_share": len(passed) / max(1, sum(1 for r in valid if row_outcome(r) == "pass")),
        "checks": dict(checks.most_common()),
        "by_domain": {d: {"count": c, "trials": n} for d, (c, n) in sorted(by_domain.items())},
        "strict": any((r.get("config") or {}).get("strict_dialogue") for r in valid),
    }


def summarize(rows: list[dict[str, Any]], prices: dict[str, float] | None = None,
              system_errors_as_failures: bool = False) -> dict[str, Any]:
    """Every metric of ``thinkingbox agg`` as one JSON-ready dict."""
    unjudged = [r for r in rows if is_unjudged(r)]
    valid = [r for r in rows if is_valid(r) and not is_unjudged(r)]
    errors = [r for r in rows if not is_valid(r)]
    counted = rows if system_errors_as_failures else valid
    outcomes = task_outcomes(rows, system_errors_as_failures)
    by_domain: dict[str, list[TaskOutcome]] = defaultdict(list)
    for o in outcomes.values():
        by_domain[o.domain].append(o)

    summary: dict[str, Any] = {
        "rows": len(rows),
        "valid_trials": len(valid),
        "tasks": len(outcomes),
        "system_errors": {
            "count": len(errors),
            "counted_as_failures": system_errors_as_failures,
            "by_source": dict(Counter((r.get("system_error") or {}).get("where", "unknown") for r in errors)),
            "tasks": sorted({r["task_id"] for r in errors}),
        },
        "unjudged": {
            "count": len(unjudged),
            "tasks": sorted({r["task_id"] for r in unjudged}),
            "no_judge": any((r.get("config") or {}).get("no_judge") for r in unjudged),
        },
        "judge": judge_summary(rows),
        "user_replies": user_reply_summary(rows),
        "unverified": unverified_summary(valid),
        "pass@1": {"overall": pass_at_1(outcomes.values()),
                   "by_domain": {d: pass_at_1(os_) for d, os_ in sorted(by_domain.items())}},
    }
    # pass@k and pass^k over the tasks whose every trial was judged: a task with an unjudged trial (a rubric without a
    # judge) counts fewer trials than the others, which would refuse the whole table; it is left out instead, and named
    partly_unjudged = sorted({r["task_id"] for r in unjudged} & set(outcomes))
    reliable = {t: o for t, o in outcomes.items() if t not in partly_unjudged}
    summary["pass_k_tasks_left_out"] = partly_unjudged
    try:
        n = trials_per_task(reliable) if reliable else 0
        summary["trials_per_task"] = n
        summary["pass_k"] = {name: {str(k): v for k, v in vals.items()} for name, vals in pass_k_table(reliable).items()} if n else {}
        summary["tasks_never_passed"] = sum(1 for o in outcomes.values() if o.c == 0)
        summary["tasks_always_passed"] = sum(1 for o in outcomes.values() if o.c == o.n)
    except UnequalTrialsError as exc:
        summary["trials_per_task"] = None
        summary["pass_k"] = None
        summary["pass_k_refused"] = str(exc)
        summary["tasks_never_passed"] = sum(1 for o in outcomes.values() if o.c == 0)
        summary["tasks_always_passed"] = sum(1 for o in outcomes.values() if o.c == o.n)

    failed = [r for r in valid if row_outcome(r) == "fail"]
    cats = Counter(r.get("failure_category") or "none" for r in failed)
    cats_by_domain: dict[str, Counter] = defaultdict(Counter)
    for r in failed:
        cats_by_domain[r["domain"]][r.get("failure_category") or "none"] += 1
    def shares(cnt: Counter) -> dict[str, float]:
        total = sum(cnt.values())
        names = list(FAILURE_CATEGORIES) + (["none"] if cnt.get("none") else [])  # none: a check with no category
        return {c: cnt[c] / total if total else 0.0 for c in names}

    summary["failure_categories"] = {
        "failed_trials": len(failed),
        "counts": dict(cats),
        "overall": shares(cats),
        "by_domain": {d: shares(cnt) for d, cnt in sorted(cats_by_domain.items())},
    }

    check_pass: Counter = Counter()
    check_total: Counter = Counter()
    check_open: Counter = Counter()
    check_undecided: Counter = Counter()
    for r in valid + unjudged:
        for d in r.get("check_details") or []:
            fam = check_family(d["name"])
            if d["passed"] is None:  # not evaluated or undetermined: neither passed nor failed, shown apart
                (check_undecided if d.get("undetermined") else check_open)[fam] += 1
                continue
            check_total[fam] += 1
            check_pass[fam] += d["passed"] is True
    summary["checks"] = {k: {"passed": check_pass[k], "total": check_total[k], "unevaluated": check_open[k],
                             "rate": check_pass[k] / check_total[k] if check_total[k] else float("nan"),
                             **({"undetermined": check_undecided[k]} if check_undecided[k] else {})}
                         for k in sorted(set(check_total) | set(check_open) | set(check_undecided))}
    # the names a reader acts on: tasks no trial solved, and the checks that fail most (with where they fail)
    summary["tasks_never_passed_ids"] = sorted(t for t, o in outcomes.items() if o.n and o.c == 0)
    check_failed: Counter = Counter()
    check_tasks: dict[str, set[str]] = defaultdict(set)
    for r in valid:
        for d in r.get("check_details") or []:
            if d["passed"] is False:
                check_failed[d["name"]] += 1
                check_tasks[d["name"]].add(r["task_id"])
    summary["failing_checks"] = [{"name": name, "failed": count, "tasks": sorted(check_tasks[name])}
                                 for name, count in check_failed.most_common()]

    def mean(values: list[float]) -> float:
        return float(np.mean(values)) if values else float("nan")

    counts = [r.get("counts") or {} for r in counted]
    summary["per_trial"] = {k: mean([c.get(k, 0) for c in counts]) for k in ("messages", "tool_calls", "write_calls", "tool_errors")}

    def token_stats(rs: list[dict[str, Any]]) -> dict[str, float]:
        with_tokens = [r for r in rs if (r.get("usage") or {}).get("model_calls")]
        turns = sum(r["usage"]["model_calls"] for r in with_tokens)
        tokens = sum(r["usage"]["input"] + r["usage"]["output"] for r in with_tokens)
        return {"tokens_per_turn": tokens / turns if turns else float("nan"),
                "turns_per_trial": turns / len(with_tokens) if with_tokens else float("nan"),
                "trials_with_tokens": len(with_tokens)}

    summary["tokens"] = {"overall": token_stats(counted),
                         "by_domain": {d: token_stats([r for r in counted if r["domain"] == d]) for d in sorted(by_domain)}}

    signals = [weak_evaluator_signals(r) for r in failed]
    summary["weak_evaluator"] = {"failed_trials": len(failed),
                                 **{k: (sum(s[k] for s in signals) / len(signals) if signals else 0.0)
                                    for k in ("clean_termination", "clean_and_write", "clean_write_no_error",
                                              "wrong_field_value", "missing_effect", "extra_effect")}}

    if prices:
        costs = [trial_cost(r.get("usage") or {}, prices) for r in counted]
        total = float(sum(costs))
        successes = sum(1 for r in valid if r.get("verdict") == 1.0)
        always = summary["tasks_always_passed"]
        summary["cost"] = {"prices_per_million": prices, "total": total,
                           "per_trial": total / len(costs) if costs else float("nan"),
                           "per_success": total / successes if successes else float("inf"),
                           "per_task_solved_in_all_trials": total / always if always else float("inf")}
    return summary


# --------------------------------------------------------------------------- paired comparison


def judge_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The judge's calls over the valid rows: how many, how many failed, and how many answers did not parse (left unjudged)."""
    calls = [c for r in rows if is_valid(r) for c in r.get("judge_calls") or []]
    identities = sorted({json.dumps(r["judge"], sort_keys=True) for r in rows if r.get("judge")})
    return {"calls": len(calls), "failed": sum(1 for c in calls if not c.get("ok")),
            "unparsed": sum(1 for c in calls if c.get("ok") and c.get("parsed") is False),
            "identities": [json.loads(i) for i in identities]}


def compare_runs(rows_a: list[dict[str, Any]], rows_b: list[dict[str, Any]]) -> dict[str, Any]:
    """Per-task paired difference of pass rates (B - A) over the tasks both runs have, with a bootstrap interval.

    Unjudged trials are left out of both sides (and counted), so a run without a judge is
    not read as a drop on the tasks with rubric questions.
    """
    a = task_outcomes(rows_a)
    b = task_outcomes(rows_b)
    common = sorted(set(a) & set(b))
    diffs = []
    per_task: list[dict[str, Any]] = []
    for t in common:
        ra, rb = a[t].c / a[t].n, b[t].c / b[t].n
        diffs.append(rb - ra)
        per_task.append({"task_id": t, "a": ra, "b": rb, "diff": rb - ra})
    values = np.array(diffs)
    lo, hi = bootstrap_mean_interval(values)
    # "only in" is about which tasks a run has rows of; a task both runs have whose trials on one side were all unjudged
    # (or all system errors) is in both, just not comparable, and is named as such
    present_a = {r["task_id"] for r in rows_a if "task_id" in r}
    present_b = {r["task_id"] for r in rows_b if "task_id" in r}
    return {
        "tasks": len(common),
        "only_in_a": sorted(present_a - present_b),
        "only_in_b": sorted(present_b - present_a),
        "not_compared": sorted((present_a & present_b) - set(common)),
        "unjudged": {"a": sum(1 for r in rows_a if is_unjudged(r)), "b": sum(1 for r in rows_b if is_unjudged(r))},
        "unverified": {"a": sum(1 for r in rows_a if is_valid(r) and row_unverified(r)),
                       "b": sum(1 for r in rows_b if is_valid(r) and row_unverified(r))},
        "a_pass_rate": float(np.mean([p["a"] for p in per_task])) if per_task else float("nan"),
        "b_pass_rate": float(np.mean([p["b"] for p in per_task])) if per_task else float("nan"),
        "lift": float(values.mean()) if len(values) else float("nan"),
        "lift_ci95": [lo, hi],
        "flipped_to_pass": [p["task_id"] for p in per_task if p["a"] < 0.5 <= p["b"]],
        "flipped_to_fail": [p["task_id"] for p in per_task if p["b"] < 0.5 <= p["a"]],
        "per_task": per_task,
    }
