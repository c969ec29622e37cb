"""The frozen task sets as a Hugging Face ``datasets`` dataset, one row per task (``thinkingbox export-dataset``).

Trainers and evaluation harnesses that read datasets (TRL, verifiers, lighteval) take a task
set this way instead of through the registry: each row names the task, its domain and family,
its split and task set version, its content hash (the one eval rows and results carry, so a
row is tied to exactly the spec it was made from), whether it has rubric questions (which need
a judge), the episode's first messages (system prompts, policy and the customer's opening, in
the chat protocol) as ``prompt``, and the tool schemas and the whole spec as JSON text (their
shapes differ from task to task, which one Arrow column type could not hold).

The rows need nothing beyond the core (:func:`task_rows`); the ``Dataset`` needs ``datasets``
(the ``train`` extra), and a JSONL file of the same rows loads with ``load_dataset("json", ...)``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from ..extras import require_extra
from ..tasks.lookup import current_task_set_version, list_tasks, load_task
from .episode import Episode

__all__ = ["task_dataset", "task_rows"]

# the columns of every row, in order
COLUMNS = ("task_id", "domain", "family", "split", "task_set_version", "task_hash", "has_rubric", "prompt", "tools", "spec")


def task_rows(domains: Sequence[str] | None = None) -> Iterable[dict[str, Any]]:
    """One row per frozen task of ``domains`` (every domain when None), in task id order."""
    ids = list_tasks() if not domains else [t for d in domains for t in list_tasks(d)]  # an unknown domain is refused here
    for task_id in ids:
        spec = load_task(task_id)
        episode = Episode(task_id)
        first = episode.reset(seed=0)
        episode.close()
        yield {"task_id": task_id, "domain": spec.domain, "family": spec.family, "split": spec.split,
               "task_set_version": current_task_set_version(spec.domain), "task_hash": spec.content_key(),
               "has_rubric": bool(spec.checks.rubric),
               "prompt": [{"role": m["role"], "content": m.get("content") or ""} for m in first["messages"]],
               "tools": json.dumps(first["tools"], sort_keys=True), "spec": spec.model_dump_json()}


def task_dataset(domains: Sequence[str] | None = None) -> Any:
    """The rows of :func:`task_rows` as a ``datasets.Dataset``."""
    require_extra("train", ("datasets",), "a task set as a Hugging Face dataset")
    from datasets import Dataset

    return Dataset.from_list(list(task_rows(domains)))
