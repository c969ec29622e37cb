"""values_of reads a record's leaves by their type: the same keys as a plain walk over every leaf."""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from thinkingbox_env.reading.values import (
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


_WORDS = ["one", "twenty", "a", "an", "day", "days", "week", "business", "hour", "today", "Tomorrow", "yesterday", "May", "march",
          "$", "USD", "dollars", "ORD-", "cus-", "@", ".", ",", "-", "/", " ", "often", "phone", "none", "x@y.io", "#"]
texts_with_values = st.lists(st.one_of(st.sampled_from(_WORDS), st.text(alphabet="abcdef01 -.$", max_size=6)),
                             max_size=12).map(" ".join)


def _full_reading(text: str, clock, ids) -> tuple:
    """extract_values with the prefilter that skips value-free texts turned off."""
    import re

    from thinkingbox_env.reading import values

    saved = values._MAYBE_VALUE
    values._MAYBE_VALUE = re.compile("")  # matches every text: every pattern is run
    values._extract_values.cache_clear()
    try:
        return values._extract_values(text, clock, ids)
    finally:
        values._MAYBE_VALUE = saved
        values._extract_values.cache_clear()


@settings(max_examples=400, deadline=None)
@given(st.one_of(texts_with_values, st.text(max_size=40)))
def test_a_text_the_prefilter_skips_holds_no_value_but_its_ids(text):
    from thinkingbox_env.reading import values

    values._extract_values.cache_clear()
    assert values._extract_values(text, CLOCK, IDS) == _full_reading(text, CLOCK, IDS)


def test_the_prefilter_reads_every_text_of_the_task_sets_as_the_full_reading_does():
    import thinkingbox_env as tb
    from thinkingbox_env.reading import values
    from thinkingbox_env.tasks.domain import load_domain

    checked = 0
    for task_id in tb.list_tasks():
        spec = tb.load_task(task_id)
        ids = tuple(load_domain(spec.domain).spec.id_patterns)
        for text in [spec.user.opening, spec.golden_reply, *[f.text for f in spec.user.facts]]:
            values._extract_values.cache_clear()
            assert values._extract_values(text, CLOCK, ids) == _full_reading(text, CLOCK, ids), (task_id, text)
            checked += 1
    assert checked > 1500
