"""Library task families: the list the engine reads (a request with its dimensions, and a two-request conversation)."""

from __future__ import annotations

from thinkingbox_env.authoring.family import TaskFamily

from .lending import Borrow, BorrowTwo

FAMILIES: list[TaskFamily] = [Borrow(), BorrowTwo()]
