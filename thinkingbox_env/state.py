"""Per-episode backend state in one shared, embedded DuckDB database.

A fresh DuckDB connection per episode costs tens of megabytes and milliseconds of
DDL, so all episodes of a process share one in-memory database and are kept apart
by schemas:

* ``d_<domain>``: the domain template (schema + seed rows), built once per process;
* ``t_<n>``: a task template, holding only the tables the task's patch touches (plain copies
  of the domain's tables, patched, with the domain's constraints checked on the patched rows).
  Where Python can apply the patch exactly as DuckDB would, the template's rows are computed
  in Python and the schema is created only when a second episode needs one of its tables;
* ``e_<n>``: one per episode, created only when the episode first needs DuckDB.

An episode's state is the task template plus a per-table overlay kept in Python:
primary key -> final row, or None for a deleted row, folded from the rows every
write statement returns (``RETURNING *`` is appended to each write). The overlay is
the episode's row-level copy-on-write: the diff, the final contents of written
tables and the canonical hash follow from it without reading a table back.

Statements are memoised process-wide, keyed by the statement, its parameters and the
exact content of every table it names (template schema plus overlay, interned to a
number). A read or a write whose key was seen before is answered from the memo, with
no DuckDB round trip; the write's returned rows still go into the overlay. A read that
picks rows by equality on columns (a lookup by key, by a foreign key) is answered from
the template's rows and the overlay when the answer is certain to be DuckDB's, and a write
of one row by values, or of rows picked by equality, is applied in Python when its outcome
is (``row_rules``). Every successful write is also logged, and the episode's tables exist in DuckDB only once
a statement misses the memo: the log is then replayed into ``e_<n>`` (copying each
written table from the template, as a copy-on-write) before the statement runs, so
DuckDB always computes what the memo does not know, with its constraints. A write
whose effect cannot be told from its returned rows (a RETURNING expression, a primary
key changed or inserted twice, a subquery) is never memoised and sends its table to a
full scan at grading, which is what every table got before.
"""

from __future__ import annotations

import collections
import contextlib
import csv
import functools
import itertools
import logging
import operator
import os
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from functools import cached_property
from pathlib import Path
from typing import Any

import duckdb

from .row_rules import IDENTIFIER, UNSURE, RowRules, coerce, literal_value
from .spec import DomainSpec, Patch, SequenceSpec, TableMeta

log = logging.getLogger(__name__)

_WRITE_RE = re.compile(r"^\s*(?:INSERT\s+(?:OR\s+\w+\s+)?INTO|UPDATE|DELETE\s+FROM)\s+([A-Za-z_][A-Za-z0-9_]*)", re.IGNORECASE)
_READ_RE = re.compile(r"^\s*(?:SELECT|WITH)\b", re.IGNORECASE)
_RETURNING_RE = re.compile(r"\bRETURNING\b(.*)$", re.IGNORECASE | re.DOTALL)
_SET_RE = re.compile(r"\bSET\b(.*?)(?:\bWHERE\b|\bFROM\b|$)", re.IGNORECASE | re.DOTALL)
_COLUMN_LIST_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\s*,\s*[A-Za-z_][A-Za-z0-9_]*)*")
# a write that reads other rows than its own target cannot be keyed by its target table alone
_SUBQUERY_RE = re.compile(r"\b(?:SELECT|FROM|USING|WITH|TABLE)\b", re.IGNORECASE)
# functions whose value is not fixed by the statement and the data: such statements are never memoised
_VOLATILE_RE = re.compile(
    r"\b(?:random|uuid|gen_random_uuid|uuidv\d|now|today|current_timestamp|current_date|current_time|"
    r"current_localtimestamp|localtime|localtimestamp|get_current_time|get_current_timestamp|"
    r"transaction_timestamp|nextval|currval|setseed|getvariable)\b",
    re.IGNORECASE,
)


# reads that pick rows by equality on columns: answered from the rows kept in Python where that is certain
# (see EpisodeState._by_equality)
_TOKEN = IDENTIFIER
# column = ? or <> ? (or a text or integer literal), lower(column) = lower(?) or upper(...) = upper(?) (over ASCII the same test),
# CAST(column AS VARCHAR) = ? or <> ? (on a VARCHAR column: the same comparison)
_TERM_PARTS = re.compile(
    rf"(?:(?P<plain>{_TOKEN})\s*(?P<op>=|<>)\s*(?:\?|(?P<literal>'(?:[^']|'')*'|-?\d+))|lower\(\s*(?P<folded>{_TOKEN})\s*\)\s*=\s*lower\(\s*\?\s*\)"
    rf"|upper\(\s*(?P<upper>{_TOKEN})\s*\)\s*=\s*upper\(\s*\?\s*\)"
    rf"|CAST\(\s*(?P<cast>{_TOKEN})\s+AS\s+VARCHAR\s*\)\s*(?P<castop>=|<>)\s*\?)",
    re.IGNORECASE,
)
_TERM = re.sub(r"\(\?P<\w+>", "(?:", _TERM_PARTS.pattern)  # the same, without group names, to repeat
_TERMS = rf"{_TERM}(?:\s+AND\s+{_TERM})*"
_ITEM = rf"{_TOKEN}(?:\s+IS\s+(?:NOT\s+)?NULL\s+AS\s+{_TOKEN})?"  # a column, or whether it is (not) NULL
_EQUALITY_READ_RE = re.compile(
    rf"^\s*SELECT\s+(?P<select>\*|1\s+AS\s+{_TOKEN}|{_ITEM}(?:\s*,\s*{_ITEM})*)\s+FROM\s+(?P<table>{_TOKEN})"
    rf"\s+WHERE\s+(?P<where>\(\s*{_TERMS}\s*\)|{_TERMS})"
    rf"(?:\s+ORDER\s+BY\s+(?P<order>{_TOKEN}(?:\s+(?:ASC|DESC))?(?:\s*,\s*{_TOKEN}(?:\s+(?:ASC|DESC))?)*))?"
    rf"(?P<limit>\s+LIMIT\s+(?:\?|(?P<limitnum>\d{{1,18}}))(?P<offset>\s+OFFSET\s+\?)?)?\s*;?\s*$",
    re.IGNORECASE,
)
# writes Python can apply itself (see EpisodeState._write_in_python): one row by values, or rows picked by equality
_VALUE = r"(?:\?|'(?:[^']|'')*'|-?\d+|NULL|TRUE|FALSE)"
_PAIR = rf"{_TOKEN}\s*=\s*{_VALUE}"
_PAIR_RE = re.compile(rf"({_TOKEN})\s*=\s*({_VALUE})", re.IGNORECASE)
_PYTHON_WRITE_RE = re.compile(
    rf"^\s*(?:INSERT\s+INTO\s+(?P<itable>{_TOKEN})\s*(?:\((?P<columns>\s*{_TOKEN}(?:\s*,\s*{_TOKEN})*\s*)\))?"
    rf"\s*VALUES\s*\((?P<values>\s*{_VALUE}(?:\s*,\s*{_VALUE})*\s*)\)"
    rf"|UPDATE\s+(?P<utable>{_TOKEN})\s+SET\s+(?P<sets>{_PAIR}(?:\s*,\s*{_PAIR})*)"
    rf"|DELETE\s+FROM\s+(?P<dtable>{_TOKEN}))"
    rf"(?:\s+WHERE\s+(?P<where>{_PAIR}(?:\s+AND\s+{_PAIR})*))?\s+RETURNING\s+\*\s*;?\s*$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class _PythonWrite:
    """A write's shape: values are ``("?",)`` for the next parameter or ``("=", value)`` for a literal."""
    kind: str  # INSERT, UPDATE or DELETE
    table: str
    columns: tuple[str, ...] | None  # an INSERT's column list (None: every column, in order)
    values: tuple[tuple[Any, ...], ...]  # an INSERT's values
    sets: tuple[tuple[str, tuple[Any, ...]], ...]
    where: tuple[tuple[str, tuple[Any, ...]], ...]


def _literal(token: str) -> tuple[Any, ...]:
    return ("?",) if token == "?" else ("=", literal_value(token))


@functools.lru_cache(maxsize=4096)
def _python_write(sql: str) -> _PythonWrite | None:
    """The shape of a write Python can apply, or None (then DuckDB runs it)."""
    m = _PYTHON_WRITE_RE.match(sql)
    if m is None:
        return None
    reserved = _reserved_words()

    def pairs(text: str | None) -> tuple[tuple[str, tuple[Any, ...]], ...] | None:
        out = []
        for p in _PAIR_RE.finditer(text or ""):
            name = _identifier(p.group(1), reserved)
            if name is None:
                return None
            out.append((name, _literal(p.group(2))))
        return tuple(out)

    if m.group("itable") is not None:
        kind, table = "INSERT", m.group("itable")
        if m.group("where") is not None:
            return None
    else:
        kind, table = ("UPDATE", m.group("utable")) if m.group("utable") is not None else ("DELETE", m.group("dtable"))
        if m.group("where") is None:
            return None  # every row: left to DuckDB
    name = _identifier(table, reserved)
    columns: tuple[str, ...] | None = None
    if m.group("columns") is not None:
        named = [_identifier(c.strip(), reserved) for c in m.group("columns").split(",")]
        if any(n is None for n in named):
            return None
        columns = tuple(n for n in named if n is not None)
    values = tuple(_literal(v) for v in re.findall(_VALUE, m.group("values") or "", re.IGNORECASE))
    sets, where = pairs(m.group("sets")), pairs(m.group("where"))
    if name is None or sets is None or where is None:
        return None
    return _PythonWrite(kind, name, columns, values, sets, where)


@dataclass(frozen=True)
class _EqualityRead:
    """``SELECT * | <columns> | 1 AS <name> FROM <table> WHERE <column> = ? [AND ...] [ORDER BY <column> [ASC|DESC], ...]``."""
    table: str
    where: tuple[str, ...]  # one column per parameter, in order
    folded: tuple[bool, ...]  # per column: compared as lower(column) = lower(?)
    cast: tuple[bool, ...]  # per column: written CAST(column AS VARCHAR)
    unequal: tuple[bool, ...]  # per column: compared with <>
    columns: tuple[str, ...] | None  # None: every column (``*``); else the columns read
    constant: str | None  # the column name of ``1 AS <name>``
    order: tuple[tuple[str, bool], ...]  # (column, descending)
    paging: int = 0  # trailing parameters: LIMIT ? and OFFSET ?, as many as are written
    literals: tuple[tuple[bool, Any], ...] = ()  # per condition: (written as a literal, its value)
    outputs: tuple[tuple[str, str, bool | None], ...] = ()  # (name, column, None: its value | whether it IS NOT NULL)
    limit: int | None = None  # LIMIT written as a number


def _identifier(token: str, reserved: frozenset[str]) -> str | None:
    """A token as DuckDB names it, or None when only DuckDB can tell (an unquoted reserved word)."""
    if token.startswith('"'):
        return token[1:-1]
    return None if token.lower() in reserved else token


@functools.lru_cache(maxsize=4096)
def _equality_read(sql: str) -> _EqualityRead | None:
    """The shape of a read that picks rows by equality, or None for any other statement.

    Identifiers must be written exactly as declared (quoted or not) and no unquoted one may
    be a reserved word: DuckDB names result columns as written, and refuses such a word.
    """
    m = _EQUALITY_READ_RE.match(sql)
    if m is None:
        return None
    reserved = _reserved_words()
    table = _identifier(m.group("table"), reserved)
    text = m.group("where").strip()
    parts = [_TERM_PARTS.fullmatch(t.strip()) for t in re.split(r"(?i)\s+AND\s+", text[1:-1] if text.startswith("(") else text)]
    if any(p is None for p in parts):
        return None
    terms = [p for p in parts if p is not None]
    where = tuple(_identifier(p.group("plain") or p.group("folded") or p.group("upper") or p.group("cast"), reserved)
                  for p in terms)
    folded = tuple(p.group("folded") is not None or p.group("upper") is not None for p in terms)
    cast = tuple(p.group("cast") is not None for p in terms)
    unequal = tuple((p.group("op") or p.group("castop") or "=") == "<>" for p in terms)
    literals = tuple((False, None) if p.group("literal") is None else (True, literal_value(p.group("literal")))
                     for p in terms)
    order: list[tuple[str, bool]] = []
    for part in (m.group("order") or "").split(",") if m.group("order") else []:
        words = part.split()
        name = _identifier(words[0], reserved)
        if name is None:
            return None
        order.append((name, len(words) > 1 and words[1].upper() == "DESC"))
    select = m.group("select").strip()
    columns: tuple[str, ...] | None = None
    constant = None
    outputs: tuple[tuple[str, str, bool | None], ...] = ()
    if select == "*":
        pass
    elif re.match(r"(?i)1\s", select):
        constant = _identifier(select.split()[-1], reserved)
        if constant is None:
            return None
        columns = ()
    else:
        items = []
        for item in select.split(","):
            words = item.split()
            column, name = _identifier(words[0], reserved), _identifier(words[-1], reserved)
            if column is None or name is None:
                return None
            items.append((name, column, None if len(words) == 1 else words[2].upper() == "NOT"))
        outputs = tuple(items)
        columns = tuple(c for _, c, _ in items)
    if table is None or any(w is None for w in where):
        return None
    limit = None if m.group("limitnum") is None else int(m.group("limitnum"))
    paging = (m.group("limit") is not None and limit is None) + (m.group("offset") is not None)
    return _EqualityRead(table, tuple(w for w in where if w is not None), folded, cast, unequal, columns, constant,
                         tuple(order), paging, literals, outputs, limit)


_RESERVED: list[frozenset[str]] = []


def _reserved_words() -> frozenset[str]:
    """DuckDB's reserved keywords, read from the database once."""
    if not _RESERVED:
        with _Process._lock:
            words = _Process.parser().execute(
                "SELECT keyword_name FROM duckdb_keywords() WHERE keyword_category = 'reserved'").fetchall()
        _RESERVED.append(frozenset(w[0].lower() for w in words))
    return _RESERVED[0]


class StateError(RuntimeError):
    """The engine was asked to do something with the state that it must not do."""


class FastPathMismatch(StateError):
    """In verify mode, an answer computed in Python that is not the one DuckDB gives: a bug of the fast path."""


# The Python answers to statements (reads by equality, one-row writes), checked against DuckDB's when verify mode is on.
VERIFY_ENV = "THINKINGBOX_STATE_VERIFY"
FAST_PATH_HITS: collections.Counter[str] = collections.Counter()  # per statement shape, for bench_env.py
STATEMENTS: collections.Counter[str] = collections.Counter()  # reads and writes asked of episode states, the share's base


def verify_mode() -> bool:
    """Whether every fast-path answer is also computed by DuckDB and compared (``THINKINGBOX_STATE_VERIFY=1``)."""
    return os.environ.get(VERIFY_ENV, "") not in ("", "0", "false", "no")


def _same_answer(python: Sequence[tuple[Any, ...]], duck: Sequence[tuple[Any, ...]]) -> bool:
    return len(python) == len(duck) and all(
        len(a) == len(b) and all(x == y and type(x) is type(y) or (x is None and y is None) for x, y in zip(a, b))
        for a, b in zip(python, duck))


def _check_fast_path(shape: str, sql: str, params: Sequence[Any], python: tuple[tuple[str, ...], list[tuple]],
                     duck: tuple[tuple[str, ...], list[tuple]]) -> None:
    if tuple(python[0]) != tuple(duck[0]) or not _same_answer(python[1], duck[1]):
        raise FastPathMismatch(f"fast path ({shape}) disagrees with DuckDB on {sql.strip()[:200]!r} with {list(params)!r}: "
                               f"Python {python[0]} {python[1]!r}; DuckDB {duck[0]} {duck[1]!r}")


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

    @property
    def compared_columns(self) -> tuple[str, ...]:
        return tuple(c for c in self.columns if c not in self.meta.volatile)

    @cached_property
    def memoisable(self) -> bool:
        """False when a default of the table draws a value of its own (a clock, a random id, a sequence)."""
        return _VOLATILE_RE.search(self.ddl_body) is None


# Spec SQL (checks, patches) and tool queries run here with the process's privileges, so the
# database itself refuses to reach outside memory: no files, no network, no extensions, no
# Python objects by name, and no query can turn any of it back on.
SANDBOX_CONFIG: dict[str, Any] = {
    "threads": 1,
    "enable_external_access": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "python_enable_replacements": False,
    "lock_configuration": True,
}

# Optimizer passes kept on: those that choose a join's order and sides or a top-n, the ones
# that decide in which order rows without an ORDER BY come out. Every other pass is turned
# off: on tables of tens of rows they cost more than half of a statement's planning (about
# 0.3 ms a statement on a 2-core machine) and can save nothing; no pass changes a result.
KEPT_OPTIMIZERS = frozenset({
    "join_order", "build_side_probe_side", "top_n", "late_materialization", "statistics_propagation", "filter_pushdown",
})


def _open_database() -> duckdb.DuckDBPyConnection:
    """The sandboxed in-memory database, with the optimizer passes that only cost time on small tables off."""
    unlocked = {k: v for k, v in SANDBOX_CONFIG.items() if k != "lock_configuration"}
    con = duckdb.connect(":memory:", config=unlocked)
    names = [r[0] for r in con.execute("SELECT name FROM duckdb_optimizers() ORDER BY name").fetchall()]
    off = ",".join(n for n in names if n not in KEPT_OPTIMIZERS)
    con.execute(f"SET disabled_optimizers = '{off}'")
    if SANDBOX_CONFIG.get("lock_configuration"):
        con.execute("SET lock_configuration = true")
    return con


def read_seed_csv(path: Path) -> tuple[list[str], list[list[str | None]]]:
    """Header and rows of a seed file, read in Python because the database may not open files."""
    with open(path, encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader, [])
        return header, [[v if v != "" else None for v in row] for row in reader]


class _Process:
    """The process-wide database, created lazily, shared by every domain and episode."""

    _lock = threading.RLock()
    _con: duckdb.DuckDBPyConnection | None = None
    _parser: duckdb.DuckDBPyConnection | None = None
    _counter = itertools.count(1)

    @classmethod
    def connection(cls) -> duckdb.DuckDBPyConnection:
        with cls._lock:
            if cls._con is None:
                cls._con = _open_database()
            return cls._con

    @classmethod
    def parser(cls) -> duckdb.DuckDBPyConnection:
        with cls._lock:
            if cls._parser is None:
                cls._parser = cls.connection().cursor()
            return cls._parser

    @classmethod
    def next_name(cls, prefix: str) -> str:
        return f"{prefix}{next(cls._counter)}"


def _quote(name: str) -> str:
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise StateError(f"illegal identifier {name!r}")
    return f'"{name}"'


class ReadCache:
    """Memoised statements: reads and writes whose answer is fixed by the data they name.

    Episodes of one task repeat the same statements again and again (a GRPO group
    replays one task many times, evaluation trials repeat it), and a DuckDB round
    trip costs far more than a dictionary lookup. A statement's answer depends only on
    the statement, its parameters and the content of the tables it names, so the key
    holds, for every such table, the template schema it comes from and a number that
    stands for the episode's overlay of it (0 when the episode has not written it).
    Two tasks or two different episode states therefore never share an entry by
    accident, and two episodes in the same state always do.
    """

    def __init__(self, max_entries: int = 20_000):
        self.max_entries = max_entries
        self.enabled = True  # off: every statement goes to DuckDB (a benchmark's cold figures)
        self.template_only = False  # on: only reads of tables no episode wrote are memoised (the earlier engine's memo)
        self._rows: dict[tuple, tuple[tuple[str, ...], list[tuple]]] = {}
        self._tables: dict[str, tuple[str, ...] | None] = {}
        self._volatile: dict[str, bool] = {}
        self._tokens: dict[tuple, int] = {}
        self._next_token = itertools.count(1)  # never reused, so clearing the interning cannot alias two states
        self._lock = threading.Lock()

    def tables_of(self, sql: str, known: dict[str, TableInfo]) -> tuple[str, ...] | None:
        """Tables a statement reads, or None when that cannot be told (then nothing is cached).

        Parsed on a connection of its own, with parameters replaced by NULL: the
        parser only needs the shape of the statement, and a failure here must not
        touch an episode's transaction.
        """
        if sql not in self._tables:
            try:
                with _Process._lock:
                    names = _Process.parser().get_table_names(sql.replace("?", "NULL"))
            except duckdb.Error:
                names = None
            self._tables[sql] = tuple(sorted(names)) if names and all(n in known for n in names) else None
        return self._tables[sql]

    def deterministic(self, sql: str) -> bool:
        """True unless the statement calls a function whose value the data does not fix."""
        found = self._volatile.get(sql)
        if found is None:
            found = self._volatile[sql] = _VOLATILE_RE.search(sql) is not None
        return not found

    def token(self, content: tuple) -> int | None:
        """A number standing for one table content (an overlay), the same for equal contents; None if unhashable."""
        try:
            tok = self._tokens.get(content)
        except TypeError:  # a LIST or STRUCT value: such a table is simply never memoised
            return None
        if tok is None:
            with self._lock:
                tok = self._tokens.get(content)
                if tok is None:
                    if len(self._tokens) >= 4 * self.max_entries:
                        self._tokens.clear()
                    tok = self._tokens[content] = next(self._next_token)
        return tok

    def clear(self) -> None:
        with self._lock:
            self._rows.clear()

    def get(self, key: tuple) -> tuple[tuple[str, ...], list[tuple]] | None:
        return self._rows.get(key) if self.enabled else None

    def put(self, key: tuple, value: tuple[tuple[str, ...], list[tuple]]) -> None:
        if not self.enabled:
            return
        with self._lock:
            if len(self._rows) >= self.max_entries:
                self._rows.clear()
            self._rows[key] = value


def _params_key(params: Sequence[Any]) -> tuple:
    """Parameters as part of a memo key: type and repr, so 1, 1.0, True and Decimal('1.0') stay apart."""
    return tuple((type(p).__name__, repr(p)) for p in params)


class DomainDatabase:
    """The domain template and its task templates. Built once per process per domain."""

    def __init__(self, spec: DomainSpec, schema_sql: str, seed_dir: Path | None):
        self.spec = spec
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
        """A task's initial state: the domain template plus its patch, once per task per process.

        Where Python can apply the patch exactly as DuckDB would (see ``row_rules``), the
        template's rows are computed in Python and nothing is created in DuckDB: an episode
        that needs a patched table in DuckDB copies the domain's table and runs the patch on
        its copy (``TaskTemplate.patch_statements``), with the constraints it declares. A
        fresh training variant then costs no DuckDB statement until an episode needs one.
        Otherwise the patched tables are built in DuckDB once, in a schema of their own.
        """
        touched = sorted(patch.tables())
        infos = {table: self._table(table, task_label) for table in touched}
        with _Process._lock:
            cur = _Process.connection().cursor()
        try:
            rules = self._copy_rules(cur)
            rows = {table: dict(self._domain_rows(table, cur)) for table in touched}
            statements = self._patch_in_python(task_label, patch, infos, rules, rows)
            if statements is None:
                return self._build_in_duckdb(cur, task_label, patch, touched, infos, rules)
            base = {t: dict(sorted(rows[t].items())) for t in touched}
            template = TaskTemplate(self, _Process.next_name("t_"), frozenset(touched), self._sequence_starts(cur, base),
                                    in_db=False, patch_statements=statements)
            template._base_rows.update(base)
            return template
        finally:
            cur.close()

    def _patch_in_python(self, task_label: str, patch: Patch, infos: dict[str, TableInfo], rules: dict[str, _CopyRules],
                         rows: dict[str, dict[tuple, dict[str, Any]]]) -> dict[str, list[tuple[str, list[Any]]]] | None:
        """Apply the patch to ``rows`` in Python; the statements that patch an episode's copy, or None for DuckDB.

        A patch that certainly breaks a constraint is refused here with the error DuckDB's
        path gives; one whose outcome only DuckDB can tell returns None (``rows`` is then
        left half-patched, and the caller discards it).
        """
        statements: dict[str, list[tuple[str, list[Any]]]] = {}

        def certain(table: str, row_rules: RowRules, row: dict[str, Any]) -> bool:
            """True when the row holds every constraint; False when only DuckDB can tell; raises when it breaks one."""
            broken = row_rules.broken(row)
            if broken is None or broken is UNSURE:
                return broken is None
            what = f"NOT NULL on column '{broken[1]}'" if broken[0] == "NOT NULL" else f"CHECK {broken[1]}"
            raise StateError(f"task '{task_label}': patch cannot be applied: table '{table}': a row breaks {what}")

        for table, new_rows in patch.insert.items():
            info, row_rules = infos[table], rules[table].in_python
            groups = _insert_groups(info, new_rows, task_label)
            if row_rules is None:
                return None
            values: list[Any] = []
            count = 0
            for group in groups.values():  # DuckDB's path inserts group by group: the same stored order
                for row in group:
                    full = row_rules.full_row(row)
                    if full is UNSURE or not certain(table, row_rules, full):
                        return None
                    key = tuple(full[c] for c in info.primary_key)
                    if key in rows[table]:
                        raise StateError(f"task '{task_label}': patch.insert.{table}: a row's primary key "
                                         f"{', '.join(info.primary_key)} is already taken (duplicate key)")
                    rows[table][key] = full
                    values += [full[c] for c in info.columns]
                    count += 1
            marks = "(" + ", ".join("?" for _ in info.columns) + ")"
            statements.setdefault(table, []).append(
                (f"INSERT INTO {{schema}}.{_quote(table)} VALUES {', '.join([marks] * count)}", values))
        for change, deletes in [(u, False) for u in patch.update] + [(d, True) for d in patch.delete]:
            table = change.table
            info, row_rules = infos[table], rules[table].in_python
            _where(info, change.key, task_label)  # names unknown or no columns: refused as DuckDB's path refuses it
            if row_rules is None:
                return None
            wanted = {c: coerce(row_rules.kind(c), v) for c, v in change.key.items()}
            if any(v is UNSURE for v in wanted.values()):
                return None
            matched = [] if any(v is None for v in wanted.values()) else [
                k for k, r in rows[table].items() if all(r[c] == v for c, v in wanted.items())]
            verb = "delete" if deletes else "update"
            if len(matched) != 1:
                raise StateError(f"task '{task_label}': patch.{verb} on {table} {change.key} matched {len(matched)} rows")
            key = matched[0]
            where = " AND ".join(f"{_quote(c)} = ?" for c in info.primary_key)
            if deletes:
                del rows[table][key]
                statements.setdefault(table, []).append((f"DELETE FROM {{schema}}.{_quote(table)} WHERE {where}", list(key)))
                continue
            sets = change.set  # type: ignore[union-attr]
            if not sets or set(sets) - set(info.columns) or set(sets) & set(info.primary_key):
                return None  # DuckDB's error, or a key that moves
            new = dict(rows[table][key])
            for column, value in sets.items():
                new[column] = coerce(row_rules.kind(column), value)
                if new[column] is UNSURE:
                    return None
            if not certain(table, row_rules, new):
                return None
            rows[table][key] = new
            assignments = ", ".join(f"{_quote(c)} = ?" for c in sets)
            statements.setdefault(table, []).append(
                (f"UPDATE {{schema}}.{_quote(table)} SET {assignments} WHERE {where}", [new[c] for c in sets] + list(key)))
        return statements

    def _build_in_duckdb(self, cur: duckdb.DuckDBPyConnection, task_label: str, patch: Patch, touched: list[str],
                         infos: dict[str, TableInfo], rules: dict[str, _CopyRules]) -> TaskTemplate:
        """Materialise the tables a task's patch touches in a schema of their own.

        The template is built in one transaction: each patched table is created as a plain
        copy of the domain table (``CREATE TABLE ... AS SELECT``, about a third of what a
        table declared with its constraints and then filled costs) and the patch runs on it
        with every default the domain declares written out. The rows the patch wrote are
        held to the constraints an episode's copy of the table declares (``_CopyRules``):
        NOT NULL on the returned rows, CHECK by DuckDB itself, each expression returned as
        an extra column of the statement that wrote the row; the rows it did not write are
        the domain template's, which declares the same constraints. The primary keys are
        checked against the rows in hand.
        """
        schema = _Process.next_name("t_")
        rows = {table: dict(self._domain_rows(table, cur)) for table in touched}
        try:
            cur.execute("; ".join(
                ["BEGIN TRANSACTION", f"CREATE SCHEMA {schema}", f"SET search_path = '{schema},{self.schema}'"]
                + [rules[t].copy_sql(infos[t], schema, self.schema) for t in touched]
            ))
            for table, new_rows in patch.insert.items():
                info = infos[table]
                defaults = rules[table].defaults
                for names, group in _insert_groups(info, new_rows, task_label).items():
                    # the plain copy has no defaults: a column the patch leaves out gets the domain's, written out
                    omitted = [c for c in info.columns if c not in names and c in defaults]
                    marks = "(" + ", ".join(["?" for _ in names] + [defaults[c] for c in omitted]) + ")"
                    out = cur.execute(
                        f"INSERT INTO {_quote(table)} ({', '.join(_quote(n) for n in (*names, *omitted))}) "
                        f"VALUES {', '.join(marks for _ in group)} RETURNING *{rules[table].returning()}",
                        [r[n] for r in group for n in names],
                    )
                    before = len(rows[table])
                    n = self._fold(info, rows[table], out, rules[table], task_label)
                    if len(rows[table]) != before + n:
                        raise StateError(f"task '{task_label}': patch.insert.{table}: a row's primary key "
                                         f"{', '.join(info.primary_key)} is already taken (duplicate key)")
            reread: set[str] = set()
            for upd in patch.update:
                info = infos[upd.table]
                where, wparams = _where(info, upd.key, task_label)
                sets = ", ".join(f"{_quote(c)} = ?" for c in upd.set)
                out = cur.execute(f"UPDATE {_quote(upd.table)} SET {sets} WHERE {where} RETURNING *{rules[upd.table].returning()}",
                                  [*upd.set.values(), *wparams])
                if set(upd.set) & set(info.primary_key):
                    reread.add(upd.table)  # the key moved: the returned row cannot say which one it replaced
                n = self._fold(info, rows[upd.table], out, rules[upd.table], task_label)
                if n != 1:
                    raise StateError(f"task '{task_label}': patch.update on {upd.table} {upd.key} matched {n} rows")
            for dele in patch.delete:
                info = infos[dele.table]
                where, wparams = _where(info, dele.key, task_label)
                out = cur.execute(f"DELETE FROM {_quote(dele.table)} WHERE {where} RETURNING *", wparams)
                n = self._fold(info, rows[dele.table], out, None, task_label, deletes=True)
                if n != 1:
                    raise StateError(f"task '{task_label}': patch.delete on {dele.table} {dele.key} matched {n} rows")
            for table in sorted(reread):
                info = infos[table]
                res = cur.execute(f"SELECT * FROM {schema}.{_quote(table)}")
                names = tuple(d[0] for d in res.description)
                fetched = res.fetchall()
                rows[table] = {}
                for values in fetched:
                    row = dict(zip(names, values))
                    rows[table][tuple(row[c] for c in info.primary_key)] = row
                if len(rows[table]) != len(fetched):
                    raise StateError(f"task '{task_label}': patch.update on {table} gives two rows the same primary key")
            cur.execute("COMMIT")
        except (duckdb.Error, StateError) as exc:
            with contextlib.suppress(duckdb.Error):  # the failure may have come before the transaction began
                cur.execute("ROLLBACK")
            cur.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
            if isinstance(exc, StateError):
                raise
            raise StateError(f"task '{task_label}': patch cannot be applied: {exc}") from exc
        base = {t: dict(sorted(rows[t].items())) for t in touched}
        template = TaskTemplate(self, schema, frozenset(touched), self._sequence_starts(cur, base))
        template._base_rows.update(base)
        return template

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
            info = self.tables[table]
            order = ", ".join(_quote(c) for c in info.primary_key)
            res = cur.execute(f"SELECT * FROM {_quote(self.schema)}.{_quote(table)} ORDER BY {order}")
            names = tuple(d[0] for d in res.description)
            index = {}
            for values in res.fetchall():
                row = dict(zip(names, values))
                index[tuple(row[c] for c in info.primary_key)] = row
            self.base_rows[table] = index
        return index

    @staticmethod
    def _fold(info: TableInfo, rows: dict[tuple, dict[str, Any]], cur: duckdb.DuckDBPyConnection, rules: _CopyRules | None,
              task_label: str, deletes: bool = False) -> int:
        """Apply a patch statement's returned rows to the table's rows by key; the number of rows it wrote.

        A row it wrote must hold the table's NOT NULL constraints (seen in the row itself)
        and its CHECK constraints (evaluated by DuckDB on the row, as extra returned columns).
        """
        width = len(info.columns)
        names = tuple(d[0] for d in cur.description)[:width]
        returned = cur.fetchall()
        for values in returned:
            row = dict(zip(names, values[:width]))
            key = tuple(row[c] for c in info.primary_key)
            if deletes:
                rows.pop(key, None)
                continue
            if rules is not None:
                for column in rules.not_null:
                    if row[column] is None:
                        raise StateError(f"task '{task_label}': patch cannot be applied: table '{info.name}': "
                                         f"a row breaks NOT NULL on column '{column}'")
                for check, broken in zip(rules.checks, values[width:]):
                    if broken:
                        raise StateError(f"task '{task_label}': patch cannot be applied: table '{info.name}': "
                                         f"a row breaks CHECK {check}")
            rows[key] = row
        return len(returned)

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


def _written_table(sql: str) -> str:
    """The table a logged write writes (only statements ``_WRITE_RE`` matched are logged)."""
    match = _WRITE_RE.match(sql)
    assert match is not None
    return match.group(1)


def _insert_groups(info: TableInfo, rows: list[dict[str, Any]], task_label: str) -> dict[tuple[str, ...], list[dict[str, Any]]]:
    """A patch's inserted rows grouped by the columns they give, in order: one statement per group."""
    groups: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for row in rows:
        unknown = set(row) - set(info.columns)
        if unknown:
            raise StateError(f"task '{task_label}': patch.insert.{info.name}: unknown columns {sorted(unknown)}")
        groups.setdefault(tuple(row), []).append(row)
    return groups


def _where(info: TableInfo, key: dict[str, Any], task_label: str) -> tuple[str, list[Any]]:
    unknown = set(key) - set(info.columns)
    if unknown or not key:
        raise StateError(f"task '{task_label}': key {key} for table '{info.name}' names unknown or no columns")
    return " AND ".join(f"{_quote(c)} = ?" for c in key), list(key.values())


@dataclass(frozen=True)
class _CopyRules:
    """The constraints and defaults of a table as an episode's copy of it declares them (no primary-key index)."""
    not_null: tuple[str, ...]
    checks: tuple[str, ...]  # CHECK expressions, as DuckDB's catalog prints them
    defaults: dict[str, str]  # column -> DEFAULT expression
    declared: bool = False  # a constraint of another kind (UNIQUE, FOREIGN KEY): the copy declares them all
    row: RowRules | None = None  # the same rules as Python applies them; None: every write goes to DuckDB

    @property
    def in_python(self) -> RowRules | None:
        """The rules when Python can apply all of them (some rows may still need DuckDB), else None."""
        return self.row if self.row is not None and self.row.usable else None

    def copy_sql(self, info: TableInfo, schema: str, source: str) -> str:
        """The statement(s) that copy the domain table into a template schema."""
        target = f"{schema}.{_quote(info.name)}"
        if self.declared:  # DuckDB itself then holds the patch to every constraint, as for an episode's copy
            return f"{info.create_episode_copy_in(schema).rstrip(';')}; INSERT INTO {target} SELECT * FROM {source}.{_quote(info.name)}"
        return f"CREATE TABLE {target} AS SELECT * FROM {source}.{_quote(info.name)}"

    def returning(self) -> str:
        """Extra RETURNING columns, one per CHECK, true for a row that breaks it (NULL holds, as in DuckDB)."""
        return "".join(f", NOT ({c}) AS \"__check_{i}\"" for i, c in enumerate(self.checks))


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
                info = self.domain.tables[table]
                order = ", ".join(_quote(c) for c in info.primary_key)
                cur = cursor.execute(f"SELECT * FROM {self.schema}.{_quote(table)} ORDER BY {order}")
                names = tuple(d[0] for d in cur.description)
                index = {}
                for values in cur.fetchall():
                    row = dict(zip(names, values))
                    index[tuple(row[c] for c in info.primary_key)] = row
            else:  # the domain template's rows: the same for every task of the domain
                index = self.domain._domain_rows(table, cursor)
            self._base_rows[table] = index
        return index

    def new_episode(self) -> EpisodeState:
        return EpisodeState(self)

    def drop(self) -> None:
        with _Process._lock:
            cur = _Process.connection().cursor()
            cur.execute(f"DROP SCHEMA IF EXISTS {self.schema} CASCADE")
            cur.close()


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
    _synced: int = 0  # how many of them DuckDB has seen in this episode's schema
    _in_db: set[str] = field(default_factory=set, repr=False)  # tables copied into the episode schema
    _tokens: dict[str, int | None] = field(default_factory=dict, repr=False)  # memo token per written table
    _pending_begin: bool = False
    _in_txn: bool = False
    _shared: bool | None = None  # reads and copies the template's patched tables from its schema (decided once: _claim)
    probe: bool = False  # a check at load, not an episode: never asks for the template in DuckDB

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
            cursor.execute(f"CREATE SCHEMA {self.schema}; SET search_path = '{self._search_path()}'")
            self.cursor = cursor
        return self.cursor

    def _search_path(self) -> str:
        template = self.template
        bases = f"{template.schema},{template.domain.schema}" if self._shared else template.domain.schema
        return f"{self.schema},{bases}"

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
            cur.execute(self._copy_sql(table, shared))
            if not shared:  # the template's patch, run on this copy
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

    def _sync(self) -> None:
        """Replay the writes DuckDB has not seen, in order, so that it holds exactly this episode's state."""
        if self._synced == len(self._log):
            return
        pending = [(run, params, _written_table(run)) for run, params in self._log[self._synced:]]
        self._decide_for([table for _, _, table in pending])
        self._begin_if_pending()
        cur = self._cur()
        for run, params, table in pending:
            self._copy_in(table)
            cur.execute(run, params)
            self._synced += 1  # one at a time: outside a transaction each replayed write is already committed

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

    # ------------------------------------------------------------------ SQL

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Run a parameterised read and return rows as dicts."""
        if not _READ_RE.match(sql):
            raise StateError("query() only runs SELECT statements; use execute() to write")
        STATEMENTS["read"] += 1
        cache = self.template.domain.read_cache
        tables = cache.tables_of(sql, self.tables)
        key = self._memo_key("r", sql, params, tables) if tables is not None else None
        if key is not None:
            hit = cache.get(key)
            if hit is not None:
                names, rows = hit
                return [dict(zip(names, row)) for row in rows]
        found = None
        if cache.enabled:
            found = self._by_equality(sql, params, cache.template_only)
            if found is not None:
                FAST_PATH_HITS["read by equality"] += 1
                if not verify_mode():
                    return found
        if tables is None or self.materialized.intersection(tables):
            self._sync()
        self._copy_patched_in(tables)
        self.misses += 1
        cur = self._cur().execute(sql, list(params))
        names = tuple(d[0] for d in cur.description)
        rows = cur.fetchall()
        if found is not None:
            python_names = tuple(found[0]) if found else names
            _check_fast_path("read by equality", sql, params,
                             (python_names, [tuple(r[n] for n in python_names) for r in found]), (names, rows))
        if key is not None:
            cache.put(key, (names, rows))
        return [dict(zip(names, row)) for row in rows]

    def _by_equality(self, sql: str, params: Sequence[Any], template_only: bool) -> list[dict[str, Any]] | None:
        """A read that picks rows by equality, answered from the template's rows and the overlay; None: ask DuckDB.

        Only where the answer is certain to be DuckDB's: every parameter of its column's own
        Python type (str for VARCHAR, an int in range for an integer column), a table whose
        overlay is complete, and an order that leaves nothing to the way rows are stored:
        at most one row, or an ORDER BY whose values are all present, of one comparable
        kind, and never tied; LIMIT and OFFSET then cut that order. The rows kept in Python
        are the very values DuckDB returned.
        """
        shape = _equality_read(sql)
        if shape is None:
            return None
        asked = sum(1 for written, _ in shape.literals if not written)
        if len(params) != asked + shape.paging:
            return None
        paging = params[asked:]
        if not all(type(n) is int and 0 <= n < 2**63 for n in paging):
            return None
        given = iter(params[:asked])
        params = [value if written else next(given) for written, value in shape.literals]
        info = self.tables.get(shape.table)
        if info is None or shape.table in self.untracked:
            return None
        if template_only and shape.table in self.materialized:
            return None  # the earlier engine's memo: reads of written tables go to DuckDB
        named = shape.where + tuple(c for c, _ in shape.order) + (shape.columns or ())
        if not all(c in info.columns for c in named):
            return None
        wanted: list[Any] = []
        for column, fold, cast, value in zip(shape.where, shape.folded, shape.cast, params):
            kind = info.types[info.columns.index(column)]
            if cast and kind != "VARCHAR":
                return None  # the text of a value of another type: DuckDB's to write
            if value is None:  # column = NULL (or <> NULL) is never true
                wanted.append(None)
            elif fold:  # lower() on both sides: only where Python's and DuckDB's lower() are certain to agree (ASCII)
                if kind != "VARCHAR" or type(value) is not str or not value.isascii():
                    return None
                wanted.append(value)
            else:  # DuckDB casts the value to the column's type to compare: only where that cast is certain
                value = coerce(kind, value)
                if value is UNSURE:
                    return None
                wanted.append(value)
        params = wanted
        if any(value is None for value in params):
            return []
        if any(shape.folded):
            if any(shape.unequal):
                return None
            rows = self._current_rows(shape.table)
            if rows is None:
                return None
            wanted = [v.lower() if fold else v for fold, v in zip(shape.folded, params)]
            found = []
            for r in rows:
                for column, fold, value in zip(shape.where, shape.folded, wanted):
                    have = r[column]
                    if fold and have is not None:
                        if not have.isascii():
                            return None  # a value whose lower() only DuckDB can say
                        have = have.lower()
                    if have != value:
                        break
                else:
                    found.append(r)
        elif shape.where == info.primary_key and not any(shape.unequal):
            row = self._live_row(shape.table, tuple(params))
            found = [] if row is None else [row]
        else:
            rows = self._current_rows(shape.table)
            if rows is None:
                return None
            terms = list(zip(shape.where, shape.unequal, params))
            found = [r for r in rows if all(r[c] != v and r[c] is not None if ne else r[c] == v for c, ne, v in terms)]
        if len(found) > 1:
            if not shape.order:
                return None  # the stored order decides: only DuckDB knows it
            keys = [tuple(r[c] for c, _ in shape.order) for r in found]
            if len(set(keys)) != len(keys):
                return None  # ties: the stored order decides
            for i in range(len(shape.order)):
                kinds = {type(k[i]) for k in keys}
                if len(kinds) != 1 or kinds.pop() not in (str, int, Decimal, date, datetime):
                    return None  # NULLs, or values whose order Python and DuckDB might not share
            for column, descending in reversed(shape.order):  # stable sorts, last key first
                found.sort(key=operator.itemgetter(column), reverse=descending)
        if shape.limit is not None or paging:
            count = shape.limit if shape.limit is not None else paging[0]
            start = paging[-1] if len(paging) + (shape.limit is not None) == 2 else 0
            found = found[start:start + count]
        if shape.constant is not None:
            return [{shape.constant: 1} for _ in found]
        if shape.columns is None:
            return [{c: r[c] for c in info.columns} for r in found]
        return [{name: r[c] if present is None else (r[c] is not None) is present for name, c, present in shape.outputs}
                for r in found]

    def query_one(self, sql: str, params: Sequence[Any] = ()) -> dict[str, Any] | None:
        rows = self.query(sql, params)
        return rows[0] if rows else None

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Run a parameterised INSERT / UPDATE / DELETE against this episode only.

        The shared templates are never written: the statement runs on the episode's
        own copy of the table, or is answered from the memo. Returns rows of a
        RETURNING clause, if any.
        """
        match = _WRITE_RE.match(sql)
        if not match:
            raise StateError("execute() only runs INSERT, UPDATE or DELETE statements")
        STATEMENTS["write"] += 1
        table = match.group(1)
        if table not in self.tables:
            raise StateError(f"unknown table '{table}'")
        info = self.tables[table]
        params = list(params)
        kind = sql.lstrip()[:6].upper()
        returning = _RETURNING_RE.search(sql)
        project: tuple[str, ...] | None = None
        if returning is None:
            run, tracked = sql.rstrip().rstrip(";") + " RETURNING *", True
        else:
            listed = returning.group(1).strip().rstrip(";").strip()
            names_listed = tuple(n.strip() for n in listed.split(",")) if _COLUMN_LIST_RE.fullmatch(listed) else ()
            if listed == "*":
                run, tracked = sql, True
            elif names_listed and all(n in info.columns for n in names_listed):
                # plain columns: run with RETURNING * (the overlay needs whole rows) and hand back the columns asked for
                run, tracked, project = sql[:returning.start(1)] + " *", True, names_listed
            else:
                run, tracked = sql, False
        if tracked and kind == "UPDATE":
            sets = _SET_RE.search(sql)
            if sets is None or any(re.search(rf"\b{re.escape(c)}\b\s*=", sets.group(1), re.IGNORECASE) for c in info.primary_key):
                tracked = False  # a key may have moved: only a scan can tell
        key = None
        if tracked and info.memoisable and not _SUBQUERY_RE.search(sql, match.end()):
            key = self._memo_key("w", run, params, (table,))
        cache = self.template.domain.read_cache
        hit = cache.get(key) if key is not None else None
        python_answer = None
        if hit is None and tracked and info.memoisable and cache.enabled and not cache.template_only and not self.closed:
            hit = self._write_in_python(table, run, params)
            if hit is not None:
                FAST_PATH_HITS[f"{kind.lower()} of one row"] += 1
                if verify_mode():
                    python_answer, hit = hit, None  # DuckDB answers too, and the two are compared
                elif key is not None:
                    cache.put(key, hit)  # exactly DuckDB's answer, as every memo entry is
        if hit is None:
            self._decide_for([table])
            self._sync()
            self._begin_if_pending()
            self._copy_in(table)
            self.misses += 1
            cur = self._cur().execute(run, params)
            names: tuple[str, ...] = tuple(d[0] for d in cur.description) if cur.description is not None else ()
            values = cur.fetchall() if cur.description is not None else []
            if python_answer is not None:
                _check_fast_path(f"{kind.lower()} of one row", run, params, python_answer, (names, values))
            if key is not None:
                cache.put(key, (names, values))
            self._log.append((run, params))
            self._synced = len(self._log)
        else:
            names, values = hit
            self._log.append((run, params))  # DuckDB sees it when a later statement misses the memo
        self.materialized.add(table)
        self.write_log.append(table)
        self._tokens.pop(table, None)
        rows = [dict(zip(names, row)) for row in values]
        if not names:
            if tracked:
                self.untracked.add(table)
            return []
        if tracked:
            self._track(table, kind, names, rows)
        else:
            self.untracked.add(table)
        if returning is None:
            return []
        if project is not None:
            return [{c: r[c] for c in project} for r in rows]
        return rows

    def _write_in_python(self, table: str, run: str, params: list[Any]) -> tuple[tuple[str, ...], list[tuple]] | None:
        """A write's returned rows computed in Python, or None when only DuckDB can say them.

        Only where the outcome is certain to be DuckDB's: a tracked table whose rules Python
        applies (``row_rules``), every value of a type its column stores as is, every
        constraint evaluated and holding, an INSERT of a key not yet live, and an UPDATE or
        DELETE picking at most one row by equality. A write that would fail, or might, goes to
        DuckDB, which raises its own error. The write is logged like a memo hit, so DuckDB
        replays it as soon as a statement needs this episode's tables there.
        """
        if table in self.untracked:
            return None
        rules = self.template.domain.python_rules(table)
        shape = _python_write(run)
        if rules is None or shape is None or shape.table != table:
            return None
        tokens = shape.values + tuple(v for _, v in shape.sets) + tuple(v for _, v in shape.where)
        if sum(1 for t in tokens if t[0] == "?") != len(params):
            return None
        given = iter(params)

        def value(token: tuple[Any, ...]) -> Any:
            return next(given) if token[0] == "?" else token[1]

        info = self.tables[table]
        if shape.kind == "INSERT":
            columns = shape.columns if shape.columns is not None else info.columns
            if len(columns) != len(shape.values) or len(set(columns)) != len(columns):
                return None
            if not all(c in info.columns for c in columns):
                return None
            row = rules.full_row({c: value(t) for c, t in zip(columns, shape.values)})
            if row is UNSURE or rules.broken(row) is not None:
                return None
            if self._live_row(table, tuple(row[c] for c in info.primary_key)) is not None:
                return None  # a duplicate key: DuckDB's copy takes it and the table goes to a scan
            return info.columns, [tuple(row[c] for c in info.columns)]
        sets = [(c, value(t)) for c, t in shape.sets]  # parameters in the order they appear: SET before WHERE
        where = [(c, value(t)) for c, t in shape.where]
        named = [c for c, _ in sets] + [c for c, _ in where]
        if not all(c in info.columns for c in named) or len({c for c, _ in sets}) != len(sets):
            return None
        wanted: dict[str, Any] = {}
        for column, raw in where:
            v = coerce(rules.kind(column), raw)
            if v is UNSURE or (column in wanted and wanted[column] != v):
                return None
            wanted[column] = v
        if any(v is None for v in wanted.values()):
            return info.columns, []  # column = NULL is never true
        if set(wanted) == set(info.primary_key):
            key = tuple(wanted[c] for c in info.primary_key)
            live = self._live_row(table, key)
            found = [] if live is None else [live]
        else:
            rows = self._current_rows(table)
            if rows is None:
                return None
            found = [r for r in rows if all(r[c] == v for c, v in wanted.items())]
        if len(found) > 1:
            return None  # the rows come back in stored order: DuckDB's to tell
        if not found:
            return info.columns, []
        new = dict(found[0])
        if shape.kind == "UPDATE":
            if set(info.primary_key) & {c for c, _ in sets}:
                return None
            for column, raw in sets:
                new[column] = coerce(rules.kind(column), raw)
                if new[column] is UNSURE:
                    return None
            if rules.broken(new) is not None:
                return None
        return info.columns, [tuple(new[c] for c in info.columns)]

    def _current_rows(self, table: str) -> Any:
        """The table's rows now (template rows and overlay), in key order; None when only a scan can tell."""
        return self.final_rows(table) if table in self.materialized else self.base_index(table).values()

    def _live_row(self, table: str, key: tuple) -> dict[str, Any] | None:
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
        self._sync()
        self._begin_if_pending()
        self._copy_in(table)
        self.materialized.add(table)
        self._tokens.pop(table, None)

    def _copy_sql(self, table: str, shared: bool) -> str:
        info = self.tables[table]
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
                frozenset(self.untracked), len(self._log), self._synced, frozenset(self._in_db))

    def commit(self) -> None:
        if self._in_txn:
            self._cur().execute("COMMIT")
        self._pending_begin = self._in_txn = False

    def rollback(self, saved: tuple[Any, ...]) -> None:
        in_txn = self._in_txn
        if in_txn:
            self._cur().execute("ROLLBACK")
        self._pending_begin = self._in_txn = False
        materialized, sequences, n_writes, overlay, untracked, n_log, synced, in_db = saved
        self.materialized = set(materialized)
        self.sequences = sequences
        del self.write_log[n_writes:]
        self.overlay = overlay
        self.untracked = set(untracked)
        del self._log[n_log:]
        if in_txn:  # DuckDB undid everything since BEGIN, replays and copies included
            self._synced, self._in_db = synced, set(in_db)
        self._synced = min(self._synced, len(self._log))
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
            self._sync()
        elif table in self.template.patch_statements:
            return [dict(r) for r in self.base_index(table).values()]  # built in Python: these rows are the template
        schema = self.schema if live and table in self._in_db else self.template.base_schema(table)
        order = ", ".join(_quote(c) for c in info.primary_key)
        sql = f"SELECT * FROM {schema}.{_quote(table)} ORDER BY {order}"
        cache = self.template.domain.read_cache
        key = ("rows", sql, (), (schema,))
        hit = None if live else cache.get(key)
        if hit is None:
            cur = self._cur().execute(sql)
            hit = (tuple(d[0] for d in cur.description), cur.fetchall())
            if not live:
                cache.put(key, hit)
        names, rows = hit
        return [dict(zip(names, row)) for row in rows]

    def changed_tables(self) -> list[str]:
        return sorted(self.materialized)

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
