"""values_of reads a record's leaves by their type: the same keys as a plain walk over every leaf."""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from thinkingbox_env.values import (
    _DIGIT_RE,
    _ISO_DATE_RE,
    _LONG_DIGITS_RE,
    _NUMERIC_RE,
    _TOKEN_RE,
    _values_of,
    extract_values,
    id_norm,
    money_norm,
    number_norm,
)

CLOCK = date(2026, 5, 19)
IDS = (r"ORD-\d{4,}", r"CUS-\d{4,}")


def plain_walk(obj: object) -> set[tuple[str, str]]:
    """Every leaf tested in turn, as a reader would write it without any shortcut."""
    out: set[tuple[str, str]] = set()

    def walk(x: object) -> None:
        if isinstance(x, dict):
            for v in x.values():
                walk(v)
        elif isinstance(x, (list, tuple, set)):
            for v in x:
                walk(v)
        elif isinstance(x, bool) or x is None:
            return
        elif isinstance(x, (int, float, Decimal)):
            d = x if type(x) is Decimal else Decimal(str(x))
            out.add(("number", number_norm(d)))
            out.add(("money", money_norm(d)))
            if isinstance(x, int) and abs(x) >= 10000:
                out.add(("id", str(x)))
        elif isinstance(x, (date, datetime)):
            out.add(("date", (x.date() if isinstance(x, datetime) else x).isoformat()))
        else:
            s = str(x)
            if _NUMERIC_RE.fullmatch(s):
                walk(Decimal(s))
                if _LONG_DIGITS_RE.fullmatch(s):
                    out.add(("id", s))
                return
            m = _ISO_DATE_RE.match(s)
            if m:
                out.add(("date", m.group(1)))
                return
            out.update(v.key for v in extract_values(s, CLOCK, IDS))
            if len(s) <= 40 and _TOKEN_RE.fullmatch(s) and _DIGIT_RE.search(s):
                out.add(("id", id_norm(s)))

    walk(obj)
    return out


class Named(str):
    """A text of a subclass of str: read by its text."""


texts = st.one_of(
    st.sampled_from(["ORD-10023", "cus-1002", "refunded", "$25.00 credited", "2026-05-01", "2026-05-01 10:00:00", "12",
                     "00123456", "-3.5", "May 3", "in 14 days", "three", "a1b2", "A" * 41 + "1", "", "tomorrow"]),
    st.text(max_size=30),
)
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-10**8, max_value=10**8),
    st.floats(allow_nan=False, allow_infinity=False, width=32), st.sampled_from([0.0, -0.0, 1.0, 1e20]),
    st.decimals(allow_nan=False, allow_infinity=False, places=2), st.sampled_from([Decimal("1E+30"), Decimal("-0.00")]),
    st.dates(), st.datetimes(), texts, texts.map(Named),
)
records = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.lists(inner, max_size=3).map(tuple),
    st.dictionaries(st.text(max_size=5), inner, max_size=4)), max_leaves=25)


@settings(max_examples=400, deadline=None)
@given(records)
def test_the_same_keys_as_a_plain_walk(record):
    assert _values_of(record, CLOCK, IDS) == plain_walk(record)
