"""Row-level episode state: the overlay, the statement memo, and DuckDB reached only on a miss.

Every write is kept as rows in a per-episode overlay and as a logged statement; the
memo answers statements an episode in the same state already ran. These tests pin
that an episode always sees exactly its own writes, that episodes never see each
other's, and that the state kept in Python is the state DuckDB holds once the log is
replayed, whatever the mix of memo hits, misses and rolled-back write scopes.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from datetime import date, datetime

import duckdb
import pytest
from helpers import template_tables_in_duckdb
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import thinkingbox_env as tb
from thinkingbox_env.state import EpisodeState, StateError, _Process, fastpath
from thinkingbox_env.state.diff import canonical_hash, compute_diff
from thinkingbox_env.tasks.runtime import runtime_for

TASK = "retail/ST030_001"
TICKETS = [50001, 50002, 50003, 50004]
STAMP = datetime(2026, 3, 2, 15, 0)


def _state() -> EpisodeState:
    return runtime_for(tb.load_task(TASK)).new_state()


@contextlib.contextmanager
def _memo(enabled: bool) -> Iterator[None]:
    cache = runtime_for(tb.load_task(TASK)).domain.db.read_cache
    was = cache.enabled
    cache.enabled = enabled
    try:
        yield
    finally:
        cache.enabled = was


def _status(state: EpisodeState, ticket: int) -> str | None:
    row = state.query_one("SELECT status FROM tickets WHERE id = ?", [ticket])
    return None if row is None else row["status"]


def _scan(state: EpisodeState):
    """The episode diffed from DuckDB's copy of every written table, not from the overlay."""
    saved = set(state.untracked)
    state.untracked |= set(state.materialized)
    try:
        diff = compute_diff(state)
        return diff, canonical_hash(state, diff)
    finally:
        state.untracked = saved


def test_an_episode_reads_its_own_writes_and_no_other():
    a, b = _state(), _state()
    try:
        a.execute("UPDATE tickets SET status = ? WHERE id = ?", ["open", 50001])
        b.execute("UPDATE tickets SET status = ? WHERE id = ?", ["hold", 50001])
        assert _status(a, 50001) == "open" and _status(b, 50001) == "hold"
        fresh = _state()
        assert _status(fresh, 50001) == "solved"
        fresh.close()
    finally:
        a.close()
        b.close()


def test_a_repeated_episode_is_answered_from_the_memo_without_touching_duckdb():
    first, second = _state(), _state()
    try:
        for state in (first, second):
            assert _status(state, 50002) == "solved"
            state.execute("UPDATE tickets SET status = ? WHERE id = ?", ["pending", 50002])
            assert _status(state, 50002) == "pending"
        assert second.misses == 0 and second.cursor is None  # no schema, no table copy, no statement
        assert second.overlay == first.overlay
        assert compute_diff(second).effects == compute_diff(first).effects
        # a statement the memo has never seen: DuckDB answers it with the logged write replayed (by the
        # template's reader, in a transaction it rolls back: the episode still has no schema)
        row = second.query_one("SELECT count(*) AS n FROM tickets WHERE status = ? AND id >= ?", ["pending", 50002])
        assert row == {"n": 1} and second.misses == 1 and second.cursor is None
        diff, scanned_hash = _scan(second)
        assert diff.effects == compute_diff(second).effects and scanned_hash == canonical_hash(second)
    finally:
        first.close()
        second.close()


def test_interleaved_episodes_of_one_task_stay_apart():
    """Eight rollouts of one task stepped in turn, as a GRPO group is: each holds exactly its own writes."""
    states = [_state() for _ in range(8)]
    try:
        for step in range(3):
            for k, state in enumerate(states):
                status = ["open", "pending", "hold"][(k + step) % 3]
                state.execute("UPDATE tickets SET status = ? WHERE id = ?", [status, TICKETS[k % 4]])
        for k, state in enumerate(states):
            assert _status(state, TICKETS[k % 4]) == ["open", "pending", "hold"][(k + 2) % 3]
            others = [t for t in TICKETS if t != TICKETS[k % 4]]
            assert all(_status(state, t) == "solved" for t in others)
            assert [e[0] for e in compute_diff(state).effects] == ["update"]
    finally:
        for state in states:
            state.close()


def test_a_rolled_back_scope_leaves_nothing_behind_hit_or_miss():
    warm = _state()
    warm.execute("UPDATE tickets SET status = ? WHERE id = ?", ["open", 50003])
    warm.close()
    state = _state()
    try:
        state.execute("UPDATE tickets SET status = ? WHERE id = ?", ["open", 50003])  # a memo hit: logged only
        assert state.misses == 0
        saved = state.begin()
        # lower() is no write Python applies: a miss, which replays the hit first
        state.execute("UPDATE tickets SET status = lower(?) WHERE id = ?", ["hold", 50004])
        assert state.misses == 1 and state._in_txn
        with pytest.raises(duckdb.ConstraintException):
            state.execute("UPDATE tickets SET status = ? WHERE id = ?", ["no such status", 50001])
        state.rollback(saved)
        assert state._synced == 0 and not state._in_db  # DuckDB undid the replay and the copy with the scope
        assert _status(state, 50004) == "solved" and _status(state, 50003) == "open"
        diff, scanned_hash = _scan(state)  # replays again, outside any scope
        assert diff.effects == compute_diff(state).effects and scanned_hash == canonical_hash(state)
        assert sum(n for e, n in diff.effects.items()) == 1
    finally:
        state.close()


def test_a_returning_list_of_plain_columns_keeps_the_table_tracked():
    state = _state()
    try:
        rows = state.execute("UPDATE tickets SET status = ? WHERE id = ? RETURNING id, status", ["open", 50001])
        assert rows == [{"id": 50001, "status": "open"}]
        assert "tickets" not in state.untracked and state.overlay["tickets"][(50001,)]["status"] == "open"
        rows = state.execute("UPDATE tickets SET status = ? WHERE id = ? RETURNING id + 1 AS next", ["hold", 50002])
        assert rows == [{"next": 50003}] and "tickets" in state.untracked
    finally:
        state.close()


def test_statements_with_volatile_functions_are_never_memoised():
    state = _state()
    try:
        cache = state.template.domain.read_cache
        assert not cache.deterministic("SELECT random() AS r FROM tickets")
        assert not cache.deterministic("SELECT now() AS t")
        assert cache.deterministic("SELECT id FROM tickets WHERE subject = 'random thoughts about now'") is False
        assert cache.deterministic("SELECT id FROM tickets WHERE status = ?")
        first = state.query("SELECT random() AS r FROM tickets WHERE id = ?", [50001])[0]["r"]
        second = state.query("SELECT random() AS r FROM tickets WHERE id = ?", [50001])[0]["r"]
        assert first != second
    finally:
        state.close()


def test_task_templates_hold_what_a_scan_of_their_tables_reads():
    """Initial rows and sequence starts, kept from the rows the patch statements returned, equal the tables."""
    checked = 0
    for task_id in tb.list_tasks("insurance")[:6] + tb.list_tasks("retail")[:6]:
        template = runtime_for(tb.load_task(task_id)).template
        in_duckdb = template_tables_in_duckdb(template, order_by_key=True)
        for table in sorted(template.tables):
            info = template.domain.tables[table]
            scanned = [dict(zip(info.columns, r)) for r in in_duckdb[table]]
            assert list(template.base_rows(table).values()) == scanned, (task_id, table)
            seq = info.meta.sequence
            if seq is not None:
                numbers = [int(m.group()) for r in scanned for m in [re.search(r"\d+$", str(r[seq.column]))] if m]
                assert template.sequence_starts[table] == max([seq.start - 1, *numbers]) + 1
            checked += 1
    assert checked


# ---------------------------------------------------------------- property: memo on == memo off == scan

_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("update"), st.sampled_from(TICKETS), st.sampled_from(["open", "pending", "hold", "solved"])),
        st.tuples(st.just("insert"), st.sampled_from(["a", "b"]), st.sampled_from(["open", "pending"])),
        st.tuples(st.just("delete"), st.sampled_from(TICKETS), st.just("")),
        st.tuples(st.just("read"), st.sampled_from(TICKETS), st.just("")),
        # reads that pick rows by equality, answered without DuckDB where that is certain (new, missing, NULL
        # and wrongly typed keys included: the last goes to DuckDB, which casts it)
        st.tuples(st.just("lookup"), st.sampled_from([50001, 50003, 50005, 50006, 99999, "50002", None]),
                  st.sampled_from(["*", "status, subject", "1 AS found", '"status"'])),
        st.tuples(st.just("filter"), st.sampled_from(["open", "pending", "hold", "solved", None]),
                  st.sampled_from(["ORDER BY id", "ORDER BY updated_at DESC, id", "ORDER BY priority", "",
                                   "AND priority = 'normal'"])),
        st.tuples(st.just("folded"), st.sampled_from(["SUBJECT A", "subject b", "Subject  A", "subjéct a", None]),
                  st.sampled_from(["ORDER BY id", ""])),
        st.tuples(st.just("count"), st.sampled_from(["open", "pending", "hold", "solved"]), st.just("")),
        st.tuples(st.just("failed_scope"), st.sampled_from(TICKETS), st.sampled_from(["open", "bogus"])),
        # writes Python applies itself where it is sure, with values of every kind a tool might pass (wrong
        # types, text DuckDB casts, a broken CHECK: all left to DuckDB, which casts or refuses them)
        st.tuples(st.just("typed_update"), st.sampled_from([50001, "50002", 50003, None, 99999]),
                  st.sampled_from([STAMP, "2026-03-02 16:00:00", "2026-03-02T16:00:00.5", "2026-03-02 16:00",
                                   date(2026, 3, 2), "high", "whenever"])),
        st.tuples(st.just("literal_update"), st.sampled_from(TICKETS), st.sampled_from(["general", "delivery"])),
        st.tuples(st.just("insert_literal"), st.sampled_from([59997, 59998, 59999]), st.sampled_from(["open", "hold"])),
        # reads a search tool compiles: a cast text column, <>, LIMIT and OFFSET
        st.tuples(st.just("page"), st.sampled_from(["open", "pending", "hold", "solved", None]),
                  st.sampled_from([(20, 0), (1, 0), (1, 1), (2, 3), (0, 0)])),
        st.tuples(st.just("unequal"), st.sampled_from([10001, 20001, 20002, None]),
                  st.sampled_from([("solved", 0), ("open", 1), (None, 0)])),
        st.tuples(st.just("literal_read"), st.sampled_from([10001, 20001, 20002, None]),
                  st.sampled_from(["open", "solved", None])),
        st.tuples(st.just("typed_read"), st.sampled_from([STAMP, "2026-03-02 15:00:00", "2026-03-02T15:00:00", "2026-03-02",
                                                          date(2026, 3, 2), "not a time", None]),
                  st.sampled_from(["created_at", "updated_at"])),
        st.tuples(st.just("present"), st.sampled_from(["subject a", "SUBJECT B", "fixed subject", "Ünïcode"]),
                  st.sampled_from(["ORDER BY id", ""])),
    ),
    min_size=1,
    max_size=12,
)


def _play(ops: list[tuple], state: EpisodeState) -> list:
    """Run the operations as tools would (each write in its own scope); what every read returned."""
    seen: list = []
    for kind, a, b in ops:
        if kind in ("update", "insert", "delete"):
            saved = state.begin()
            if kind == "update":
                state.execute("UPDATE tickets SET status = ?, updated_at = ? WHERE id = ?", [b, STAMP, a])
            elif kind == "insert":
                state.execute(
                    "INSERT INTO tickets (id, requester_id, subject, category, priority, status, created_at, updated_at) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING *",
                    [state.next_id("tickets"), 10001, f"subject {a}", "general", "normal", b, STAMP, STAMP],
                )
            else:
                state.execute("DELETE FROM tickets WHERE id = ?", [a])
            state.commit()
            del saved
        elif kind == "read":
            seen.append(state.query("SELECT * FROM tickets WHERE id = ?", [a]))
        elif kind == "lookup":
            seen.append(state.query(f"SELECT {b} FROM tickets WHERE id = ?", [a]))
        elif kind == "filter":
            if b.startswith("AND"):
                seen.append(state.query("SELECT id, subject FROM tickets WHERE status = ? AND priority = ?", [a, "normal"]))
            else:
                seen.append(state.query(f"SELECT * FROM tickets WHERE status = ? {b}", [a]))
        elif kind == "folded":
            seen.append(state.query(f"SELECT id, status FROM tickets WHERE lower(subject) = lower(?) {b}", [a]))
        elif kind == "count":
            seen.append(state.query_one("SELECT count(*) AS n FROM tickets WHERE status = ?", [a]))
        elif kind in ("typed_update", "literal_update", "insert_literal"):
            saved = state.begin()
            try:
                if kind == "typed_update":
                    priority, stamp = (b, STAMP) if b in ("high", "whenever") else ("low", b)
                    seen.append(state.execute("UPDATE tickets SET priority = ?, updated_at = ? WHERE id = ? RETURNING *",
                                              [priority, stamp, a]))
                elif kind == "literal_update":
                    seen.append(state.execute("UPDATE tickets SET status = 'hold', priority = 'high' "
                                              "WHERE id = ? AND category = ? RETURNING id, status", [a, b]))
                else:
                    seen.append(state.execute(
                        "INSERT INTO tickets (id, requester_id, subject, category, priority, status, created_at, updated_at) "
                        "VALUES (?, 10001, 'fixed subject', 'general', 'normal', ?, ?, '2026-03-02 15:00:00') RETURNING *",
                        [a, b, STAMP]))
                state.commit()
            except duckdb.Error as exc:
                state.rollback(saved)
                seen.append(type(exc).__name__)
        elif kind == "literal_read":
            seen.append(state.query("SELECT id, status FROM tickets WHERE status = 'open' AND requester_id = ? "
                                    "ORDER BY id LIMIT 1", [a]))
            seen.append(state.query("SELECT id FROM tickets WHERE requester_id = 20001 AND status <> ? "
                                    "ORDER BY id DESC LIMIT 2 OFFSET ?", [b, 1]))
        elif kind == "typed_read":
            try:
                seen.append(state.query(f"SELECT id, {b} FROM tickets WHERE {b} = ? ORDER BY id", [a]))
            except duckdb.Error as exc:  # text that is no timestamp: DuckDB refuses it, memo or not
                seen.append(type(exc).__name__)
        elif kind == "present":
            seen.append(state.query(f"SELECT id, order_id IS NULL AS no_order, order_id IS NOT NULL AS has_order, status "
                                    f"FROM tickets WHERE upper(subject) = upper(?) {b}", [a]))
        elif kind == "page":
            seen.append(state.query('SELECT id, status FROM tickets WHERE CAST("status" AS VARCHAR) = ? '
                                    'ORDER BY "id" ASC LIMIT ? OFFSET ?', [a, *b]))
        elif kind == "unequal":
            seen.append(state.query('SELECT id FROM tickets WHERE ("requester_id" = ? AND CAST("status" AS VARCHAR) <> ?) '
                                    'ORDER BY "id" DESC LIMIT ? OFFSET ?', [a, b[0], 2, b[1]]))
        else:  # a tool that writes, then fails: everything it did is undone
            saved = state.begin()
            try:
                state.execute("UPDATE tickets SET status = ? WHERE id = ?", [b, a])
                state.execute("DELETE FROM tickets WHERE id = ?", [a])
                raise RuntimeError("the tool gives up")
            except (RuntimeError, duckdb.ConstraintException):
                state.rollback(saved)
    return seen


def _outcome(state: EpisodeState):
    diff = compute_diff(state)
    return diff.effects, diff.to_json(state.tables), canonical_hash(state, diff)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=_OPS, prefix=st.integers(0, 12))
def test_the_memo_and_the_overlay_agree_with_duckdb_on_any_write_sequence(ops, prefix):
    # a leader plays a prefix, so the follower's run mixes memo hits with misses
    leader, follower = _state(), _state()
    with _memo(False):
        plain = _state()
    try:
        _play(ops[:prefix], leader)
        got = _play(ops, follower)
        with _memo(False):
            want = _play(ops, plain)
            try:
                expected = _outcome(plain)
            except StateError as exc:  # a key inserted twice: both must refuse the episode alike
                assert got == want
                with pytest.raises(StateError, match=re.escape(str(exc))):
                    _outcome(follower)
                return
            assert _scan(plain)[1] == expected[2]
        assert got == want
        assert _outcome(follower) == expected
        scanned, scanned_hash = _scan(follower)
        assert scanned.effects == expected[0] and scanned_hash == expected[2]
    finally:
        leader.close()
        follower.close()
        plain.close()


def test_the_memo_never_answers_one_task_with_another_tasks_rows():
    """Tasks whose patches touch the same table run the same read: each gets its own template's rows."""
    by_table: dict[str, list[str]] = {}
    for task_id in tb.list_tasks("retail")[:30]:
        for table in runtime_for(tb.load_task(task_id)).template.tables:
            by_table.setdefault(table, []).append(task_id)
    table, task_ids = max(by_table.items(), key=lambda kv: len(kv[1]))
    assert len(task_ids) > 1
    answers = set()
    for task_id in task_ids[:8]:
        runtime = runtime_for(tb.load_task(task_id))
        info = runtime.template.domain.tables[table]
        sql = f"SELECT * FROM {table} ORDER BY {', '.join(info.primary_key)}"
        for _ in range(2):  # the second read is a memo hit
            state = runtime.new_state()
            rows = state.query(sql)
            state.close()
            assert rows == list(runtime.template.base_rows(table, _Process.connection().cursor()).values()), task_id
        answers.add(repr(rows))
    assert len(answers) > 1  # the tasks' rows do differ, so a shared answer would have been caught


@pytest.mark.parametrize("task_id", ["retail/ST030_001", *tb.list_tasks("insurance")[:3], *tb.list_tasks("retail")[:3]])
def test_reads_by_equality_answered_from_kept_rows_are_what_duckdb_answers(task_id):
    """After the golden calls, rows of every table picked by key and by other columns: kept rows and DuckDB agree."""
    runtime = runtime_for(tb.load_task(task_id))
    state = runtime.new_state()
    try:
        for call in runtime.spec.golden:
            runtime.domain.toolbox.call(state, call.name, call.arguments)
        cache = runtime.domain.db.read_cache
        answered = 0
        for table, info in sorted(state.tables.items()):
            rows = state.rows(table)
            if not rows:
                continue
            key = ", ".join(info.primary_key)
            reads = []
            for row in rows[:4]:
                where = " AND ".join(f"{c} = ?" for c in info.primary_key)
                params = [row[c] for c in info.primary_key]
                reads += [(f"SELECT {s} FROM {table} WHERE {where}", params) for s in ("*", key, "1 AS found")]
                for column, kind in zip(info.columns, info.types):  # every text column, ordered by the key
                    if kind == "VARCHAR" and column not in info.primary_key:
                        reads.append((f"SELECT * FROM {table} WHERE {column} = ? ORDER BY {key}", [row[column]]))
                        reads.append((f"SELECT {key} FROM {table} WHERE {column} = ? ORDER BY {key} DESC", [row[column]]))
                        if isinstance(row[column], str):
                            reads.append((f"SELECT * FROM {table} WHERE lower({column}) = lower(?) ORDER BY {key}",
                                          [row[column].upper()]))
                            reads.append((f"SELECT {key} FROM {table} WHERE upper({column}) = upper(?) ORDER BY {key}",
                                          [row[column].lower()]))
                for column in info.columns:
                    # whether a value is present, as the profile tools ask
                    reads.append((f"SELECT {key}, {column} IS NOT NULL AS has_it, {column} IS NULL AS lacks_it "
                                  f"FROM {table} WHERE {where}", params))
                    # every type of column, by its value and by the text DuckDB casts to that value
                    value = row[column]
                    texts = (str(value), value.isoformat()) if isinstance(value, date) else (str(value),)
                    for asked in {repr(v): v for v in (value, *texts)}.values():
                        reads.append((f"SELECT {key} FROM {table} WHERE {column} = ? ORDER BY {key} LIMIT 3", [asked]))
            for sql, params in reads:
                answer = fastpath.answer_read(sql, params, state)
                kept = None if answer is None else [dict(zip(answer.names, row)) for row in answer.rows]
                cache.enabled = False
                try:
                    asked = state.query(sql, params)
                except duckdb.Error:  # text DuckDB cannot cast: never answered from kept rows
                    assert kept is None, (sql, params)
                    continue
                finally:
                    cache.enabled = True
                if kept is not None:
                    assert kept == asked, (sql, params)
                    answered += 1
        assert answered
    finally:
        state.close()
