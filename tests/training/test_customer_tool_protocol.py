"""The training protocol in the evaluation harness: a model behind a real HTTP endpoint that reaches
the customer through ``reply_to_customer`` and closes with a plain-text turn."""

from __future__ import annotations

import json

import pytest
from scripted_model import Calls, Say, ScriptedModel, turn_of

import thinkingbox_env as tb
from thinkingbox_env.agents.customer_tool import REPLY_TOOL, system_prompt
from thinkingbox_env.agents.transformers_local import parse_hermes
from thinkingbox_env.eval.config import EndpointConfig, EvalConfig
from thinkingbox_env.eval.metrics import row_messages
from thinkingbox_env.eval.trial import build_agent, run_trial

TASK = "retail/ST030_001"


def _config(server, **kw) -> EvalConfig:
    endpoint = EndpointConfig(model="trained", base_url=server.base_url, api_key="k", timeout=10.0, max_retries=1)
    return EvalConfig(agent="openai", agent_endpoint=endpoint, backoff=0.01, protocol="customer-tool", **kw)


def _protocol_script(task_id: str, parallel_reads: bool = False, closing: str | None = None):
    """Ask the customer for the withheld facts, make the golden calls, close with plain text."""
    spec = tb.load_task(task_id)
    question = "Could you tell me your " + " and ".join(f.unlock[0] for f in spec.user.facts) + "?"
    turns: list = [Calls([(REPLY_TOOL, {"message": question})])]
    calls = [(c.name, dict(c.arguments)) for c in spec.golden]
    if parallel_reads:
        turns.append(Calls(calls[:2]))
        calls = calls[2:]
    turns += [Calls([c]) for c in calls]
    turns.append(Say(closing if closing is not None else spec.golden_reply))

    def script(body: dict):
        return turns[min(turn_of(body), len(turns) - 1)]

    return script


@pytest.mark.parametrize("parallel", [False, True])
def test_a_model_in_the_training_protocol_passes_through_the_harness(parallel):
    spec = tb.load_task(TASK)
    with ScriptedModel(_protocol_script(TASK, parallel_reads=parallel)) as server:
        row = run_trial(_config(server), TASK, trial=0).to_json()
    assert row["status"] == "ok" and row["verdict"] == 1.0, row["checks"]
    assert row["config"]["agent"]["protocol"] == "customer-tool"
    first, last = server.requests[0], server.requests[-1]
    names = {t["function"]["name"] for t in first["tools"]}
    assert REPLY_TOOL in names and "end_conversation" not in names and {c.name for c in spec.golden} <= names
    assert first["messages"][0] == {"role": "system", "content": system_prompt("retail")}
    assert first["messages"][1] == {"role": "user", "content": spec.user.opening}
    # the customer's answer came back as the reply tool's result, and the model never saw the env's <DONE> marker
    answer = last["messages"][3]
    assert answer["role"] == "tool" and answer["name"] == REPLY_TOOL
    assert any(fact.text in answer["content"] for fact in spec.user.facts)
    assert "<DONE>" not in json.dumps(last["messages"])
    # in the environment, the question was a message to the customer and the closing turn ended the episode
    said = [m["content"] for m in row_messages(row) if m["role"] == "assistant" and m.get("content")]
    assert said[0].startswith("Could you tell me your") and said[-1].endswith("<DONE>")
    assert row["finish_reason"] == "done_marker"
    assert row["usage"]["model_calls"] == (len(spec.golden) + 2 - (1 if parallel else 0))


def test_a_wrong_closing_message_fails_the_dialogue_check_only():
    with ScriptedModel(_protocol_script("retail/ST004_001", closing="All sorted, thanks for waiting.")) as server:
        row = run_trial(_config(server), "retail/ST004_001", trial=0).to_json()
    failed = {name for name, ok in row["checks"].items() if ok is False}
    # the outcome not told is named by the phrase check and by the claims check that the closing states it
    assert row["verdict"] == 0.0 and failed and all(name.startswith(("mentions:", "claims:states_outcome"))
                                                    for name in failed), row["checks"]


def test_a_malformed_reply_call_is_an_error_observation_not_a_crash():
    def script(body):
        if turn_of(body) == 0:
            return Calls([(REPLY_TOOL, '{"message": "unterminated')])
        return Say("Goodbye.")

    with ScriptedModel(script) as server:
        row = run_trial(_config(server), TASK, trial=0).to_json()
    assert row["status"] == "ok" and row["verdict"] == 0.0
    tool_message = server.requests[1]["messages"][-1]
    assert tool_message["role"] == "tool" and "invalid arguments for tool 'reply_to_customer'" in tool_message["content"]
    failed = [e for e in row["trace"] if e["type"] == "tool_call" and e["name"] == REPLY_TOOL]
    assert len(failed) == 1 and failed[0]["ok"] is False  # the env counted a failed call


def test_baseline_agents_refuse_the_training_protocol():
    with pytest.raises(ValueError, match="chat protocol only"):
        build_agent(EvalConfig(agent="oracle", protocol="customer-tool"), seed=0)
    with pytest.raises(ValueError, match="unknown protocol"):
        build_agent(EvalConfig(agent="oracle", protocol="telepathy"), seed=0)


def test_hermes_parser_reads_calls_and_text():
    text = ('<think>\nplan\n</think>\n\nLet me check.<tool_call>\n{"name": "get_order", "arguments": {"order_id": "ORD-1"}}\n'
            '</tool_call>\n<tool_call>\n{"name": broken</tool_call><|im_end|>')
    parsed = parse_hermes(text)
    assert parsed["content"] == "Let me check."
    assert parsed["tool_calls"][0] == {"name": "get_order", "arguments": {"order_id": "ORD-1"}}
    assert parsed["tool_calls"][1]["name"] is None  # passed on so that the env names the malformed call


def test_the_local_agent_without_a_checkpoint_is_refused_up_front(tmp_path):
    from thinkingbox_env.cli import main

    out = tmp_path / "run.jsonl"
    assert main(["eval", "retail/ST004_001", "--agent", "transformers", "-o", str(out)]) == 2
    assert not out.exists()


def test_a_model_trained_on_a_restricted_tool_set_is_evaluated_with_exactly_those_tools():
    tools = ["get_customer_profile", "search_tickets", "get_membership", "create_ticket", "update_membership", "update_ticket"]
    with ScriptedModel(_protocol_script(TASK)) as server:
        row = run_trial(_config(server, tools=tools), TASK, trial=0).to_json()
    assert row["status"] == "ok" and row["verdict"] == 1.0, row["checks"]
    assert {t["function"]["name"] for t in server.requests[0]["tools"]} == {*tools, REPLY_TOOL}
    assert row["config"]["agent"]["tools"] == tools  # recorded, so a resume with other tools is refused
    with pytest.raises(ValueError, match="customer-tool protocol only"):
        run_trial(EvalConfig(agent="openai", tools=tools), TASK, trial=0)
