"""One episode's state (``e_<n>``): the task template plus a per-table overlay kept in Python.

The overlay maps primary key -> final row, or None for a deleted row, folded from the rows
every write statement returns (``RETURNING *`` is appended to each write, see
``statements``). It is the episode's row-level copy-on-write: the diff, the final contents
of written tables and the canonical hash follow from it without reading a table back.

A statement is answered by the first of three that can: the process-wide memo (``memo``),
the fast path (``fastpath``: Python, where the answer is certain to be DuckDB's), then
DuckDB. Every successful write is also logged, and the episode's tables exist in DuckDB
only once a statement reaches it: the log is then replayed into ``e_<n>`` (copying each
written table from the template, as a copy-on-write) before the statement runs, so DuckDB
always computes what the memo and the fast path do not know, with its constraints.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

import duckdb

from ..contracts.spec import DomainSpec, SequenceSpec
from . import fastpath
from .errors import StateError
from .memo import Answer, ReadCache, _params_key
from .outcome import OutcomeInputs
from .row_rules import RowRules
from .sandbox import _Process, _quote
from .statements import is_read, plan_write, written_table
from .tables import TableInfo
from .verify import STATEMENTS, check_fast_path, verify_mode

if TYPE_CHECKING:
    from .templates import TaskTemplate

log = logging.getLogger("thinkingbox_env.state")


def _dicts(names: tuple[str, ...], rows: Iterable[tuple]) -> list[dict[str, Any]]:
    return [dict(zip(names, row)) for row in rows]


@dataclass
class EpisodeState:
    """One episode's view of the backend: reads fall through to the templates, writes stay here.

    The tool-facing API is ``query``, ``query_one``, ``execute``, ``next_id`` and ``now``;
    the engine adds ``begin``/``commit``/``rollback`` around each write tool call.
    """

    template: TaskTemplate
    schema: str = ""
    cursor: duckdb.DuckDBPyConnection | None = None
    materialized: set[str] = field(default_factory=set)  # tables this episode has written
    sequences: dict[str, int] = field(default_factory=dict)
    write_log: list[str] = field(default_factory=list)
    overlay: dict[str, dict[tuple, dict[str, Any] | None]] = field(default_factory=dict)
    untracked: set[str] = field(default_factory=set)  # written tables whose overlay is incomplete: scanned
    closed: bool = False
    misses: int = 0  # statements of this episode that the memo could not answer and DuckDB ran
    _log: list[tuple[str, list[Any]]] = field(default_factory=list, repr=False)  # successful writes, as run
    _synced: int = 0  # how many of them, from the first, DuckDB has seen in this episode's schema
    _ahead: set[int] = field(default_factory=set, repr=False)  # later ones it has seen too (replayed for one table)
    _in_db: set[str] = field(default_factory=set, repr=False)  # tables copied into the episode schema
    _tokens: dict[str, int | None] = field(default_factory=dict, repr=False)  # memo token per written table
    _pending_begin: bool = False
    _in_txn: bool = False
    _shared: bool | None = None  # reads and copies the template's patched tables from its schema (decided once: _claim)
    probe: bool = False  # a check at load, not an episode: never asks for the template in DuckDB
    reads_initial: bool = False  # the template's reader (TaskTemplate.read_initial): never written
    _schema_made: bool = False  # e_<n> exists in DuckDB

    def __post_init__(self) -> None:
        # nothing is created in DuckDB yet: an episode whose statements all hit the memo never needs it
        self.schema = _Process.next_name("e_")
        self.sequences = dict(self.template.sequence_starts)

    # ------------------------------------------------------------------ clock & ids

    @property
    def domain(self) -> DomainSpec:
        return self.template.domain.spec

    @property
    def tables(self) -> dict[str, TableInfo]:
        return self.template.domain.tables

    @property
    def now(self) -> datetime:
        """The domain's frozen evaluation time: tools stamp writes with this, never the wall clock."""
        return self.domain.clock

    def next_id(self, table: str) -> Any:
        info = self.tables.get(table)
        if info is None or info.meta.sequence is None:
            raise StateError(f"table '{table}' declares no id sequence in domain.yaml")
        seq: SequenceSpec = info.meta.sequence
        n = self.sequences[table]
        self.sequences[table] = n + 1
        if seq.format == "{n}" and "INT" in info.types[info.columns.index(seq.column)].upper():
            return n
        return seq.format.format(n=n)

    # ------------------------------------------------------------------ DuckDB, when needed

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

    def _token(self, table: str) -> int | None:
        """The memo token of a table's content in this episode: 0 untouched, None when it cannot be told."""
        if table not in self.materialized:
            return 0
        if table in self.untracked:
            return None
        if table in self._tokens:
            return self._tokens[table]
        info = self.tables[table]
        rows = self.overlay.get(table, {})
        try:
            content = (table, tuple(sorted(
                (k, None if r is None else tuple(r[c] for c in info.columns)) for k, r in rows.items()
            )))
        except TypeError:  # keys that do not sort: no memo for this table
            tok = None
        else:
            tok = self.template.domain.read_cache.token(content)
        self._tokens[table] = tok
        return tok

    def _memo_key(self, kind: str, sql: str, params: Sequence[Any], tables: Sequence[str]) -> tuple | None:
        cache = self.template.domain.read_cache
        if not cache.deterministic(sql) or (cache.template_only and kind != "r"):
            return None
        parts = []
        for t in tables:
            tok = self._token(t)
            if tok is None or (tok and cache.template_only):
                return None
            parts.append((self.template.base_schema(t), tok))
        return (kind, sql, _params_key(params), tuple(parts))

    # ------------------------------------------------------------------ SQL: memo, fast path, DuckDB

    @property
    def _memo(self) -> ReadCache:
        return self.template.domain.read_cache

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Run a parameterised read and return rows as dicts: from the memo, the fast path, or DuckDB."""
        if not is_read(sql):
            raise StateError("query() only runs SELECT statements; use execute() to write")
        STATEMENTS["read"] += 1
        memo = self._memo
        tables = memo.tables_of(sql, self.tables)
        key = self._memo_key("r", sql, params, tables) if tables is not None else None
        hit = memo.get(key) if key is not None else None
        if hit is not None:
            return _dicts(*hit)
        python = fastpath.answer_read(sql, params, self) if memo.fast_path_on() else None
        if python is not None and not verify_mode():
            return _dicts(python.names, python.rows)
        duck = self._read_in_duckdb(sql, params, tables)
        if python is not None:
            check_fast_path(python.shape, sql, params, (python.names, python.rows), duck)
        if key is not None:
            memo.put(key, duck)
        return _dicts(*duck)

    def _read_in_duckdb(self, sql: str, params: Sequence[Any], tables: Sequence[str] | None) -> Answer:
        """Bring DuckDB up to this episode's state for the tables the read names, and run it there.

        A read of tables this episode has not written has the same answer in every state of
        the task: the template's reader runs it, so no episode (or check at load) creates a
        schema or copies a patched table only to read it.
        """
        if tables is not None and not self.reads_initial and not self.materialized.intersection(tables):
            if self.closed:
                raise StateError("this episode state is closed")
            self.misses += 1
            return self.template.read_initial(sql, params, tables)
        writes = self._writes_to(tables)
        if writes is not None and tables is not None:  # nothing in DuckDB yet: the reader replays its writes, rolled back
            self.misses += 1
            return self.template.read_initial(sql, params, tables, writes)
        if tables is None or self.materialized.intersection(tables):
            self._sync(tables)
        self._copy_patched_in(tables)
        self.misses += 1
        cur = self._cur().execute(sql, list(params))
        return tuple(d[0] for d in cur.description), cur.fetchall()

    def query_one(self, sql: str, params: Sequence[Any] = ()) -> dict[str, Any] | None:
        rows = self.query(sql, params)
        return rows[0] if rows else None

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Run a parameterised INSERT / UPDATE / DELETE against this episode only.

        The shared templates are never written: the statement is answered by the memo or
        the fast path (and logged, for DuckDB to replay when it is next needed), or runs on
        the episode's own copy of the table. Returns rows of a RETURNING clause, if any.
        """
        table = written_table(sql)
        if table is None:
            raise StateError("execute() only runs INSERT, UPDATE or DELETE statements")
        STATEMENTS["write"] += 1
        if table not in self.tables:
            raise StateError(f"unknown table '{table}'")
        info = self.tables[table]
        params = list(params)
        plan = plan_write(sql, info)
        run = plan.run
        memo = self._memo
        key = None
        if plan.tracked and info.memoisable and plan.self_contained:
            key = self._memo_key("w", run, params, (table,))
        hit = memo.get(key) if key is not None else None
        python = None
        if (hit is None and plan.tracked and info.memoisable and memo.fast_path_on() and not memo.template_only
                and not self.closed):
            python = fastpath.answer_write(run, params, self)
            if python is not None and not verify_mode():
                hit, python = (python.names, python.rows), None
                if key is not None:
                    memo.put(key, hit)  # exactly DuckDB's answer, as every memo entry is
        if hit is None:
            hit = self._write_in_duckdb(table, run, params)
            if python is not None:
                check_fast_path(python.shape, run, params, (python.names, python.rows), hit)
            if key is not None:
                memo.put(key, hit)
            self._log.append((run, params))
            self._mark_replayed(len(self._log) - 1)  # DuckDB ran it: nothing to replay
        else:
            self._log.append((run, params))  # DuckDB sees it when a later statement misses the memo
        names, values = hit
        self.materialized.add(table)
        self.write_log.append(table)
        self._tokens.pop(table, None)
        rows = _dicts(names, values)
        if not names:
            if plan.tracked:
                self.untracked.add(table)
            return []
        if plan.tracked:
            self._track(table, plan.kind, names, rows)
        else:
            self.untracked.add(table)
        if not plan.returns:
            return []
        if plan.project is not None:
            return [{c: r[c] for c in plan.project} for r in rows]
        return rows

    def _write_in_duckdb(self, table: str, run: str, params: list[Any]) -> Answer:
        """Replay the log, copy the table in if needed, and run the write on the episode's copy (the caller logs it)."""
        self._decide_for([table])
        self._sync([table] if plan_write(run, self.tables[table]).self_contained else None)
        self._begin_if_pending()
        self._copy_in(table)
        self.misses += 1
        cur = self._cur().execute(run, params)
        names: tuple[str, ...] = tuple(d[0] for d in cur.description) if cur.description is not None else ()
        values = cur.fetchall() if cur.description is not None else []
        return names, values

    # ------------------------------------------------------------------ the fast path's view (fastpath.View)

    def rows_known(self, table: str) -> bool:
        """Whether every current row of the table is held in Python, and the memo's mode lets the fast path read them."""
        if table in self.untracked:
            return False
        return not (self._memo.template_only and table in self.materialized)  # the earlier engine read written tables in DuckDB

    def row_rules(self, table: str) -> RowRules | None:
        return self.template.domain.python_rules(table)

    def current_rows(self, table: str) -> Iterable[dict[str, Any]] | None:
        """The table's rows now (template rows and overlay), in key order; None when only a scan can tell."""
        return self.final_rows(table) if table in self.materialized else self.base_index(table).values()

    def live_row(self, table: str, key: tuple) -> dict[str, Any] | None:
        """The row with this key in the episode now, or None (absent or deleted); the table must be tracked."""
        if table in self.materialized:
            overlay = self.overlay.get(table)
            if overlay is not None and key in overlay:
                return overlay[key]
        return self.base_index(table).get(key)

    def _track(self, table: str, kind: str, names: tuple[str, ...], rows: list[dict[str, Any]]) -> None:
        """Fold a write's returned rows into the overlay, or give the table up to a scan."""
        if table in self.untracked:
            return
        info = self.tables[table]
        if names != info.columns:
            self.untracked.add(table)
            return
        pk = info.primary_key
        overlay = self.overlay.setdefault(table, {})
        base = self.template._base_rows.get(table)
        if base is None:
            base = self.template.base_rows(table)
        for row in rows:
            key = tuple(row[c] for c in pk)
            if kind == "DELETE":
                overlay[key] = None
                continue
            live = overlay[key] is not None if key in overlay else key in base
            if kind == "INSERT" and live or kind == "UPDATE" and not live:
                self.untracked.add(table)  # a duplicate key, or a row this overlay never saw
                return
            overlay[key] = dict(row)  # the tool gets the returned dict and may edit it

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

    # ------------------------------------------------------------------ transactions

    def begin(self) -> tuple[Any, ...]:
        """Open a write scope; a DuckDB transaction starts only if a statement of the scope reaches DuckDB."""
        self._pending_begin, self._in_txn = True, False
        overlay = {t: dict(rows) for t, rows in self.overlay.items()}
        return (frozenset(self.materialized), dict(self.sequences), len(self.write_log), overlay,
                frozenset(self.untracked), len(self._log), self._synced, frozenset(self._in_db), frozenset(self._ahead))

    def commit(self) -> None:
        if self._in_txn:
            self._cur().execute("COMMIT")
        self._pending_begin = self._in_txn = False

    def rollback(self, saved: tuple[Any, ...]) -> None:
        in_txn = self._in_txn
        if in_txn:
            self._cur().execute("ROLLBACK")
        self._pending_begin = self._in_txn = False
        materialized, sequences, n_writes, overlay, untracked, n_log, synced, in_db, ahead = saved
        self.materialized = set(materialized)
        self.sequences = sequences
        del self.write_log[n_writes:]
        self.overlay = overlay
        self.untracked = set(untracked)
        del self._log[n_log:]
        if in_txn:  # DuckDB undid everything since BEGIN, replays and copies included
            self._synced, self._in_db, self._ahead = synced, set(in_db), set(ahead)
        self._synced = min(self._synced, len(self._log))
        self._ahead = {i for i in self._ahead if i < len(self._log)}
        self._tokens.clear()

    # ------------------------------------------------------------------ snapshots

    def rows(self, table: str, *, base: bool = False) -> list[dict[str, Any]]:
        """All rows of a table, in this episode (or in the initial state with base=True), in key order."""
        info = self.tables[table]
        live = not base and table in self.materialized
        if live:
            kept = self.final_rows(table)
            if kept is not None:
                return [dict(r) for r in kept]
            self._sync([table])
        elif table in self.template.patch_statements:
            return [dict(r) for r in self.base_index(table).values()]  # built in Python: these rows are the template
        schema = self.schema if live and table in self._in_db else self.template.base_schema(table)
        order = ", ".join(_quote(c) for c in info.primary_key)
        sql = f"SELECT * FROM {schema}.{_quote(table)} ORDER BY {order}"
        cache = self.template.domain.read_cache
        key = ("rows", sql, (), (schema,))
        hit = None if live else cache.get(key)
        if hit is None:
            if live:
                cur = self._cur().execute(sql)
                hit = (tuple(d[0] for d in cur.description), cur.fetchall())
            else:  # the initial state, named by its schema: the template's reader reads it (no schema of this episode)
                hit = self.template.read_initial(sql, (), ())
                cache.put(key, hit)
        names, rows = hit
        return [dict(zip(names, row)) for row in rows]

    def changed_tables(self) -> list[str]:
        return sorted(self.materialized)

    def outcome_inputs(self) -> OutcomeInputs:
        """What ``diff.py`` reads to diff and hash this episode: the overlay and the template's shared facts."""
        template = self.template
        domain = template.domain
        return OutcomeInputs(self.tables, frozenset(self.materialized), frozenset(self.untracked), self.overlay,
                             template.base_schema, self.base_index, domain.schema, domain.base_rows, domain.row_lines)

    def base_index(self, table: str) -> dict[tuple, dict[str, Any]]:
        """The table's initial rows by primary key (shared with every episode of the task: read only)."""
        index = self.template._base_rows.get(table)
        return index if index is not None else self.template.base_rows(table)

    def final_rows(self, table: str) -> list[dict[str, Any]] | None:
        """The table's rows now, in key order, from the template and the overlay; None if it must be scanned."""
        if table in self.untracked or table not in self.materialized:
            return None
        base = self.base_index(table)
        overlay = self.overlay.get(table)
        if not overlay:
            return list(base.values())
        merged = dict(base)
        merged.update(overlay)
        return [merged[k] for k in sorted(merged) if merged[k] is not None]

    def close(self) -> None:
        self.closed = True
        if self.cursor is None:
            return
        try:
            if self._schema_made:
                self.cursor.execute(f"DROP SCHEMA IF EXISTS {self.schema} CASCADE")
            self.cursor.close()
        except duckdb.Error:  # the process may be shutting down
            log.debug("could not drop episode schema %s", self.schema, exc_info=True)
        self.cursor = None

    def __del__(self) -> None:  # pragma: no cover - best effort when an env is dropped unclosed
        try:
            self.close()
        except Exception:
            pass
