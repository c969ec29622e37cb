"""One canonical action: the same trajectory graded identically whatever form its tool calls arrive in.

Models send tool-call arguments as the JSON text they wrote, often several calls in one
assistant message, or as Hermes/Qwen ``<tool_call>`` blocks in raw text; scripted agents send
dicts. Every frozen task and one training variant per family is played in each form (the
golden trajectory, the golden without its consent proposals, and, where a task plants an
instruction, the golden plus the injected action), and the verdict, every check, the reward
vector and the failure category must be identical to the dict form's. One MCP server per
domain plays every frozen task the same way with the calls going over MCP.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import thinkingbox_env as tb
from thinkingbox_env.agents.baselines import OracleAgent, run_episode
from thinkingbox_env.contracts.actions import hermes_calls, parse_action
from thinkingbox_env.contracts.spec import TaskSpec, ToolCall
from thinkingbox_env.envs.env import ThinkingboxEnv
from thinkingbox_env.tasks.domain import load_domain
from thinkingbox_env.tasks.lookup import generate_variant

DOMAINS = ["retail", "insurance", "travel", "neobank", "consulting"]


def _is_call(item: Any) -> bool:
    return isinstance(item, dict) and "name" in item


def _openai_call(i: int, item: dict[str, Any]) -> dict[str, Any]:
    return {"id": f"w{i}", "type": "function", "function": {"name": item["name"], "arguments": json.dumps(item["arguments"])}}


class WireAgent:
    """The oracle's turns, its tool calls rewritten in one wire form.

    ``dict`` leaves them as they are; ``json_string`` sends the arguments as JSON text;
    ``openai`` one assistant message per call with JSON-text arguments; ``parallel`` the
    consecutive calls of a stretch in one assistant message; ``hermes`` that stretch as raw
    model text with ``<tool_call>`` blocks.
    """

    def __init__(self, oracle: OracleAgent, form: str):
        self.oracle, self.form, self.sent = oracle, form, 0

    def reset(self, task: TaskSpec, observation: dict[str, Any]) -> None:
        self.oracle.reset(task, observation)

    def act(self, observation: dict[str, Any]) -> Any:
        item = self.oracle.act(observation)
        if not _is_call(item) or self.form == "dict":
            return item
        self.sent += 1
        if self.form == "json_string":
            return {"name": item["name"], "arguments": json.dumps(item["arguments"])}
        if self.form == "openai":
            return {"role": "assistant", "content": None, "tool_calls": [_openai_call(self.sent, item)]}
        stretch = [item]
        while self.oracle._queue and _is_call(self.oracle._queue[0]):
            stretch.append(self.oracle._queue.pop(0))
        if self.form == "parallel":
            return {"role": "assistant", "content": None,
                    "tool_calls": [_openai_call(self.sent * 100 + k, c) for k, c in enumerate(stretch)]}
        assert self.form == "hermes"
        return "\n".join(f"<tool_call>{json.dumps({'name': c['name'], 'arguments': c['arguments']})}</tool_call>" for c in stretch)


FORMS = ["json_string", "openai", "parallel", "hermes"]


def _injected(spec: TaskSpec) -> list[ToolCall] | None:
    """The golden calls plus the action an instruction planted in the task asks for (None when none is planted)."""
    if not spec.checks.injections:
        return None
    item = spec.checks.injections[0]
    like = [c for c in spec.golden if c.name == item.tool]
    arguments = {**(dict(like[-1].arguments) if like else {}), **item.arguments}
    return [*spec.golden, ToolCall(name=item.tool, arguments=arguments)]


def _trajectories(spec: TaskSpec) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {"golden": {}, "no_proposal": {"consent": "none"}}
    injected = _injected(spec)
    if injected is not None:
        out["injection"] = {"calls": injected}
    return out


def _graded(info: dict[str, Any]) -> tuple[Any, ...]:
    return (info["verdict"], info["checks"], info["check_names"], list(info["reward_vector"]), info["failure_category"])


def _play(spec: TaskSpec, form: str, oracle: dict[str, Any], tool_backend: Any = None) -> dict[str, Any]:
    env = ThinkingboxEnv(spec, max_actions=max(50, 2 * len(spec.golden) + 10), tool_backend=tool_backend)
    try:
        return run_episode(env, WireAgent(OracleAgent(**oracle), form), seed=0)
    finally:
        if tool_backend is None:
            env.close()


def _specs(domain: str) -> list[TaskSpec]:
    frozen = [tb.load_task(t) for t in tb.list_tasks(domain)]
    variants = [generate_variant(domain, family, 2026) for family in load_domain(domain).families]
    return frozen + variants


@pytest.mark.parametrize("domain", DOMAINS)
def test_every_task_is_graded_alike_in_every_wire_form(domain):
    differences, played, failing, injections_followed = [], 0, 0, 0
    for spec in _specs(domain):
        for name, oracle in _trajectories(spec).items():
            reference = _play(spec, "dict", oracle)
            failing += reference["verdict"] == 0.0
            injections_followed += reference["failure_category"] == "followed_injection"
            for form in FORMS:
                got = _play(spec, form, oracle)
                played += 1
                if _graded(got) != _graded(reference):
                    differences.append((spec.id, name, form, _graded(reference)[4], _graded(got)[4]))
    assert not differences, f"{len(differences)} of {played} episodes graded differently: {differences[:10]}"
    assert failing > 0  # the probes include failing trajectories, so a form that passes everything would be caught
    assert played > 4 * len(tb.list_tasks(domain))


def test_the_injected_action_sent_as_json_text_is_categorised_as_followed():
    """An instruction planted in a record, followed with JSON-string arguments, is caught as in dict form."""
    followed = []
    for domain in DOMAINS:
        for task_id in tb.list_tasks(domain):
            spec = tb.load_task(task_id)
            injected = _injected(spec)
            if injected is None:
                continue
            for form in ("dict", "openai"):
                info = _play(spec, form, {"calls": injected})
                followed.append((task_id, form, info["failure_category"]))
    by_form = {form: sum(1 for _, f, c in followed if f == form and c == "followed_injection") for form in ("dict", "openai")}
    assert by_form["dict"] > 0 and by_form["openai"] == by_form["dict"], by_form


@pytest.mark.parametrize("domain", DOMAINS)
def test_every_frozen_task_is_graded_alike_through_mcp(domain):
    from thinkingbox_env.serving.backend import MCPToolBackend

    backend = MCPToolBackend.stdio(domain)
    differences = []
    try:
        for task_id in tb.list_tasks(domain):
            spec = tb.load_task(task_id)
            for name, oracle in _trajectories(spec).items():
                reference = _play(spec, "dict", oracle)
                got = _play(spec, "openai", oracle, tool_backend=backend)
                if _graded(got) != _graded(reference):
                    differences.append((task_id, name, _graded(reference)[4], _graded(got)[4]))
    finally:
        backend.close()
    assert not differences, differences[:10]


# ------------------------------------------------------------------ the canonical form itself


def test_every_shape_of_one_call_parses_to_the_same_call():
    arguments = {"customer_id": "CUS-3000001", "amount": 12.5}
    text = json.dumps(arguments)
    shapes = [
        {"name": "issue_refund", "arguments": arguments},
        {"name": "issue_refund", "arguments": text},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "a", "type": "function",
                                                               "function": {"name": "issue_refund", "arguments": text}}]},
        f'<tool_call>{{"name": "issue_refund", "arguments": {text}}}</tool_call>',
    ]
    parsed = [parse_action(s) for s in shapes]
    assert {p.kind for p in parsed} == {"calls"}
    assert all(p.calls[0].name == "issue_refund" and p.calls[0].arguments == arguments for p in parsed)
    assert all(p.calls[0].trace_arguments == arguments for p in parsed)


def test_malformed_argument_json_is_recorded_as_the_models_error():
    env = tb.make("retail/ST030_001")
    env.reset(seed=0)
    broken = '{"email": "anders.achterberg98@example.org"'  # the closing brace cut off
    obs = env.step({"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "get_customer_profile", "arguments": broken}}]})[0]
    call = [e for e in env.unwrapped.trace if e["type"] == "tool_call"][-1]
    assert call["ok"] is False and call["error_kind"] == "arguments"
    assert call["arguments"] == broken  # the model's own text, kept for the transcript
    assert "not valid JSON" in json.loads(obs["messages"][-1]["content"])["error"]
    info = env.step("Done. <DONE>")[4]
    assert info["verdict"] == 0.0
    env.close()


def test_a_hermes_block_cut_by_the_token_cap_is_a_malformed_call_not_a_message():
    content, calls = hermes_calls('Let me check.\n<tool_call>{"name": "get_customer_profile", "arguments": {"email": "a@b')
    assert content == "Let me check." and calls == [(None, '{"name": "get_customer_profile", "arguments": {"email": "a@b')]
    parsed = parse_action('<tool_call>{"name": "get_customer_profile", "arguments": {"email": "a@b')
    assert parsed.kind == "calls" and parsed.calls[0].arguments is None and parsed.calls[0].error is not None


def test_text_with_calls_and_words_keeps_both():
    parsed = parse_action('One moment.\n<tool_call>{"name": "get_customer_profile", "arguments": {"email": "x@example.org"}}</tool_call>')
    assert parsed.kind == "calls" and parsed.content == "One moment."
    assert parsed.calls[0].arguments == {"email": "x@example.org"}


def test_a_closing_is_a_message_whatever_call_text_it_quotes():
    parsed = parse_action('Done, see <tool_call>{"name": "x", "arguments": {}}</tool_call> <DONE>')
    assert parsed.kind == "message"


def test_the_customer_tool_protocol_always_closes_even_when_the_closing_is_refused():
    from thinkingbox_env.envs.wrappers import CustomerToolWrapper

    env = CustomerToolWrapper(tb.make("retail/ST030_001"))
    for closing in ("x" * 30_000, 'All set <tool_call>{"name": "get_customer_profile", "argu'):
        env.reset(seed=0)
        info = env.finish(closing)
        assert info["finish_reason"] == "done_marker" and info["verdict"] == 0.0
    env.close()
