"""Agents that act in an episode; this part may import the engine only.

The oracle and no-op baselines, an OpenAI-compatible chat model, a local transformers checkpoint,
and the customer-as-a-tool adapter.
"""

from __future__ import annotations

from .baselines import Agent, NoopAgent, OracleAgent, run_episode
from .openai_chat import OpenAIChatAgent

__all__ = ["Agent", "NoopAgent", "OpenAIChatAgent", "OracleAgent", "run_episode"]
