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
from contextvars import ContextVar
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar

from ..contracts.spec import Patch, TaskSpec, parse_task
from . import TaskBody, domain_clock, domain_folder, pick_branch, predict_next_ids

_SPLIT: ContextVar[str] = ContextVar("thinkingbox_family_split", default="train")


class TaskFamily(ABC):
    """A workflow that generates many task variants from a seed; frozen test tasks and training variants come from the same code."""
    code: ClassVar[str]  # id prefix, e.g. "ST030"
    name: ClassVar[str]  # e.g. "membership_upgrade"
    description: ClassVar[str] = ""
    branches: ClassVar[tuple[str, ...]] = ()
    # branches (e.g. combinations of two requests) that only test tasks exercise: the test split then
    # measures generalisation to combinations no training variant was drawn from
    held_out_branches: ClassVar[tuple[str, ...]] = ()
    test_count: ClassVar[int | None] = None  # frozen test instances `thinkingbox freeze` writes by default
    domain: str = ""  # filled in by the domain loader

    @property
    def split(self) -> str:
        """The split being built ("train" or "test"); openings and branches are drawn by it.

        Held in a context variable, so threads generating variants of one family do not see each other's split.
        """
        return _SPLIT.get()

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
        """The branch of the workflow this seed exercises in the current split (held-out branches: test only)."""
        if self.split == "test" or not self.held_out_branches:
            return pick_branch(self.branches, seed)
        return pick_branch(tuple(b for b in self.branches if b not in self.held_out_branches), seed)

    def next_ids(self, patch: Patch | dict[str, Any]) -> dict[str, Any]:
        """The first id each sequence will hand out in a task with this patch.

        Golden actions sometimes name a row the golden run itself creates (update
        the ticket just opened); sequences are deterministic, so the id is known
        without building a database.
        """
        return predict_next_ids(self.folder, patch)

    def branch_for(self, seed: int, split: str) -> str:
        """The branch ``seed`` exercises in ``split``, without building the task."""
        token = _SPLIT.set(split)
        try:
            return self.branch(seed)
        finally:
            _SPLIT.reset(token)

    def rng(self, seed: int) -> random.Random:
        return random.Random(f"{self.domain}/{self.code}/{seed}")

    def instance(self, seed: int, split: str = "train", number: int | None = None) -> TaskSpec:
        if split not in ("train", "test"):
            raise ValueError(f"split must be 'train' or 'test', got {split!r}")
        unknown = [b for b in self.held_out_branches if b not in self.branches]
        if unknown:
            raise ValueError(f"family {self.code}: held-out branches {unknown} are not branches")
        token = _SPLIT.set(split)
        try:
            built = self.build(self.rng(seed), seed)
        finally:
            _SPLIT.reset(token)
        body = built.to_dict() if isinstance(built, TaskBody) else built
        origin = body.get("origin")
        if isinstance(origin, dict) and not origin.get("branches"):
            body["origin"] = {**origin, "branches": [f"{self.code}:{self.branch_for(seed, split)}"]}
        if split == "test":
            if number is None:
                raise ValueError("a test instance needs its number (the nnn of the task id)")
            task_id = f"{self.code}_{number:03d}"
        else:
            task_id = f"{self.code}_train_{seed}"
        data = {"id": task_id, "domain": self.domain, "family": self.code, "split": split, "seed": seed, **body}
        return parse_task(data, f"family {self.domain}/{self.code} seed {seed}", self.domain)
