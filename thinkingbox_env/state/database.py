"""The domain template: one schema per domain, with its tables, seed rows and the facts read from them once.

``d_<domain>`` holds the domain's schema and seed rows, built once per process; every task
template and episode of the domain reads through to it. What copying, patching and the fast
path need to know about its tables (shapes, constraints as an episode's copy declares them,
rows by key, sequence starts) is read here once and kept.
"""

from __future__ import annotations

import csv
import re
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from ..contracts.spec import DomainSpec, Patch, TableMeta
from .errors import StateError
from .memo import ReadCache
from .patching import _CopyRules, build_task_template
from .row_rules import RowRules
from .sandbox import _Process, _quote
from .tables import TableInfo, rows_by_key

if TYPE_CHECKING:
    from .templates import TaskTemplate


def read_seed_csv(path: Path) -> tuple[list[str], list[list[str | None]]]:
    """Header and rows of a seed file, read in Python because the database may not open files."""
    with open(path, encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader, [])
        return header, [[v if v != "" else None for v in row] for row in reader]



class DomainDatabase:
    """The domain template and its task templates. Built once per process per domain."""

    def __init__(self, spec: DomainSpec, schema_sql: str, seed_dir: Path | None, knowledge_base: Path | None = None):
        self.spec = spec
        self.knowledge_base = knowledge_base  # the folder of the domain's knowledge-base documents, read by its tools
        self.schema = f"d_{spec.name}"
        self._lock = threading.RLock()
        con = _Process.connection()
        with _Process._lock:
            cur = con.cursor()
            cur.execute(f"DROP SCHEMA IF EXISTS {_quote(self.schema)} CASCADE")
            cur.execute(f"CREATE SCHEMA {_quote(self.schema)}")
            cur.execute(f"SET search_path = '{self.schema}'")
            try:
                cur.execute(schema_sql)
            except duckdb.Error as exc:
                raise StateError(f"domain '{spec.name}': schema.sql failed: {exc}") from exc
            self.tables = self._introspect(cur)
            # a write checked against another table cannot be replayed apart from that table's writes (EpisodeState._sync)
            self.no_foreign_keys = not cur.execute(
                "SELECT 1 FROM duckdb_constraints() WHERE schema_name = ? AND constraint_type = 'FOREIGN KEY'",
                [self.schema]).fetchall()
            unknown = set(spec.tables) - set(self.tables)
            if unknown:
                raise StateError(f"domain '{spec.name}': domain.yaml describes unknown tables {sorted(unknown)}")
            if seed_dir is not None and seed_dir.is_dir():
                for seed_file in sorted(seed_dir.glob("*.csv")):
                    table = seed_file.stem
                    if table not in self.tables:
                        raise StateError(f"domain '{spec.name}': seed file {seed_file.name} names no table of schema.sql")
                    try:
                        header, rows = read_seed_csv(seed_file)
                        if rows:
                            cur.executemany(
                                f"INSERT INTO {_quote(table)} ({', '.join(_quote(c) for c in header)}) "
                                f"VALUES ({', '.join('?' for _ in header)})",
                                rows,
                            )
                    except (duckdb.Error, StateError, OSError, csv.Error) as exc:
                        raise StateError(f"domain '{spec.name}': seed file {seed_file}: {exc}") from exc
            cur.close()
        self.read_cache = ReadCache()
        self.base_rows: dict[str, dict[tuple, dict[str, Any]]] = {}  # domain template rows by key, read once
        self.row_lines: dict[tuple[str, str], dict[tuple, str]] = {}  # canonical lines of template rows (diff.py)
        self._domain_starts: dict[str, int] | None = None
        self._rules: dict[str, _CopyRules] | None = None

    def _introspect(self, cur: duckdb.DuckDBPyConnection) -> dict[str, TableInfo]:
        rows = cur.execute(
            "SELECT table_name, column_name, data_type FROM information_schema.columns "
            "WHERE table_schema = ? ORDER BY table_name, ordinal_position",
            [self.schema],
        ).fetchall()
        cols: dict[str, list[tuple[str, str]]] = {}
        for table, column, dtype in rows:
            cols.setdefault(table, []).append((column, dtype))
        pks = dict(
            cur.execute(
                "SELECT table_name, constraint_column_names FROM duckdb_constraints() "
                "WHERE schema_name = ? AND constraint_type = 'PRIMARY KEY'",
                [self.schema],
            ).fetchall()
        )
        ddls = dict(
            cur.execute("SELECT table_name, sql FROM duckdb_tables() WHERE schema_name = ?", [self.schema]).fetchall()
        )
        prefix = f"CREATE TABLE {self.schema}."
        tables = {}
        for table, columns in cols.items():
            if table not in pks:
                raise StateError(f"domain '{self.spec.name}': table '{table}' has no PRIMARY KEY")
            meta = self.spec.tables.get(table, TableMeta())
            names = tuple(c for c, _ in columns)
            for col in list(meta.volatile) + list(meta.references):
                if col not in names:
                    raise StateError(f"domain '{self.spec.name}': domain.yaml names unknown column {table}.{col}")
            for col, ref in meta.references.items():
                if ref not in cols:
                    raise StateError(f"domain '{self.spec.name}': {table}.{col} references unknown table '{ref}'")
            ddl = ddls[table]
            if not ddl.startswith(prefix):
                raise StateError(f"domain '{self.spec.name}': unexpected DDL for table '{table}': {ddl[:80]}")
            tables[table] = TableInfo(table, ddl[len(prefix):], names, tuple(t for _, t in columns), tuple(pks[table]), meta)
        return tables

    def build_task_template(self, task_label: str, patch: Patch) -> TaskTemplate:
        """A task's initial state: the domain template plus its patch, once per task per process (see ``patching``)."""
        return build_task_template(self, task_label, patch)

    def python_rules(self, table: str) -> RowRules | None:
        """The table's rules where Python applies all of them; None before any template was built, or when it cannot."""
        rules = self._rules
        return None if rules is None or table not in rules else rules[table].in_python

    def _copy_rules(self, cur: duckdb.DuckDBPyConnection) -> dict[str, _CopyRules]:
        """The NOT NULL columns, CHECK expressions and defaults of every table as an episode copies it; read once.

        Read from DuckDB's own catalog for tables declared exactly as episode copies are
        (``TableInfo.create_episode_copy_in``) in a scratch schema, so a task template holds
        its patched rows to the very constraints the tables it replaces declared.
        """
        with self._lock:
            if self._rules is None:
                scratch = _Process.next_name("c_")
                cur.execute("; ".join([f"CREATE SCHEMA {scratch}"]
                                      + [info.create_episode_copy_in(scratch).rstrip(";") for info in self.tables.values()]))
                try:
                    not_null: dict[str, list[str]] = {t: [] for t in self.tables}
                    checks: dict[str, list[str]] = {t: [] for t in self.tables}
                    declared: set[str] = set()  # tables with constraints of another kind: copied with their DDL
                    for table, kind, expression, columns in cur.execute(
                        "SELECT table_name, constraint_type, expression, constraint_column_names FROM duckdb_constraints() "
                        "WHERE schema_name = ? ORDER BY table_name, constraint_index", [scratch]
                    ).fetchall():
                        if kind == "NOT NULL":
                            not_null[table] += columns
                        elif kind == "CHECK":
                            checks[table].append(expression)
                        else:
                            declared.add(table)
                    defaults: dict[str, dict[str, str]] = {t: {} for t in self.tables}
                    for table, column, default in cur.execute(
                        "SELECT table_name, column_name, column_default FROM duckdb_columns() "
                        "WHERE schema_name = ? AND column_default IS NOT NULL", [scratch]
                    ).fetchall():
                        defaults[table][column] = default
                finally:
                    cur.execute(f"DROP SCHEMA {scratch} CASCADE")
                self._rules = {t: _CopyRules((), (), {}, declared=True) if t in declared
                               else _CopyRules(tuple(not_null[t]), tuple(checks[t]), defaults[t],
                                               row=RowRules.build(info.columns, info.types, not_null[t], checks[t],
                                                                  defaults[t], declared=False))
                               for t, info in self.tables.items()}
            return self._rules

    def _domain_rows(self, table: str, cur: duckdb.DuckDBPyConnection) -> dict[tuple, dict[str, Any]]:
        """The domain template's rows of a table by key, in key order; read once per process (read only)."""
        index = self.base_rows.get(table)
        if index is None:
            index = rows_by_key(cur, f"{_quote(self.schema)}.{_quote(table)}", self.tables[table].primary_key)
            self.base_rows[table] = index
        return index

    def _table(self, table: str, task_label: str) -> TableInfo:
        if table not in self.tables:
            raise StateError(f"task '{task_label}': patch names unknown table '{table}'")
        return self.tables[table]

    def _sequence_starts(self, cur: duckdb.DuckDBPyConnection, patched: dict[str, dict[tuple, dict[str, Any]]]) -> dict[str, int]:
        """The next id of every sequence; tables the patch leaves alone keep the domain template's.

        The domain template never changes, so its starts are read once; a new
        variant's patched tables are counted from their rows, already in hand.
        """
        if self._domain_starts is None:
            self._domain_starts = {
                name: self._next_number(info, self._domain_rows(name, cur).values())
                for name, info in self.tables.items() if info.meta.sequence is not None
            }
        starts = dict(self._domain_starts)
        for name, rows in patched.items():
            if self.tables[name].meta.sequence is not None:
                starts[name] = self._next_number(self.tables[name], rows.values())
        return starts

    @staticmethod
    def _next_number(info: TableInfo, rows: Any) -> int:
        """One past the largest trailing number of the sequence column (ids like ``RET-000123`` included)."""
        seq = info.meta.sequence
        assert seq is not None
        numbers = [int(m.group()) for r in rows if r[seq.column] is not None for m in [re.search(r"\d+$", str(r[seq.column]))] if m]
        return max([seq.start - 1, *numbers]) + 1

