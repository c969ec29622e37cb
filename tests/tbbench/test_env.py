"""Benchmark tasks as environments, against a real MCP stdio server process written for the tests."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI

import thinkingbox_env as tb
from thinkingbox_env.agents import OracleAgent, run_episode
from thinkingbox_env.judging.judge import RubricJudge
from thinkingbox_env.tbbench import TBBenchFormatError, register_source

DATA = Path(__file__).resolve().parents[1] / "data" / "tbbench"
CANCEL = "tbbench/dataset/tests/toy_shop_tasks.py:test_cancel_pending"
LOOKUP = "tbbench/dataset/tests/toy_shop_tasks.py:test_lookup_shipped"


@pytest.fixture(autouse=True)
def _source():
    register_source()


def make(task_id: str, **kwargs):
    return tb.make(task_id, data_dir=DATA, server_python=sys.executable, **kwargs)


def last_tool_result(obs):
    return json.loads([m for m in obs["messages"] if m["role"] == "tool"][-1]["content"])


def yes_if_cancelled(body: dict) -> str:
    text = body["messages"][-1]["content"]
    return "VERDICT: YES\nREASON: says so" if "cancelled" in text.split("Transcript:", 1)[1] else "VERDICT: NO\nREASON: does not"


def test_opening_has_agent_prompt_policy_query_and_no_reserved_tool():
    env = make(CANCEL)
    try:
        obs, info = env.reset(seed=0)
        names = [t["function"]["name"] for t in obs["tools"]]
        assert names == ["get_order", "cancel_order", "search_policy"]
        assert not any(n.startswith("__reserved__") for n in names)
        system, policy, first = obs["messages"]
        assert "<DONE>" in system["content"] and "Toy Shop policy" in policy["content"]
        assert first == {"role": "user", "content": "Please cancel my order O1, I ordered it by mistake."}
        assert info["task_id"] == CANCEL
        obs, *_ = env.step({"name": "__reserved__geteffects", "arguments": {}})
        assert "unknown tool '__reserved__geteffects'" in last_tool_result(obs)["error"]
    finally:
        env.close()


def test_search_policy_is_answered_from_the_sources_not_the_server():
    env = make(CANCEL)
    try:
        env.reset(seed=0)
        obs, *_ = env.step({"name": "search_policy", "arguments": {"query": "can a shipped order be cancelled", "top_k": 2}})
        snippets = last_tool_result(obs)["snippets"]
        assert [s["source"] for s in snippets] == ["cancellation.md", "returns.md"][: len(snippets)]
        assert snippets[0]["text"].startswith("Orders can be cancelled while they are pending")
        assert set(snippets[0]) == {"source", "score", "vector_distance", "text"} and snippets[0]["score"] > 0
        obs, *_ = env.step({"name": "search_policy", "arguments": {"top_k": 2}})
        assert "'query'" in last_tool_result(obs)["error"]
    finally:
        env.close()


def test_oracle_with_a_judge_passes_and_each_episode_has_a_fresh_server():
    with FakeOpenAI(yes_if_cancelled) as judge_server:
        judge = RubricJudge(model="judge", base_url=judge_server.base_url, api_key="k")
        env = make(CANCEL, judge=judge)
        try:
            info = run_episode(env, OracleAgent(closing="Your order O1 has been cancelled."), seed=0)
            assert info["verdict"] == 1.0
            assert info["checks"] == {"db_hash:shop": True, "rubric:1": True}
            assert info["check_names"] == ["db_hash:shop", "rubric:1"] and list(info["reward_vector"]) == [1.0, 1.0]
            assert info["finish_reason"] == "done_marker" and info["failure_category"] is None
            assert info["diff"]["shop"]["O1"]["after"]["status"] == "cancelled"
            # the judge saw the last assistant message only
            asked = judge_server.requests[-1]["messages"][-1]["content"]
            assert "Does the response confirm that order O1 was cancelled?" in asked
            assert 'ASSISTANT: "Your order O1 has been cancelled."' in asked and "I ordered it by mistake" not in asked
            # a new episode: a new process with the task's initial state
            env.reset(seed=1)
            obs, *_ = env.step({"name": "get_order", "arguments": {"order_id": "O1"}})
            assert last_tool_result(obs)["status"] == "pending"
        finally:
            env.close()


def test_a_wrong_or_missing_action_fails_on_the_hash():
    env = make(CANCEL)
    try:
        env.reset(seed=0)
        env.step({"name": "get_order", "arguments": {"order_id": "O1"}})
        obs, reward, terminated, _, info = env.step("I looked at your order O1; it has been cancelled. <DONE>")
        assert terminated and reward == 0.0
        assert info["checks"]["db_hash:shop"] is False and "!= golden hash" in info["check_details"][0]["detail"]
        assert info["failure_category"] == "no_state_changing_action"  # get_order is declared read-only
    finally:
        env.close()


def test_a_rubric_answered_no_fails_a_correct_state():
    with FakeOpenAI(yes_if_cancelled) as judge_server:
        env = make(CANCEL, judge=RubricJudge(model="judge", base_url=judge_server.base_url, api_key="k"))
        try:
            info = run_episode(env, OracleAgent(closing="All set."), seed=0)
            assert info["checks"] == {"db_hash:shop": True, "rubric:1": False}
            assert info["verdict"] == 0.0 and info["failure_category"] == "incomplete_user_resolution"
        finally:
            env.close()


def test_without_a_judge_rubrics_are_unevaluated_and_tasks_without_rubrics_pass():
    env = make(CANCEL)
    try:
        info = run_episode(env, OracleAgent(), seed=0)
        assert info["checks"] == {"db_hash:shop": True, "rubric:1": None} and info["unevaluated"] == ["rubric:1"]
        assert info["verdict"] == 0.0
    finally:
        env.close()
    env = make(LOOKUP)
    try:
        info = run_episode(env, OracleAgent(), seed=0)
        assert info["verdict"] == 1.0 and info["checks"] == {"db_hash:shop": True}
    finally:
        env.close()


def test_registry_namespaces_and_clear_errors(monkeypatch):
    monkeypatch.delenv("THINKINGBOX_TBBENCH_DIR", raising=False)
    with pytest.raises(TBBenchFormatError, match="data_dir="):
        tb.make(CANCEL, server_python=sys.executable)
    with pytest.raises(KeyError, match="unknown task 'nosuchsource/x'"):
        tb.make("nosuchsource/x")
    from thinkingbox_env.envs.registration import suite_tasks

    assert suite_tasks("tbbench-v1", data_dir=DATA, server_python=sys.executable) == [CANCEL, LOOKUP]
    with pytest.raises(KeyError, match="unknown suite 'nope'.*tbbench-v1"):
        suite_tasks("nope")
    # our own tasks are untouched by the extension point
    assert tb.make("retail/ST030_001").task.full_id == "retail/ST030_001"
