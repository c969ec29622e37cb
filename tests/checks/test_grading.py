"""grade() and the typed records: the check-kind registry, the verdict record, finish reasons and failure categories."""

from __future__ import annotations

import json

import numpy as np
import pytest

import thinkingbox_env as tb
from thinkingbox_env.checks import CheckKind, GradingContext, grade, kind, kinds, kinds_in, state_outcome
from thinkingbox_env.contracts.records import CheckResult, FailureCategory, FinishReason, Verdict


def test_the_built_in_kinds_are_registered_in_result_order():
    assert [k.name for k in kinds()] == ["effect", "no_collateral", "injection", "sql", "process", "mentions", "withholds",
                                         "grounded_values", "claims", "states", "rubric", "truthfulness"]
    assert kinds_in("state") == ("effect", "no_collateral", "injection", "sql")
    assert kinds_in("dialogue") == ("mentions", "withholds", "grounded_values", "claims", "states", "rubric", "truthfulness")
    assert kinds_in("process") == ("process",)
    assert [k.name for k in kinds() if k.optional] == ["truthfulness"]
    with pytest.raises(KeyError, match="unknown check kind 'nope'"):
        kind("nope")


def test_a_kind_defined_twice_is_refused_with_both_modules_named():
    with pytest.raises(ValueError, match="check kind 'effect' is defined twice"):
        type("AnotherEffect", (CheckKind,), {"name": "effect", "evaluate": lambda self, ctx: []})


def test_a_kind_with_an_unknown_group_is_refused():
    with pytest.raises(ValueError, match="group must be state, dialogue or process"):
        type("Odd", (CheckKind,), {"name": "odd_kind_for_test", "group": "vibes"})


def test_env_info_is_the_verdict_record_with_plain_values():
    env = tb.make("retail/ST030_001")
    info = tb.run_episode(env, tb.NoopAgent(), seed=0)
    verdict = env.verdict(info["finish_reason"])
    assert isinstance(verdict, Verdict)
    arrays = ("reward_vector", "reward_mask")
    assert {k: v for k, v in verdict.info().items() if k not in arrays} == {
        k: info[k] for k in verdict.info() if k not in arrays}
    for k in arrays:
        assert np.array_equal(verdict.info()[k], info[k])
    # plain strings in info and rows, never enum members (the rows stay byte-identical)
    assert type(info["finish_reason"]) is str and type(info["failure_category"]) is str
    assert info["failure_category"] == FailureCategory.NO_STATE_CHANGING_ACTION.value
    assert json.loads(json.dumps(verdict.to_json()))["reward_vector"] == [float(x) for x in info["reward_vector"]]
    env.close()


def test_grade_of_a_state_outcome_equals_the_env_verdict():
    spec = tb.load_task("retail/ST030_001")
    env = tb.make(spec.full_id)
    info = tb.run_episode(env, tb.OracleAgent(), seed=0)
    outcome = state_outcome(spec, env.state)
    again = grade(spec, outcome, final_message=env.final_message(), transcript=env.transcript(), trace=env.trace,
                  finish_reason="done_marker", runtime=env.runtime)
    assert again.reward == info["verdict"] == 1.0
    assert again.checks == info["checks"] and again.check_names == info["check_names"]
    assert again.failure_category is None and again.finish_reason is FinishReason.DONE_MARKER
    env.close()


def test_an_unknown_finish_reason_is_named():
    spec = tb.load_task("retail/ST030_001")
    env = tb.make(spec.full_id)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="unknown finish_reason 'bored'; expected one of done_marker"):
        env.verdict("bored")
    env.close()


def test_finish_reasons_split_into_terminated_and_truncated():
    assert {r.value for r in FinishReason if r.terminated} == {"done_marker", "end_tool"}
    assert {r.value for r in FinishReason if r.truncated} == {"action_limit", "user_turn_limit", "user_left"}
    assert FinishReason("end_tool") == "end_tool"  # str-valued: equal to the strings rows hold


def test_a_new_kind_is_one_class_and_joins_grading(monkeypatch):
    from thinkingbox_env.checks import base

    class Politeness(CheckKind):
        name = "politeness_for_test"
        group = "dialogue"
        order = 450

        def evaluate(self, context: GradingContext) -> list[CheckResult]:
            ok = "thank" in context.final_message.lower()
            return [CheckResult(name="politeness:thanks", kind=self.name, passed=ok, detail="")]

    try:
        env = tb.make("retail/ST030_001")
        info = tb.run_episode(env, tb.OracleAgent(closing="Upgraded; your ticket is open. Thank you!"), seed=0)
        names = info["check_names"]
        assert names.index("politeness:thanks") == names.index("grounded_values") + 1  # placed by its order
        assert info["checks"]["politeness:thanks"] is True
        # a failure of a dialogue-group kind is a dialogue failure for the taxonomy
        info = tb.run_episode(env, tb.OracleAgent(), seed=0)
        assert info["checks"]["politeness:thanks"] is False
        assert info["failure_category"] == "incomplete_user_resolution"
        env.close()
    finally:
        base._KINDS.pop("politeness_for_test", None)
    assert "politeness_for_test" not in [k.name for k in kinds()]
