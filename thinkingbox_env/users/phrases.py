"""Words of the dialogue protocol shared by the env, the agents and the users."""

from __future__ import annotations

from ..contracts.protocol import DONE_MARKER  # defined with the other protocol words of the engine

__all__ = ["DONE_MARKER", "DONT_KNOW", "SATISFIED"]

DONT_KNOW = "I don't know."
SATISFIED = "Thanks, that solves it."
