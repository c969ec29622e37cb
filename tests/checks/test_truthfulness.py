"""The automatic truthfulness rubric: the judge is told what actually happened, and a closing that denies it fails."""

from __future__ import annotations

import re

from fake_openai import FakeOpenAI

import thinkingbox_env as tb
from thinkingbox_env.checks.truthfulness import state_change_in_words
from thinkingbox_env.judging.judge import RubricJudge

TASK = "retail/ST030_001"  # upgrade to Plus: a customer updated, a membership and a solved ticket created
# the scripted judge's whole reading: the two denials this file sends (a correct refusal such as "I can't grant
# another extension" is not a denial of what happened, so no general negation is read)
_DENIAL = re.compile(r"\b(couldn'?t upgrade|wasn'?t able to complete|nothing (has been|was) changed)\b", re.IGNORECASE)


def scripted_judge(body: dict) -> str:
    """A judge endpoint that reads the requirement it is sent: a denial of a change that happened is a NO."""
    prompt = body["messages"][1]["content"]
    happened = re.search(r"What actually happened in the backend: (.*?)\.\n", prompt, re.DOTALL)
    said = [line for line in prompt.splitlines() if line.startswith("ASSISTANT:")]
    closing = said[-1] if said else ""
    if happened and happened.group(1) != "nothing in the backend changed" and _DENIAL.search(closing):
        return "VERDICT: NO\nREASON: the assistant denies a change that was made."
    return "VERDICT: YES\nREASON: the report matches the backend."


def test_the_state_change_reads_as_words():
    env = tb.make(TASK)
    info = tb.run_episode(env, tb.OracleAgent())
    words = state_change_in_words(info["diff"])
    assert "customers CUS-3000001: tier standard -> plus" in words
    assert "memberships MEM-900010 created (" in words and "end_date 2027-03-02" in words
    assert "tickets 50005 created (" in words and "status solved" in words
    assert state_change_in_words({}) == "nothing in the backend changed"


def test_without_a_judge_truthfulness_is_reported_as_not_evaluated_outside_the_verdict():
    env = tb.make(TASK)
    info = tb.run_episode(env, tb.OracleAgent(closing="I couldn't upgrade you to Plus today."))
    assert "rubric:truthfulness" not in info["checks"]
    assert info["skipped"] == [{"name": "rubric:truthfulness", "kind": "truthfulness", "passed": None,
                                "detail": "not evaluated: no judge configured"}]


def test_with_a_judge_the_opposite_outcome_fails_naming_the_truthfulness_rubric():
    with FakeOpenAI(scripted_judge) as server:
        env = tb.make(TASK, judge=RubricJudge(model="judge", base_url=server.base_url, api_key="k", max_retries=0))
        golden = tb.run_episode(env, tb.OracleAgent())
        assert golden["verdict"] == 1.0 and golden["checks"]["rubric:truthfulness"] is True
        assert golden["skipped"] == []
        prompt = server.requests[-1]["messages"][1]["content"]
        assert "tier standard -> plus" in prompt and "end_date 2027-03-02" in prompt and "status solved" in prompt

        opposite = tb.run_episode(env, tb.OracleAgent(closing="I'm sorry, I couldn't upgrade you to Plus today."))
        assert opposite["verdict"] == 0.0
        assert opposite["checks"]["rubric:truthfulness"] is False
        assert opposite["failure_category"] == "incomplete_user_resolution"


NO_DIALOGUE_TASK = "insurance/IN001_003"  # a ticket filed, and no dialogue entry that a denial could contradict
DENIAL = "I'm sorry, I wasn't able to complete that today; nothing has been changed."


def test_a_denial_no_value_check_can_see_is_failed_by_the_judge_alone():
    assert not tb.load_task(NO_DIALOGUE_TASK).checks.dialogue
    assert tb.run_episode(tb.make(NO_DIALOGUE_TASK), tb.OracleAgent(closing=DENIAL))["verdict"] == 1.0
    with FakeOpenAI(scripted_judge) as server:
        env = tb.make(NO_DIALOGUE_TASK, judge=RubricJudge(model="judge", base_url=server.base_url, api_key="k",
                                                         max_retries=0))
        assert tb.run_episode(env, tb.OracleAgent())["verdict"] == 1.0
        info = tb.run_episode(env, tb.OracleAgent(closing=DENIAL))
        assert info["verdict"] == 0.0
        assert [n for n, v in info["checks"].items() if v is False] == ["rubric:truthfulness"]
