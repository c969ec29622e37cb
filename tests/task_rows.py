"""A task's starting rows in plain Python: the domain's seed CSVs with the task's patch applied.

The task-set tests that read a task's records without running an episode (consistency rules,
unambiguous requests) share this one reading of the seed and the patch.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from thinkingbox_env.contracts.spec import TaskSpec
from thinkingbox_env.state.database import read_seed_csv
from thinkingbox_env.tasks.domain import load_domain


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
