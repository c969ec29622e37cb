"""A task's initial state (``t_<n>``): only the tables its patch touches, shared by every episode of the task.

Templates never change once built, so every episode of a task reads through to the same
rows and diffs its writes against the same dictionaries. A template built in Python
(``patching``) lives only as rows here until a second episode needs it in DuckDB.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import duckdb

from .episode import EpisodeState, ScheduledFaults
from .memo import Answer
from .sandbox import _Process, _quote
from .tables import rows_by_key

if TYPE_CHECKING:
    from .database import DomainDatabase

log = logging.getLogger("thinkingbox_env.state")


@dataclass
class TaskTemplate:
    """A task's initial state; episodes copy only the tables they write, so a reset is cheap.

    ``schema`` names the template's patched tables: in the database when ``in_db``, else
    only as a name (memo keys, cached digests) while its rows live in Python and each
    episode patches its own copy of a table with ``patch_statements``. A template built in
    Python is put into the database when a second episode of it needs DuckDB (``claim``):
    the first episode of a fresh variant pays for no template, and later ones share it.
    """
    domain: DomainDatabase
    schema: str
    tables: frozenset[str]
    sequence_starts: dict[str, int]
    in_db: bool = True
    patch_statements: dict[str, list[tuple[str, list[Any]]]] = field(default_factory=dict, repr=False)
    _claims: int = field(default=0, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    _base_rows: dict[str, dict[tuple, dict[str, Any]]] = field(default_factory=dict, repr=False)
    _reader: EpisodeState | None = field(default=None, repr=False)

    def base_schema(self, table: str) -> str:
        """The name the table's initial content goes by (memo keys, cached digests); a schema only when ``in_db``."""
        return self.schema if table in self.tables else self.domain.schema

    def patch_sql(self, table: str, schema: str) -> list[tuple[str, list[Any]]]:
        """The statements that apply this template's patch to a plain copy of the domain's table in ``schema``."""
        return [(sql.replace("{schema}", schema), params) for sql, params in self.patch_statements.get(table, ())]

    def claim(self) -> bool:
        """Whether an episode, first needing a patched table in DuckDB and outside a transaction, may use ``schema``.

        An episode decides once, so a schema created later is never one that a transaction
        it already began cannot see. The second episode to ask puts a Python-built template
        into the database.
        """
        with self._lock:
            if not self.in_db and self.tables and self._claims >= 1:
                self._materialize()
            self._claims += 1
            return self.in_db

    def _materialize(self) -> None:
        """The patched tables as plain copies of the domain's, patched by the template's statements, in one transaction."""
        with _Process._lock:
            cur = _Process.connection().cursor()
        try:
            rules = self.domain._copy_rules(cur)  # read when the template was built
            cur.execute("; ".join(["BEGIN TRANSACTION", f"CREATE SCHEMA {self.schema}"] + [
                rules[t].copy_sql(self.domain.tables[t], self.schema, self.domain.schema) for t in sorted(self.tables)]))
            for table in sorted(self.tables):
                for sql, params in self.patch_sql(table, self.schema):
                    cur.execute(sql, params)
            cur.execute("COMMIT")
            self.in_db = True
        except duckdb.Error:  # the episodes keep patching their own copies, as before
            log.warning("could not put task template %s into the database", self.schema, exc_info=True)
            with contextlib.suppress(duckdb.Error):
                cur.execute("ROLLBACK")
        finally:
            cur.close()

    def base_rows(self, table: str, cursor: duckdb.DuckDBPyConnection | None = None) -> dict[tuple, dict[str, Any]]:
        """The table's initial rows by primary key, in key order; read once per template.

        Templates never change once built, so every episode of the task diffs its
        writes against the same dictionary instead of reading the table again.
        """
        index = self._base_rows.get(table)
        if index is None and cursor is None:  # no episode cursor needed: the rows are read on the process's own
            with _Process._lock:
                return self.base_rows(table, _Process.parser())
        if index is None:
            assert cursor is not None
            if table in self.tables:  # built with the template; read back only if that was lost
                index = rows_by_key(cursor, f"{self.schema}.{_quote(table)}", self.domain.tables[table].primary_key)
            else:  # the domain template's rows: the same for every task of the domain
                index = self.domain._domain_rows(table, cursor)
            self._base_rows[table] = index
        return index

    def new_episode(self, faults: ScheduledFaults | None = None) -> EpisodeState:
        """A new episode on this template; ``faults``: the task's scheduled transient tool failures, if any."""
        return EpisodeState(self, faults=faults)

    def read_initial(self, sql: str, params: Sequence[Any], tables: Sequence[str],
                     writes: list[tuple[str, list[Any], str]] | None = None) -> Answer:
        """A read of ``tables`` in the initial state, or in it plus an episode's ``writes``, run on the template's one reader.

        The reader is a state no one keeps writes in, outside every episode's transaction: the
        patched tables it needs are copied into its schema once (or read from the template's
        schema once that is in the database) and kept for every later read of any state of the
        task; an episode's writes are replayed in a transaction the reader rolls back.
        """
        with self._lock:
            reader = self._reader
            if reader is None:
                reader = self._reader = EpisodeState(self, probe=True, reads_initial=True)
            if writes:
                return reader.replay_and_read(sql, params, tables, writes)
            return reader._read_in_duckdb(sql, params, tables)

    def patched_copy(self, table: str) -> str | None:
        """The schema of the reader's copy of a patched table (the task's initial rows, in their order), if it made one.

        Only a statement outside a transaction may read it: a transaction begun before the copy
        was made cannot see it.
        """
        with self._lock:
            reader = self._reader
            return reader.schema if reader is not None and table in reader._in_db else None

    def drop(self) -> None:
        with self._lock:
            owned = {self.schema}
            if self._reader is not None:
                owned.add(self._reader.schema)
                self._reader.close()
                self._reader = None
            in_db = self.in_db
        self.domain.read_cache.forget(owned)
        if not in_db:  # built in Python and never put into the database: no schema to drop
            return
        with _Process._lock:
            cur = _Process.connection().cursor()
            cur.execute(f"DROP SCHEMA IF EXISTS {self.schema} CASCADE")
            cur.close()

