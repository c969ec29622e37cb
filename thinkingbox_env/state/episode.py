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

``EpisodeState`` is that chain, the episode's ids and its write scopes; what it builds on is
beside it: ``episode_rows.py`` (the overlay read in Python: the fast path's view and the
snapshots) over ``episode_duckdb.py`` (the episode's schema in DuckDB and the log replayed into it).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

import duckdb

from ..contracts.spec import DomainSpec, SequenceSpec
from . import fastpath
from .episode_rows import EpisodeRows
from .errors import StateError
from .memo import Answer, _params_key
from .sandbox import _Process
from .statements import is_read, plan_write, written_table
from .verify import STATEMENTS, check_fast_path, verify_mode

if TYPE_CHECKING:
    from pathlib import Path

    from .templates import TaskTemplate

log = logging.getLogger("thinkingbox_env.state")


class ScheduledFaults(Protocol):
    """A task's scheduled transient tool failures for one episode (``thinkingbox_env.toolkit.faults.FaultPlan``)."""

    def on_call(self, tool_name: str) -> str | None:
        """Record a call of ``tool_name``; the scheduled error if this call is to fail, else None."""
        ...


def _dicts(names: tuple[str, ...], rows: Iterable[tuple]) -> list[dict[str, Any]]:
    return [dict(zip(names, row)) for row in rows]


@dataclass
class EpisodeState(EpisodeRows):
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
    # the task's scheduled transient tool failures, given when the episode starts (TaskTemplate.new_episode);
    # the tool runner asks it before each call (thinkingbox_env.toolkit.tools.Toolbox.call)
    faults: ScheduledFaults | None = None

    def __post_init__(self) -> None:
        # nothing is created in DuckDB yet: an episode whose statements all hit the memo never needs it
        self.schema = _Process.next_name("e_")
        self.sequences = dict(self.template.sequence_starts)

    # ------------------------------------------------------------------ clock & ids

    @property
    def domain(self) -> DomainSpec:
        return self.template.domain.spec

    @property
    def now(self) -> datetime:
        """The domain's frozen evaluation time: tools stamp writes with this, never the wall clock."""
        return self.domain.clock

    @property
    def knowledge_base(self) -> Path | None:
        """The folder of the domain's knowledge-base documents (its ``kb/``), None where it has none."""
        return self.template.domain.knowledge_base

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
