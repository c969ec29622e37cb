"""Metrics against values computed by hand on small fixed tables of outcomes."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from thinkingbox_env.cli import main
from thinkingbox_env.eval.metrics import (
    UnequalTrialsError,
    bootstrap_interval,
    compare_runs,
    pass_at_k,
    pass_hat_k,
    pass_k_table,
    summarize,
    task_outcomes,
    weak_evaluator_signals,
)

# n = 4 trials per task; successes per task: A 4, B 2, C 0, D 1
TABLE = {"retail/A": [1, 1, 1, 1], "retail/B": [1, 0, 1, 0], "travel/C": [0, 0, 0, 0], "travel/D": [0, 0, 1, 0]}


def row(task, trial, passed, *, status="ok", category=None, details=None, usage=None, messages=None, trace=None, counts=None):
    return {
        "task_id": task, "domain": task.split("/")[0], "trial": trial, "status": status,
        "verdict": None if status != "ok" else float(passed),
        "failure_category": None if passed or status != "ok" else (category or "wrong_state_update"),
        "check_details": details or [], "usage": usage or {"input": 0, "cached": 0, "output": 0, "reasoning": 0, "model_calls": 0},
        "messages": messages or [], "trace": trace or [], "counts": counts or {},
        "system_error": None if status == "ok" else {"where": "agent", "message": "HTTP 503"},
    }


def table_rows(table=TABLE):
    return [row(t, i, p) for t, outcomes in table.items() for i, p in enumerate(outcomes)]


def test_pass_at_k_and_pass_hat_k_by_hand():
    # one task, n = 4, c = 2: pass@2 = 1 - C(2,2)/C(4,2) = 5/6; pass^2 = C(2,2)/C(4,2) = 1/6
    assert pass_at_k(4, 2, 2) == pytest.approx(5 / 6)
    assert pass_hat_k(4, 2, 2) == pytest.approx(1 / 6)
    assert pass_hat_k(4, 1, 2) == 0.0 and pass_at_k(4, 0, 3) == 0.0 and pass_at_k(4, 1, 4) == 1.0
    with pytest.raises(ValueError):
        pass_at_k(4, 2, 5)


def test_pass_k_table_by_hand():
    t = pass_k_table(task_outcomes(table_rows()))
    assert t["pass@k"][1] == pytest.approx(7 / 16)
    assert t["pass@k"][2] == pytest.approx((1 + 5 / 6 + 0 + 1 / 2) / 4)  # 7/12
    assert t["pass@k"][4] == pytest.approx(3 / 4)
    assert t["pass@k_plugin"][2] == pytest.approx((1 + 0.75 + 0 + 0.4375) / 4)
    assert t["pass^k"][2] == pytest.approx((1 + 1 / 6) / 4)  # 7/24
    assert t["pass^k_plugin"][2] == pytest.approx((1 + 0.25 + 0 + 1 / 16) / 4)
    assert t["pass^k"][4] == pytest.approx(1 / 4)
    assert t["pass^k_plugin"][4] == pytest.approx((1 + 1 / 16 + 0 + 1 / 256) / 4)
    assert t["pass^k"][1] == t["pass@k"][1] == t["pass^k_plugin"][1]


def test_bootstrap_intervals_by_hand():
    # every task passes half its trials: every resample gives 0.5
    assert bootstrap_interval(np.array([2, 1, 3]), np.array([4, 2, 6])) == (0.5, 0.5)
    # three tasks with rates 1, 0.5 and 0: the resampled mean is 0 or 1 with probability 1/27 each (> 2.5%),
    # so the exact 95% percentile interval is [0, 1]; likewise [0, 1] for two tasks with rates 1 and 0
    assert bootstrap_interval(np.array([2, 1, 0]), np.array([2, 2, 2]), samples=20000) == (0.0, 1.0)
    # four tasks 1, 1, 1, 0: P(mean = 1) = (3/4)^4 = 31.6% > 2.5%, P(mean = 0) = 1/256 < 2.5%:
    # the upper bound is 1 and the lower is the 2.5% quantile of k/4 with k ~ Binomial(4, 3/4), which is 0.25
    dist = sorted(sum(c) / 4 for c in itertools.product([1, 1, 1, 0], repeat=4))
    exact_lo = dist[int(0.025 * len(dist))]
    assert exact_lo == 0.25
    lo, hi = bootstrap_interval(np.array([1, 1, 1, 0]), np.array([1, 1, 1, 1]), samples=20000)
    assert (lo, hi) == (0.25, 1.0)
    # micro-averaging: resampled successes over resampled trials, not a mean of rates
    lo, hi = bootstrap_interval(np.array([10, 0]), np.array([10, 1]), samples=20000)
    assert lo == 0.0 and hi == 1.0


def test_summary_counts_and_refusal_on_unequal_trials():
    rows = table_rows() + [row("travel/E", 0, False, status="system_error")]
    s = summarize(rows)
    assert s["pass@1"]["overall"]["value"] == pytest.approx(7 / 16)
    assert s["pass@1"]["by_domain"]["retail"]["value"] == pytest.approx(6 / 8)
    assert s["pass@1"]["by_domain"]["travel"]["value"] == pytest.approx(1 / 8)
    assert s["system_errors"]["count"] == 1 and s["system_errors"]["by_source"] == {"agent": 1}
    assert s["tasks_never_passed"] == 1 and s["tasks_always_passed"] == 1
    assert s["pass_k"]["pass@k"]["2"] == pytest.approx(7 / 12)
    # a task with fewer trials: pass@k / pass^k are refused with the reason
    s = summarize(table_rows() + [row("travel/E", 0, True)])
    assert s["pass_k"] is None and "same number of trials" in s["pass_k_refused"] and "1 trials: 1 tasks" in s["pass_k_refused"]
    with pytest.raises(UnequalTrialsError):
        pass_k_table(task_outcomes(table_rows() + [row("travel/E", 0, True)]))
    # counting the system error as a failure changes the denominator
    s = summarize(table_rows() + [row("travel/C", 4, False, status="system_error")], system_errors_as_failures=True)
    assert s["pass@1"]["by_domain"]["travel"]["trials"] == 9


def test_failure_shares_weak_evaluator_and_costs():
    done = [{"role": "assistant", "content": "All set. <DONE>"}]
    asked = [{"role": "assistant", "content": "Anything else? <DONE>"}]
    write = [{"type": "tool_call", "name": "update_ticket", "ok": True, "writes": True}]
    write_then_error = write + [{"type": "tool_call", "name": "get_order", "ok": False, "writes": False}]
    wrong = [{"name": "effect:tickets[1]:update", "kind": "effect", "passed": False,
              "detail": 'fields differ: {"status": {"expected": "solved", "actual": "pending"}}'}]
    untouched = [{"name": "effect:tickets[1]:update", "kind": "effect", "passed": False,
                  "detail": 'fields differ: {"status": {"expected": "solved", "actual": "<unchanged>"}}'}]
    extra = [{"name": "no_collateral", "kind": "no_collateral", "passed": False, "detail": "refunds:insert x1"},
             {"name": "effect:refunds:insert#1", "kind": "effect", "passed": False, "detail": "missing: {}; no row was created in refunds"}]
    usage = {"input": 1000, "cached": 400, "output": 100, "reasoning": 10, "model_calls": 4}
    rows = [
        row("retail/A", 0, True, usage=usage, messages=done, trace=write,
            details=[{"name": "effect:tickets[1]:update", "kind": "effect", "passed": True, "detail": ""}]),
        row("retail/A", 1, False, category="wrong_state_update", usage=usage, messages=done, trace=write, details=wrong),
        row("retail/B", 0, False, category="no_state_changing_action", usage=usage, messages=done, details=untouched),
        row("retail/B", 1, False, category="tool_usage", usage=usage, messages=done, trace=write_then_error, details=extra),
        row("retail/C", 0, False, category="incomplete_user_resolution", usage=usage, messages=asked, trace=write, details=wrong),
        row("retail/C", 1, False, category="wrong_state_update", usage=usage, messages=done, trace=write, details=wrong),
    ]
    s = summarize(rows, prices={"input": 2.0, "cached": 0.5, "output": 10.0})
    fc = s["failure_categories"]
    assert fc["failed_trials"] == 5
    assert fc["overall"] == {"followed_injection": 0.0, "tool_usage": 0.2, "no_state_changing_action": 0.2,
                             "incomplete_user_resolution": 0.2, "wrong_state_update": 0.4, "context_overflow": 0.0}
    w = s["weak_evaluator"]
    assert w["clean_termination"] == pytest.approx(4 / 5)  # C/0 asks a question
    assert w["clean_and_write"] == pytest.approx(3 / 5)  # B/0 wrote nothing
    assert w["clean_write_no_error"] == pytest.approx(2 / 5)  # B/1 ended on a tool error
    assert w["wrong_field_value"] == pytest.approx(3 / 5) and w["missing_effect"] == pytest.approx(2 / 5)
    assert w["extra_effect"] == pytest.approx(1 / 5)
    assert s["checks"]["effect:tickets:update"] == {"passed": 1, "total": 5, "unevaluated": 0, "rate": 0.2}
    # tokens per turn counts cached input once: (1000 + 100) / 4 calls
    assert s["tokens"]["overall"] == {"tokens_per_turn": 275.0, "turns_per_trial": 4.0, "trials_with_tokens": 6}
    # cost per trial: 600 uncached * $2 + 400 cached * $0.5 + 100 out * $10 per million = $0.0024
    c = s["cost"]
    assert c["per_trial"] == pytest.approx(0.0024) and c["total"] == pytest.approx(6 * 0.0024)
    assert c["per_success"] == pytest.approx(6 * 0.0024)  # one success
    assert c["per_task_solved_in_all_trials"] == float("inf")  # no task passed all its trials


def test_weak_signals_of_a_clean_looking_failure():
    r = row("retail/A", 0, False, messages=[{"role": "assistant", "content": "Done <DONE>"}],
            trace=[{"type": "tool_call", "name": "w", "ok": True, "writes": True}])
    s = weak_evaluator_signals(r)
    assert s["clean_termination"] and s["clean_and_write"] and s["clean_write_no_error"]


def test_compare_pairs_tasks_and_names_flips():
    a = table_rows()
    b = table_rows({"retail/A": [1, 1, 1, 1], "retail/B": [0, 0, 0, 0], "travel/C": [1, 1, 1, 0], "travel/D": [0, 0, 1, 0]})
    result = compare_runs(a, b)
    assert result["tasks"] == 4
    assert result["lift"] == pytest.approx((0 - 0.5 + 0.75 + 0) / 4)
    assert result["flipped_to_pass"] == ["travel/C"] and result["flipped_to_fail"] == ["retail/B"]
    lo, hi = result["lift_ci95"]
    assert -0.5 <= lo <= result["lift"] <= hi <= 0.75  # bounded by the smallest and largest per-task difference


def test_agg_command_writes_json_and_refuses_pass_k_clearly(tmp_path, capsys):
    run = tmp_path / "run.jsonl"
    run.write_text("".join(json.dumps(r) + "\n" for r in table_rows()))
    assert main(["agg", str(run), "--json", "-"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["pass@1"]["overall"]["value"] == pytest.approx(7 / 16) and data["trials_per_task"] == 4
    with open(run, "a") as fh:
        fh.write(json.dumps(row("travel/E", 0, True)) + "\n")
    assert main(["agg", str(run)]) == 0
    out = capsys.readouterr().out
    assert "pass@k / pass^k not computed" in out and "same number of trials" in out
