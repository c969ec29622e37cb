"""The agents a run can name (``thinkingbox eval --agent NAME``), from the ``thinkingbox_env.agents`` entry points.

A backend's ``build(options, seed)`` returns an agent (``reset``/``act``, see
:class:`~thinkingbox_env.agents.baselines.Agent`) for one trial with that seed.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..plugins import Backend, Registry

AGENT_GROUP = "thinkingbox_env.agents"


@dataclass(frozen=True)
class AgentCapabilities:
    """What the harness may rely on, read before the agent is built.

    Attributes:
        needs_endpoint: it talks to an OpenAI-compatible endpoint, so a run first resolves the
            model and sends one test request (a dead endpoint then costs seconds, not the run).
        records_calls: it keeps ``calls``, one record per model call with its token usage, which
            the row's usage, timings and trace annotations are made from.
        customer_tool: a chat model that can also play the customer-tool protocol TRL training uses.
        requires: modules it imports when built (an optional extra), checked before a run starts.
        extra: the package extra that provides ``requires``, for the install hint.
    """

    needs_endpoint: bool = False
    records_calls: bool = False
    customer_tool: bool = False
    requires: tuple[str, ...] = ()
    extra: str | None = None


AGENTS: Registry[AgentCapabilities] = Registry("agent", AGENT_GROUP, AgentCapabilities, builtins={
    name: f"thinkingbox_env.agents.backends:{name.upper()}" for name in ("oracle", "noop", "openai", "transformers")})


def register_agent(backend: Backend[AgentCapabilities], *, replace: bool = False) -> Backend[AgentCapabilities]:
    """Make an agent available by name in this process; installed packages use the entry-point group instead."""
    return AGENTS.register(backend, replace=replace)
