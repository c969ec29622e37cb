"""Words of the dialogue protocol shared by the env, the agents and the users."""

from __future__ import annotations

DONE_MARKER = "<DONE>"
DONT_KNOW = "I don't know."
SATISFIED = "Thanks, that solves it."
