"""An episode's schema ``e_<n>`` in DuckDB, made only when a statement must reach DuckDB, and its write log replayed into it.

Most statements of an episode are answered by the memo or the fast path and only logged
(``episode.py``); DuckDB sees the episode's writes when a later statement misses both. Then the
written tables are copied in from the template (copy-on-write, with their constraints and
defaults) and the pending writes replayed, in order, or only those to the tables the statement
names where that cannot change its answer. A read-only reader of the template replays an
episode's writes inside a transaction it rolls back, so the episode needs no schema at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import duckdb

from .errors import StateError
from .memo import Answer
from .sandbox import _Process, _quote
from .statements import plan_write, written_table
from .tables import TableInfo

if TYPE_CHECKING:
    from .templates import TaskTemplate


class EpisodeDuckDB:
    """The DuckDB side of ``EpisodeState``: its cursor and schema, the template's tables copied in, the log replayed.

    The attributes below are ``EpisodeState``'s fields (declared there, with their defaults).
    """

    template: TaskTemplate
    schema: str
    cursor: duckdb.DuckDBPyConnection | None
    materialized: set[str]
    closed: bool
    _log: list[tuple[str, list[Any]]]
    _synced: int
    _ahead: set[int]
    _in_db: set[str]
    _tokens: dict[str, int | None]
    _pending_begin: bool
    _in_txn: bool
    _shared: bool | None
    probe: bool
    reads_initial: bool
    _schema_made: bool

    @property
    def tables(self) -> dict[str, TableInfo]:
        return self.template.domain.tables

    def _cur(self) -> duckdb.DuckDBPyConnection:
        """The episode's cursor, opened (with its schema) the first time a statement must reach DuckDB."""
        if self.cursor is None:
            if self.closed:
                raise StateError("this episode state is closed")
            if self.template.in_db:  # built in DuckDB, or put there before this episode's first transaction
                self._shared = True
            elif not self.template.tables:  # nothing patched: nothing to share
                self._shared = False
            con = _Process.connection()
            with _Process._lock:
                cursor = con.cursor()
            if self.reads_initial:  # its schema only once it copies a table in (_own_schema)
                cursor.execute(f"SET search_path = '{self._search_path()}'")
            else:
                self._make_schema(cursor)
            self.cursor = cursor
        return self.cursor

    def _make_schema(self, cursor: duckdb.DuckDBPyConnection) -> None:
        self._schema_made = True
        cursor.execute(f"CREATE SCHEMA {self.schema}; SET search_path = '{self._search_path()}'")

    def _own_schema(self) -> None:
        """The reader's schema, made when it first copies a table in (most of its reads name only domain tables)."""
        if not self._schema_made:
            self._make_schema(self._cur())

    def _search_path(self) -> str:
        template = self.template
        bases = f"{template.schema},{template.domain.schema}" if self._shared else template.domain.schema
        return f"{self.schema},{bases}" if self._schema_made or not self.reads_initial else bases

    def _claim(self) -> bool:
        """Whether this episode uses the template's schema for its patched tables; decided the first time one is needed.

        Only outside a transaction may an episode ask for a Python-built template to be put
        into the database (``TaskTemplate.claim``): a transaction cannot see a schema
        created after it began. Inside one, or for a check at load, it patches its own copies.
        """
        cur = self._cur()
        if self._shared is None:
            if self._in_txn or self.probe:
                self._shared = False
            else:
                self._shared = self.template.claim()
                if self._shared:
                    cur.execute(f"SET search_path = '{self._search_path()}'")
        return self._shared

    def _decide_for(self, tables: Sequence[str]) -> None:
        """Claim (or not) before a transaction begins, if a patched table is about to be copied in."""
        if self._shared is None and any(t in self.template.tables and t not in self._in_db for t in tables):
            self._claim()

    def _begin_if_pending(self) -> None:
        if self._pending_begin:
            self._cur().execute("BEGIN TRANSACTION")
            self._pending_begin, self._in_txn = False, True

    def _copy_in(self, table: str) -> None:
        if table not in self._in_db:
            cur = self._cur()
            shared = table not in self.template.tables or self._claim()
            if self.reads_initial:
                self._own_schema()
            patched = (None if shared or self.reads_initial or self._in_txn or self._pending_begin
                       else self.template.patched_copy(table))
            cur.execute(self._copy_sql(table, shared, patched))  # outside a transaction, from the reader's copy if it has one
            if not shared and patched is None:  # the template's patch, run on this copy
                for sql, params in self.template.patch_sql(table, self.schema):
                    cur.execute(sql, params)
            self._in_db.add(table)

    def _copy_patched_in(self, tables: Sequence[str] | None) -> None:
        """Before a read reaches DuckDB: the patched tables it names, copied in when the template is not in DuckDB."""
        template = self.template
        needed = [t for t in (template.tables if tables is None else tables) if t in template.tables and t not in self._in_db]
        if needed and not self._claim():
            self._begin_if_pending()  # inside the scope's transaction, so a rollback takes the copies back
            for table in sorted(needed):
                self._copy_in(table)

    def _sync(self, tables: Sequence[str] | None = None) -> None:
        """Replay the writes DuckDB has not seen, in order, so that it holds this episode's state of ``tables``.

        With ``tables`` named and every pending write self-contained (it reads no table but
        the one it writes), only the writes to those tables are replayed: writes to other
        tables commute with them, and a table no statement reads never has to be copied in.
        Otherwise (``None``, or a pending write that reads another table) every pending
        write is replayed, in order.
        """
        if self._synced == len(self._log):
            return
        pending = [i for i in range(self._synced, len(self._log)) if i not in self._ahead]
        entries = [(i, *self._logged(i)) for i in pending]
        if tables is not None and all(contained for *_, contained in entries):
            entries = [e for e in entries if e[3] in tables]
        if not entries:
            return
        self._decide_for([table for _, _, _, table, _ in entries])
        self._begin_if_pending()
        cur = self._cur()
        for i, run, params, table, _ in entries:
            self._copy_in(table)
            cur.execute(run, params)
            self._mark_replayed(i)  # one at a time: outside a transaction each replayed write is already committed

    def _mark_replayed(self, i: int) -> None:
        self._ahead.add(i)
        while self._synced in self._ahead:
            self._ahead.discard(self._synced)
            self._synced += 1

    def _writes_to(self, tables: Sequence[str] | None) -> list[tuple[str, list[Any], str]] | None:
        """This episode's writes to ``tables``, for the reader to replay, where it may: else None.

        Only an episode that has nothing in DuckDB yet, outside a write scope, and only where
        each of those writes reads no table but its own (so that leaving the others out changes
        nothing the statement reads). Its first read of a written table then costs the reader a
        transaction instead of a schema, a copy of each table and their drop.
        """
        if tables is None or self.reads_initial or self.cursor is not None or self._pending_begin or self._in_txn:
            return None
        writes = []
        for i in range(len(self._log)):
            run, params, table, contained = self._logged(i)
            if table in tables:
                if not contained:
                    return None
                writes.append((run, params, table))
        return writes

    def replay_and_read(self, sql: str, params: Sequence[Any], tables: Sequence[str],
                        writes: list[tuple[str, list[Any], str]]) -> Answer:
        """The reader's answer to a read on the initial state plus ``writes``, which it rolls back after.

        Each table a write names is copied into the reader's schema first (its DDL, with its
        defaults and constraints, and the template's rows), outside the transaction, so the
        writes land on the reader's copies and never on a table another state reads.
        """
        assert self.reads_initial
        for table in sorted({t for _, _, t in writes} | {t for t in tables if t in self.template.tables}):
            self._copy_in(table)
        cur = self._cur()
        cur.execute("BEGIN TRANSACTION")
        try:
            for run, values, _ in writes:
                cur.execute(run, values)
            found = cur.execute(sql, list(params))
            return tuple(d[0] for d in found.description), found.fetchall()
        finally:
            cur.execute("ROLLBACK")

    def _logged(self, i: int) -> tuple[str, list[Any], str, bool]:
        """A logged write: the statement as run, its parameters, the table it writes, whether it reads no other table."""
        run, params = self._log[i]
        table = written_table(run)
        assert table is not None  # only statements written_table names are logged
        return run, params, table, plan_write(run, self.tables[table]).self_contained and self.template.domain.no_foreign_keys

    def materialize(self, table: str) -> None:
        """Copy a table into the episode schema (done automatically before a write reaches DuckDB)."""
        if table not in self.tables:
            raise StateError(f"unknown table '{table}'")
        self._decide_for([table])
        self._sync([table])
        self._begin_if_pending()
        self._copy_in(table)
        self.materialized.add(table)
        self._tokens.pop(table, None)

    def _copy_sql(self, table: str, shared: bool, base: str | None = None) -> str:
        """The episode's copy of a table (its constraints and defaults declared) filled from ``base``'s."""
        info = self.tables[table]
        if base is None:
            base = self.template.schema if shared and table in self.template.tables else self.template.domain.schema
        return (
            f"{info.create_episode_copy_in(self.schema).rstrip(';')}; "
            f"INSERT INTO {self.schema}.{_quote(table)} SELECT * FROM {base}.{_quote(table)}"
        )
