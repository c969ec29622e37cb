"""Travel task families: seeded generators of Harborlight Stays support tasks."""

from __future__ import annotations

from thinkingbox_env.family import TaskFamily

FAMILIES: list[TaskFamily] = []
