"""DuckDB reached only for what a statement names: the template's reader, and a replay of only the writes read.

A read of tables an episode has not written runs on its template's one reader (no schema,
no copy per episode); a read of written tables replays only the writes to those tables;
an episode outside a transaction copies a patched table from the reader's copy. These
tests pin that each gives DuckDB's answer on the episode's own state, in stored order.
"""

from __future__ import annotations

import pytest
from helpers import template_tables_in_duckdb

import thinkingbox_env as tb
from thinkingbox_env.state import StateError, _Process
from thinkingbox_env.tasks.domain import load_domain
from thinkingbox_env.tasks.runtime import TaskRuntime, runtime_for

_UNPLAYED = iter(range(7_052_000, 7_052_400))  # variants no other test plays: none of their reads is memoised


def _fresh(domain: str, family: str) -> TaskRuntime:
    return runtime_for(tb.generate_variant(domain, family, next(_UNPLAYED)))


def _schemas() -> set[str]:
    cur = _Process.connection().cursor()
    try:
        return {r[0] for r in cur.execute("SELECT schema_name FROM duckdb_schemas()").fetchall()}
    finally:
        cur.close()


def test_a_read_of_untouched_tables_opens_no_schema_of_the_episode():
    rt = _fresh("retail", "ST030")
    template = rt.template
    assert not template.in_db and template.tables
    table = sorted(template.tables)[0]
    first, second = rt.new_state(), rt.new_state()
    try:
        # an aggregate: no fast-path shape, so DuckDB answers it, on the reader's copy of the patched table
        assert first.query(f"SELECT count(*) AS n FROM {table}") == [{"n": len(template.base_rows(table))}]
        assert first.cursor is None and first.misses == 1
        reader = template._reader
        assert reader is not None and reader._in_db == {table}
        made = _schemas()
        assert second.query(f"SELECT count(*) AS n FROM {table} WHERE 1 = 1") == [{"n": len(template.base_rows(table))}]
        assert second.cursor is None and _schemas() == made  # the reader's copy again: nothing new in DuckDB
        first.close()
        with pytest.raises(StateError, match="closed"):
            first.query(f"SELECT count(*) + 1 AS n FROM {table}")
    finally:
        first.close()
        second.close()


def test_the_reader_needs_no_schema_for_domain_tables_and_drops_its_own_with_the_template():
    rt = _fresh("retail", "ST030")
    template = rt.template
    before = _schemas()
    untouched = next(t for t in sorted(template.domain.tables) if t not in template.tables)
    template.read_initial(f"SELECT count(*) AS n FROM {untouched}", [], (untouched,))
    assert _schemas() == before  # the domain's own table, read through the search path
    patched = sorted(template.tables)[0]
    template.read_initial(f"SELECT count(*) AS n FROM {patched}", [], (patched,))
    assert _schemas() == before | {template._reader.schema}
    template.drop()
    assert _schemas() == before


def _built_in_python(domain: str) -> TaskRuntime:
    """A fresh variant of the domain whose template lives in Python (the first family that gives one)."""
    for family in sorted(load_domain(domain).families):
        rt = _fresh(domain, family)
        if rt.template.tables and not rt.template.in_db:
            return rt
    raise AssertionError(f"no family of {domain} builds its template in Python")


@pytest.mark.parametrize("domain", ["retail", "insurance", "travel", "neobank", "consulting"])
def test_the_readers_copies_and_copies_made_from_them_hold_the_template_in_stored_order(domain):
    rt = _built_in_python(domain)
    template = rt.template
    patched = template_tables_in_duckdb(template)  # each episode copy patched by the template's statements
    for table in sorted(template.tables):
        names, rows = template.read_initial(f"SELECT * FROM {table}", [], (table,))
        assert rows == patched[table], table
    # outside a transaction, an episode's copy is filled from the reader's: the same rows in the same order
    state = rt.new_state()
    try:
        for table in sorted(template.tables):
            state.materialize(table)
            assert state.cursor.execute(f"SELECT * FROM {state.schema}.{table}").fetchall() == patched[table], table
    finally:
        state.close()
    # inside one it patches its own copy (a transaction cannot see a table made after it began)
    state = rt.new_state()
    try:
        saved = state.begin()
        for table in sorted(template.tables):
            state.materialize(table)
            assert state.cursor.execute(f"SELECT * FROM {state.schema}.{table}").fetchall() == patched[table], table
        state.rollback(saved)
    finally:
        state.close()


def _first_order(state) -> str:
    return state.query("SELECT id FROM orders ORDER BY id LIMIT 1")[0]["id"]


def test_a_read_replays_only_the_writes_to_the_tables_it_names():
    state = runtime_for(tb.load_task("retail/ST030_001")).new_state()
    try:
        order = _first_order(state)
        state.materialize("shipments")  # an episode with tables of its own in DuckDB: its reads of written tables run there
        state.execute("UPDATE tickets SET status = ? WHERE id = ?", ["hold", 50001])  # answered in Python, logged
        state.execute("UPDATE orders SET shipping_speed = ? WHERE id = ?", ["express", order])
        assert len(state._log) == 2
        row = state.query_one("SELECT count(*) AS n FROM tickets WHERE status = ? AND id < ?", ["hold", 50002])
        assert row == {"n": 1}
        assert state._in_db == {"shipments", "tickets"} and state._synced == 1  # the orders write is not replayed
        row = state.query_one("SELECT count(*) AS n FROM orders WHERE shipping_speed = ? AND id = ?", ["express", order])
        assert row == {"n": 1} and "orders" in state._in_db and state._synced == 2 and not state._ahead
    finally:
        state.close()


def test_a_replay_for_one_table_is_undone_with_its_scope_and_the_rest_still_replays():
    state = runtime_for(tb.load_task("retail/ST030_001")).new_state()
    try:
        order = _first_order(state)
        state.execute("UPDATE orders SET shipping_speed = ? WHERE id = ?", ["express", order])  # pending, not read yet
        state.materialize("shipments")  # tables of its own in DuckDB: its reads of written tables run there
        saved = state.begin()
        state.execute("UPDATE tickets SET status = ? WHERE id = ?", ["hold", 50001])
        assert state.query_one("SELECT count(*) AS n FROM tickets WHERE status = ? AND id > ?", ["hold", 0]) == {"n": 1}
        assert state._ahead == {1} and state._synced == 0 and state._in_txn  # the tickets write replayed ahead of orders'
        state.rollback(saved)
        assert not state._ahead and state._synced == 0 and state._in_db == {"shipments"} and len(state._log) == 1
        assert state.query_one("SELECT count(*) AS n FROM tickets WHERE status = ? AND id > ?", ["hold", 1]) == {"n": 0}
        assert state.query_one("SELECT count(*) AS n FROM orders WHERE id = ? AND shipping_speed = ?",
                               [order, "express"]) == {"n": 1}  # a statement of its own: not answered by the memo
        assert state._synced == 1
    finally:
        state.close()


def test_an_episode_without_tables_in_duckdb_reads_its_writes_through_the_reader_and_leaves_it_as_it_was():
    rt = runtime_for(tb.load_task("retail/ST030_001"))
    state, other = rt.new_state(), rt.new_state()
    try:
        state.execute("UPDATE tickets SET status = ? WHERE id = ?", ["hold", 50003])
        state.execute("UPDATE tickets SET priority = ? WHERE id = ?", ["high", 50003])
        sql = "SELECT count(*) AS n FROM tickets WHERE status = ? AND priority = ? AND id >= ?"
        assert state.query_one(sql, ["hold", "high", 50003]) == {"n": 1}
        assert state.cursor is None and not state._in_db  # the reader replayed both writes and rolled them back
        reader = rt.template._reader
        assert reader is not None and "tickets" in reader._in_db and not reader._in_txn
        assert other.query_one(sql, ["hold", "high", 50002]) == {"n": 0}  # the reader's copy holds no episode's write
        assert other.query_one("SELECT count(*) AS n FROM tickets WHERE status = ? AND id = ?", ["solved", 50003]) == {"n": 1}
        # in a write scope the episode's own copy is used: a transaction it may roll back
        saved = state.begin()
        state.execute("UPDATE tickets SET status = ? WHERE id = ?", ["open", 50003])
        assert state.query_one(sql, ["open", "high", 50000]) == {"n": 1} and "tickets" in state._in_db
        state.rollback(saved)
        assert state.query_one(sql, ["hold", "high", 50001]) == {"n": 1}
    finally:
        state.close()
        other.close()
