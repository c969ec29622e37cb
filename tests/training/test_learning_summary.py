"""The learning claim computed from a shaping run's evaluations: warm start against the last step, per task pooled over seeds."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

REPORT = Path(__file__).resolve().parents[2] / "training" / "experiments" / "shaping_report.py"


@pytest.fixture(scope="module")
def report():
    spec = importlib.util.spec_from_file_location("thinkingbox_training_shaping_report_summary", REPORT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _eval(step: int, passed: set[int], tasks: int = 10) -> dict[str, Any]:
    per_task = {f"variant/retail/ST004/{t}": [int(t in passed), 1] for t in range(tasks)}
    return {"step": step, "heldout": {"pass1": {"value": len(passed) / tasks}, "per_task": per_task}}


def _results(final_passed: dict[int, set[int]]) -> dict[str, Any]:
    seeds = {str(s): {"evals": [_eval(0, {0}), _eval(20, passed)], "train": []} for s, passed in final_passed.items()}
    return {"splits": {"heldout": ["x"]}, "arms": {"verdict": {"seeds": seeds}}}


def test_a_run_that_lifts_every_seed_clears_with_an_interval_above_zero(report) -> None:
    summary = report.learning_summary(_results({0: {0, 1, 2, 3, 4, 5}, 1: {0, 1, 2, 3, 6}, 2: {0, 2, 3, 4, 5, 7}}))
    assert summary["seeds"] == [0, 1, 2] and summary["heldout_tasks"] == 10
    assert summary["heldout_pass1_warm"] == pytest.approx(0.1)
    assert summary["heldout_pass1_final"] == pytest.approx(17 / 30)
    assert summary["diff_mean"] == pytest.approx(17 / 30 - 0.1)
    assert 0 < summary["diff_ci_low"] < summary["diff_mean"] < summary["diff_ci_high"]
    assert summary["cleared"] is True
    assert summary["per_step"][20]["per_seed"] == {"0": 0.6, "1": 0.5, "2": 0.6}


def test_a_run_that_changes_nothing_does_not_clear(report) -> None:
    summary = report.learning_summary(_results({0: {0}, 1: {0}, 2: {0}}))
    assert summary["diff_mean"] == 0 and summary["diff_ci_low"] == 0 and summary["diff_ci_high"] == 0
    assert summary["cleared"] is False


def test_seeds_run_in_separate_folders_pool_into_one_claim(report) -> None:
    whole = _results({0: {0, 1, 2, 3, 4, 5}, 1: {0, 1, 2, 3, 6}, 2: {0, 2, 3, 4, 5, 7}})
    config = {"seeds": [0, 1, 2], "grpo": {"max_steps": 20}}
    parts = []
    for seed in ("0", "1", "2"):
        part = _results({})
        part["arms"]["verdict"]["seeds"] = {seed: whole["arms"]["verdict"]["seeds"][seed]}
        part["config"] = {**config, "path": f"run{seed}.yaml"}
        part["warm_start"] = {seed: {"warm_seed": 0}}
        parts.append(part)
    pooled = parts[0]
    for other in parts[1:]:
        report.pool_seeds(pooled, other)
    assert sorted(pooled["warm_start"]) == ["0", "1", "2"]
    assert report.learning_summary(pooled) == report.learning_summary(whole)
    with pytest.raises(ValueError, match="seeds \\['1'\\] are in both"):
        report.pool_seeds(pooled, parts[1])
    other = {**parts[1], "config": {**config, "grpo": {"max_steps": 40}}}
    with pytest.raises(ValueError, match="configuration differs"):
        report.pool_seeds(parts[0], other)


def test_arms_run_in_separate_folders_pool_into_one_comparison(report) -> None:
    config = {"seeds": [0], "grpo": {"max_steps": 20}}
    verdict_run = _results({0: {0, 1}})
    verdict_run["config"] = {**config, "arms": [{"name": "verdict", "shaping": "none"}]}
    checks_run = _results({})
    checks_run["arms"] = {"checks": {"seeds": {"0": verdict_run["arms"]["verdict"]["seeds"]["0"]}}}
    checks_run["config"] = {**config, "arms": [{"name": "checks", "shaping": "checks"}]}
    report.pool_seeds(verdict_run, checks_run)
    assert sorted(verdict_run["arms"]) == ["checks", "verdict"]
    assert [a["name"] for a in verdict_run["config"]["arms"]] == ["verdict", "checks"]
    assert report.learning_summary(verdict_run, arm="checks")["heldout_pass1_final"] == pytest.approx(0.2)
    renamed = {**checks_run, "config": {**config, "arms": [{"name": "verdict", "shaping": "checks"}]},
               "arms": {"verdict": {"seeds": {"9": {}}}}}
    with pytest.raises(ValueError, match="configured differently"):
        report.pool_seeds(verdict_run, renamed)


def test_each_arm_gets_its_claim_and_its_difference_from_the_verdict_arm(report) -> None:
    results = _results({0: {0}, 1: {0}})
    results["arms"]["checks"] = _results({0: {0, 1, 2, 3}, 1: {0, 1, 2, 5}})["arms"]["verdict"]
    claims = report.arm_claims(results)
    assert sorted(claims) == ["checks", "verdict"] and "minus_verdict" not in claims["verdict"]
    assert claims["verdict"]["diff_mean"] == 0 and claims["verdict"]["cleared"] is False
    assert claims["checks"]["heldout_pass1_final"] == pytest.approx(0.4)
    assert claims["checks"]["minus_verdict"]["mean"] == pytest.approx(0.3)
    assert claims["checks"]["minus_verdict"]["tasks"] == 10
