"""What the state knows of one table's shape, read from the database once per domain."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from ..contracts.spec import TableMeta
from .memo import VOLATILE_RE
from .sandbox import _quote


@dataclass(frozen=True)
class TableInfo:
    """The shape of one table, read from the database once, that copying, diffing and hashing all rely on."""
    name: str
    ddl_body: str  # the CREATE TABLE statement after "CREATE TABLE <schema>."
    columns: tuple[str, ...]
    types: tuple[str, ...]
    primary_key: tuple[str, ...]
    meta: TableMeta

    def create_in(self, schema: str) -> str:
        return f"CREATE TABLE {schema}.{self.ddl_body}"

    def create_episode_copy_in(self, schema: str) -> str:
        """The table without its primary-key index, for an episode's copy.

        Building the index is most of the cost of copying a small table. Episode
        rows keep NOT NULL, CHECK and DEFAULT; key uniqueness is guaranteed by the
        sequences for minted ids and verified when the episode is diffed.
        """
        body = re.sub(r",\s*PRIMARY KEY\s*\([^)]*\)", "", self.ddl_body)
        body = re.sub(r"\s+PRIMARY KEY\b", "", body)
        return f"CREATE TABLE {schema}.{body}"

    @cached_property
    def compared_columns(self) -> tuple[str, ...]:
        """The columns a diff compares (every one but the volatile ones), asked for every table of every graded episode."""
        return tuple(c for c in self.columns if c not in self.meta.volatile)

    @cached_property
    def column_types(self) -> dict[str, str]:
        """Each column's declared type by name: the fast path binds every parameter to one."""
        return dict(zip(self.columns, self.types))

    @cached_property
    def memoisable(self) -> bool:
        """False when a default of the table draws a value of its own (a clock, a random id, a sequence)."""
        return VOLATILE_RE.search(self.ddl_body) is None


def rows_by_key(cursor: Any, qualified_table: str, primary_key: Sequence[str]) -> dict[tuple, dict[str, Any]]:
    """Every row of a table by its primary key, in key order: how the domain and task templates index their rows."""
    order = ", ".join(_quote(c) for c in primary_key)
    res = cursor.execute(f"SELECT * FROM {qualified_table} ORDER BY {order}")
    names = tuple(d[0] for d in res.description)
    index: dict[tuple, dict[str, Any]] = {}
    for values in res.fetchall():
        row = dict(zip(names, values))
        index[tuple(row[c] for c in primary_key)] = row
    return index
