"""Typed values read out of free text: money, dates, durations, numbers and identifiers.

Dialogue checks compare what the agent told the customer with the backend, so
they must not care how a value was written (``$50`` is ``$50.00`` is ``50
dollars`` is ``USD 50``; ``2026-03-16`` is ``March 16, 2026`` is ``Mar 16`` when
the clock says 2026) and must never find a value inside another one (``23`` is
not in ``2023`` nor in ``2026-03-23``). Extraction therefore scans the text once,
most specific kind first, and every character belongs to at most one value.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Literal

# "term" is a word of a closed set that a role declares (claims.yaml); extract_values never finds one
ValueKind = Literal["money", "date", "duration", "number", "id", "term"]

_MONTHS = {
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
    "jul": 7, "aug": 8, "sep": 9, "sept": 9, "oct": 10, "nov": 11, "dec": 12,
}
_MONTH_RE = (
    r"(?P<{g}>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_UNITS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
}
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
_SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000}
_WORD = "|".join(sorted(list(_UNITS) + list(_TENS) + list(_SCALES), key=len, reverse=True))
# a run of number words ("twenty-three", "one hundred and five"); "a"/"an" count as one before a unit
_WORDS_RE = rf"(?:{_WORD})(?:(?:[\s-]+|\s+and\s+)(?:{_WORD}))*"
_NUM_RE = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_AMOUNT = rf"(?:{_NUM_RE}|{_WORDS_RE})"


@dataclass(frozen=True)
class Value:
    """One value as found in a text: its kind, a canonical form, and where it was written."""

    kind: ValueKind
    norm: str
    text: str = ""
    start: int = 0
    end: int = 0

    @property
    def key(self) -> tuple[str, str]:
        return (self.kind, self.norm)

    def __str__(self) -> str:
        return self.text or self.norm


def words_to_number(text: str) -> int | None:
    """``"twenty-three"`` -> 23, ``"one hundred and five"`` -> 105; None when it is not a number."""
    total, current, seen = 0, 0, False
    for tok in re.split(r"[\s-]+", text.lower().strip()):
        if tok in ("", "and"):
            continue
        if tok in _UNITS:
            current += _UNITS[tok]
        elif tok in _TENS:
            current += _TENS[tok]
        elif tok == "hundred":
            current = max(current, 1) * 100
        elif tok in _SCALES:
            total += max(current, 1) * _SCALES[tok]
            current = 0
        else:
            return None
        seen = True
    return total + current if seen else None


def parse_number(text: str) -> Decimal | None:
    """Digits or number words as a decimal; None when the text is neither."""
    text = text.strip()
    if not text:
        return None
    if text[0].isdigit():
        try:
            return Decimal(text.replace(",", ""))
        except InvalidOperation:
            return None
    n = words_to_number(text)
    return Decimal(n) if n is not None else None


_CENT = Decimal("0.01")
_ONE = Decimal(1)


def money_norm(amount: Decimal | float | int | str) -> str:
    """Two decimals; a value beyond the decimal context (an agent may say anything) is kept as written."""
    d = amount if type(amount) is Decimal else Decimal(str(amount))  # grading calls this thousands of times
    try:
        return str(d.quantize(_CENT))
    except InvalidOperation:
        return str(d)


def number_norm(amount: Decimal | int | float | str) -> str:
    """No trailing zeros; infinities and values beyond the decimal context are kept as written."""
    d = amount if type(amount) is Decimal else Decimal(str(amount))
    if not d.is_finite():
        return str(d)
    try:
        return str(d.quantize(_ONE)) if d == d.to_integral_value() else str(d.normalize())
    except InvalidOperation:
        return str(d)


def id_norm(text: str) -> str:
    """Identifiers compare without case and separators: ``ord-100001`` is ``ORD100001``."""
    if "@" in text:
        return text.strip().strip(".").lower()
    return re.sub(r"[^A-Za-z0-9]", "", text).upper()


def _year_for(month: int, day: int, clock: date | None) -> int | None:
    """The year a date written without one means: the one nearest the domain clock."""
    if clock is None:
        return None
    best = None
    for year in (clock.year - 1, clock.year, clock.year + 1):
        try:
            d = date(year, month, day)
        except ValueError:
            continue
        if best is None or abs((d - clock).days) < abs((best - clock).days):
            best = d
    return best.year if best else None


def _date_norm(year: int | None, month: int, day: int, clock: date | None) -> str | None:
    if year is None:
        year = _year_for(month, day, clock)
        if year is None:
            return None
    elif year < 100:
        year += 2000
    try:
        return date(year, month, day).isoformat()
    except ValueError:
        return None


_DAY = r"(?P<{g}>\d{{1,2}})(?:st|nd|rd|th)?"
_DATE_PATTERNS = [
    ("iso", re.compile(r"(?<![\w.-])(?P<y>\d{4})-(?P<m>\d{1,2})-(?P<d>\d{1,2})(?![\w-])")),
    ("mdy", re.compile(r"(?<![\w/])(?P<m>\d{1,2})/(?P<d>\d{1,2})(?:/(?P<y>\d{4}|\d{2}))?(?![\w/])")),
    ("month_day", re.compile(
        r"(?<![\w])" + _MONTH_RE.format(g="mon") + r"\s+" + _DAY.format(g="d")
        + r"(?:,?\s+(?P<y>\d{4}))?(?![\w])", re.IGNORECASE)),
    ("day_month", re.compile(
        r"(?<![\w])" + _DAY.format(g="d") + r"\s+(?:of\s+)?" + _MONTH_RE.format(g="mon")
        + r"(?:,?\s+(?P<y>\d{4}))?(?![\w])", re.IGNORECASE)),
]
_RELATIVE_DAYS = {"today": 0, "tomorrow": 1, "yesterday": -1}

_MONEY_PATTERNS = [
    re.compile(rf"(?:US)?\$\s?(?P<a>{_NUM_RE})(?:\s?(?:USD|dollars?))?(?![\w])", re.IGNORECASE),
    re.compile(rf"(?<![\w])(?:USD|US\s?dollars?)\s?(?P<a>{_NUM_RE})(?![\w])", re.IGNORECASE),
    re.compile(rf"(?<![\w.,])(?P<a>{_AMOUNT})(?:\s+(?:US\s+)?dollars?|\s?USD)(?:\s+and\s+(?P<c>{_AMOUNT})\s+cents?)?(?![\w])",
               re.IGNORECASE),
    # a bare amount with exactly two decimals reads as money in a business reply ("a fee of 12.00")
    re.compile(r"(?<![\w.,$/-])(?P<a>\d{1,3}(?:,\d{3})+\.\d\d|\d+\.\d\d)(?![\w.%])"),
]
_DURATION_RE = re.compile(
    rf"(?<![\w.,])(?P<n>{_NUM_RE}|{_WORDS_RE}|an?)(?:[\s-]+(?P<kind>business|working|calendar))?[\s-]+"
    r"(?P<unit>day|week|month|year|hour)s?(?![\w])",
    re.IGNORECASE,
)
_NUMBER_RE = re.compile(rf"(?<![\w.,/-])(?P<n>{_NUM_RE})(?![\w/]|-\d|\.\d|,\d)|(?<![\w-])(?P<w>{_WORDS_RE})(?![\w-])",
                        re.IGNORECASE)
_BARE_ID_RE = re.compile(r"(?<![\w.,$/-])#?(?P<n>\d{5,})(?![\w.,/-]\d|\w)")
_EMAIL_RE = r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}"
# What every value but an id needs somewhere in the text: a digit, a number word, a unit of a duration
# (whose "a"/"an" needs one) or a day named relative to today ("today" and "yesterday" hold "day").
# Searched anywhere, so a text it misses certainly holds none of them.
_MAYBE_VALUE = re.compile(rf"\d|day|tomorrow|week|month|year|hour|{_WORD}", re.IGNORECASE)


def _with_separator(pattern: str, sep: str) -> str | None:
    r"""``pattern`` with each hyphen that separates an id's parts (``-`` or ``\-`` outside ``[...]``) written as ``sep``.

    A hyphen inside a character class is a range or a literal of that class and is kept;
    None when the pattern has no separating hyphen.
    """
    out: list[str] = []
    found = False
    in_class = False
    first_member = -1  # where the open class's members start: a "]" there is a member, not the end
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            pair = pattern[i : i + 2]
            if pair == "\\-" and not in_class:
                out.append(sep)
                found = True
            else:
                out.append(pair)
            i += 2
            continue
        if in_class:
            if c == "]" and i != first_member:
                in_class = False
            out.append(c)
        elif c == "[":
            in_class = True
            first_member = i + 2 if pattern[i + 1 : i + 2] == "^" else i + 1
            out.append(c)
        elif c == "-":
            out.append(sep)
            found = True
        else:
            out.append(c)
        i += 1
    return "".join(out) if found else None


@lru_cache(maxsize=64)
def _loose_id_patterns(patterns: tuple[str, ...]) -> list[re.Pattern[str]]:
    r"""Domain id patterns as an agent may write them: ``ord-100001``, ``ORD_100001``, ``ORD 100001``, ``ORD100001``.

    With a hyphen or underscore between its parts an id is found in any case; written with a
    space or with nothing between them it must keep the case the domain declares, or an English
    word that happens to be a prefix would swallow the number after it ("5 pm 12 March" is a time
    and a date, not the payment method PM-12).
    """
    out = []
    for p in patterns:
        if "@" in p:
            out.append(re.compile(rf"(?<![\w.+-]){p}", re.IGNORECASE))
            continue
        any_case = _with_separator(p, "[-_]")
        if any_case is None:
            out.append(re.compile(rf"(?<![\w-])(?:{p})(?![\w])", re.IGNORECASE))
            continue
        as_declared = _with_separator(p, r"\s?")
        out.append(re.compile(rf"(?<![\w-])(?:{any_case})(?![\w])", re.IGNORECASE))
        out.append(re.compile(rf"(?<![\w-])(?:{as_declared})(?![\w])"))
    return out


def _free(taken: list[tuple[int, int]], start: int, end: int) -> bool:
    return all(end <= s or start >= e for s, e in taken)


def extract_values(text: str, clock: date | datetime | None = None, id_patterns: tuple[str, ...] | list[str] = ()) -> list[Value]:
    """Every typed value written in ``text``, each character in at most one value, in text order.

    Memoised: grading reads the same tool results, policy lines and replies over and
    over (every episode of a task, every check), and the answer depends on nothing else.
    """
    if isinstance(clock, datetime):
        clock = clock.date()
    return list(_extract_values(text, clock, tuple(id_patterns)))


@lru_cache(maxsize=16_384)
def _extract_values(text: str, clock: date | None, id_patterns: tuple[str, ...]) -> tuple[Value, ...]:
    found: list[Value] = []
    taken: list[tuple[int, int]] = []

    def add(kind: ValueKind, norm: str | None, m_start: int, m_end: int) -> None:
        if norm is None or not _free(taken, m_start, m_end):
            return
        taken.append((m_start, m_end))
        found.append(Value(kind, norm, text[m_start:m_end], m_start, m_end))

    for pat in _loose_id_patterns(tuple(id_patterns) + (_EMAIL_RE,)):
        for m in pat.finditer(text):
            add("id", id_norm(m.group()), m.start(), m.end())
    if _MAYBE_VALUE.search(text) is None:  # nothing below can match: most record texts (names, statuses)
        found.sort(key=lambda v: v.start)
        return tuple(found)
    for style, pat in _DATE_PATTERNS:
        for m in pat.finditer(text):
            if style in ("month_day", "day_month"):
                month = _MONTHS[m.group("mon").lower()[:3]]
            else:
                month = int(m.group("m"))
            y = m.group("y")
            add("date", _date_norm(int(y) if y else None, month, int(m.group("d")), clock), m.start(), m.end())
    if clock is not None:
        for m in re.finditer(r"\b(today|tomorrow|yesterday)\b", text, re.IGNORECASE):
            add("date", (clock + timedelta(days=_RELATIVE_DAYS[m.group(1).lower()])).isoformat(), m.start(), m.end())
    for pat in _MONEY_PATTERNS:
        for m in pat.finditer(text):
            amount = parse_number(m.group("a"))
            if amount is None:
                continue
            cents = m.groupdict().get("c")
            if cents:
                extra = parse_number(cents)
                amount += (extra or Decimal(0)) / 100
            add("money", money_norm(amount), m.start(), m.end())
    for m in _DURATION_RE.finditer(text):
        raw = m.group("n").lower()
        n = Decimal(1) if raw in ("a", "an") else parse_number(raw)
        if n is None:
            continue
        unit = m.group("unit").lower()
        qualifier = (m.group("kind") or "").lower()
        if unit == "week":
            n, unit = n * 7, "day"
        if qualifier in ("business", "working"):
            unit = "business day" if unit == "day" else unit
        add("duration", f"{number_norm(n)} {unit}", m.start(), m.end())
    for m in _BARE_ID_RE.finditer(text):
        add("id", m.group("n"), m.start(), m.end())
    for m in _NUMBER_RE.finditer(text):
        raw = m.group("n") or m.group("w")
        n = parse_number(raw)
        if n is None:
            continue
        add("number", number_norm(n), m.start(), m.end())
    found.sort(key=lambda v: v.start)
    return tuple(found)


def parse_value(text: str, clock: date | datetime | None = None, id_patterns: tuple[str, ...] | list[str] = ()) -> Value | None:
    """The single value a short text denotes (``"$50"``, ``"2026-03-16"``, ``"7 days"``), or None."""
    vals = extract_values(text.strip(), clock, id_patterns)
    if len(vals) == 1 and vals[0].end - vals[0].start >= len(text.strip()) - 1:
        return vals[0]
    return None


def same_value(want: Value, got: Value) -> bool:
    """Whole-value equality across kinds that a reader would take as the same statement.

    A bare number stands for a money amount or a count of days with the same magnitude
    ("a refund of 12" is ``$12.00``); money, dates and ids only equal their own kind.
    """
    if want.kind == got.kind:
        return want.norm == got.norm
    kinds = {want.kind, got.kind}
    if kinds == {"number", "money"}:
        num = want if want.kind == "number" else got
        mon = got if num is want else want
        try:
            return Decimal(num.norm) == Decimal(mon.norm)
        except InvalidOperation:
            return False
    if kinds == {"number", "id"}:
        return want.norm == got.norm
    return False


def contains_value(values: list[Value], want: Value) -> bool:
    """Whether ``want`` is among ``values`` as the same value in any format."""
    return any(same_value(want, v) for v in values)


def values_of(obj: object, clock: date | datetime | None = None, id_patterns: tuple[str, ...] | list[str] = ()) -> set[tuple[str, str]]:
    """The value keys held by a structured record (a tool result, a row).

    Money from decimals, dates from ISO strings, ids from strings the domain patterns
    recognise, numbers from ints. Memoised by the record's JSON text (every leaf tagged
    with its type), because grading walks the same tool results for every episode.
    """
    if isinstance(clock, datetime):
        clock = clock.date()
    try:
        text = json.dumps(obj, default=_tagged, check_circular=False)
    except (TypeError, ValueError, RecursionError):
        return _values_of(obj, clock, tuple(id_patterns))
    key = (text, clock, tuple(id_patterns))
    hit = _VALUES_OF.get(key)
    if hit is None:
        if len(_VALUES_OF) >= 8_192:  # keys are whole records: bounded for long training runs
            _VALUES_OF.clear()
        hit = _VALUES_OF[key] = frozenset(_values_of(obj, clock, tuple(id_patterns)))
    return set(hit)


_VALUES_OF: dict[tuple[str, date | None, tuple[str, ...]], frozenset[tuple[str, str]]] = {}


def _tagged(value: object) -> str:
    """A JSON stand-in for a non-JSON leaf that no JSON string can equal (its type and repr, after a NUL)."""
    return f"\x00{type(value).__name__}:{value!r}"


_NUMERIC_RE = re.compile(r"-?\d+(\.\d+)?")
_LONG_DIGITS_RE = re.compile(r"\d{5,}")
_ISO_DATE_RE = re.compile(r"^(\d{4}-\d{2}-\d{2})([ T]\d{2}:\d{2}(:\d{2})?)?$")
_TOKEN_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
_DIGIT_RE = re.compile(r"\d")


def keyed_leaves(x: object, key: str = "") -> Iterator[tuple[str, object]]:
    """Every scalar of a JSON-like value with the name of the field that holds it (list items keep their list's name).

    Checks that read tool results by meaning (amount columns, short record texts) need the
    field a value sits in, not only the value.
    """
    if isinstance(x, dict):
        for k, v in x.items():
            yield from keyed_leaves(v, str(k))
    elif isinstance(x, (list, tuple)):
        for v in x:
            yield from keyed_leaves(v, key)
    else:
        yield key, x


def _values_of(obj: object, clock: date | None, id_patterns: tuple[str, ...]) -> set[tuple[str, str]]:
    out: set[tuple[str, str]] = set()

    def walk(x: object) -> None:
        t = type(x)
        if t is str:  # most leaves: their keys kept per text
            out.update(_text_keys(x, clock, id_patterns))
        elif t is dict:
            for v in x.values():  # type: ignore[attr-defined]
                walk(v)
        elif t is list or t is tuple:
            for v in x:  # type: ignore[attr-defined]
                walk(v)
        elif isinstance(x, dict):
            for v in x.values():
                walk(v)
        elif isinstance(x, (list, tuple, set)):
            for v in x:
                walk(v)
        elif isinstance(x, bool) or x is None:
            return
        elif isinstance(x, (int, float, Decimal, date, datetime)):
            out.update(_scalar_keys(x))
        else:
            out.update(_text_keys(str(x), clock, id_patterns))

    walk(obj)
    return out


def _scalar_keys(x: int | float | Decimal | date | datetime) -> tuple[tuple[str, str], ...]:
    """The keys of a number or a date leaf (not memoised: equal numbers of other types or exponents write differently)."""
    if isinstance(x, (date, datetime)):
        return (("date", (x.date() if isinstance(x, datetime) else x).isoformat()),)
    d = x if type(x) is Decimal else Decimal(str(x))
    keys = [("number", number_norm(d)), ("money", money_norm(d))]
    if isinstance(x, int) and abs(x) >= 10000:
        keys.append(("id", str(x)))
    return tuple(keys)


@lru_cache(maxsize=16_384)
def _text_keys(s: str, clock: date | None, id_patterns: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """The keys of a text leaf: a number or an ISO date written as text, else the values written in it."""
    if _NUMERIC_RE.fullmatch(s):
        keys = list(_scalar_keys(Decimal(s)))
        if _LONG_DIGITS_RE.fullmatch(s):
            keys.append(("id", s))
        return tuple(keys)
    m = _ISO_DATE_RE.match(s)
    if m:
        return (("date", m.group(1)),)
    keys = [v.key for v in extract_values(s, clock, id_patterns)]
    if len(s) <= 40 and _TOKEN_RE.fullmatch(s) and _DIGIT_RE.search(s):
        keys.append(("id", id_norm(s)))
    return tuple(keys)
