"""The task-family API: seeded generators of complete task instances.

A family encodes one workflow and its branches (do it, refuse, wait, escalate).
Frozen test tasks are family instances that were generated, reviewed and written
to ``task_specs/``; training draws fresh instances from the same generators,
guarded so that a training variant never reproduces a test task.
"""

from __future__ import annotations

import inspect
import random
from abc import ABC, abstractmethod
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar

from .authoring import TaskBody, domain_clock, domain_folder, pick_branch, predict_next_ids
from .spec import Patch, TaskSpec, parse_task


class TaskFamily(ABC):
    """A workflow that generates many task variants from a seed; frozen test tasks and training variants come from the same code."""
    code: ClassVar[str]  # id prefix, e.g. "ST030"
    name: ClassVar[str]  # e.g. "membership_upgrade"
    description: ClassVar[str] = ""
    branches: ClassVar[tuple[str, ...]] = ()
    domain: str = ""  # filled in by the domain loader

    @abstractmethod
    def build(self, rng: random.Random, seed: int) -> TaskBody | dict[str, Any]:
        """Return the task body (a :class:`TaskBody`, or the equivalent dict)."""

    @property
    def folder(self) -> Path:
        """The domain folder this family was written in (found from its module, so no domain has to be loaded)."""
        return domain_folder(inspect.getfile(type(self)))

    @property
    def now(self) -> datetime:
        """The domain clock from ``domain.yaml``: the time every generated date is relative to."""
        return domain_clock(self.folder)

    def branch(self, seed: int) -> str:
        """The branch of the workflow this seed exercises."""
        return pick_branch(self.branches, seed)

    def next_ids(self, patch: Patch | dict[str, Any]) -> dict[str, Any]:
        """The first id each sequence will hand out in a task with this patch.

        Golden actions sometimes name a row the golden run itself creates (update
        the ticket just opened); sequences are deterministic, so the id is known
        without building a database.
        """
        return predict_next_ids(self.folder, patch)

    def rng(self, seed: int) -> random.Random:
        return random.Random(f"{self.domain}/{self.code}/{seed}")

    def instance(self, seed: int, split: str = "train", number: int | None = None) -> TaskSpec:
        built = self.build(self.rng(seed), seed)
        body = built.to_dict() if isinstance(built, TaskBody) else built
        if split == "test":
            if number is None:
                raise ValueError("a test instance needs its number (the nnn of the task id)")
            task_id = f"{self.code}_{number:03d}"
        else:
            task_id = f"{self.code}_train_{seed}"
        data = {"id": task_id, "domain": self.domain, "family": self.code, "split": split, "seed": seed, **body}
        return parse_task(data, f"family {self.domain}/{self.code} seed {seed}", self.domain)
