"""A task's starting rows in plain Python: the domain's seed CSVs with the task's patch applied.

The task-set tests that read a task's records without running an episode (consistency rules,
unambiguous requests, the customer's choices) share this one reading of the seed and the patch, and
the task sets they read: what the generators write, the current frozen set, and task set 3.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import Any

import thinkingbox_env as tb
from thinkingbox_env.contracts.spec import TaskSpec
from thinkingbox_env.state.database import read_seed_csv
from thinkingbox_env.tasks.domain import load_domain
from thinkingbox_env.tasks.lookup import archived_task_set_versions, current_task_set_version


@cache
def seed_rows(domain: str) -> dict[str, tuple[dict[str, Any], ...]]:
    """The domain's seed rows by table, read once (the CSV text; dates are parsed where compared)."""
    folder = load_domain(domain).path / "seed"
    out: dict[str, tuple[dict[str, Any], ...]] = {}
    for path in sorted(folder.glob("*.csv")):
        header, rows = read_seed_csv(path)
        out[path.stem] = tuple(dict(zip(header, row, strict=False)) for row in rows)
    return out


def _matches(row: dict[str, Any], key: dict[str, Any]) -> bool:
    return all(str(row.get(k)) == str(v) for k, v in key.items())


def starting_rows(spec: TaskSpec) -> tuple[dict[str, list[dict[str, Any]]], dict[str, list[dict[str, Any]]]]:
    """Every table's rows after the patch's deletes, updates and inserts, and the inserted (planted) rows alone."""
    tables = {t: [dict(r) for r in rows] for t, rows in seed_rows(spec.domain).items()}
    for delete in spec.patch.delete:
        tables[delete.table] = [r for r in tables.get(delete.table, []) if not _matches(r, delete.key)]
    for update in spec.patch.update:
        for row in tables.get(update.table, []):
            if _matches(row, update.key):
                row.update(update.set)
    planted = {t: [dict(r) for r in rows] for t, rows in spec.patch.insert.items()}
    for table, rows in planted.items():
        tables.setdefault(table, []).extend(rows)
    return tables, planted


# --------------------------------------------------------------------------- the task sets the tests read


@cache
def generated(domain: str, train_seeds: int) -> tuple[TaskSpec, ...]:
    """What the family code writes: the test seeds ``thinkingbox freeze`` freezes, and training seeds 1..``train_seeds``."""
    specs = []
    for family in load_domain(domain).families.values():
        specs += [family.instance(seed, "test", number=seed) for seed in range(1, (family.test_count or 4) + 1)]
        specs += [family.instance(seed, "train") for seed in range(1, train_seeds + 1)]
    return tuple(specs)


def load_tasks(task_ids: Iterable[str]) -> tuple[TaskSpec, ...]:
    return tuple(tb.load_task(t) for t in task_ids)


@cache
def task_set_3(domain: str) -> tuple[TaskSpec, ...] | None:
    """Task set 3 of a domain: its archive under ``task_specs/<domain>/v3/``, or the current set while it is version 3."""
    if 3 in archived_task_set_versions(domain):
        return load_tasks(tb.list_tasks(domain, task_set_version=3))
    if current_task_set_version(domain) == 3:
        return load_tasks(tb.list_tasks(domain=domain))
    return None
