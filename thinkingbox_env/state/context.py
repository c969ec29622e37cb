"""The state as a tool sees it: the narrow face domain tools, ticketing, the knowledge base and filters are typed with.

A tool reads and writes the episode's backend with parameterised SQL and stamps what it
writes with the domain's frozen clock and the episode's id sequences; it needs nothing else,
and typing it with this protocol rather than ``EpisodeState`` keeps it from reaching into the
engine's copy-on-write machinery (a test double is any object with these seven members).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from pathlib import Path

    from ..contracts.spec import DomainSpec


class ToolContext(Protocol):
    """What a domain tool may do with the episode's state."""

    @property
    def domain(self) -> DomainSpec:
        """The domain the episode belongs to (its name, clock and tables)."""
        ...

    @property
    def now(self) -> datetime:
        """The domain's frozen evaluation time: tools stamp writes with this, never the wall clock."""
        ...

    @property
    def knowledge_base(self) -> Path | None:
        """The folder of the domain's knowledge-base documents (its ``kb/``), None where it has none."""
        ...

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Run a parameterised SELECT and return its rows as dicts."""
        ...

    def query_one(self, sql: str, params: Sequence[Any] = ()) -> dict[str, Any] | None:
        """The first row of a parameterised SELECT, or None."""
        ...

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Run a parameterised INSERT, UPDATE or DELETE on this episode only; the rows of its RETURNING clause, if any."""
        ...

    def next_id(self, table: str) -> Any:
        """The next id of the table's sequence, formatted as the domain declares it."""
        ...
