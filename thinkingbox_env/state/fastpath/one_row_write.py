"""Writes of one row, applied in Python: an INSERT by values, or an UPDATE picking rows by equality.

``INSERT INTO t [(cols)] VALUES (...)`` and ``UPDATE t SET c = v, ... WHERE c = v AND ...``,
each ``RETURNING *`` (the episode appends it), with values that are parameters or literals. The answer is the row DuckDB would return, so the
episode folds it into its overlay and logs the statement exactly as for a memo hit.

Only where the outcome is certain to be DuckDB's: a tracked table whose rules Python applies
(``row_rules``), every value of a type its column stores as is, every constraint evaluated
and holding, an INSERT of a key not yet live, and an UPDATE picking at most one row. A write
that would fail, or might, goes to DuckDB, which raises its own error. DELETE had a shape of
its own until the benchmark showed it answered no statement at all (no domain tool deletes):
DuckDB runs every DELETE.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..row_rules import IDENTIFIER, UNSURE, RowRules, coerce, literal_value
from ..sandbox import reserved_words
from ..tables import TableInfo
from .view import Answer, View, identifier

_TOKEN = IDENTIFIER
_VALUE = r"(?:\?|'(?:[^']|'')*'|-?\d+|NULL|TRUE|FALSE)"
_PAIR = rf"{_TOKEN}\s*=\s*{_VALUE}"
_PAIR_RE = re.compile(rf"({_TOKEN})\s*=\s*({_VALUE})", re.IGNORECASE)
_WRITE_RE = re.compile(
    rf"^\s*(?:INSERT\s+INTO\s+(?P<itable>{_TOKEN})\s*(?:\((?P<columns>\s*{_TOKEN}(?:\s*,\s*{_TOKEN})*\s*)\))?"
    rf"\s*VALUES\s*\((?P<values>\s*{_VALUE}(?:\s*,\s*{_VALUE})*\s*)\)"
    rf"|UPDATE\s+(?P<utable>{_TOKEN})\s+SET\s+(?P<sets>{_PAIR}(?:\s*,\s*{_PAIR})*))"
    rf"(?:\s+WHERE\s+(?P<where>{_PAIR}(?:\s+AND\s+{_PAIR})*))?\s+RETURNING\s+\*\s*;?\s*$",
    re.IGNORECASE,
)

Token = tuple[Any, ...]  # ("?",) for the next parameter, ("=", value) for a literal
Pairs = tuple[tuple[str, Token], ...]


@dataclass(frozen=True)
class OneRowWrite:
    """A write's shape, with its values as tokens (bound to the parameters, in order, when it is answered)."""
    kind: str  # INSERT or UPDATE
    table: str
    columns: tuple[str, ...] | None  # an INSERT's column list (None: every column, in order)
    values: tuple[Token, ...]  # an INSERT's values
    sets: Pairs
    where: Pairs

    @property
    def tokens(self) -> tuple[Token, ...]:
        """Every value token in the order its parameter comes (VALUES, then SET before WHERE)."""
        return self.values + tuple(v for _, v in self.sets) + tuple(v for _, v in self.where)


def _literal(token: str) -> Token:
    return ("?",) if token == "?" else ("=", literal_value(token))


@functools.lru_cache(maxsize=4096)
def parse(sql: str) -> OneRowWrite | None:
    """The shape of a write Python can apply, or None (then DuckDB runs it)."""
    m = _WRITE_RE.match(sql)
    if m is None:
        return None
    reserved = reserved_words()

    def pairs(text: str | None) -> Pairs | None:
        out = []
        for p in _PAIR_RE.finditer(text or ""):
            name = identifier(p.group(1), reserved)
            if name is None:
                return None
            out.append((name, _literal(p.group(2))))
        return tuple(out)

    if m.group("itable") is not None:
        kind, table = "INSERT", m.group("itable")
        if m.group("where") is not None:
            return None
    else:
        kind, table = "UPDATE", m.group("utable")
        if m.group("where") is None:
            return None  # every row: left to DuckDB
    name = identifier(table, reserved)
    columns: tuple[str, ...] | None = None
    if m.group("columns") is not None:
        named = [identifier(c.strip(), reserved) for c in m.group("columns").split(",")]
        if any(n is None for n in named):
            return None
        columns = tuple(n for n in named if n is not None)
    values = tuple(_literal(v) for v in re.findall(_VALUE, m.group("values") or "", re.IGNORECASE))
    sets, where = pairs(m.group("sets")), pairs(m.group("where"))
    if name is None or sets is None or where is None:
        return None
    return OneRowWrite(kind, name, columns, values, sets, where)


def _prepare(sql: str, params: Sequence[Any], view: View, kinds: tuple[str, ...]
             ) -> tuple[OneRowWrite, TableInfo, RowRules, list[Any]] | None:
    """The parsed write of one of ``kinds``, its table, the rules Python applies to it and its bound values."""
    shape = parse(sql)
    if shape is None or shape.kind not in kinds:
        return None
    info = view.tables.get(shape.table)
    if info is None or not view.rows_known(shape.table):
        return None
    rules = view.row_rules(shape.table)
    if rules is None or sum(1 for t in shape.tokens if t[0] == "?") != len(params):
        return None
    given = iter(params)
    return shape, info, rules, [next(given) if t[0] == "?" else t[1] for t in shape.tokens]


def insert(sql: str, params: Sequence[Any], view: View) -> Answer | None:
    """An INSERT of one row by values: the full row, defaults filled in, if it holds every constraint and its key is free."""
    prepared = _prepare(sql, params, view, ("INSERT",))
    if prepared is None:
        return None
    shape, info, rules, values = prepared
    columns = shape.columns if shape.columns is not None else info.columns
    if len(columns) != len(shape.values) or len(set(columns)) != len(columns):
        return None
    if not all(c in info.columns for c in columns):
        return None
    row = rules.full_row(dict(zip(columns, values)))
    if row is UNSURE or rules.broken(row) is not None:
        return None
    if view.live_row(shape.table, tuple(row[c] for c in info.primary_key)) is not None:
        return None  # a duplicate key: DuckDB's copy takes it and the table goes to a scan
    return Answer("insert of one row", info.columns, [tuple(row[c] for c in info.columns)])


def update(sql: str, params: Sequence[Any], view: View) -> Answer | None:
    """An UPDATE whose equality terms pick at most one row: that row, changed, or nothing."""
    prepared = _prepare(sql, params, view, ("UPDATE",))
    if prepared is None:
        return None
    shape, info, rules, values = prepared
    label = "update of one row"
    sets = list(zip((c for c, _ in shape.sets), values))  # parameters in the order they appear: SET before WHERE
    where = list(zip((c for c, _ in shape.where), values[len(sets):]))
    named = [c for c, _ in sets] + [c for c, _ in where]
    if not all(c in info.columns for c in named) or len({c for c, _ in sets}) != len(sets):
        return None
    found = _picked(view, info, rules, where)
    if found is None or len(found) > 1:
        return None  # several rows come back in stored order: DuckDB's to tell
    if not found:
        return Answer(label, info.columns, [])
    if set(info.primary_key) & {c for c, _ in sets}:
        return None
    new = dict(found[0])
    for column, raw in sets:
        new[column] = coerce(rules.kind(column), raw)
        if new[column] is UNSURE:
            return None
    if rules.broken(new) is not None:
        return None
    return Answer(label, info.columns, [tuple(new[c] for c in info.columns)])


def _picked(view: View, info: TableInfo, rules: RowRules, where: list[tuple[str, Any]]) -> list[dict[str, Any]] | None:
    """The rows the WHERE terms pick now (by key when they name the whole key); None where DuckDB must say."""
    wanted: dict[str, Any] = {}
    for column, raw in where:
        v = coerce(rules.kind(column), raw)
        if v is UNSURE or (column in wanted and wanted[column] != v):
            return None
        wanted[column] = v
    if any(v is None for v in wanted.values()):
        return []  # column = NULL is never true
    if set(wanted) == set(info.primary_key):
        live = view.live_row(info.name, tuple(wanted[c] for c in info.primary_key))
        return [] if live is None else [live]
    rows = view.current_rows(info.name)
    return None if rows is None else [r for r in rows if all(r[c] == v for c, v in wanted.items())]
