"""Lookups the engine answers in Python: owner chains of the process rules, and the tools written as lookups by key.

A fresh task's first episode pays for every statement only DuckDB can answer (a copy of
each patched table it names, then the statement). The process rules find the holder of
what a write touches through a chain of lookups by key, and the listing and lookup tools
read plain columns by key or by equality: these tests pin that they give the answers the
joins they replace give, without reaching DuckDB.
"""

from __future__ import annotations

import pytest
from pydantic import ValidationError

import thinkingbox_env as tb
from thinkingbox_env.checks.base import GradingContext
from thinkingbox_env.checks.process import _initial_state_owner
from thinkingbox_env.checks.verdict_rules import ProcessRule, domain_rules
from thinkingbox_env.state import fastpath
from thinkingbox_env.tasks.runtime import TaskRuntime, runtime_for

_UNPLAYED = iter(range(7_063_000, 7_063_400))  # variants no other test plays: none of their reads is memoised


def _fresh(domain: str, family: str) -> TaskRuntime:
    return runtime_for(tb.generate_variant(domain, family, next(_UNPLAYED)))


def _owner(rt: TaskRuntime):
    context = GradingContext(task=rt.spec, golden=rt.golden.diff, outcome=None, runtime=rt)  # type: ignore[arg-type]
    return _initial_state_owner(context)


def _joined(rt: TaskRuntime, table: str, key: str) -> str | None:
    """The holder as a join in DuckDB finds it (the query the chain replaces), on the task's initial state."""
    names, rows = rt.template.read_initial(
        f"SELECT p.customer_id FROM {table} x JOIN policies p ON p.id = x.policy_id WHERE x.id = ?", [key], (table, "policies"))
    return rows[0][0] if rows else None


def test_an_owner_chain_finds_the_holder_the_join_finds_without_duckdb():
    rt = _fresh("insurance", "IN006")
    owners = next(r for r in domain_rules(rt.domain).process if r.owners).owners
    owner = _owner(rt)
    checked = 0
    for arg, table in (("driver_id", "drivers"), ("vehicle_id", "vehicles"), ("billing_account_id", "billing_accounts")):
        chain = owners[arg]
        assert isinstance(chain, list) and len(chain) == 2
        state = rt.new_state()
        keys = [r["id"] for r in state.query(f"SELECT id FROM {table} WHERE policy_id IS NOT NULL ORDER BY id")][:6]
        state.close()
        for key in keys + ["NOPE-404"]:
            assert owner(chain, key) == _joined(rt, table, key), (arg, key)
            checked += 1
    assert checked > 6


def test_an_owner_chain_stops_at_a_missing_link():
    rt = _fresh("insurance", "IN006")
    owner = _owner(rt)
    # no driver has this id: no policy, so no holder (a join finds no row)
    assert owner(["SELECT policy_id FROM drivers WHERE id = ?", "SELECT customer_id FROM policies WHERE id = ?"],
                 "DRV-0") is None
    # a link whose value is NULL finds no one either
    assert owner(["SELECT end_date FROM drivers WHERE id = ?", "SELECT customer_id FROM policies WHERE id = ?"],
                 _first_driver_without_end_date(rt)) is None


def _first_driver_without_end_date(rt: TaskRuntime) -> str:
    state = rt.new_state()
    try:
        return state.query("SELECT id FROM drivers WHERE end_date IS NULL ORDER BY id LIMIT 1")[0]["id"]
    finally:
        state.close()


@pytest.mark.parametrize(("owners", "said"), [
    ({"driver_id": "SELECT policy_id FROM drivers"}, "exactly one '\\?'"),
    ({"driver_id": ["SELECT policy_id FROM drivers WHERE id = ?", "SELECT 1 FROM policies WHERE id = ? OR id = ?"]},
     "lookup 1 must hold exactly one"),
    ({"driver_id": []}, "an empty chain"),
])
def test_an_owner_lookup_without_exactly_one_placeholder_is_refused_by_name(owners, said):
    with pytest.raises(ValidationError, match=said):
        ProcessRule(name="r", kind="verified_before", writes={"t": "do it"}, owners=owners)


@pytest.mark.parametrize(("domain", "family", "calls"), [
    ("insurance", "IN006", lambda s: [("list_drivers", {"policy_id": p}) for p in _ids(s, "policies")]
     + [("find_customer", {"policy_number": p.lower()}) for p in _ids(s, "policies")]),
    ("retail", "ST008", lambda s: [("get_product", {"sku": k}) for k in _ids(s, "products", "sku")]),
])
def test_the_lookup_tools_of_a_fresh_task_reach_no_duckdb_statement(domain, family, calls):
    rt = _fresh(domain, family)
    listing = rt.new_state()
    planned = calls(listing)
    listing.close()
    assert planned
    state = rt.new_state()
    try:
        for name, arguments in planned:
            result = rt.domain.toolbox.call(state, name, arguments)
            assert result.ok, (name, arguments, result.content)
        assert state.misses == 0 and state.cursor is None  # every statement answered by the memo or in Python
    finally:
        state.close()


def _ids(state, table: str, key: str = "id") -> list[str]:
    return [r[key] for r in state.rows(table)][:8]


def test_a_folded_lookup_with_an_unequal_term_is_answered_in_python_as_duckdb_answers_it():
    rt = _fresh("insurance", "IN006")
    state = rt.new_state()
    try:
        sql = "SELECT id, status FROM drivers WHERE policy_id = ? AND upper(license_number) = upper(?) AND status <> 'removed'"
        asked = 0
        for row in state.rows("drivers"):
            for number in (row["license_number"], row["license_number"].lower(), "NOPE"):
                params = [row["policy_id"], number]
                python = fastpath.answer_read(sql, params, state)
                assert python is not None and python.shape == "read by folded equality"
                names, rows = rt.template.read_initial(sql, params, ("drivers",))
                assert (python.names, python.rows) == (names, rows), params
                asked += 1
        assert asked >= 6
    finally:
        state.close()
