"""The shared ticketing kit: one implementation, each domain's categories, statuses and linked entity."""

from __future__ import annotations

import json

import pytest
from helpers import call

import thinkingbox_env as tb
from thinkingbox_env.tasks.domain import load_domain
from thinkingbox_env.toolkit.ticketing import Ticketing


def test_each_domain_sees_its_own_values_in_the_schema():
    retail = load_domain("retail").toolbox["create_ticket"].parameters["properties"]
    insurance = load_domain("insurance").toolbox["create_ticket"].parameters["properties"]
    assert "hold" in retail["status"]["enum"] and "hold" not in insurance["status"]["enum"]
    assert "order_id" in retail and "policy_id" in insurance and "assigned_team" in insurance
    assert "assigned_team" not in retail and "policy_id" not in retail


def test_a_ticket_links_only_to_an_existing_entity_and_the_error_names_it(st030):
    st030.reset(seed=0)
    user = st030.task.patch.insert["ticket_users"][0]["id"]
    result, _ = call(st030, "create_ticket", requester_id=user, subject="x", category="order", order_id="ORD-NOPE")
    assert result == {"error": "order ORD-NOPE not found"}
    result, _ = call(st030, "create_ticket", requester_id=user, subject="Where is it", category="order", status="pending")
    assert result["status"] == "pending" and result["order_id"] is None and result["requester_id"] == user


def test_update_names_the_fields_it_accepts_and_appends_notes():
    env = tb.make("insurance/IN001_001")
    env.reset(seed=0)
    obs, *_ = env.step({"name": "create_ticket_user", "arguments": {"name": "Test Person", "email": "  test.person@example.com "}})
    user = json.loads(obs["messages"][-1]["content"])
    assert user["email"] == "test.person@example.com"  # stored trimmed, so a later lookup by email finds it
    created, _ = call(env, "create_ticket", requester_id=user["id"], subject="s", category="billing", description="first")
    nothing, _ = call(env, "update_ticket", ticket_id=created["id"])
    assert nothing["error"] == "nothing to update: give at least one of status, priority, category, assigned_team, policy_id, note"
    updated, _ = call(env, "update_ticket", ticket_id=created["id"], assigned_team="claims", note="second")
    assert updated["assigned_team"] == "claims" and updated["description"] == "first\nsecond" and updated["status"] == "open"
    env.close()


def test_bad_configuration_is_refused_with_the_field_named():
    with pytest.raises(ValueError, match="statuses must include 'open'"):
        Ticketing(categories=("a",), statuses=("closed",), link_column="order_id", link_table="orders", link_noun="order")
    with pytest.raises(ValueError, match="categories"):
        Ticketing(categories=(), statuses=("open",), link_column="order_id", link_table="orders", link_noun="order")


@pytest.mark.parametrize("domain", ["retail", "insurance", "travel", "neobank", "consulting"])
def test_the_ticket_tables_come_from_the_declaration_and_agree_with_the_tools(domain):
    """The tables are declared once, by the domain's Ticketing: the database refuses what the tools' schema does not list."""
    import duckdb

    dom = load_domain(domain)
    assert "CREATE TABLE ticket" not in (dom.path / "schema.sql").read_text()  # declared once, not per domain
    con = duckdb.connect()
    con.execute(dom.ticketing.schema_sql())
    enum = dom.toolbox["create_ticket"].parameters["properties"]["status"]["enum"]
    row = "INSERT INTO tickets (id, requester_id, subject, category, priority, status, {link}, created_at, updated_at) " \
          "VALUES (1, 1, 's', ?, 'normal', ?, NULL, TIMESTAMP '2026-01-01', TIMESTAMP '2026-01-01')"
    link = dom.ticketing.link_column
    con.execute(row.format(link=link), [dom.ticketing.categories[0], enum[-1]])
    with pytest.raises(duckdb.ConstraintException):
        con.execute(row.format(link=link).replace("(1, 1,", "(2, 1,"), [dom.ticketing.categories[0], "not-a-status"])
    columns = [c[0] for c in con.execute("SELECT column_name FROM information_schema.columns WHERE table_name = 'tickets' "
                                         "ORDER BY ordinal_position").fetchall()]
    assert tuple(columns) == dom.ticketing.ticket_columns
