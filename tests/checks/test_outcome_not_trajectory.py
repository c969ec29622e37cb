"""The verdict judges the outcome: other valid paths to the same state pass."""

from __future__ import annotations

import thinkingbox_env as tb
from thinkingbox_env.contracts.spec import ToolCall


def _verdict(task_id, calls):
    env = tb.make(task_id)
    info = tb.run_episode(env, tb.OracleAgent(calls), seed=0)
    env.close()
    return info


def _writes(spec):
    box = tb.make(spec.full_id).toolbox
    return [c for c in spec.golden if box[c.name].writes]


def test_golden_writes_with_extra_reads_interleaved_pass():
    for task_id in ["retail/ST030_001", "retail/ST001_003", "retail/ST003_002"]:
        spec = tb.load_task(task_id)
        calls = []
        for c in spec.golden:
            calls.append(ToolCall(name="search_policy", arguments={"query": "refund window"}))
            calls.append(ToolCall(name="get_order", arguments={"order_id": "ORD-20003"}))
            calls.append(c)
        info = _verdict(task_id, calls)
        assert info["verdict"] == 1.0, (task_id, info["checks"])


def test_only_the_writes_without_any_read_pass():
    spec = tb.load_task("retail/ST001_001")
    # the written dialogue names golden positions: each turn moves to the same place among the writes alone
    writes = _writes(spec)
    dialogue = [t.model_copy(update={"before": sum(1 for c in spec.golden[: t.before] if c in writes)}) for t in spec.dialogue]
    env = tb.make(spec.model_copy(update={"dialogue": dialogue}))
    info = tb.run_episode(env, tb.OracleAgent(writes), seed=0)
    env.close()
    assert info["verdict"] == 1.0


def test_a_failed_call_that_is_then_repaired_passes():
    spec = tb.load_task("retail/ST030_001")
    calls = []
    for c in spec.golden:
        if c.name == "update_membership":
            calls.append(ToolCall(name="update_membership", arguments={"customer_id": "CUS-3000001", "action": "promote"}))
            calls.append(ToolCall(name="update_membership", arguments={"customer_id": "CUS-999"}))
        calls.append(c)
    info = _verdict(spec.full_id, calls)
    assert info["verdict"] == 1.0
    errors = [e for e in info["trace"] if e["type"] == "tool_call" and not e["ok"]]
    assert len(errors) == 2


def test_two_creates_in_one_table_in_either_order_pass():
    """ST001_003 refunds two payments: two refund rows whose sequence ids swap with the order."""
    spec = tb.load_task("retail/ST001_003")
    refunds = [i for i, c in enumerate(spec.golden) if c.name == "issue_refund"]
    assert len(refunds) == 2
    swapped = list(spec.golden)
    swapped[refunds[0]], swapped[refunds[1]] = swapped[refunds[1]], swapped[refunds[0]]
    straight = _verdict(spec.full_id, list(spec.golden))
    reverse = _verdict(spec.full_id, swapped)
    assert straight["verdict"] == reverse["verdict"] == 1.0
    ids = lambda info: [(r["id"], r["payment_id"]) for r in info["diff"]["refunds"]["inserted"]]  # noqa: E731
    assert ids(straight) != ids(reverse)  # the sequence numbers differ ...
    assert straight["state_hash"] == reverse["state_hash"]  # ... the canonical state does not


def test_created_rows_referencing_created_rows_compare_by_content():
    """ST030_002 creates a ticketing user and a ticket that points at it."""
    spec = tb.load_task("retail/ST030_002")
    assert [c.name for c in spec.golden].count("create_ticket_user") == 1
    calls = list(spec.golden)
    # another valid path: create the ticket directly as solved instead of open-then-solved
    create = next(i for i, c in enumerate(calls) if c.name == "create_ticket")
    direct = ToolCall(name="create_ticket", arguments={**calls[create].arguments, "status": "solved"})
    calls = [c for c in calls if c.name != "update_ticket"]
    calls[create] = direct
    assert _verdict(spec.full_id, calls)["verdict"] == 1.0


def test_wrong_value_in_a_created_row_fails():
    spec = tb.load_task("retail/ST001_001")
    calls = [
        ToolCall(name=c.name, arguments={**c.arguments, "amount": round(c.arguments["amount"] - 1, 2)}) if c.name == "issue_refund" else c
        for c in spec.golden
    ]
    info = _verdict(spec.full_id, calls)
    assert info["verdict"] == 0.0
    assert info["checks"]["effect:refunds:insert#1"] is False
