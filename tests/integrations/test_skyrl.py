"""The SkyRL-gym adapter through skyrl_gym's own registry and text-step API."""

from __future__ import annotations

import json

import pytest
from adapter_helpers import TASK, plain_outcome, require_adapter, single_steps, wrong_steps

skyrl_gym = require_adapter("skyrl", "skyrl_gym", 'pip install -e ".[skyrl]"')

import thinkingbox_env.integrations.skyrl  # noqa: E402,F401 - registers the env


def _text(step) -> str:
    if isinstance(step, str):
        return step
    return f"Let me check.\n<tool_call>{json.dumps({'name': step['name'], 'arguments': step['arguments']})}</tool_call>"


def _rollout(steps, **extras):
    env = skyrl_gym.make("thinkingbox", extras={"task_id": TASK, **extras})
    prompt, meta = env.init([])
    out = None
    for step in steps:
        out = env.step(_text(step))
        if out["done"]:
            break
    env.close()
    return prompt, meta, out, env


def test_the_oracle_as_text_earns_1_with_the_plain_envs_outcome():
    steps = single_steps()
    prompt, meta, out, env = _rollout(steps)
    assert meta["task_id"] == TASK and prompt[-1]["role"] == "user" and "<tool_call>" in prompt[-2]["content"]
    assert out["done"] and out["reward"] == 1.0
    plain = plain_outcome(steps)
    for key in ("verdict", "checks", "reward_vector", "state_hash"):
        assert out["metadata"][key] == plain[key], key
    assert env.get_metrics() == {"verdict": 1.0, "checks_passed": 1.0}


def test_a_wrong_trajectory_earns_0():
    _, _, out, env = _rollout(wrong_steps())
    assert out["done"] and out["reward"] == 0.0 and out["metadata"]["state_hash"] == plain_outcome(wrong_steps())["state_hash"]
    assert env.get_metrics()["checks_passed"] < 1.0


def test_a_tool_result_and_the_customers_reply_come_back_as_observations():
    env = skyrl_gym.make("thinkingbox", extras={"task_id": TASK})
    env.init([])
    said = env.step(single_steps()[0])
    assert not said["done"] and said["observations"][0]["role"] == "user" and said["observations"][0]["content"]
    looked = env.step(_text(single_steps()[1]))
    assert looked["observations"][0]["role"] == "tool" and "email" in looked["observations"][0]["content"]


def test_the_turn_limit_ends_the_episode_with_a_verdict():
    env = skyrl_gym.make("thinkingbox", extras={"task_id": TASK, "max_turns": 2})
    env.init([])
    env.step(single_steps()[0])
    out = env.step(_text(single_steps()[1]))
    assert out["done"] and out["reward"] == 0.0 and out["metadata"]["finish_reason"]


def test_a_train_variant_from_domain_family_and_seed():
    env = skyrl_gym.make("thinkingbox", extras={"domain": "retail", "family": "ST030", "seed": 7})
    _, meta = env.init([])
    assert meta["task_id"].startswith("retail/ST030_train_")


def test_extras_without_a_task_are_refused_clearly():
    with pytest.raises(ValueError, match="task_id"):
        skyrl_gym.make("thinkingbox", extras={})
    with pytest.raises(ValueError, match="family"):
        skyrl_gym.make("thinkingbox", extras={"domain": "retail"})
