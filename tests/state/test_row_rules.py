"""Python's reading of column types, defaults and CHECK constraints agrees with DuckDB wherever it answers.

``row_rules`` lets a template or a write be applied without DuckDB; it may answer
UNSURE as often as it likes, but an answer it does give must be DuckDB's exactly: the
stored value (type, value and printed form), the default, and each constraint's verdict.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from decimal import Decimal

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from thinkingbox_env.state import _Process
from thinkingbox_env.state.row_rules import UNSURE, RowRules, coerce, parse_check, parse_default
from thinkingbox_env.tasks.domain import load_domain

DOMAINS = ("retail", "insurance", "travel", "neobank", "consulting")
KINDS = ["VARCHAR", "INTEGER", "BIGINT", "SMALLINT", "BOOLEAN", "DATE", "TIMESTAMP", "DECIMAL(12,2)", "DECIMAL(5,2)",
         "DECIMAL(10,0)", "DOUBLE"]
TEXTS = ["2026-03-01", "2026-3-1", "2026-02-30", "2026-03-01 10:00:00", "2026-03-01T10:00:00", "2026-03-01 10:00:00.5",
         "2026-03-01 10:00", "2026-03-01 25:00:00", "529.00", "529.005", "529.1", "-0", "-0.00", "1e3", " 5", "12", "12.",
         ".5", "99999999999.99", "999.99", "1000.00", "true", "", "héllo", "a\x00b"]
VALUES = st.one_of(
    st.sampled_from(TEXTS), st.text(max_size=12), st.integers(-2**64, 2**64), st.booleans(), st.none(),
    st.dates(), st.datetimes(), st.floats(allow_nan=False, allow_infinity=False),
    st.decimals(allow_nan=False, allow_infinity=False, places=3, min_value=-10**12, max_value=10**12),
)


def _stored_by_duckdb(kind: str, value):
    """What DuckDB stores for ``value`` inserted as a parameter into a column of type ``kind``."""
    cur = _Process.connection().cursor()
    schema = _Process.next_name("rr_")
    try:
        cur.execute(f"CREATE SCHEMA {schema}; CREATE TABLE {schema}.t (v {kind})")
        return cur.execute(f"INSERT INTO {schema}.t VALUES (?) RETURNING v", [value]).fetchall()[0][0]
    finally:
        cur.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        cur.close()


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kind=st.sampled_from(KINDS), value=VALUES)
def test_a_value_python_stores_is_exactly_what_duckdb_stores(kind, value):
    mine = coerce(kind, value)
    if mine is UNSURE:
        return
    theirs = _stored_by_duckdb(kind, value)  # a value Python is sure of must not be refused
    assert type(mine) is type(theirs) and mine == theirs and repr(mine) == repr(theirs), (kind, value, mine, theirs)


@pytest.mark.parametrize(("kind", "value"), [
    ("VARCHAR", "plain"), ("VARCHAR", "héllo"), ("INTEGER", 7), ("BIGINT", -2**40), ("BOOLEAN", False),
    ("DATE", "2026-03-01"), ("DATE", date(2026, 3, 1)), ("TIMESTAMP", "2026-03-01 10:00:00"),
    ("TIMESTAMP", "2026-03-01T10:00:00.5"), ("TIMESTAMP", datetime(2026, 3, 1, 10)), ("DECIMAL(12,2)", "529.00"),
    ("DECIMAL(12,2)", "529.1"), ("DECIMAL(12,2)", 529), ("DECIMAL(12,2)", Decimal("-0.00")), ("DECIMAL(5,2)", "999.99"),
])
def test_the_values_tools_and_generators_write_are_applied_in_python(kind, value):
    """The common cases are not left to DuckDB: otherwise nothing is gained."""
    mine = coerce(kind, value)
    assert mine is not UNSURE and repr(mine) == repr(_stored_by_duckdb(kind, value))


@pytest.mark.parametrize(("kind", "value"), [
    ("INTEGER", "12"), ("INTEGER", True), ("INTEGER", 2**31), ("VARCHAR", 5), ("DATE", datetime(2026, 3, 1)),
    ("DATE", "2026-02-30"), ("DECIMAL(12,2)", "529.005"), ("DECIMAL(12,2)", 5.5), ("DECIMAL(5,2)", "1000.00"),
    ("TIMESTAMP", "2026-03-01 10:00"), ("DOUBLE", 1.5), ("VARCHAR", "a\x00b"),
])
def test_values_whose_storing_needs_duckdbs_rules_are_left_to_it(kind, value):
    assert coerce(kind, value) is UNSURE


def _checks() -> list[tuple[str, str, str]]:
    db = {d: load_domain(d).db for d in DOMAINS}
    out = []
    for domain, database in db.items():
        for table, rules in database._copy_rules(_Process.connection()).items():
            out += [(domain, table, check) for check in rules.checks]
    return out


CHECKS = _checks()


def test_every_check_the_domains_declare_is_understood():
    assert CHECKS and [c for _, _, c in CHECKS if parse_check(c) is None] == []


@pytest.mark.parametrize(("domain", "table", "check"), CHECKS, ids=[f"{d}.{t}.{i}" for i, (d, t, _) in enumerate(CHECKS)])
def test_a_check_python_evaluates_gives_duckdbs_verdict(domain, table, check):
    db = load_domain(domain).db
    info = db.tables[table]
    named = [c for c in info.columns if re.search(rf'(?<![A-Za-z0-9_"])"?{c}"?(?![A-Za-z0-9_])', check)]
    allowed = re.findall(r"'((?:[^']|'')*)'", check)
    candidates: dict[str, list] = {}
    for column in named:
        kind = info.types[info.columns.index(column)]
        if kind == "VARCHAR":
            candidates[column] = allowed + ["bogus", None, 5]
        else:
            candidates[column] = [coerce(kind, v) for v in (-1, 0, 1, 7, 8, 9, 100, 101)] + [None, "text"]
    rows = list(db._domain_rows(table, _Process.connection()).values())[:2] or [{c: None for c in info.columns}]
    fn = parse_check(check)
    assert fn is not None
    compared = 0
    cur = _Process.connection().cursor()
    try:
        for base in rows:
            for column in named:
                for value in candidates[column]:
                    row = dict(base)
                    row[column] = value
                    mine = fn(row)
                    if mine is UNSURE:
                        continue
                    select = ", ".join(f'CAST(? AS {k}) AS "{c}"' for c, k in zip(info.columns, info.types))
                    theirs = cur.execute(f"SELECT {check} FROM (SELECT {select})", [row[c] for c in info.columns]).fetchone()[0]
                    assert mine == theirs, (check, column, value)
                    compared += 1
    finally:
        cur.close()
    assert compared


@pytest.mark.parametrize(("text", "kind", "value"), [
    ("''", "VARCHAR", ""), ("0", "DECIMAL(12,2)", Decimal("0.00")), ("false", "BOOLEAN", False), ("0", "INTEGER", 0),
    ("NULL", "VARCHAR", None), ("nextval('s')", "INTEGER", UNSURE), ("now()", "TIMESTAMP", UNSURE), ("0", "VARCHAR", UNSURE),
])
def test_a_default_is_read_as_duckdb_stores_it_or_left_to_it(text, kind, value):
    assert parse_default(text, kind) == value if value is not UNSURE else parse_default(text, kind) is UNSURE


def test_a_row_is_refused_for_the_first_constraint_it_breaks_in_duckdbs_order():
    rules = RowRules.build(("id", "status", "n"), ("INTEGER", "VARCHAR", "INTEGER"), ("id", "status"),
                           ("(status IN ('a', 'b'))", "(n >= 0)"), {"n": "0"}, declared=False)
    assert rules.usable
    assert rules.full_row({"id": 1, "status": "a"}) == {"id": 1, "status": "a", "n": 0}
    assert rules.broken({"id": 1, "status": "a", "n": 0}) is None
    assert rules.broken({"id": None, "status": None, "n": 0}) == ("NOT NULL", "id")
    assert rules.broken({"id": 1, "status": "c", "n": -1}) == ("CHECK", "(status IN ('a', 'b'))")
    assert rules.broken({"id": 1, "status": "a", "n": -1}) == ("CHECK", "(n >= 0)")
    assert rules.full_row({"id": "1", "status": "a"}) is UNSURE
    opaque = RowRules.build(("id",), ("INTEGER",), (), ("(id % 2 = 0)",), {}, declared=False)
    assert not opaque.usable


def test_python_refuses_what_duckdb_refuses_and_fills_what_it_fills():
    """Rules read from DuckDB's catalog: a row Python finds broken DuckDB refuses; a row it completes, DuckDB stores alike."""
    cur = _Process.connection().cursor()
    schema = _Process.next_name("rr_")
    try:
        cur.execute(f"CREATE SCHEMA {schema}; CREATE TABLE {schema}.t (id INTEGER NOT NULL, status VARCHAR "
                    f"CHECK (status IN ('a', 'b')), n INTEGER DEFAULT 0 CHECK (n >= 0))")
        not_null, checks, defaults = [], [], {}  # the rules as DuckDB's catalog prints them
        for kind, expression, columns in cur.execute(
                "SELECT constraint_type, expression, constraint_column_names FROM duckdb_constraints() "
                "WHERE schema_name = ? ORDER BY constraint_index", [schema]).fetchall():
            if kind == "NOT NULL":
                not_null += columns
            elif kind == "CHECK":
                checks.append(expression)
        for column, default in cur.execute("SELECT column_name, column_default FROM duckdb_columns() "
                                           "WHERE schema_name = ? AND column_default IS NOT NULL", [schema]).fetchall():
            defaults[column] = default
        rules = RowRules.build(("id", "status", "n"), ("INTEGER", "VARCHAR", "INTEGER"), not_null, checks, defaults,
                               declared=False)
        assert rules.usable
        for row in ([None, "a", 0], [1, "c", 0], [1, "a", -1]):
            assert rules.broken(dict(zip(("id", "status", "n"), row))) not in (None, UNSURE), row
            with pytest.raises(duckdb.ConstraintException):
                cur.execute(f"INSERT INTO {schema}.t VALUES (?, ?, ?)", row)
        full = rules.full_row({"id": 1, "status": "b"})
        assert rules.broken(full) is None
        stored = cur.execute(f"INSERT INTO {schema}.t (id, status) VALUES (?, ?) RETURNING *", [1, "b"]).fetchall()
        assert stored == [tuple(full.values())]
    finally:
        cur.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        cur.close()
