"""The task-family API: seeded generators of complete task instances.

A family encodes one workflow and its branches (do it, refuse, wait, escalate).
Frozen test tasks are family instances that were generated, reviewed and written
to ``task_specs/``; training draws fresh instances from the same generators,
guarded so that a training variant never reproduces a test task.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from typing import Any, ClassVar

from .spec import TaskSpec, parse_task


class TaskFamily(ABC):
    code: ClassVar[str]  # id prefix, e.g. "ST030"
    name: ClassVar[str]  # e.g. "membership_upgrade"
    description: ClassVar[str] = ""
    branches: ClassVar[tuple[str, ...]] = ()
    domain: str = ""  # filled in by the domain loader

    @abstractmethod
    def build(self, rng: random.Random, seed: int) -> dict[str, Any]:
        """Return the task body: user, patch, golden, golden_reply, checks, tags, description."""

    def next_ids(self, patch: dict[str, Any]) -> dict[str, Any]:
        """The first id each sequence will hand out in a task with this patch.

        Golden actions sometimes name a row the golden run itself creates (update
        the ticket just opened); sequences are deterministic, so the id is known.
        """
        from .domain import load_domain
        from .spec import Patch

        domain = load_domain(self.domain)
        template = domain.db.build_task_template(f"{self.domain}/{self.code} (generating)", Patch.model_validate(patch))
        try:
            state = template.new_episode()
            try:
                return {t: state.next_id(t) for t in template.sequence_starts}
            finally:
                state.close()
        finally:
            template.drop()

    def rng(self, seed: int) -> random.Random:
        return random.Random(f"{self.domain}/{self.code}/{seed}")

    def instance(self, seed: int, split: str = "train", number: int | None = None) -> TaskSpec:
        body = self.build(self.rng(seed), seed)
        if split == "test":
            if number is None:
                raise ValueError("a test instance needs its number (the nnn of the task id)")
            task_id = f"{self.code}_{number:03d}"
        else:
            task_id = f"{self.code}_train_{seed}"
        data = {"id": task_id, "domain": self.domain, "family": self.code, "split": split, "seed": seed, **body}
        return parse_task(data, f"family {self.domain}/{self.code} seed {seed}", self.domain)
