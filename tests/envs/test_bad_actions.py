"""Bad actions come back as error observations, leave the state untouched and never raise."""

from __future__ import annotations

import json

import pytest
from helpers import state_hash

import thinkingbox_env as tb


def _errors(obs):
    out = []
    for m in obs["messages"]:
        if m["role"] in ("tool", "system"):
            content = json.loads(m["content"])
            if "error" in content:
                out.append(content["error"])
    return out


BAD_ACTIONS = [
    ("unknown tool", {"name": "delete_all_customers", "arguments": {}}, "unknown tool"),
    ("misspelt tool", {"name": "get_custmer_profile", "arguments": {"email": "x@y.z"}}, "did you mean get_customer_profile"),
    ("wrong type", {"name": "get_ticket", "arguments": {"ticket_id": ["not", "an", "int"]}}, "argument 'ticket_id'"),
    ("wrong type for a write", {"name": "issue_refund", "arguments": {"payment_id": "PAY-30001", "amount": {"x": 1}, "reason": "goodwill"}}, "argument 'amount'"),
    ("bad enum", {"name": "update_membership", "arguments": {"customer_id": "CUS-10001", "action": "delete"}}, "argument 'action'"),
    ("missing argument", {"name": "get_order", "arguments": {}}, "missing required argument 'order_id'"),
    ("unexpected argument", {"name": "get_order", "arguments": {"order_id": "ORD-20001", "sql": "DROP TABLE orders"}}, "unexpected argument 'sql'"),
    ("invalid JSON", {"name": "get_order", "arguments": '{"order_id": "ORD-20001"'}, "not valid JSON"),
    ("arguments not an object", {"name": "get_order", "arguments": "[1, 2]"}, "must be a JSON object"),
    ("SQL injection in a filter", {"name": "search_tickets", "arguments": {"table": "users", "filter": "email eq 'x' OR 1=1; DROP TABLE tickets; --"}}, "invalid filter"),
    ("SQL injection in a value", {"name": "get_customer_profile", "arguments": {"customer_id": "x' OR '1'='1"}}, "no customer found"),
    ("1 MB string", {"name": "get_customer_profile", "arguments": {"email": "a" * 1_000_000}}, "too large"),
    ("1 MB raw JSON", {"name": "get_customer_profile", "arguments": json.dumps({"email": "a" * 1_000_000})}, "too large"),
    ("non-string tool name", {"name": 42, "arguments": {}}, "unknown tool"),
    ("precondition", {"name": "cancel_order", "arguments": {"order_id": "ORD-20001", "reason": "customer_request"}}, "cannot be cancelled"),
    ("malformed action", 12345, "malformed action"),
    ("dict without a shape", {"foo": "bar"}, "malformed action"),
    ("assistant message without content", {"role": "assistant", "tool_calls": []}, "needs text content or tool_calls"),
    ("tool call without function", {"role": "assistant", "content": None, "tool_calls": [{"id": "c1"}]}, "unknown tool"),
]


@pytest.mark.parametrize("label,action,expected", BAD_ACTIONS, ids=[b[0] for b in BAD_ACTIONS])
def test_bad_action_is_an_error_observation_and_changes_nothing(label, action, expected):
    env = tb.make("retail/ST030_001")
    env.reset(seed=0)
    before = state_hash(env)
    obs, reward, term, trunc, info = env.step(action)
    errors = _errors(obs)
    assert errors, obs
    assert any(expected in e for e in errors), errors
    assert not term
    assert state_hash(env) == before
    assert obs in env.observation_space
    env.close()


def test_injection_never_reaches_sql_and_tables_survive(st030):
    st030.reset(seed=0)
    st030.step({"name": "search_tickets", "arguments": {"table": "users", "filter": "email eq 'x''; DROP TABLE tickets; --'"}})
    obs, *_ = st030.step({"name": "search_tickets", "arguments": {"table": "tickets", "filter": "status eq 'solved'"}})
    result = json.loads(obs["messages"][-1]["content"])
    assert result["count"] >= 1


def test_a_write_that_fails_half_way_is_rolled_back(st030, monkeypatch):
    """An unexpected exception inside a write tool: error observation, logged, state untouched."""
    st030.reset(seed=0)
    before = state_hash(st030)
    tool = st030.toolbox["update_membership"]
    original = tool.fn

    def explode(db, **kwargs):
        original(db, **kwargs)  # performs both writes ...
        raise RuntimeError("disk on fire")  # ... then fails

    monkeypatch.setattr(tool, "fn", explode)
    obs, *_ = st030.step({"name": "update_membership", "arguments": {"customer_id": "CUS-3000001", "action": "upgrade"}})
    assert "internal error in tool 'update_membership'" in _errors(obs)[0]
    assert state_hash(st030) == before
    monkeypatch.setattr(tool, "fn", original)
    result = json.loads(st030.step({"name": "update_membership", "arguments": {"customer_id": "CUS-3000001", "action": "upgrade"}})[0]["messages"][-1]["content"])
    assert result["tier"] == "plus"


def test_several_calls_in_one_assistant_message_run_in_order(st030):
    st030.reset(seed=0)
    action = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "get_customer_profile", "arguments": json.dumps({"customer_id": "CUS-3000001"})}},
            {"id": "b", "type": "function", "function": {"name": "nope", "arguments": "{}"}},
            {"id": "c", "type": "function", "function": {"name": "get_membership", "arguments": {"customer_id": "CUS-3000001"}}},
        ],
    }
    obs, *_ = st030.step(action)
    assert [m["role"] for m in obs["messages"]] == ["assistant", "tool", "tool", "tool"]
    assert [m["tool_call_id"] for m in obs["messages"][1:]] == ["a", "b", "c"]
    assert "error" in json.loads(obs["messages"][2]["content"])
    assert json.loads(obs["messages"][3]["content"])["customer_id"] == "CUS-3000001"
