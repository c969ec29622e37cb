"""What the adapter tests share: the oracle's actions of a task, a wrong variant of them, and the plain env's outcome."""

from __future__ import annotations

import copy
import importlib
import os
from typing import Any

import pytest

import thinkingbox_env as tb
from thinkingbox_env.agents import OracleAgent
from thinkingbox_env.integrations.episode import outcome
from thinkingbox_env.tasks.domain import load_domain

TASK = "retail/ST030_001"

# Set by .ci/run in an adapter's own environment (a comma-separated list of adapter names): there its library was
# installed for the purpose, so a test that cannot import it fails instead of skipping.
REQUIRE_ADAPTERS = "THINKINGBOX_REQUIRE_ADAPTERS"


def require_adapter(adapter: str, module: str, install: str) -> Any:
    """Import ``module`` for ``adapter``'s tests: skip when it cannot be imported, fail where CI installed it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        why = f"{module} cannot be imported ({exc}); {install}"
        if adapter in os.environ.get(REQUIRE_ADAPTERS, "").split(","):
            pytest.fail(f"the {adapter} adapter's tests must run here: {why}", pytrace=False)
        pytest.skip(why, allow_module_level=True)


def oracle_actions(task_id: str = TASK, seed: int = 0) -> list[Any]:
    """The chat-protocol actions the oracle takes on ``task_id`` (messages and tool calls), recorded on the plain env."""
    env = tb.make(task_id)
    obs, _ = env.reset(seed=seed)
    agent = OracleAgent()
    agent.reset(env.task, obs)
    actions = []
    while True:
        action = agent.act(obs)
        actions.append(copy.deepcopy(action))
        obs, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            env.close()
            return actions


def as_calls(action: Any) -> list[Any]:
    """One env action as single steps: a string, or each tool call of an assistant message as ``{"name", "arguments"}``."""
    if isinstance(action, dict) and action.get("tool_calls"):
        return [{"name": c["function"]["name"], "arguments": c["function"]["arguments"]} for c in action["tool_calls"]]
    if isinstance(action, dict) and "content" in action:
        return [action["content"]]
    return [action]


def single_steps(task_id: str = TASK) -> list[Any]:
    """The oracle's actions, one message or one tool call per step."""
    return [step for action in oracle_actions(task_id) for step in as_calls(action)]


def wrong_steps(task_id: str = TASK) -> list[Any]:
    """The oracle's steps without its write calls: it says what it would do, the backend never changes."""
    tools = load_domain(task_id.split("/", 1)[0]).toolbox.tools
    writes = {name for name, tool in tools.items() if tool.writes}
    steps = [s for s in single_steps(task_id) if not (isinstance(s, dict) and s["name"] in writes)]
    assert len(steps) < len(single_steps(task_id)), f"no write call found in the golden run of {task_id}"
    return steps


def plain_outcome(steps: list[Any], task_id: str = TASK, seed: int = 0) -> dict[str, Any]:
    """The plain env's outcome after ``steps`` (what every adapter must reproduce)."""
    env = tb.make(task_id)
    env.reset(seed=seed)
    info: dict[str, Any] = {}
    for step in steps:
        _, _, terminated, truncated, info = env.step(step)
        if terminated or truncated:
            break
    env.close()
    return outcome(info)
