"""Wrong-but-plausible trajectories for the first retail families, each failing on the right check."""

from __future__ import annotations

import thinkingbox_env as tb
from thinkingbox_env.spec import ToolCall


def _replace(spec, name, **changes):
    return [ToolCall(name=c.name, arguments={**c.arguments, **changes}) if c.name == name else c for c in spec.golden]


def _run(task_id, calls):
    env = tb.make(task_id)
    info = tb.run_episode(env, tb.OracleAgent(calls), seed=0)
    env.close()
    return info


def test_st001_refund_of_the_wrong_amount():
    spec = tb.load_task("retail/ST001_001")
    amount = next(c.arguments["amount"] for c in spec.golden if c.name == "issue_refund")
    info = _run(spec.full_id, _replace(spec, "issue_refund", amount=round(amount / 2, 2)))
    assert info["verdict"] == 0.0 and info["checks"]["effect:refunds:insert#1"] is False
    assert info["failure_category"] == "wrong_state_update"


def test_st002_refunding_the_first_payment_instead_of_the_duplicate():
    spec = tb.load_task("retail/ST002_001")
    info = _run(spec.full_id, _replace(spec, "issue_refund", payment_id="PAY-200001"))
    assert info["verdict"] == 0.0
    assert info["checks"]["effect:refunds:insert#1"] is False
    assert info["checks"]["effect:payments[PAY-200001B]:update"] is False
    assert info["checks"]["no_collateral"] is False
    assert info["failure_category"] == "wrong_state_update"


def test_st003_store_credit_without_the_policy_amount():
    spec = tb.load_task("retail/ST003_001")
    info = _run(spec.full_id, _replace(spec, "issue_store_credit", amount=25.0))  # a round goodwill figure, not 10%
    assert info["verdict"] == 0.0 and info["checks"]["effect:store_credits:insert#1"] is False
    assert info["failure_category"] == "wrong_state_update"


def test_st003_credit_where_the_policy_gives_none():
    spec = tb.load_task("retail/ST003_003")  # under 5 days late: no compensation
    assert "too_recent" in spec.tags
    customer = spec.patch.insert["customers"][0]["id"]
    calls = list(spec.golden) + [ToolCall(name="issue_store_credit", arguments={"customer_id": customer, "amount": 10.0, "reason": "delivery_delay"})]
    info = _run(spec.full_id, calls)
    assert info["verdict"] == 0.0 and info["checks"]["no_collateral"] is False
    assert info["failure_category"] == "wrong_state_update"


def test_st004_a_new_ticket_instead_of_reusing_the_open_one():
    spec = tb.load_task("retail/ST004_001")
    ticket = next(c.arguments["ticket_id"] for c in spec.golden if c.name == "update_ticket")
    requester = spec.patch.insert["ticket_users"][0]["id"]
    calls = [c for c in spec.golden if c.name != "update_ticket"] + [
        ToolCall(name="create_ticket", arguments={"requester_id": requester, "subject": "Parcel update", "category": "delivery", "status": "solved"})
    ]
    info = _run(spec.full_id, calls)
    assert info["verdict"] == 0.0
    assert info["checks"][f"effect:tickets[{ticket}]:update"] is False
    assert info["checks"]["no_collateral"] is False
    assert info["failure_category"] == "wrong_state_update"
