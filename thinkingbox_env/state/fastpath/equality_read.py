"""Reads that pick rows by equality on columns, answered from the rows kept in Python.

``SELECT * | <columns> | 1 AS <name> FROM <table> WHERE <terms> [ORDER BY ...] [LIMIT ... [OFFSET ?]]``,
where each term is ``column = ?`` or ``<> ?`` (or a text or integer literal), ``lower(column) =
lower(?)`` or ``upper(column) = upper(?)``, or ``CAST(column AS VARCHAR) = ?`` or ``<> ?``.
Three shapes answer them, each counted on its own: a lookup by the whole primary key, a scan
for plain equality, and a scan for case-folded equality.

Only where the answer is certain to be DuckDB's: every parameter of its column's own Python
type (str for VARCHAR, an int in range for an integer column), a table whose overlay is
complete, and an order that leaves nothing to the way rows are stored: at most one row, or
an ORDER BY whose values are all present, of one comparable kind, and never tied; LIMIT and
OFFSET then cut that order. The rows kept in Python are the very values DuckDB returned.
"""

from __future__ import annotations

import functools
import operator
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from ..row_rules import IDENTIFIER, UNSURE, coerce, literal_value
from ..sandbox import reserved_words
from ..tables import TableInfo
from .view import Answer, View, identifier

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
_ORDERABLE = (str, int, Decimal, date, datetime)  # kinds whose order Python and DuckDB certainly share


@dataclass(frozen=True)
class EqualityRead:
    """The parsed statement: what it reads, which terms pick the rows, and how they are ordered and cut."""
    table: str
    where: tuple[str, ...]  # one column per condition, in order
    folded: tuple[bool, ...]  # per condition: compared as lower(column) = lower(?)
    cast: tuple[bool, ...]  # per condition: written CAST(column AS VARCHAR)
    unequal: tuple[bool, ...]  # per condition: compared with <>
    columns: tuple[str, ...] | None  # None: every column (``*``); else the columns read
    constant: str | None  # the column name of ``1 AS <name>``
    order: tuple[tuple[str, bool], ...]  # (column, descending)
    paging: int = 0  # trailing parameters: LIMIT ? and OFFSET ?, as many as are written
    literals: tuple[tuple[bool, Any], ...] = ()  # per condition: (written as a literal, its value)
    outputs: tuple[tuple[str, str, bool | None], ...] = ()  # (name, column, None: its value | whether it IS NOT NULL)
    limit: int | None = None  # LIMIT written as a number

    @property
    def named(self) -> tuple[str, ...]:
        """Every column the statement names."""
        return self.where + tuple(c for c, _ in self.order) + (self.columns or ())


@functools.lru_cache(maxsize=4096)
def parse(sql: str) -> EqualityRead | None:
    """The shape of a read that picks rows by equality, or None for any other statement.

    Identifiers must be written exactly as declared (quoted or not) and no unquoted one may
    be a reserved word: DuckDB names result columns as written, and refuses such a word.
    """
    m = _EQUALITY_READ_RE.match(sql)
    if m is None:
        return None
    reserved = reserved_words()
    table = identifier(m.group("table"), reserved)
    text = m.group("where").strip()
    parts = [_TERM_PARTS.fullmatch(t.strip()) for t in re.split(r"(?i)\s+AND\s+", text[1:-1] if text.startswith("(") else text)]
    if any(p is None for p in parts):
        return None
    terms = [p for p in parts if p is not None]
    where = tuple(identifier(p.group("plain") or p.group("folded") or p.group("upper") or p.group("cast"), reserved)
                  for p in terms)
    folded = tuple(p.group("folded") is not None or p.group("upper") is not None for p in terms)
    cast = tuple(p.group("cast") is not None for p in terms)
    unequal = tuple((p.group("op") or p.group("castop") or "=") == "<>" for p in terms)
    literals = tuple((False, None) if p.group("literal") is None else (True, literal_value(p.group("literal")))
                     for p in terms)
    order = _order(m.group("order"), reserved)
    selected = _select(m.group("select").strip(), reserved)
    if table is None or order is None or selected is None or any(w is None for w in where):
        return None
    columns, constant, outputs = selected
    limit = None if m.group("limitnum") is None else int(m.group("limitnum"))
    paging = (m.group("limit") is not None and limit is None) + (m.group("offset") is not None)
    return EqualityRead(table, tuple(w for w in where if w is not None), folded, cast, unequal, columns, constant,
                        order, paging, literals, outputs, limit)


def _order(text: str | None, reserved: frozenset[str]) -> tuple[tuple[str, bool], ...] | None:
    """The ORDER BY columns as (name, descending); None when a name is DuckDB's to interpret."""
    order: list[tuple[str, bool]] = []
    for part in text.split(",") if text else []:
        words = part.split()
        name = identifier(words[0], reserved)
        if name is None:
            return None
        order.append((name, len(words) > 1 and words[1].upper() == "DESC"))
    return tuple(order)


def _select(select: str, reserved: frozenset[str]) -> tuple[
        tuple[str, ...] | None, str | None, tuple[tuple[str, str, bool | None], ...]] | None:
    """The select list as (columns read, the constant's name, outputs); None when a name is DuckDB's to interpret."""
    if select == "*":
        return None, None, ()
    if re.match(r"(?i)1\s", select):
        constant = identifier(select.split()[-1], reserved)
        return None if constant is None else ((), constant, ())
    items = []
    for item in select.split(","):
        words = item.split()
        column, name = identifier(words[0], reserved), identifier(words[-1], reserved)
        if column is None or name is None:
            return None
        items.append((name, column, None if len(words) == 1 else words[2].upper() == "NOT"))
    return tuple(c for _, c, _ in items), None, tuple(items)


# --------------------------------------------------------------------------- the steps every shape shares

@dataclass(frozen=True)
class _Bound:
    """A parsed read with its parameters bound: one value per condition, as its column stores it, and the paging."""
    shape: EqualityRead
    info: TableInfo
    values: list[Any]
    paging: Sequence[int]


def _bind(shape: EqualityRead, params: Sequence[Any], view: View) -> _Bound | None:
    """The parameters bound to the terms and coerced to their columns' values; None where DuckDB must say."""
    asked = sum(1 for written, _ in shape.literals if not written)
    if len(params) != asked + shape.paging:
        return None
    paging = params[asked:]
    if not all(type(n) is int and 0 <= n < 2**63 for n in paging):
        return None
    info = view.tables.get(shape.table)
    if info is None or not view.rows_known(shape.table):
        return None
    types = info.column_types
    if not all(c in types for c in shape.named):
        return None
    given = iter(params[:asked])
    values = [value if written else next(given) for written, value in shape.literals]
    wanted: list[Any] = []
    for column, fold, cast, value in zip(shape.where, shape.folded, shape.cast, values):
        kind = types[column]
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
    return _Bound(shape, info, wanted, paging)


def _finish(label: str, bound: _Bound, found: list[dict[str, Any]]) -> Answer | None:
    """The matched rows ordered, cut and projected as DuckDB returns them; None when their order is DuckDB's to tell."""
    shape, info, paging = bound.shape, bound.info, bound.paging
    if len(found) > 1:
        if not shape.order:
            return None  # the stored order decides: only DuckDB knows it
        keys = [tuple(r[c] for c, _ in shape.order) for r in found]
        if len(set(keys)) != len(keys):
            return None  # ties: the stored order decides
        for i in range(len(shape.order)):
            kinds = {type(k[i]) for k in keys}
            if len(kinds) != 1 or kinds.pop() not in _ORDERABLE:
                return None  # NULLs, or values whose order Python and DuckDB might not share
        for column, descending in reversed(shape.order):  # stable sorts, last key first
            found.sort(key=operator.itemgetter(column), reverse=descending)
    if shape.limit is not None or paging:
        count = shape.limit if shape.limit is not None else paging[0]
        start = paging[-1] if len(paging) + (shape.limit is not None) == 2 else 0
        found = found[start:start + count]
    if shape.constant is not None:
        return Answer(label, (shape.constant,), [(1,) for _ in found])
    if shape.columns is None:
        return Answer(label, info.columns, [tuple(r[c] for c in info.columns) for r in found])
    return Answer(label, tuple(name for name, _, _ in shape.outputs),
                  [tuple(r[c] if present is None else (r[c] is not None) is present for _, c, present in shape.outputs)
                   for r in found])


def _evaluate(label: str, sql: str, params: Sequence[Any], view: View,
              match: Callable[[_Bound, View], list[dict[str, Any]] | None]) -> Answer | None:
    """Bind, match with the shape's own matcher, then order, cut and project."""
    shape = parse(sql)
    bound = None if shape is None else _bind(shape, params, view)
    if bound is None:
        return None
    if any(v is None for v in bound.values):
        return _finish(label, bound, [])  # column = NULL is never true
    found = match(bound, view)
    return None if found is None else _finish(label, bound, found)


def _is_key_lookup(shape: EqualityRead, info: TableInfo | None) -> bool:
    return info is not None and shape.where == info.primary_key and not any(shape.unequal)


# --------------------------------------------------------------------------- the shapes

def by_key(sql: str, params: Sequence[Any], view: View) -> Answer | None:
    """``WHERE <the whole primary key> = ?``: one row looked up, no scan."""
    shape = parse(sql)
    if shape is None or any(shape.folded) or not _is_key_lookup(shape, view.tables.get(shape.table)):
        return None

    def match(bound: _Bound, view: View) -> list[dict[str, Any]]:
        row = view.live_row(bound.shape.table, tuple(bound.values))
        return [] if row is None else [row]

    return _evaluate("read by key", sql, params, view, match)


def by_equality(sql: str, params: Sequence[Any], view: View) -> Answer | None:
    """Plain ``=`` and ``<>`` terms on any columns: the table's current rows scanned."""
    shape = parse(sql)
    if shape is None or any(shape.folded) or _is_key_lookup(shape, view.tables.get(shape.table)):
        return None

    def match(bound: _Bound, view: View) -> list[dict[str, Any]] | None:
        rows = view.current_rows(bound.shape.table)
        if rows is None:
            return None
        return _equal_matches(bound, rows)

    return _evaluate("read by equality", sql, params, view, match)


def by_folded_equality(sql: str, params: Sequence[Any], view: View) -> Answer | None:
    """``lower(column) = lower(?)`` (or ``upper``) among the terms: a scan comparing ASCII text case-folded."""
    shape = parse(sql)
    if shape is None or not any(shape.folded):
        return None

    def match(bound: _Bound, view: View) -> list[dict[str, Any]] | None:
        rows = view.current_rows(bound.shape.table)
        return None if rows is None else _folded_matches(bound, rows)

    return _evaluate("read by folded equality", sql, params, view, match)


def _equal_matches(bound: _Bound, rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows where every ``=`` term is equal and every ``<>`` term is unequal and not NULL.

    The scan every read by equality pays: one comparison per row for the common single
    term, and the terms tested in one loop otherwise.
    """
    terms = list(zip(bound.shape.where, bound.shape.unequal, bound.values))
    if len(terms) == 1:
        column, unequal, value = terms[0]
        if unequal:
            return [r for r in rows if r[column] is not None and r[column] != value]
        return [r for r in rows if r[column] == value]
    found = []
    for r in rows:
        for column, unequal, value in terms:
            have = r[column]
            if (have is None or have == value) if unequal else have != value:
                break
        else:
            found.append(r)
    return found


def _folded_matches(bound: _Bound, rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """The rows equal on every term, folded terms compared lower-cased, ``<>`` terms unequal and not NULL.

    None for a stored value that is not ASCII. A folded term is always ``=`` (the statement's grammar).
    """
    shape = bound.shape
    wanted = [v.lower() if fold else v for fold, v in zip(shape.folded, bound.values)]
    found = []
    for r in rows:
        for column, fold, unequal, value in zip(shape.where, shape.folded, shape.unequal, wanted):
            have = r[column]
            if unequal:
                if have is None or have == value:
                    break
                continue
            if fold and have is not None:
                if not have.isascii():
                    return None  # a value whose lower() only DuckDB can say
                have = have.lower()
            if have != value:
                break
        else:
            found.append(r)
    return found
