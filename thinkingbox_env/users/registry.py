"""The simulated users a run can name (``--user NAME``), from the ``thinkingbox_env.users`` entry points.

A backend's ``build(options)`` returns a user (:class:`~thinkingbox_env.users.SimulatedUser`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..plugins import Backend, Registry

USER_GROUP = "thinkingbox_env.users"


@dataclass(frozen=True)
class UserCapabilities:
    """What the harness may rely on, read from the declaration rather than from the built user.

    Attributes:
        deterministic: a seed fixes the dialogue; otherwise the task's Gymnasium spec is marked
            nondeterministic, so nobody compares trials as if they were replays.
        can_end: the user may leave the chat (its ``ended`` turns true), and the episode then ends
            with ``user_left`` instead of the agent talking to nobody.
        binds_domain: it reads the domain's vocabulary, so ``bind_domain(domain)`` is called first.
        needs_endpoint: it talks to an OpenAI-compatible endpoint, which a run asks once before its
            first trial, so a wrong model or a dead server is named before any trial is spent.
    """

    deterministic: bool = False
    can_end: bool = False
    binds_domain: bool = False
    needs_endpoint: bool = False


USERS: Registry[UserCapabilities] = Registry("user", USER_GROUP, UserCapabilities, builtins={
    "scripted": "thinkingbox_env.users.backends:SCRIPTED", "llm": "thinkingbox_env.users.backends:LLM"})


def register_user(backend: Backend[UserCapabilities], *, replace: bool = False) -> Backend[UserCapabilities]:
    """Make a simulated user available by name in this process; installed packages use the entry-point group instead."""
    return USERS.register(backend, replace=replace)
