"""Gymnasium ecosystem: versioned ids, the async vector env with its defaults, one env for a whole domain."""

from __future__ import annotations

import warnings

import gymnasium as gym
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AsyncVectorEnv

import thinkingbox_env as tb
from thinkingbox_env.envs.registration import gym_id
from thinkingbox_env.tasks.domain import load_domain


def test_gym_ids_carry_the_task_set_version_and_the_unversioned_id_still_resolves():
    version = load_domain("retail").spec.task_set_version
    assert gym_id("retail/ST030_001") == f"thinkingbox/retail.ST030_001-v{version}"
    env = gym.make(f"thinkingbox/retail.ST030_001-v{version}")
    assert env.spec.id == f"thinkingbox/retail.ST030_001-v{version}"
    assert env.reset(seed=0)[1]["task_id"] == "retail/ST030_001"
    env.close()
    assert tb.make("retail/ST030_001").spec.id == env.spec.id
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        old = gym.make("thinkingbox/retail.ST030_001")  # Gymnasium picks the latest version
    assert old.spec.id == env.spec.id
    old.close()


def test_async_vector_env_works_with_its_default_shared_memory():
    ids = ["retail/ST030_001", "retail/ST004_001"]
    venv = AsyncVectorEnv([lambda t=t: tb.make(t) for t in ids])  # shared_memory=True, copy=True: the defaults
    try:
        obs, info = venv.reset(seed=0)
        assert [o["messages"][2]["content"] for o in obs] == [tb.load_task(t).user.opening for t in ids]
        assert all(o in venv.single_observation_space for o in obs)
        obs, reward, terminated, truncated, info = venv.step(("What is the email address on your account?", "Done. <DONE>"))
        assert "@" in obs[0]["messages"][-1]["content"]  # the customer of the first env answered
        assert list(terminated) == [False, True] and list(reward) == [0.0, 0.0]
    finally:
        venv.close()


def test_make_vec_async_by_id():
    venv = gym.make_vec(gym_id("retail/ST030_001"), num_envs=2, vectorization_mode="async")
    try:
        obs, _ = venv.reset(seed=1)
        assert len(obs) == 2 and obs[0] == obs[1]  # same task, same seed: same opening observation
    finally:
        venv.close()


def test_domain_env_draws_a_task_per_reset_reproducibly():
    env = tb.DomainEnv("retail")
    seen = {env.reset()[1]["task_id"] for _ in range(8)}
    assert len(seen) > 1 and all(t in tb.list_tasks("retail") for t in seen)
    first = env.reset(seed=5)
    again = env.reset(seed=5)
    assert first[1]["task_id"] == again[1]["task_id"] and first[0] == again[0]
    obs, info = env.reset(options={"task_id": "retail/ST030_001"})
    assert info["task_id"] == "retail/ST030_001"
    info = tb.run_episode(env, tb.OracleAgent(), seed=0)  # reset draws a task; the oracle solves whichever it is
    assert info["verdict"] == 1.0 and info["task_id"] == env.task.full_id
    env.close()


def test_domain_env_train_split_draws_generated_variants_and_passes_the_checker():
    env = tb.DomainEnv("retail", split="train", families=["ST004"])
    obs, info = env.reset(seed=3)
    assert info["split"] == "train" and info["family"] == "ST004"
    assert info["task_id"] not in tb.list_tasks("retail")
    env.close()
    check_env(tb.DomainEnv("retail"), skip_render_check=True)


def test_the_domain_env_is_registered_with_gymnasium():
    version = load_domain("insurance").spec.task_set_version
    env = gym.make(f"thinkingbox/insurance-v{version}")
    obs, info = env.reset(seed=0)
    assert info["task_id"].startswith("insurance/")
    env.close()
