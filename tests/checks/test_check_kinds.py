"""Check kinds that carry their own spec section, taxonomy place and description; the ``states`` kind built that way."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml
from helpers import play_oracle
from pydantic import BaseModel

import thinkingbox_env as tb
from thinkingbox_env.agents.baselines import OracleAgent
from thinkingbox_env.checks import base, failure_category, grade, kinds_where, reward_groups, spec_sections, trial_outcome
from thinkingbox_env.checks.states import stated_roles
from thinkingbox_env.cli.tasks import render_task
from thinkingbox_env.contracts.records import CheckResult, FailureCategory
from thinkingbox_env.contracts.spec import SpecError, dump_task, parse_task
from thinkingbox_env.envs.env import ThinkingboxEnv
from thinkingbox_env.integrations.trl import REWARD_GROUPS
from thinkingbox_env.tasks.runtime import runtime_for

REFUND_TASK = "retail/ST011_001"  # "Since you're keeping it, I've refunded $97.35 to your card."


class BudgetCap(BaseModel):
    name: str
    at_most: float


@pytest.fixture
def budget_kind():
    """A kind defined the way a new module would define it, removed from the registry afterwards."""

    class BudgetCheck(base.CheckKind):
        name = "budget_test_kind"
        group = "dialogue"
        order = 900
        follows_write = True
        judged = False
        reward_group = "budget_test"
        spec_section = "budget_caps"
        spec_item = BudgetCap
        seen: ClassVar[list[str]] = []

        def describe_spec(self, item: BudgetCap) -> str:
            return f"budget:{item.name} <= {item.at_most}"

        def evaluate(self, context: base.GradingContext) -> list[CheckResult]:
            return [CheckResult(f"budget:{c.name}", self.name, c.at_most >= 10, "capped")
                    for c in context.task.checks.budget_caps]

    yield BudgetCheck
    base.unregister("budget_test_kind")


def _task_data(task_id: str) -> dict[str, Any]:
    spec = tb.load_task(task_id)
    return yaml.safe_load(dump_task(spec))


def test_a_kind_declares_the_section_tasks_may_carry(budget_kind) -> None:
    data = _task_data(REFUND_TASK)
    data["checks"]["budget_caps"] = [{"name": "refund", "at_most": 5}]
    spec = parse_task(data, "inline")
    assert spec.checks.budget_caps[0].at_most == 5.0
    assert "budget:refund <= 5.0" in " ".join(render_task(spec))  # `thinkingbox show --task` asks the kind
    outcome, trace, _ = _oracle_outcome(spec)
    verdict = grade(spec, outcome, final_message=spec.golden_reply, trace=trace, runtime=runtime_for(spec))
    assert verdict.checks["budget:refund"] is False and verdict.reward == 0.0
    # next to a right state, the failure of a kind that follows the write is an incomplete resolution
    assert verdict.failure_category == FailureCategory.INCOMPLETE_USER_RESOLUTION
    assert "budget_test_kind" in kinds_where("follows_write")
    assert reward_groups()["budget_test"] == ("budget_test_kind",)
    data["checks"]["budget_caps"] = [{"name": "refund", "at_most": "lots"}]
    with pytest.raises(SpecError, match=r"budget_caps\.0\.at_most"):
        parse_task(data, "inline")


def test_a_section_no_kind_declares_is_refused_naming_the_known_ones() -> None:
    data = _task_data(REFUND_TASK)
    data["checks"]["budget_caps"] = []
    with pytest.raises(SpecError) as err:
        parse_task(data, "inline.yaml")
    assert "budget_caps" in str(err.value) and "states" in str(err.value) and "inline.yaml" in str(err.value)


def test_later_sections_left_empty_keep_a_frozen_spec_byte_identical() -> None:
    from thinkingbox_env.tasks.lookup import task_files

    path = task_files()[REFUND_TASK]
    assert dump_task(tb.load_task(REFUND_TASK)) == path.read_text(encoding="utf-8")
    old = tb.load_task(f"{REFUND_TASK}@v2")  # frozen before the states and injections sections existed
    assert old._source is not None and dump_task(old) == Path(old._source).read_text(encoding="utf-8")
    assert "states" not in old.checks.model_dump() and old.checks.states == []
    assert "injections" not in old.checks.model_dump() and old.checks.injections == []


def test_the_taxonomy_and_reward_groups_come_from_the_kinds() -> None:
    assert set(kinds_where("judged")) == {"rubric", "truthfulness"}
    assert {"mentions", "grounded_values", "process", "claims", "states"} <= set(kinds_where("follows_write"))
    assert REWARD_GROUPS["reward_dialogue"] == tuple(k for k in reward_groups()["dialogue"])
    assert {"claims", "states"} <= set(REWARD_GROUPS["reward_dialogue"])
    assert {"sql", "dialogue", "rubric", "states"} <= set(spec_sections())
    open_rubric = [{"name": "rubric:x", "kind": "rubric", "passed": None}]
    assert trial_outcome(0.0, open_rubric) == "unjudged"
    assert trial_outcome(0.0, [{"name": "states:x", "kind": "states", "passed": None}]) == "fail"
    # a states failure next to a right state is the customer not being told; next to a wrong one it follows the write
    write = [{"type": "tool_call", "name": "refund_order_amount", "ok": True, "writes": True}]
    told = [CheckResult("effect:x", "effect", True), CheckResult("states:refund.amount", "states", False)]
    assert failure_category(told, write, "done_marker", True) == FailureCategory.INCOMPLETE_USER_RESOLUTION
    wrong = [CheckResult("effect:x", "effect", False), CheckResult("states:refund.amount", "states", False)]
    assert failure_category(wrong, write, "done_marker", True) == FailureCategory.WRONG_STATE_UPDATE


# --------------------------------------------------------------------------- the states kind


def _oracle_outcome(spec) -> tuple[Any, list[dict[str, Any]], list[dict[str, str]]]:
    """The oracle's episode of ``spec``: the state outcome, the trace and the dialogue before the closing."""
    env = ThinkingboxEnv(spec, max_actions=200)
    info = play_oracle(env)
    outcome = env.tool_backend.outcome()
    dialogue = env.dialogue()
    env.close()
    last = max(i for i, m in enumerate(dialogue) if m["role"] == "assistant")
    return outcome, info["trace"], dialogue[:last]


def _grade_closing(spec, closing: str) -> dict[str, Any]:
    outcome, trace, head = _oracle_outcome(spec)
    dialogue = [*head, {"role": "assistant", "content": closing}]
    v = grade(spec, outcome, final_message=closing, dialogue=dialogue, trace=trace, runtime=runtime_for(spec))
    return {r.name: (r.passed, r.detail) for r in v.results}


def _with_states(task_id: str, roles: list[str]):
    data = _task_data(task_id)
    data["checks"]["states"] = roles
    data["id"] = data["id"] + "_states"
    return parse_task(data, "inline")


def test_a_declared_role_is_stated_by_the_oracle_and_missing_from_a_thank_you() -> None:
    spec = _with_states(REFUND_TASK, ["refund.amount"])
    assert "states" in spec.checks.model_dump() and "states:refund.amount" in render_task(spec)[-1]
    golden = _grade_closing(spec, spec.golden_reply)
    assert golden["states:refund.amount"][0] is True and "$97.35" in golden["states:refund.amount"][1]
    thanks = _grade_closing(spec, "Thank you for your patience, that is all sorted.")
    assert thanks["states:refund.amount"][0] is False and "97.35" in thanks["states:refund.amount"][1]
    # the value in other words and another format still states it
    assert _grade_closing(spec, "You're keeping the TV, so 97.35 dollars is on its way back to your card.")[
        "states:refund.amount"][0] is True


def test_a_real_value_of_the_episode_in_place_of_the_role_value_fails() -> None:
    spec = _with_states(REFUND_TASK, ["refund.amount"])
    # the order's other amounts are real values of the episode, but not where the refund's value sits
    wrong = _grade_closing(spec, spec.golden_reply.replace("$97.35", "$649.00"))
    assert wrong["states:refund.amount"][0] is False


def test_a_declared_role_the_domain_lacks_or_the_golden_does_not_state_is_a_spec_error() -> None:
    with pytest.raises(SpecError, match=r"checks\.states\.0.*unknown role 'refund\.amonut'.*refund\.amount"):
        tb.ThinkingboxEnv(_with_states(REFUND_TASK, ["refund.amonut"]))
    with pytest.raises(SpecError, match=r"checks\.states\.0.*golden closing states no value of 'credit\.amount'"):
        tb.ThinkingboxEnv(_with_states(REFUND_TASK, ["credit.amount"]))


def test_frozen_phrase_checks_translate_into_stated_roles() -> None:
    assert tb.load_task(REFUND_TASK).checks.states == ["refund.amount"]  # task set 3 declares it
    spec = tb.load_task(f"{REFUND_TASK}@v2")  # task set 2 said it with a phrase check
    assert not spec.checks.states
    roles = stated_roles(spec, runtime_for(spec))
    assert [r.label for r in roles] == ["refund.amount"]
    assert ("refund_order_amount", "arguments", "amount") in roles[0].places
    assert "states:refund.amount (from the phrase checks)" in render_task(spec)[-1]
    checks = _grade_closing(spec, spec.golden_reply)
    assert checks["states:refund.amount"][0] is True
    # the amount said only in the proposal before the write is not the closing stating it
    checks = _grade_closing(spec, "Sorry about the mark. Since you're keeping it, I've refunded the amount to your card.")
    assert checks["states:refund.amount"][0] is False


def test_a_closing_spread_over_turns_after_the_write_states_the_role() -> None:
    spec = tb.load_task(REFUND_TASK)
    outcome, trace, head = _oracle_outcome(spec)
    dialogue = [*head, {"role": "assistant", "content": spec.golden_reply},
                {"role": "user", "content": "Great, thanks."},
                {"role": "assistant", "content": "You're welcome, have a good day."}]
    v = grade(spec, outcome, final_message=dialogue[-1]["content"], dialogue=dialogue, trace=trace, runtime=runtime_for(spec))
    assert v.checks["states:refund.amount"] is True


def test_the_oracle_passes_on_every_frozen_task_with_stated_roles() -> None:
    checked = 0
    for task_id in tb.list_tasks():
        spec = tb.load_task(task_id)
        if not stated_roles(spec, runtime_for(spec)):
            continue
        env = tb.make(task_id)
        from thinkingbox_env.agents.baselines import run_episode

        info = run_episode(env, OracleAgent(), seed=0)
        env.close()
        failed = {k: v for k, v in info["checks"].items() if k.startswith("states:") and v is not True}
        assert not failed, (task_id, failed)
        checked += 1
    assert checked >= 150


ANSWER_TASKS = ("retail/ST014_002", "consulting/HV009_003", "retail/ST030_003")  # refusals and answers outside the vocabulary


@pytest.mark.parametrize("task_id", ANSWER_TASKS)
def test_where_the_golden_closing_names_no_outcome_a_closing_must_speak_of_its_subject(task_id: str) -> None:
    spec = tb.load_task(task_id)
    assert _grade_closing(spec, spec.golden_reply)["claims:states_outcome"][0] is True
    for empty in ("Thank you for your patience today.",
                  "I've looked into this for you. Is there anything else I can help with?"):
        passed, detail = _grade_closing(spec, empty)["claims:states_outcome"]
        assert passed is False and "subject words" in detail, (task_id, empty, detail)


def test_a_refusal_in_other_words_shares_the_subject_and_passes() -> None:
    spec = tb.load_task("retail/ST014_002")  # the label is printed, so the address can't be changed
    order = spec.golden[0].arguments.get("order_id") or "your order"
    closing = f"Unfortunately the shipping label for {order} is already printed, so we can no longer update where it goes."
    assert _grade_closing(spec, closing)["claims:states_outcome"][0] is True
