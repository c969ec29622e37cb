"""What grading reads of an episode to diff and hash it, handed over as one value instead of private fields."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .tables import TableInfo

Row = dict[str, Any]


@dataclass(frozen=True)
class OutcomeInputs:
    """An episode's written tables, its overlay and the template facts ``diff.py`` needs, all read only.

    The overlay holds, for each written table, the final row of every key the episode wrote
    (None for a deleted row); a table in ``untracked`` has an incomplete overlay and must be
    read by a scan. Template rows, and the canonical lines rendered from them, are shared by
    every episode of a task and keyed by ``base_schema(table)``.
    """
    tables: Mapping[str, TableInfo]
    written: frozenset[str]
    untracked: frozenset[str]
    overlay: Mapping[str, Mapping[tuple, Row | None]]
    base_schema: Callable[[str], str]  # the name a table's initial content goes by (cache keys)
    base_index: Callable[[str], Mapping[tuple, Row]]  # a table's initial rows by primary key, in key order
    domain_schema: str
    domain_rows: Mapping[str, Mapping[tuple, Row]]  # the domain template's rows read so far, by table
    line_cache: dict[tuple[str, str], dict[tuple, str]]  # canonical lines of template rows, kept per domain by diff.py
