"""The Gymnasium wrappers: the customer-as-a-tool protocol and per-check reward shaping."""

from __future__ import annotations

import json

import pytest

import thinkingbox_env as tb
from thinkingbox_env.agents.customer_tool import CustomerToolAgent
from thinkingbox_env.contracts.protocol import DONE_MARKER, END_TOOL_NAME, EPISODE_OVER, REPLY_TOOL
from thinkingbox_env.envs.wrappers import CheckRewardWrapper, CustomerToolWrapper

TASK = "retail/ST030_001"


def _call(name, arguments, i):
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": f"t{i}", "type": "function", "function": {"name": name, "arguments": args}}


def _protocol_turns(spec, closing=None, parallel=False):
    question = "Could you tell me your " + " and ".join(f.unlock[0] for f in spec.user.facts) + "?"
    turns = [{"role": "assistant", "content": None, "tool_calls": [_call(REPLY_TOOL, {"message": question}, 0)]}]
    calls = [_call(c.name, dict(c.arguments), i + 1) for i, c in enumerate(spec.golden)]
    if parallel:
        turns.append({"role": "assistant", "content": None, "tool_calls": calls})
    else:
        turns += [{"role": "assistant", "content": None, "tool_calls": [c]} for c in calls]
    turns.append({"role": "assistant", "content": closing if closing is not None else spec.golden_reply})
    return turns


class TurnAgent:
    """An agent that plays fixed protocol turns and keeps what it was shown."""

    def __init__(self, turns):
        self.turns, self.seen = list(turns), []

    def reset(self, task, observation):
        self.seen = [observation]
        self.i = 0

    def act(self, observation):
        self.seen.append(observation)
        turn = self.turns[min(self.i, len(self.turns) - 1)]
        self.i += 1
        return turn


@pytest.mark.parametrize("parallel", [False, True])
def test_a_protocol_episode_through_the_wrapper_passes(parallel):
    spec = tb.load_task(TASK)
    env = CustomerToolWrapper(tb.make(TASK))
    obs, _ = env.reset(seed=0)
    assert [m["role"] for m in obs["messages"]] == ["system", "user"]
    assert REPLY_TOOL in obs["messages"][0]["content"] and DONE_MARKER not in obs["messages"][0]["content"]
    names = {t["function"]["name"] for t in obs["tools"]}
    assert REPLY_TOOL in names and END_TOOL_NAME not in names
    turns = _protocol_turns(spec, parallel=parallel)
    obs, reward, terminated, truncated, info = env.step(turns[0])
    answer = obs["messages"][-1]
    assert answer["role"] == "tool" and answer["tool_call_id"] == "t0"
    assert any(f.text in answer["content"] for f in spec.user.facts)
    for turn in turns[1:-1]:
        obs, reward, terminated, truncated, info = env.step(turn)
        assert len(obs["messages"]) == 1 + len(turn["tool_calls"]) and not terminated
    obs, reward, terminated, truncated, info = env.step(turns[-1])
    assert terminated and not truncated and reward == 1.0 and info["finish_reason"] == "done_marker"
    assert env.unwrapped.messages[-1]["content"].endswith(DONE_MARKER)
    assert env.call_tool("get_order", {"order_id": "ORD-1"}) == json.dumps({"error": EPISODE_OVER})
    assert env.reply("hello?") == EPISODE_OVER
    env.close()


def test_the_agent_adapter_and_the_wrapper_play_the_same_episode():
    spec = tb.load_task(TASK)
    turns = _protocol_turns(spec, parallel=True)
    wrapped = CustomerToolWrapper(tb.make(TASK))
    a_inner = TurnAgent(turns)
    a = tb.run_episode(wrapped, a_inner, seed=0)
    raw = tb.make(TASK)
    b_inner = TurnAgent(turns)
    b = tb.run_episode(raw, CustomerToolAgent(b_inner), seed=0)
    assert a["verdict"] == b["verdict"] == 1.0
    assert a["trace"] == b["trace"]
    assert wrapped.unwrapped.messages == raw.messages
    # the inner agents were shown the same conversation
    shown = [[m for m in o["messages"]] for o in a_inner.seen[1:]]
    assert shown == [[m for m in o["messages"]] for o in b_inner.seen[1:]]


def test_a_malformed_reply_call_is_an_error_result_and_a_failed_call():
    env = CustomerToolWrapper(tb.make(TASK))
    env.reset(seed=0)
    obs = env.step({"role": "assistant", "content": None, "tool_calls": [_call(REPLY_TOOL, '{"message": "unterm', 0)]})[0]
    assert "invalid arguments for tool 'reply_to_customer'" in obs["messages"][-1]["content"]
    failed = [e for e in env.unwrapped.trace if e["type"] == "tool_call" and e["name"] == REPLY_TOOL]
    assert len(failed) == 1 and failed[0]["ok"] is False
    info = env.finish("Goodbye.")
    assert info["verdict"] == 0.0 and info["failure_category"] == "tool_usage"


def test_the_action_limit_mid_turn_answers_the_rest_as_over():
    spec = tb.load_task(TASK)
    env = CustomerToolWrapper(tb.make(TASK, max_actions=2))
    env.reset(seed=0)
    calls = [_call(c.name, dict(c.arguments), i) for i, c in enumerate(spec.golden)]
    assert len(calls) >= 3
    obs, reward, terminated, truncated, info = env.step({"role": "assistant", "content": None, "tool_calls": calls})
    assert truncated and not terminated and info["finish_reason"] == "action_limit"
    assert [m["content"] for m in obs["messages"][3:]] == [json.dumps({"error": EPISODE_OVER})] * (len(calls) - 2)


def test_finish_closes_with_the_last_message_sent_by_default():
    env = CustomerToolWrapper(tb.make(TASK), include_policy=False)
    obs, _ = env.reset(seed=0)
    assert "Current time:" not in obs["messages"][0]["content"]  # the policy section is left out
    env.reply(f"Working on it {DONE_MARKER}")  # a marker inside a reply never closes
    assert not env.episode_over
    info = env.finish()
    assert env.unwrapped.messages[-1]["content"] == f"Working on it {DONE_MARKER}"
    assert info["finish_reason"] == "done_marker"


# --------------------------------------------------------------------------- reward shaping


def _partial(env):
    """The membership upgrade but no ticket: some effects pass, some fail."""
    env.reset(seed=0)
    env.step({"name": "update_membership", "arguments": {"customer_id": "CUS-3000001", "action": "upgrade"}})
    return env.step(f"{tb.load_task(TASK).golden_reply} {DONE_MARKER}")


def test_check_reward_wrapper_weighs_the_reward_vector():
    env = CheckRewardWrapper(tb.make(TASK))
    obs, reward, terminated, truncated, info = _partial(env)
    vector = [float(x) for x in info["reward_vector"]]
    assert 0 < sum(vector) < len(vector)
    assert reward == pytest.approx(sum(vector) / len(vector)) == info["shaped_reward"]
    assert info["verdict"] == 0.0  # the task's verdict is untouched

    only_collateral = CheckRewardWrapper(tb.make(TASK), weights={"no_collateral": 1.0}, default=0.0)
    assert _partial(only_collateral)[1] == 1.0
    effects_only = CheckRewardWrapper(tb.make(TASK), weights={"effect": 1.0}, default=0.0)
    effect_values = [v for n, v in zip(info["check_names"], vector) if n.startswith("effect:")]
    assert _partial(effects_only)[1] == pytest.approx(sum(effect_values) / len(effect_values))
    # a name beats its kind
    name = next(n for n, v in zip(info["check_names"], vector) if n.startswith("effect:") and v == 0.0)
    one = CheckRewardWrapper(tb.make(TASK), weights={"effect": 1.0, name: 0.0}, default=0.0)
    assert _partial(one)[1] == 1.0
    nothing = CheckRewardWrapper(tb.make(TASK), default=0.0)
    assert _partial(nothing)[1] == 0.0


def test_check_reward_wrapper_keeps_zero_before_the_end_and_one_for_a_pass():
    env = CheckRewardWrapper(tb.make(TASK), weights={"mentions": 3.0})
    info = tb.run_episode(env, tb.OracleAgent(), seed=0)
    assert info["shaped_reward"] == 1.0
    env.reset(seed=0)
    assert env.step({"name": "get_customer_profile", "arguments": {"customer_id": "CUS-3000001"}})[1] == 0.0


@pytest.mark.parametrize("weights, default", [({"effect": -1.0}, 1.0), ({"effect": "x"}, 1.0), ({}, -2.0)])
def test_check_reward_wrapper_refuses_bad_weights(weights, default):
    with pytest.raises(ValueError, match="non-negative"):
        CheckRewardWrapper(tb.make(TASK), weights=weights, default=default)
