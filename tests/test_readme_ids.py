"""The README's Gymnasium id names the current task set, not an archived one."""

from __future__ import annotations

import re
from pathlib import Path

import gymnasium as gym

import thinkingbox_env  # noqa: F401 - registers the Gymnasium ids
from thinkingbox_env.tasks.lookup import current_task_set_version

ROOT = Path(__file__).resolve().parents[1]


def test_the_readmes_gymnasium_id_is_the_current_task_sets():
    ids = re.findall(r'gymnasium\.make\("(thinkingbox/(\w+)\.(\w+)-v(\d+))"\)', (ROOT / "README.md").read_text())
    assert ids, "the README shows no gymnasium.make id"
    for gym_id, domain, task, version in ids:
        assert int(version) == current_task_set_version(domain), f"{gym_id} is task set {version}, an archived one"
        env = gym.make(gym_id)
        assert env.unwrapped.task.full_id == f"{domain}/{task}"
        env.close()
