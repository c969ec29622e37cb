"""A table's column types, defaults and constraints as Python can apply them, where the outcome is certain.

Writing a row through DuckDB costs a table copy and a statement (about two milliseconds
on a small machine); writing it in Python costs microseconds. Python may only do it where
it gives exactly what DuckDB would: the same stored value for every column, the same
default for a column left out, and the same verdict for every NOT NULL and CHECK
constraint. Anything else is ``UNSURE``, and the caller then lets DuckDB do the write,
so an uncertain case costs time, never a different answer.

Coercions accepted: ``str`` into VARCHAR; ``int`` (not ``bool``) in range into the
integer types; ``bool`` into BOOLEAN; ``int``, ``Decimal`` or a plain decimal string
into ``DECIMAL(p,s)`` when no digit is rounded away and it fits; ``date`` or
``YYYY-MM-DD`` into DATE; a naive ``datetime`` or ``YYYY-MM-DD[ T]HH:MM:SS[.ffffff]``
into TIMESTAMP. CHECK expressions understood: ``col IN ('a', ...)``, ``x <op> y`` with a
column on the left and a column or a number on the right, and ``col BETWEEN n AND m``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from typing import Any


class _Unsure:
    """The answer only DuckDB can give."""

    def __repr__(self) -> str:
        return "UNSURE"


UNSURE: Any = _Unsure()

INT_BOUNDS = {"TINYINT": 2**7, "SMALLINT": 2**15, "INTEGER": 2**31, "BIGINT": 2**63}
_DECIMAL_TYPE = re.compile(r"DECIMAL\((\d+),(\d+)\)")
_DATE_TEXT = re.compile(r"\d{4}-\d{2}-\d{2}")
_TIMESTAMP_TEXT = re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?")
_TIME_KINDS: dict[str, tuple[type[date], re.Pattern[str]]] = {"DATE": (date, _DATE_TEXT), "TIMESTAMP": (datetime, _TIMESTAMP_TEXT)}
_DECIMAL_TEXT = re.compile(r"-?\d{1,30}(?:\.\d{1,30})?")


def coerce(kind: str, value: Any) -> Any:
    """The value DuckDB stores for ``value`` written into a column of type ``kind``, or UNSURE."""
    if value is None:
        return None
    t = type(value)
    if kind == "VARCHAR":
        if t is not str or "\x00" in value:
            return UNSURE
        if not value.isascii():
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:  # a lone surrogate: DuckDB refuses it
                return UNSURE
        return value
    if kind in INT_BOUNDS:
        bound = INT_BOUNDS[kind]
        return value if t is int and -bound <= value < bound else UNSURE
    if kind == "BOOLEAN":
        return value if t is bool else UNSURE
    if kind in _TIME_KINDS:
        own, text = _TIME_KINDS[kind]
        if t is own:  # a datetime is a date too: the exact type only
            if t is datetime:
                return value.replace(fold=0) if value.tzinfo is None else UNSURE  # fold means nothing without a zone
            return value
        if t is str and text.fullmatch(value):
            try:
                return own.fromisoformat(value)
            except ValueError:  # no such day or hour: DuckDB's error
                return UNSURE
        return UNSURE
    m = _DECIMAL_TYPE.fullmatch(kind)
    if m is not None:
        return _decimal(value, int(m.group(1)), int(m.group(2)))
    return UNSURE


def _decimal(value: Any, precision: int, scale: int) -> Any:
    t = type(value)
    try:
        if t is int:
            d = Decimal(value)
        elif t is Decimal:
            d = value
        elif t is str and _DECIMAL_TEXT.fullmatch(value):
            d = Decimal(value)
        else:
            return UNSURE
        if not d.is_finite():
            return UNSURE
        exponent = d.as_tuple().exponent
        if not isinstance(exponent, int) or -exponent > scale:
            return UNSURE  # DuckDB would round a digit away: leave the rounding rule to it
        q = d.quantize(Decimal(1).scaleb(-scale))
    except (InvalidOperation, ValueError):
        return UNSURE
    if abs(q) >= Decimal(10) ** (precision - scale):
        return UNSURE  # out of range: DuckDB's error
    return abs(q) if q == 0 else q  # no negative zero


IDENTIFIER = r'(?:"[A-Za-z_][A-Za-z0-9_]*"|[A-Za-z_][A-Za-z0-9_]*)'  # quoted or not
_IDENT = IDENTIFIER
_NUMBER = r"-?\d+(?:\.\d+)?"
_STRING = r"'(?:[^']|'')*'"
_IN_CHECK = re.compile(rf"\(({_IDENT}) IN \(((?:{_STRING})(?:, {_STRING})*)\)\)")
_COMPARE_CHECK = re.compile(rf"\(({_IDENT}) (<=|>=|<|>|=|<>|!=) ({_IDENT}|{_NUMBER})\)")
_BETWEEN_CHECK = re.compile(rf"\(({_IDENT}) BETWEEN ({_NUMBER}) AND ({_NUMBER})\)")
_COMPARISONS: dict[str, Callable[[Any, Any], bool]] = {
    "<=": lambda a, b: a <= b, ">=": lambda a, b: a >= b, "<": lambda a, b: a < b, ">": lambda a, b: a > b,
    "=": lambda a, b: a == b, "<>": lambda a, b: a != b, "!=": lambda a, b: a != b,
}

Check = Callable[[Mapping[str, Any]], Any]  # True holds, False broken, None NULL (holds), UNSURE


def literal_value(token: str) -> Any:
    """The value of a plain SQL literal: 'text' (quotes doubled inside), an integer or decimal, TRUE, FALSE or NULL."""
    if token.startswith("'"):
        return token[1:-1].replace("''", "'")
    word = token.upper()
    if word in ("TRUE", "FALSE", "NULL"):
        return None if word == "NULL" else word == "TRUE"
    return _number(token)


def _name(token: str) -> str:
    return token[1:-1] if token.startswith('"') else token


def _number(text: str) -> int | Decimal:
    return Decimal(text) if "." in text else int(text)


def _comparable(a: Any, b: Any) -> bool:
    """Values Python and DuckDB order the same way: numbers (never bool) with numbers, or equal types of date/time/text."""
    numeric = (int, Decimal)
    if type(a) in numeric and type(b) in numeric:
        return True
    return type(a) is type(b) and type(a) in (date, datetime)


def parse_check(expression: str) -> Check | None:
    """A CHECK expression, as DuckDB's catalog prints it, as a Python function; None when not understood."""
    m = _IN_CHECK.fullmatch(expression)
    if m is not None:
        column = _name(m.group(1))
        allowed = frozenset(literal_value(s) for s in re.findall(_STRING, m.group(2)))

        def in_list(row: Mapping[str, Any]) -> Any:
            v = row[column]
            if v is None:
                return None
            return v in allowed if type(v) is str else UNSURE
        return in_list
    m = _COMPARE_CHECK.fullmatch(expression)
    if m is not None:
        left, op, right = _name(m.group(1)), _COMPARISONS[m.group(2)], m.group(3)
        constant = _number(right) if re.fullmatch(_NUMBER, right) else None
        other = None if constant is not None else _name(right)

        def compare(row: Mapping[str, Any]) -> Any:
            a = row[left]
            b = constant if other is None else row[other]
            if a is None or b is None:
                return None
            return op(a, b) if _comparable(a, b) else UNSURE
        return compare
    m = _BETWEEN_CHECK.fullmatch(expression)
    if m is not None:
        column, low, high = _name(m.group(1)), _number(m.group(2)), _number(m.group(3))

        def between(row: Mapping[str, Any]) -> Any:
            v = row[column]
            if v is None:
                return None
            return low <= v <= high if _comparable(v, low) else UNSURE
        return between
    return None


def parse_default(text: str, kind: str) -> Any:
    """A column's DEFAULT as the value DuckDB stores, or UNSURE for anything but a plain literal."""
    t = text.strip()
    if not re.fullmatch(rf"{_STRING}|{_NUMBER}|(?i:true|false|null)", t):
        return UNSURE
    return coerce(kind, literal_value(t))  # a number into VARCHAR is a cast: UNSURE


@dataclass(frozen=True)
class RowRules:
    """What DuckDB does to a row written into one table, for the cases Python can tell for certain.

    ``usable`` is False when the table declares something Python does not model (a
    constraint of another kind, a default that is not a literal): every write to it
    goes to DuckDB.
    """
    columns: tuple[str, ...]
    types: tuple[str, ...]
    not_null: tuple[str, ...]  # in the catalog's order, so the first broken one named is DuckDB's
    defaults: dict[str, Any]  # column -> stored default value (UNSURE: not a literal)
    checks: tuple[tuple[str, Check | None], ...]  # (expression, Python form or None)
    usable: bool

    @classmethod
    def build(cls, columns: Sequence[str], types: Sequence[str], not_null: Sequence[str], checks: Sequence[str],
              defaults: Mapping[str, str], declared: bool) -> RowRules:
        kinds = dict(zip(columns, types))
        parsed = tuple((c, parse_check(c)) for c in checks)
        values = {c: parse_default(text, kinds[c]) for c, text in defaults.items()}
        return cls(tuple(columns), tuple(types), tuple(not_null), values, parsed,
                   usable=not declared and all(f is not None for _, f in parsed))

    def kind(self, column: str) -> str:
        return self.types[self.columns.index(column)]

    def full_row(self, given: Mapping[str, Any]) -> dict[str, Any] | Any:
        """An inserted row: the given columns coerced, every other one its default (NULL without one); or UNSURE."""
        row: dict[str, Any] = {}
        for column, kind in zip(self.columns, self.types):
            if column in given:
                value = coerce(kind, given[column])
            else:
                value = self.defaults.get(column)
            if value is UNSURE:
                return UNSURE
            row[column] = value
        return row

    def broken(self, row: Mapping[str, Any]) -> tuple[str, str] | None | Any:
        """The first constraint the row breaks, as (kind, what), None when it breaks none, or UNSURE."""
        for column in self.not_null:
            if row[column] is None:
                return ("NOT NULL", column)
        for expression, check in self.checks:
            if check is None:
                return UNSURE
            held = check(row)
            if held is UNSURE:
                return UNSURE
            if held is False:
                return ("CHECK", expression)
        return None
