"""Simulated users: the environment's side of the dialogue.

The user belongs to the environment, not to the agent under test, so it is held
fixed across agents. ``ScriptedUser`` is deterministic and offline and reads the
agent's message as dialogue acts over typed facts (``slots``, ``acts``,
``decisions``); ``LLMUser`` puts an OpenAI-compatible model behind the same
interface, bound by a grounding contract and fed only the user-visible dialogue.
"""

from __future__ import annotations

from typing import Protocol

from ..contracts.spec import UserSpec
from .acts import Reading, customer_agreed, read_agent_message, read_customer_answer
from .llm import USER_SYSTEM_PROMPT, LLMUser, escape_dialogue_text, normalise_reply, render_profile
from .phrases import DONE_MARKER, DONT_KNOW, SATISFIED
from .scripted import PERSONAS, ScriptedUser
from .slots import ENGINE_SLOTS, Vocabulary, infer_slot


class SimulatedUser(Protocol):
    """The customer side of an episode; ``deterministic`` tells Gymnasium whether a seed fixes the dialogue.

    A user may also expose a true ``ended`` attribute once it has left the chat (the
    impatient persona does); the env then ends the episode with ``user_left`` right after
    that reply, since further turns would talk to nobody.
    """

    deterministic: bool

    def reset(self, spec: UserSpec, seed: int | None) -> None: ...

    def reply(self, dialogue: list[dict[str, str]]) -> str:
        """Next user turn given the user-visible dialogue (user and assistant text only)."""
        ...


def make_user(persona: str = "plain") -> ScriptedUser:
    """The default user of a task, with a persona."""
    return ScriptedUser(persona=persona)


__all__ = [
    "DONE_MARKER", "DONT_KNOW", "ENGINE_SLOTS", "PERSONAS", "SATISFIED", "USER_SYSTEM_PROMPT", "LLMUser", "Reading",
    "ScriptedUser", "SimulatedUser", "Vocabulary", "customer_agreed", "escape_dialogue_text", "infer_slot", "make_user",
    "normalise_reply", "read_agent_message", "read_customer_answer", "render_profile",
]
