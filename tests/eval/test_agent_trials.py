"""OpenAIChatAgent and single trials against a real scripted Chat Completions server."""

from __future__ import annotations

import json
import logging

from fake_openai import FakeOpenAI
from scripted_model import Calls, Hang, Say, ScriptedModel, Usage, golden_script, malformed_script

import thinkingbox_env as tb
from thinkingbox_env.agents.openai_chat import SamplingConfig
from thinkingbox_env.eval.config import EndpointConfig, EvalConfig
from thinkingbox_env.eval.metrics import row_messages
from thinkingbox_env.eval.trial import RecordingJudge, run_trial
from thinkingbox_env.judging.judge import RubricJudge

TASK = "retail/ST030_001"


def _config(server, **kw) -> EvalConfig:
    endpoint = EndpointConfig(model="qwen-test", base_url=server.base_url, api_key="k",
                              timeout=kw.pop("timeout", 10.0), max_retries=kw.pop("max_retries", 5))
    return EvalConfig(agent="openai", agent_endpoint=endpoint, backoff=0.01,
                      sampling=SamplingConfig(temperature=0.6, top_p=0.95, max_tokens=512, reasoning_effort="low"), **kw)


def test_golden_model_passes_and_usage_and_reasoning_are_recorded():
    with ScriptedModel(golden_script(TASK), usage=Usage(prompt=100, cached=40, completion=20, reasoning=5)) as server:
        row = run_trial(_config(server, seed=7), TASK, trial=2).to_json()
    golden = tb.load_task(TASK).golden
    assert row["status"] == "ok" and row["verdict"] == 1.0 and row["failure_category"] is None
    assert row["seed"] == 9 and row["trial"] == 2
    calls = len(golden) + 1  # one call per tool call, then the closing message
    assert row["usage"] == {"input": 100 * calls, "cached": 40 * calls, "output": 20 * calls, "reasoning": 5 * calls,
                            "model_calls": calls}
    assert row["counts"]["tool_calls"] == len(golden)
    assert row["counts"]["write_calls"] == sum(1 for c in golden if c.name.startswith(("create", "update")))
    agent_events = [e for e in row["trace"] if e["type"] == "message" and e["source"] == "agent"]
    assert agent_events[0]["reasoning"] == "thinking about the policy" and agent_events[0]["usage"]["input"] == 100
    # the request carries the sampling parameters and a per-turn seed derived from the trial seed
    first, second = server.requests[0], server.requests[1]
    assert (first["temperature"], first["top_p"], first["max_tokens"], first["reasoning_effort"]) == (0.6, 0.95, 512, "low")
    assert first["seed"] != second["seed"]
    assert {t["function"]["name"] for t in first["tools"]} >= {c.name for c in golden}
    # reasoning is not sent back by default; the model's own tool calls and their results are
    sent = server.requests[-1]["messages"]
    assert not any("reasoning_content" in m for m in sent)
    assert [m["role"] for m in sent[:3]] == ["system", "system", "user"]
    assert sum(1 for m in sent if m["role"] == "tool") == len(golden)
    assert row["config"]["agent"]["model"] == "qwen-test" and "api_key" not in json.dumps(row["config"])
    assert row["task_hash"] == tb.load_task(TASK).content_key()


def test_parallel_tool_calls_in_one_turn():
    with ScriptedModel(golden_script(TASK, parallel=True)) as server:
        row = run_trial(_config(server), TASK, trial=0).to_json()
    assert row["verdict"] == 1.0
    assert row["usage"]["model_calls"] == 2
    batched = [m for m in row_messages(row) if m["role"] == "assistant" and m.get("tool_calls")]
    assert len(batched) == 1 and len(batched[0]["tool_calls"]) == len(tb.load_task(TASK).golden)


def test_reasoning_sent_back_when_asked():
    with ScriptedModel(golden_script(TASK)) as server:
        config = _config(server)
        config.send_reasoning = True
        run_trial(config, TASK, trial=0)
    sent = server.requests[-1]["messages"]
    assert [m.get("reasoning_content") for m in sent if m["role"] == "assistant"][0] == "thinking about the policy"


def test_wrong_update_fails_as_wrong_state_update():
    def wrong_status(name, args):
        return {**args, "status": "pending"} if name == "update_ticket" else args

    with ScriptedModel(golden_script(TASK, mutate=wrong_status)) as server:
        row = run_trial(_config(server), TASK, trial=0).to_json()
    assert row["status"] == "ok" and row["verdict"] == 0.0
    assert row["failure_category"] == "wrong_state_update"
    failed = [d for d in row["check_details"] if d["passed"] is False]
    assert [d["name"] for d in failed] == ["effect:tickets:insert#1", "no_collateral"]
    assert row["diff"]["tickets"]["inserted"][0]["status"] == "pending"


def test_malformed_tool_call_json_is_a_tool_usage_failure():
    with ScriptedModel(malformed_script(TASK)) as server:
        row = run_trial(_config(server), TASK, trial=0).to_json()
    assert row["status"] == "ok" and row["verdict"] == 0.0
    assert row["failure_category"] == "tool_usage"
    errors = [e for e in row["trace"] if e["type"] == "tool_call" and not e["ok"]]
    assert len(errors) == 1 and row["counts"]["tool_errors"] == 1


def test_503_twice_then_success_is_retried():
    with ScriptedModel(golden_script(TASK), fail_first=[503, 503]) as server:
        row = run_trial(_config(server), TASK, trial=0).to_json()
    assert row["verdict"] == 1.0
    assert server.statuses[:3] == [503, 503, 200]
    assert row["model_calls"][0]["attempts"] == 3 and row["model_calls"][1]["attempts"] == 1


def test_persistent_5xx_ends_the_trial_as_a_system_error_after_five_retries():
    with ScriptedModel(golden_script(TASK), fail_first=[502, 503, 504, 502, 503, 504, 502]) as server:
        row = run_trial(_config(server), TASK, trial=0).to_json()
    assert row["status"] == "system_error" and row["verdict"] is None
    assert row["system_error"]["where"] == "agent" and row["system_error"]["status"] == 504
    assert len(server.requests) == 6  # one try and five retries
    assert row["failure_category"] is None and row_messages(row)[2]["role"] == "user"  # the partial trace is kept


def test_429_is_retried_beyond_the_5xx_budget():
    with ScriptedModel(golden_script(TASK), fail_first=[429] * 7) as server:
        config = _config(server)
        config.backoff = 0.001
        row = run_trial(config, TASK, trial=0).to_json()
    assert row["verdict"] == 1.0 and row["model_calls"][0]["attempts"] == 8


def test_a_model_that_never_answers_times_out_into_a_system_error():
    with ScriptedModel(lambda body: Hang(30)) as server:
        row = run_trial(_config(server, timeout=0.3, max_retries=1), TASK, trial=0).to_json()
    assert row["status"] == "system_error"
    assert "timed out" in row["system_error"]["message"]
    assert len(server.requests) == 2


def test_failing_llm_user_is_a_system_error_not_a_crash():
    def asks(body):
        return Say("What is your email address?") if body["messages"][-1]["role"] == "user" and len(body["messages"]) == 3 \
            else Say("Done <DONE>")

    with ScriptedModel(asks) as agent_server, FakeOpenAI(lambda body: "x", fail_first=[500, 500, 500]) as user_server:
        config = _config(agent_server)
        config.user = "llm"
        config.user_endpoint = EndpointConfig(model="sim", base_url=user_server.base_url, api_key="k", max_retries=0)
        row = run_trial(config, TASK, trial=0).to_json()
    assert row["status"] == "system_error" and row["system_error"]["where"] == "user"
    assert row["config"]["user"]["kind"] == "llm"


def test_llm_user_answers_through_the_harness():
    script = [Say("What is your email address?"), Calls([("get_customer_profile", {"email": "anders.achterberg98@example.org"})]),
              Say("Thanks. <DONE>")]

    with ScriptedModel(lambda body: script[min(sum(m["role"] == "assistant" for m in body["messages"]), 2)]) as agent_server, \
            FakeOpenAI(lambda body: "My email address is anders.achterberg98@example.org.") as user_server:
        config = _config(agent_server)
        config.user = "llm"
        config.user_endpoint = EndpointConfig(model="sim", base_url=user_server.base_url, api_key="k", max_retries=0)
        row = run_trial(config, TASK, trial=0).to_json()
    assert row["status"] == "ok" and row["failure_category"] == "no_state_changing_action"
    said = [e["content"] for e in row["trace"] if e["type"] == "message" and e["source"] == "simulator"]
    assert said == ["My email address is anders.achterberg98@example.org."]
    assert len(user_server.requests) == 1


def _rubric_task():
    data = tb.load_task(TASK).model_dump()
    data["id"] = "ST030_902"
    data["checks"]["rubric"] = [{"name": "mentions_plus", "question": "Does the assistant mention Plus?"}]
    return tb.TaskSpec.model_validate(data)


def test_judge_answers_and_reasons_are_kept_and_unparseable_is_unjudged(caplog):
    answers = iter(["VERDICT: YES\nREASON: it says Plus.", "maybe?"])

    def respond(body):  # the task's own question gets the scripted answers; the truthfulness rubric a yes
        asked = body["messages"][1]["content"]
        return next(answers) if "Does the assistant mention Plus?" in asked else "VERDICT: YES\nREASON: true."

    with FakeOpenAI(respond) as server:
        judge = RecordingJudge(RubricJudge(model="j", base_url=server.base_url, api_key="k", max_retries=0))
        env = tb.ThinkingboxEnv(_rubric_task(), judge=judge)
        info = tb.run_episode(env, tb.OracleAgent())
        assert info["verdict"] == 1.0
        with caplog.at_level(logging.WARNING, logger="thinkingbox_env.judging.judge"):
            info = tb.run_episode(env, tb.OracleAgent())
    assert info["checks"]["rubric:mentions_plus"] is None and info["checks"]["rubric:truthfulness"] is True
    assert info["outcome"] == "unjudged" and info["failure_category"] is None
    calls = [c for c in judge.calls if c["question"] == "Does the assistant mention Plus?"]
    assert len(judge.calls) == 2 * len(calls) == 4  # each episode also asks the automatic truthfulness rubric
    assert calls[0]["answer"] == "yes" and calls[0]["reason"] == "it says Plus." and calls[0]["parsed"]
    assert calls[1]["answer"] is None and calls[1]["parsed"] is False and calls[1]["raw"] == "maybe?"
    assert "could not be parsed" in caplog.text


def test_a_trial_with_a_judge_records_the_judge_tokens_apart_from_the_agents(monkeypatch):
    from fake_openai import FakeOpenAI

    import thinkingbox_env.eval.trial as trial_module

    spec = _rubric_task()  # no frozen task has rubric questions yet: the trial runs this one
    monkeypatch.setattr(trial_module, "make", lambda task_id, **kw: tb.ThinkingboxEnv(spec, **kw))
    with ScriptedModel(golden_script(TASK)) as agent, FakeOpenAI(lambda body: "VERDICT: YES\nREASON: fine.") as judge:
        config = _config(agent, judge_endpoint=EndpointConfig(model="judge", base_url=judge.base_url, api_key="k", max_retries=0))
        row = run_trial(config, TASK, trial=0).to_json()
    questions = len(spec.checks.rubric) + 1  # and the automatic truthfulness rubric
    assert row["status"] == "ok" and row["verdict"] == 1.0 and questions >= 1
    assert [c["usage"] for c in row["judge_calls"]] == [{"input": 10, "cached": 0, "output": 5, "reasoning": 0}] * questions
    assert row["judge_usage"] == {"input": 10 * questions, "cached": 0, "output": 5 * questions, "reasoning": 0,
                                  "judge_calls": questions}
    assert row["usage"]["input"] == 100 * row["usage"]["model_calls"]  # the agent's totals hold the agent's calls only


def test_max_completion_tokens_replaces_max_tokens_in_requests(tmp_path):
    from thinkingbox_env.cli import main

    with ScriptedModel(golden_script(TASK)) as server:
        code = main(["eval", TASK, "--agent", "openai", "--model", "o-model", "--base-url", server.base_url, "--api-key", "k",
                     "--max-completion-tokens", "2048", "-o", str(tmp_path / "run.jsonl")])
    assert code == 0
    assert all(r["max_completion_tokens"] == 2048 and "max_tokens" not in r for r in server.requests)
