"""The environment honours the Gymnasium API on every task."""

from __future__ import annotations

import copy
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import thinkingbox_env as tb
from thinkingbox_env.envs.registration import gym_id

ALL_TASKS = tb.list_tasks()


def test_there_are_at_least_20_tasks_in_5_families():
    assert len(ALL_TASKS) >= 20
    assert len({tb.load_task(t).family for t in ALL_TASKS}) >= 5
    assert "retail/ST030_001" in ALL_TASKS


@pytest.mark.parametrize("task_id", ALL_TASKS)
def test_check_env_passes_without_warnings(task_id):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        env = tb.make(task_id)
        check_env(env)
        env.close()


def test_gymnasium_make_reaches_every_task():
    for task_id in ALL_TASKS:
        domain, name = task_id.split("/")
        env = gym.make(gym_id(task_id))
        obs, info = env.reset(seed=0)
        assert info["task_id"] == task_id
        assert obs in env.observation_space
        env.close()


def test_opening_observation_carries_prompt_policy_tools_and_request(st030):
    obs, info = st030.reset(seed=3)
    roles = [m["role"] for m in obs["messages"]]
    assert roles == ["system", "system", "user"]
    assert "<DONE>" in obs["messages"][0]["content"]
    assert "Current time: 2026-03-02" in obs["messages"][1]["content"]
    assert "Brightwell Plus" in obs["messages"][1]["content"]
    assert obs["messages"][2]["content"] == st030.task.user.opening
    names = {t["function"]["name"] for t in obs["tools"]}
    assert {"get_customer_profile", "search_tickets", "update_membership", "end_conversation"} <= names
    for schema in obs["tools"]:
        assert schema["type"] == "function"
        assert schema["function"]["parameters"]["type"] == "object"


def test_same_seed_and_actions_give_same_observations_and_state():
    def play(seed):
        env = tb.make("retail/ST001_003")
        env.reset(seed=seed)
        env.action_space.seed(seed)
        out = []
        for _ in range(12):
            obs, r, term, trunc, info = env.step(env.action_space.sample())
            out.append((copy.deepcopy(obs), r, term, trunc))
            if term or trunc:
                break
        final = env.unwrapped.evaluate()["state_hash"]
        env.close()
        return out, final

    a, b = play(7), play(7)
    assert a == b
    assert play(8) != a


def test_reward_is_zero_until_the_end_then_the_verdict(st030):
    obs, _ = st030.reset(seed=0)
    agent = tb.OracleAgent()
    agent.reset(st030.task, obs)
    rewards = []
    while True:
        obs, reward, term, trunc, info = st030.step(agent.act(obs))
        rewards.append(reward)
        if term or trunc:
            break
    assert rewards[:-1] == [0.0] * (len(rewards) - 1)
    assert rewards[-1] == 1.0
    assert isinstance(info["reward_vector"], np.ndarray)
    assert info["reward_vector"].shape == (len(info["check_names"]),)
    assert set(info) >= {"checks", "check_names", "reward_vector", "diff", "finish_reason", "failure_category", "trace"}


def test_step_before_reset_and_after_end_raise_clearly():
    env = tb.make("retail/ST030_001")
    with pytest.raises(RuntimeError, match="reset"):
        env.step("hello")
    env.reset(seed=0)
    env.step("All done. <DONE>")
    with pytest.raises(RuntimeError, match="ended"):
        env.step("hello")
    env.close()


def test_action_space_contains_what_it_samples_and_the_three_action_forms(st030):
    space = st030.action_space
    space.seed(0)
    for _ in range(200):
        assert space.sample() in space
    assert "hello" in space
    assert {"name": "get_order", "arguments": {"order_id": "ORD-1"}} in space
    assert {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "x", "arguments": "{}"}}]} in space
    assert 42 not in space
    assert {"foo": 1} not in space


def test_sampled_actions_are_a_fuzzer_that_never_raises():
    """Hundreds of random schema-conforming calls across tasks: step() never raises."""
    for i, task_id in enumerate(ALL_TASKS[:8]):
        env = tb.make(task_id, max_actions=40)
        env.action_space.seed(i)
        for episode in range(3):
            obs, _ = env.reset(seed=episode)
            for _ in range(40):
                obs, reward, term, trunc, info = env.step(env.action_space.sample())
                assert obs in env.observation_space
                if term or trunc:
                    assert info["finish_reason"] in {"done_marker", "end_tool", "action_limit", "user_turn_limit"}
                    break
        env.close()


def test_action_cap_truncates(st030):
    st030.reset(seed=0, options={"max_actions": 3})
    results = [st030.step({"name": "get_order", "arguments": {"order_id": "ORD-20001"}}) for _ in range(3)]
    *_, (obs, reward, term, trunc, info) = results
    assert trunc and not term
    assert info["finish_reason"] == "action_limit"
    assert reward == 0.0


def test_user_turn_limit_truncates():
    env = tb.make("retail/ST030_001", max_user_turns=10)
    env.reset(seed=0)
    for i in range(10):
        obs, r, term, trunc, info = env.step(f"Could you tell me more, part {i}?")
        assert not (term or trunc)
        assert obs["messages"][-1]["role"] == "user"
    obs, r, term, trunc, info = env.step("And one more question?")
    assert trunc and info["finish_reason"] == "user_turn_limit"
    env.close()


def test_end_tool_terminates(st030):
    st030.reset(seed=0)
    obs, r, term, trunc, info = st030.step({"name": "end_conversation", "arguments": {}})
    assert term and info["finish_reason"] == "end_tool"


def test_render_ansi_shows_the_dialogue():
    env = tb.make("retail/ST030_001", render_mode="ansi")
    env.reset(seed=0)
    env.step({"name": "get_customer_profile", "arguments": {"customer_id": "CUS-10001"}})
    text = env.render()
    assert "get_customer_profile" in text and "USER:" in text
    env.close()


def test_same_seed_and_actions_give_the_same_outcome_in_another_process():
    """Schema names and template build order differ between processes; outcomes must not."""
    import json
    import subprocess
    import sys

    script = """
import json, sys
import thinkingbox_env as tb
for warm in sys.argv[1:]:
    tb.run_episode(tb.make(warm), tb.OracleAgent())
env = tb.make("retail/ST001_003")
env.action_space.seed(11)
obs, _ = env.reset(seed=11)
seen = [obs]
for _ in range(8):
    obs, r, term, trunc, info = env.step(env.action_space.sample())
    seen.append(obs)
    if term or trunc:
        break
info = tb.run_episode(env, tb.OracleAgent(), seed=11)
print(json.dumps({"seen": seen, "hash": info["state_hash"], "diff": info["diff"]}, sort_keys=True, default=str))
"""
    runs = [
        subprocess.run([sys.executable, "-c", script, *warm], capture_output=True, text=True, check=True).stdout
        for warm in ([], ["retail/ST030_002", "retail/ST002_001"])
    ]
    assert json.loads(runs[0]) == json.loads(runs[1])
