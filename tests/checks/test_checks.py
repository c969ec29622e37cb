"""Rubric checks, the judge, and explicit SQL / dialogue checks."""

from __future__ import annotations

import pytest
from fake_openai import FakeOpenAI

import thinkingbox_env as tb
from thinkingbox_env.contracts.spec import SpecError
from thinkingbox_env.judging.judge import RubricJudge, parse_verdict


def _with_checks(**checks):
    spec = tb.load_task("retail/ST030_001")
    data = spec.model_dump()
    data["id"] = "ST030_901"
    data["checks"] = {**data["checks"], **checks}
    return tb.TaskSpec.model_validate(data)


RUBRIC = [{"name": "polite", "question": "Does the assistant thank the customer?"}]


def test_rubric_without_a_judge_is_not_evaluated_and_never_passes():
    env = tb.ThinkingboxEnv(_with_checks(rubric=RUBRIC))
    info = tb.run_episode(env, tb.OracleAgent())
    assert info["checks"]["rubric:polite"] is None
    assert info["unevaluated"] == ["rubric:polite"]
    assert info["verdict"] == 0.0
    assert info["failure_category"] is None  # not an agent failure
    assert all(v is not False for k, v in info["checks"].items() if k != "rubric:polite")


def test_rubric_with_a_judge_decides():
    seen = []

    def judge(question, transcript):
        seen.append((question, transcript))
        said = " ".join(line for line in transcript.splitlines() if line.startswith("ASSISTANT:"))
        return "plus" in said.lower(), "mentions the plan"

    env = tb.ThinkingboxEnv(_with_checks(rubric=RUBRIC), judge=judge)
    info = tb.run_episode(env, tb.OracleAgent())
    assert info["checks"]["rubric:polite"] is True and info["verdict"] == 1.0
    assert seen and "ASSISTANT:" in seen[0][1]
    info = tb.run_episode(env, tb.OracleAgent(closing="Done."))
    assert info["checks"]["rubric:polite"] is False
    assert info["failure_category"] == "incomplete_user_resolution"


def test_openai_rubric_judge_over_http():
    answers = iter(["VERDICT: YES\nREASON: thanked them.", "I think so", "VERDICT: NO\nREASON: rude."])
    with FakeOpenAI(lambda body: next(answers)) as server:
        judge = RubricJudge(model="judge", base_url=server.base_url, api_key="k", max_retries=0)
        assert judge("Q?", "ASSISTANT: thanks") == (True, "thanked them.")
        answer, reason = judge("Q?", "ASSISTANT: thanks")
        assert answer is None and "unparseable" in reason  # unjudged, never a yes or a no
        assert judge("Q?", "x")[0] is False
        assert "Requirement: Q?" in server.requests[0]["messages"][1]["content"]


def test_parse_verdict():
    assert parse_verdict("VERDICT: YES\nREASON: ok")[:2] == (True, "ok")
    assert parse_verdict("VERDICT: **YES**\nREASON: ok")[0] is None  # only the strict plain form is read
    assert parse_verdict(None)[0] is None


def test_sql_and_dialogue_checks():
    spec = _with_checks(
        sql=[{"name": "customer_is_plus", "query": "SELECT tier = 'plus' FROM customers WHERE id = 'CUS-3000001'"}],
        dialogue=[{"name": "no_score", "must_not": [r"\bscore\b"], "must": ["member"]}],
    )
    broken = _with_checks(sql=[{"name": "broken", "query": "SELECT nonsense FROM nowhere"}])
    with pytest.raises(SpecError, match=r"checks\.sql\.0\.query.*'broken' cannot run"):
        tb.ThinkingboxEnv(broken)  # a broken check is the spec's error, at load, never the agent's failure
    env = tb.ThinkingboxEnv(spec)
    info = tb.run_episode(env, tb.OracleAgent())
    assert info["checks"]["sql:customer_is_plus"] is True
    assert info["checks"]["withholds:no_score"] is not False and info["checks"]["mentions:no_score"] is True
    info = tb.run_episode(env, tb.OracleAgent(closing="Your score is 85, you are a member now."))
    assert info["checks"]["withholds:no_score"] is False
    info = tb.run_episode(env, tb.NoopAgent())
    assert info["checks"]["sql:customer_is_plus"] is False
