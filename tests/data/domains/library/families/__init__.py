"""Library task families: the list the engine reads, one instance per family."""

from __future__ import annotations

from thinkingbox_env.family import TaskFamily

from .lending import Borrow

FAMILIES: list[TaskFamily] = [Borrow()]
