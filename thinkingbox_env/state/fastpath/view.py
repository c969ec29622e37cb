"""What a fast-path evaluator is given and gives back: an episode's rows as a read-only view, and an answer.

An evaluator sees the episode only through ``View``: table shapes, the rows as they are now
(template rows with the overlay folded in) and the rules Python applies to a row. It never
reaches DuckDB, never writes, and answers only where its answer is certain to be DuckDB's.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

if TYPE_CHECKING:
    from ..row_rules import RowRules
    from ..tables import TableInfo


class Answer(NamedTuple):
    """A statement's result as DuckDB would return it, and the name of the shape that computed it (hit counts)."""
    shape: str
    names: tuple[str, ...]
    rows: list[tuple]


class View(Protocol):
    """An episode's tables as the fast path may read them."""

    @property
    def tables(self) -> dict[str, TableInfo]:
        """Every table of the domain, by name."""
        ...

    def rows_known(self, table: str) -> bool:
        """Whether the table's current rows are all held in Python (its overlay is complete) and may answer."""
        ...

    def current_rows(self, table: str) -> Iterable[dict[str, Any]] | None:
        """The table's rows now, in key order; None when only a scan in DuckDB can tell."""
        ...

    def live_row(self, table: str, key: tuple) -> dict[str, Any] | None:
        """The row with this primary key now, or None (absent or deleted)."""
        ...

    def row_rules(self, table: str) -> RowRules | None:
        """The table's types, defaults and constraints where Python applies all of them, else None."""
        ...


def identifier(token: str, reserved: frozenset[str]) -> str | None:
    """A token as DuckDB names it, or None when only DuckDB can tell (an unquoted reserved word)."""
    if token.startswith('"'):
        return token[1:-1]
    return None if token.lower() in reserved else token
