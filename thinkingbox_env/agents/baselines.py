"""Baseline agents and the minimal episode loop.

``OracleAgent`` replays a task's golden actions and closes with its golden reply:
it is the reference every task must pass. ``NoopAgent`` closes at once: every task
that expects a change must fail it. Both are used by ``thinkingbox validate`` and
as the embedded defaults of ``thinkingbox run``.
"""

from __future__ import annotations

from typing import Any, Protocol

from ..spec import TaskSpec, ToolCall
from ..users import DONE_MARKER


class Agent(Protocol):
    """What the episode loop needs of a player, so scripted baselines and model-backed agents run through the same ``run_episode``."""
    def reset(self, task: TaskSpec, observation: dict[str, Any]) -> None: ...

    def act(self, observation: dict[str, Any]) -> Any: ...


class OracleAgent:
    """Plays the golden tool calls (or a given list), then the closing message with the marker."""

    def __init__(self, calls: list[ToolCall] | None = None, closing: str | None = None):
        self._override = calls
        self._closing = closing
        self._queue: list[Any] = []

    def reset(self, task: TaskSpec, observation: dict[str, Any]) -> None:
        calls = self._override if self._override is not None else task.golden
        closing = self._closing if self._closing is not None else task.golden_reply
        self._queue = [{"name": c.name, "arguments": dict(c.arguments)} for c in calls]
        self._queue.append(f"{closing} {DONE_MARKER}")

    def act(self, observation: dict[str, Any]) -> Any:
        if not self._queue:
            return f"Done. {DONE_MARKER}"
        return self._queue.pop(0)


class NoopAgent:
    """Closes the conversation immediately without touching any tool."""

    def reset(self, task: TaskSpec, observation: dict[str, Any]) -> None:
        pass

    def act(self, observation: dict[str, Any]) -> Any:
        return f"I'm unable to help with this request. {DONE_MARKER}"


def run_episode(env: Any, agent: Agent, seed: int | None = None) -> dict[str, Any]:
    """Run one episode to its end and return the final ``info`` (with the verdict)."""
    obs, _ = env.reset(seed=seed)
    base = env.unwrapped
    agent.reset(base.task, obs)
    while True:
        obs, reward, terminated, truncated, info = env.step(agent.act(obs))
        if terminated or truncated:
            return info
