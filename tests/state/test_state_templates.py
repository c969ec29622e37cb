"""Task templates: patched tables built as plain copies, with the domain's defaults and constraints applied.

A task template's patched tables are created with ``CREATE TABLE ... AS SELECT`` (no
declared constraints), the patch is run on them with the domain's defaults written out,
and one query checks NOT NULL and CHECK afterwards. These tests pin that the result is
exactly what declaring each table with its constraints and running the patch on it
gives (same rows, same stored order, same errors for a broken patch), for frozen tasks
and fresh training variants of every domain.
"""

from __future__ import annotations

import duckdb
import pytest
from helpers import template_tables_in_duckdb

import thinkingbox_env as tb
from thinkingbox_env.contracts.spec import Patch
from thinkingbox_env.state import KEPT_OPTIMIZERS, DomainDatabase, StateError, TaskTemplate, _CopyRules, _Process, _quote
from thinkingbox_env.tasks.domain import load_domain

DOMAINS = ("retail", "insurance", "travel", "neobank", "consulting")


def _reference(db: DomainDatabase, patch: Patch) -> dict[str, list[tuple]]:
    """Each patched table declared with its constraints, filled from the domain and patched by DuckDB itself."""
    schema = _Process.next_name("ref_")
    cur = _Process.connection().cursor()
    out: dict[str, list[tuple]] = {}
    try:
        tables = sorted(patch.tables())
        cur.execute("; ".join([f"CREATE SCHEMA {schema}"] + [
            f"{db.tables[t].create_episode_copy_in(schema).rstrip(';')}; INSERT INTO {schema}.{t} SELECT * FROM {db.schema}.{t}"
            for t in tables]))
        for table, rows in patch.insert.items():
            groups: dict[tuple[str, ...], list[dict]] = {}
            for row in rows:
                groups.setdefault(tuple(row), []).append(row)
            for names, group in groups.items():
                marks = "(" + ", ".join("?" for _ in names) + ")"
                cur.execute(f"INSERT INTO {schema}.{table} ({', '.join(_quote(n) for n in names)}) "
                            f"VALUES {', '.join(marks for _ in group)}", [r[n] for r in group for n in names])
        for upd in patch.update:
            sets = ", ".join(f"{_quote(c)} = ?" for c in upd.set)
            where = " AND ".join(f"{_quote(c)} = ?" for c in upd.key)
            cur.execute(f"UPDATE {schema}.{upd.table} SET {sets} WHERE {where}", [*upd.set.values(), *upd.key.values()])
        for dele in patch.delete:
            where = " AND ".join(f"{_quote(c)} = ?" for c in dele.key)
            cur.execute(f"DELETE FROM {schema}.{dele.table} WHERE {where}", list(dele.key.values()))
        for table in tables:
            out[table] = cur.execute(f"SELECT * FROM {schema}.{table}").fetchall()  # in stored order
    finally:
        cur.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        cur.close()
    return out


def _stored(template: TaskTemplate) -> dict[str, list[tuple]]:
    return template_tables_in_duckdb(template)


def _patches(domain: str) -> list[tuple[str, Patch]]:
    """Frozen tasks of the domain and one fresh variant of each of its first families."""
    d = load_domain(domain)
    out = [(t, tb.load_task(t).patch) for t in tb.list_tasks(domain=domain)[:4]]
    for i, family in enumerate(sorted(d.families)[:4]):
        spec = tb.generate_variant(domain, family, 5_100_000 + i)
        out.append((spec.full_id, spec.patch))
    return out


@pytest.mark.parametrize("domain", DOMAINS)
def test_a_template_holds_what_declared_tables_patched_by_duckdb_hold(domain):
    db = load_domain(domain).db
    checked = 0
    for label, patch in _patches(domain):
        if not patch.tables():
            continue
        template = db.build_task_template(f"{label} (template test)", patch)
        try:
            stored = _stored(template)
            assert stored == _reference(db, patch), label
            for table, rows in stored.items():
                info = db.tables[table]
                by_key = sorted(rows, key=lambda r: tuple(r[info.columns.index(c)] for c in info.primary_key))
                assert [tuple(r.values()) for r in template.base_rows(table, _Process.connection()).values()] == by_key, (label, table)
            checked += 1
        finally:
            template.drop()
    assert checked


def _ticket_row(**extra):
    row = {"id": 59001, "requester_id": 20001, "subject": "Where is my parcel", "category": "delivery",
           "priority": "normal", "status": "open", "order_id": None,
           "created_at": "2026-03-01T10:00:00", "updated_at": "2026-03-01T10:00:00"}
    row.update(extra)
    return row


def test_a_column_the_patch_leaves_out_gets_the_domains_default():
    db = load_domain("retail").db
    patch = Patch(insert={"tickets": [_ticket_row()]})
    template = db.build_task_template("retail (default test)", patch)
    try:
        assert template.base_rows("tickets", _Process.connection())[(59001,)]["description"] == ""
        assert _stored(template) == _reference(db, patch)
    finally:
        template.drop()


@pytest.mark.parametrize(("patch", "said"), [
    (Patch(insert={"tickets": [_ticket_row(status="lost")]}), "CHECK"),
    (Patch(insert={"tickets": [_ticket_row(subject=None)]}), "NOT NULL on column 'subject'"),
    (Patch(update=[{"table": "tickets", "key": {"id": 50001}, "set": {"priority": "whenever"}}]), "CHECK"),
    (Patch(update=[{"table": "tickets", "key": {"id": 50001}, "set": {"status": None}}]), "NOT NULL on column 'status'"),
    (Patch(insert={"tickets": [_ticket_row(id=50001)]}), "duplicate key"),
    (Patch(insert={"spaceships": [{"id": 1}]}), "unknown table 'spaceships'"),
])
def test_a_patch_that_breaks_a_constraint_is_refused_and_leaves_nothing_behind(patch, said):
    db = load_domain("retail").db
    cur = _Process.connection().cursor()
    before = cur.execute("SELECT schema_name FROM duckdb_schemas() ORDER BY 1").fetchall()
    with pytest.raises(StateError, match=said):
        db.build_task_template("retail (constraint test)", patch)
    # keys are checked against the rows in hand, as for every template before; an unknown table never reaches DuckDB
    if said not in ("duplicate key", "unknown table 'spaceships'"):
        with pytest.raises(duckdb.Error):
            _reference(db, patch)  # DuckDB refuses the same patch on tables that declare the constraints
    assert cur.execute("SELECT schema_name FROM duckdb_schemas() ORDER BY 1").fetchall() == before
    cur.close()


def test_the_database_keeps_its_sandbox_and_only_the_order_deciding_optimizer_passes():
    cur = _Process.connection().cursor()
    try:
        off = set(cur.execute("SELECT current_setting('disabled_optimizers')").fetchone()[0].split(","))
        names = {r[0] for r in cur.execute("SELECT name FROM duckdb_optimizers()").fetchall()}
        assert off == names - KEPT_OPTIMIZERS
        assert cur.execute("SELECT current_setting('enable_external_access')").fetchone()[0] is False
        for statement in ("SET disabled_optimizers = ''", "SET enable_external_access = true"):
            with pytest.raises(duckdb.Error, match="locked"):
                cur.execute(statement)
    finally:
        cur.close()


def test_a_table_with_constraints_of_another_kind_is_copied_with_its_declaration(monkeypatch):
    """UNIQUE or FOREIGN KEY constraints are left to DuckDB: such a table is declared, filled and patched as before."""
    db = load_domain("retail").db
    rules = dict(db._copy_rules(_Process.connection()))
    rules["tickets"] = _CopyRules((), (), {}, declared=True)
    monkeypatch.setattr(db, "_rules", rules)
    patch = Patch(insert={"tickets": [_ticket_row()]}, update=[{"table": "tickets", "key": {"id": 50002}, "set": {"status": "hold"}}])
    template = db.build_task_template("retail (declared test)", patch)
    try:
        assert _stored(template) == _reference(db, patch)
        assert template.base_rows("tickets", _Process.connection())[(59001,)]["description"] == ""
    finally:
        template.drop()
    with pytest.raises(StateError, match="CHECK constraint failed"):
        db.build_task_template("retail (declared test)", Patch(insert={"tickets": [_ticket_row(status="lost")]}))


def _in_template_schema(template: TaskTemplate) -> dict[str, list[tuple]]:
    cur = _Process.connection().cursor()
    try:
        return {t: cur.execute(f"SELECT * FROM {template.schema}.{t}").fetchall() for t in sorted(template.tables)}
    finally:
        cur.close()


MIXED = Patch(
    insert={"tickets": [_ticket_row(), _ticket_row(id=59002, description="typed in", created_at="2026-03-01 09:00:00")]},
    update=[{"table": "tickets", "key": {"id": 50002}, "set": {"status": "hold", "updated_at": "2026-03-02T10:00:00"}},
            {"table": "tickets", "key": {"id": 50001}, "set": {"priority": "high"}}],
    delete=[{"table": "tickets", "key": {"id": 50003}}],
)


@pytest.mark.parametrize("domain", DOMAINS)
def test_a_template_built_in_python_goes_into_duckdb_for_its_second_episode_as_duckdb_builds_it(domain):
    db = load_domain(domain).db
    checked = 0
    for label, patch in _patches(domain) + ([("retail (mixed patch)", MIXED)] if domain == "retail" else []):
        if not patch.tables():
            continue
        template = db.build_task_template(f"{label} (claim test)", patch)
        first, second = template.new_episode(), template.new_episode()
        try:
            if template.in_db:  # a patch Python could not be sure of: built in DuckDB at once
                assert _in_template_schema(template) == _reference(db, patch), label
                continue
            reference = _reference(db, patch)
            assert first._shared is None and not template.in_db
            for table in sorted(template.tables):  # the first episode to need a patched table: its own copies
                first.materialize(table)
                assert first.cursor.execute(f"SELECT * FROM {first.schema}.{table}").fetchall() == reference[table], label
            assert first._shared is False and not template.in_db
            second.materialize(sorted(template.tables)[0])  # the second: the template goes into DuckDB
            assert second._shared and template.in_db
            assert _in_template_schema(template) == reference, label
            assert template_tables_in_duckdb(template) == reference, label  # copies of the shared tables
            checked += 1
        finally:
            first.close()
            second.close()
            template.drop()
    assert checked


def test_an_episode_that_began_before_the_template_went_into_duckdb_keeps_its_own_copies():
    db = load_domain("retail").db
    template = db.build_task_template("retail (visibility test)", MIXED)
    early, late = template.new_episode(), template.new_episode()
    read = "SELECT id, status, priority FROM tickets WHERE id >= ? ORDER BY id"
    cache = db.read_cache
    try:
        assert not template.in_db
        early.begin()
        early.execute("UPDATE tickets SET status = lower(?) WHERE id = ?", ["Pending", 50004])  # reaches DuckDB
        assert early._in_txn and not early._shared
        late.materialize("tickets")
        assert template.in_db and late._shared
        cache.enabled = False
        try:
            mine, theirs = early.query(read, [50001]), late.query(read, [50001])
        finally:
            cache.enabled = True
        early.commit()
        assert {r["id"]: r for r in mine}[50004]["status"] == "pending"
        assert {r["id"]: r for r in theirs}[50004]["status"] != "pending"
        assert [r for r in mine if r["id"] != 50004] == [r for r in theirs if r["id"] != 50004]
        assert {r["id"] for r in mine} >= {59001, 59002} and 50003 not in {r["id"] for r in mine}
    finally:
        early.close()
        late.close()
        template.drop()


def test_a_patch_python_cannot_be_sure_of_is_built_by_duckdb():
    db = load_domain("retail").db
    patch = Patch(insert={"tickets": [_ticket_row(requester_id="20001")]})  # text into an INTEGER column: DuckDB casts
    template = db.build_task_template("retail (unsure test)", patch)
    try:
        assert template.in_db and not template.patch_statements
        assert _in_template_schema(template) == _reference(db, patch)
        assert template.base_rows("tickets")[(59001,)]["requester_id"] == 20001
    finally:
        template.drop()


def test_a_patch_built_in_python_holds_what_duckdb_would():
    db = load_domain("retail").db
    template = db.build_task_template("retail (mixed test)", MIXED)
    try:
        assert not template.in_db
        reference = _reference(db, MIXED)
        assert template_tables_in_duckdb(template) == reference
        rows = template.base_rows("tickets")
        info = db.tables["tickets"]
        assert [tuple(r.values()) for r in rows.values()] == sorted(reference["tickets"], key=lambda r: r[info.columns.index("id")])
    finally:
        template.drop()


def test_checking_a_tasks_queries_at_load_does_not_put_its_template_into_duckdb():
    """The check at load runs the task's SQL checks on the initial state: a probe, which patches its own copies."""
    from thinkingbox_env.tasks.runtime import runtime_for

    spec = tb.generate_variant("insurance", "IN002", 5_200_000)  # its SQL checks read a patched table
    assert spec.checks.sql and "payment_arrangements" in spec.patch.tables()
    runtime = runtime_for(spec)
    assert not runtime.template.in_db and runtime.template._claims == 0
    state = runtime.new_state()
    try:
        state.materialize("payment_arrangements")
        assert state._shared is False and runtime.template._claims == 1  # the first real episode: its own copies
    finally:
        state.close()


def test_a_task_with_no_patch_reaches_duckdb_through_the_domain_template_alone():
    db = load_domain("retail").db
    template = db.build_task_template("retail (empty patch)", Patch())
    state = template.new_episode()
    try:
        assert not template.in_db and not template.tables
        assert state.query("SELECT count(*) AS n FROM tickets WHERE status <> ?", ["closed"])[0]["n"] > 0
        state.execute("UPDATE tickets SET status = lower(?) WHERE id = ?", ["Hold", 50001])
        assert state._shared is False and state.rows("tickets")[0]["status"] == "hold"
    finally:
        state.close()
        template.drop()


@pytest.mark.parametrize("domain", DOMAINS)
def test_the_first_episode_of_a_fresh_variant_builds_no_template_in_duckdb(domain):
    """What makes a fresh variant cheap: its check at load, oracle episode, golden replay and grading leave the
    template in Python (only a second episode needing a patched table in DuckDB puts it there)."""
    from thinkingbox_env.tasks.runtime import runtime_for

    for i, family in enumerate(sorted(load_domain(domain).families)):
        spec = tb.generate_variant(domain, family, 5_300_000 + i)
        env = tb.make(spec)
        try:
            info = tb.run_episode(env, tb.OracleAgent(), seed=0)
            template = runtime_for(spec).template
            assert template.patch_statements or not spec.patch.tables(), family  # built in Python
            assert not template.in_db, family
            assert info["checks"] and not [n for n, ok in info["checks"].items() if ok is False], family
        finally:
            env.close()
