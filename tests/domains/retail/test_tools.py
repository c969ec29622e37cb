"""Retail tools: what the backend enforces, what it leaves to the agent, and what the agent is told."""

from __future__ import annotations

import pytest

import thinkingbox_env as tb
from thinkingbox_env.tasks.domain import load_domain
from thinkingbox_env.toolkit.kb import search_documents

DOMAIN = load_domain("retail")


def test_policy_search_finds_the_fee_tables():
    top = search_documents(load_domain("retail").path / "kb", "restocking fee for an opened laptop", 3)
    assert top[0]["source"] == "returns_and_fees.md"
    assert "10%" in top[0]["text"]


def test_policy_search_limits_are_in_the_schema_and_enforced():
    params = DOMAIN.toolbox["search_policy"].parameters["properties"]["top_k"]
    assert (params["minimum"], params["maximum"]) == (1, 5)
    env = tb.make("retail/ST030_001")
    env.reset(seed=0)
    obs, *_ = env.step({"name": "search_policy", "arguments": {"query": "restocking", "top_k": 9}})
    assert "top_k" in obs["messages"][-1]["content"] and "error" in obs["messages"][-1]["content"]
    env.close()


@pytest.mark.parametrize("day, works", [("2026-03-08", False), ("2026-03-09", True), ("2026-03-07", True)])
def test_installers_are_refused_on_sundays(day, works):
    env = tb.make("retail/ST012_001")
    env.reset(seed=0)
    job = env.task.patch.insert["installations"][0]["id"]
    obs, *_ = env.step({"name": "reschedule_installation", "arguments": {"installation_id": job, "new_date": day}})
    content = obs["messages"][-1]["content"]
    assert ("Sundays" in content) is (not works), content
    env.close()


def _refused(env, tool: str, arguments: dict, expected: str) -> None:
    """The call is refused with a message naming the problem, and the state does not move."""
    from helpers import state_hash

    before = state_hash(env)
    obs, *_ = env.step({"name": tool, "arguments": arguments})
    content = obs["messages"][-1]["content"]
    assert "error" in content and expected in content, content
    assert state_hash(env) == before


INVARIANTS = {
    "a $1,000,000,000 store credit": lambda p: ("issue_store_credit", {"customer_id": p["customer"], "amount": 1e9, "reason": "goodwill"}, "above the limit"),
    "a negative store credit": lambda p: ("issue_store_credit", {"customer_id": p["customer"], "amount": -5, "reason": "goodwill"}, "must be positive"),
    "reward points to -1,000,000": lambda p: ("adjust_reward_points", {"customer_id": p["customer"], "points": -1_000_000}, "beyond"),
    "reward points below a zero balance": lambda p: ("adjust_reward_points", {"customer_id": p["customer"], "points": -(p["points"] + 1)}, "below zero"),
    "an installation in year 9999": lambda p: ("reschedule_installation", {"installation_id": p["installation"], "new_date": "9999-01-04"}, "outside the range"),
    "an empty shipping address": lambda p: ("update_shipping_address", {"order_id": p["order"], "shipping_address": "  "}, "must not be empty"),
    "a shipping address with control characters": lambda p: ("update_shipping_address", {"order_id": p["order"], "shipping_address": "12 Alder\x1b Lane"}, "control characters"),
    "a ticketing user with an empty name": lambda p: ("create_ticket_user", {"name": "", "email": "ann.lee@example.com"}, "name must not be empty"),
    "a ticketing user with a malformed e-mail": lambda p: ("create_ticket_user", {"name": "Ann Lee", "email": "@"}, "not an e-mail address"),
}


def _retail_fixture(env) -> dict:
    state = env.unwrapped.state
    customer = state.query_one("SELECT id FROM customers ORDER BY id LIMIT 1")["id"]
    points = state.query_one("SELECT coalesce(sum(points), 0) AS n FROM reward_points WHERE customer_id = ?", [customer])["n"]
    order = state.query_one("SELECT o.id FROM orders o WHERE status = 'processing' AND NOT EXISTS "
                            "(SELECT 1 FROM shipments s WHERE s.order_id = o.id) ORDER BY id LIMIT 1")
    return {"customer": customer, "points": int(points), "order": order["id"] if order else "ORD-NONE",
            "installation": env.task.patch.insert["installations"][0]["id"]}


@pytest.mark.parametrize("invariant", list(INVARIANTS))
def test_each_backend_invariant_refuses_an_absurd_write(invariant):
    env = tb.make("retail/ST012_001")
    env.reset(seed=0)
    p = _retail_fixture(env)
    assert p["order"] != "ORD-NONE"
    tool, arguments, expected = INVARIANTS[invariant](p)
    _refused(env, tool, arguments, expected)
    env.close()


def test_the_invariants_leave_sane_writes_alone():
    env = tb.make("retail/ST012_001")
    env.reset(seed=0)
    p = _retail_fixture(env)
    for tool, arguments in [
        ("issue_store_credit", {"customer_id": p["customer"], "amount": 25.0, "reason": "goodwill"}),
        ("adjust_reward_points", {"customer_id": p["customer"], "points": 500}),
        ("adjust_reward_points", {"customer_id": p["customer"], "points": -(p["points"] + 500)}),  # down to exactly zero
        ("update_shipping_address", {"order_id": p["order"], "shipping_address": "12 Alder Lane, Boise, ID 83702"}),
    ]:
        obs, *_ = env.step({"name": tool, "arguments": arguments})
        assert "error" not in obs["messages"][-1]["content"], (tool, obs["messages"][-1]["content"])
    env.close()
