"""A trial's first model request, built exactly as the trial would send it, without sending it.

Measuring an opening by rebuilding its prompt by hand would drift from what the agent
sends (its protocol, its tool view, its sampling options). Instead the trial's own
environment and agent are set up, and the agent's first request is caught at its
client: messages, tools and options as they would go over the wire.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .config import EvalConfig
from .trial import build_model_agent, present_tools, trial_env, trial_seed


class _Caught(Exception):
    def __init__(self, request: dict[str, Any]):
        super().__init__("request caught")
        self.request = request


class _CatchingCompletions:
    def create(self, **request: Any) -> Any:
        raise _Caught(request)


class _CatchingClient:
    """Stands where the agent's OpenAI client stands, and keeps the first request instead of sending it."""

    def __init__(self) -> None:
        self.chat = type("Chat", (), {"completions": _CatchingCompletions()})()


def opening_request(config: EvalConfig, task_id: str, compact_tools: bool | None = None) -> dict[str, Any] | None:
    """The keyword arguments of the first chat request of trial 0 of ``task_id`` (model, messages, tools, options).

    ``compact_tools`` overrides the run's choice (to compare the two forms). None when the
    agent sends its requests through no OpenAI client (it is not a model behind an endpoint).
    """
    if compact_tools is not None and compact_tools != config.compact_tools:
        config = dataclasses.replace(config, compact_tools=compact_tools)
    seed = trial_seed(config.seed, 0)
    agent = build_model_agent(config, seed)
    if not hasattr(agent, "client"):
        return None
    agent.client = _CatchingClient()
    agent = present_tools(config, agent)
    base, env = trial_env(config, task_id)
    try:
        obs, _ = env.reset(seed=seed)
        agent.reset(base.task, obs)
        agent.act(obs)
    except _Caught as caught:
        return caught.request
    finally:
        env.close()
    return None
