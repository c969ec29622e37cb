"""The complete retail domain: its size, and per family one wrong-but-plausible run that earns 0 with the right check named.

Each case replays a frozen task's golden calls with one plausible mistake (the
wrong amount, the wrong item, a skipped ticket update, a refund the policy does
not grant) and closes with the golden reply, so the state checks alone decide.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

import thinkingbox_env as tb
from thinkingbox_env.domain import load_domain
from thinkingbox_env.spec import TaskSpec, ToolCall

Edit = Callable[[list[ToolCall]], list[ToolCall]]


def _index(calls: list[ToolCall], name: str) -> int:
    return next(i for i, c in enumerate(calls) if c.name == name)


def _set(name: str, **changes) -> Edit:
    """Change arguments of the first call to ``name`` (a value of None removes the argument)."""

    def edit(calls: list[ToolCall]) -> list[ToolCall]:
        i = _index(calls, name)
        args = {**calls[i].arguments, **changes}
        calls[i] = ToolCall(name=name, arguments={k: v for k, v in args.items() if v is not None})
        return calls

    return edit


def _replace(name: str, new: Callable[[dict], ToolCall]) -> Edit:
    """Swap the first call to ``name`` for another call built from its arguments."""

    def edit(calls: list[ToolCall]) -> list[ToolCall]:
        i = _index(calls, name)
        calls[i] = new(calls[i].arguments)
        return calls

    return edit


def _insert_before(name: str, extra: ToolCall) -> Edit:
    def edit(calls: list[ToolCall]) -> list[ToolCall]:
        calls.insert(_index(calls, name), extra)
        return calls

    return edit


def _branch_task(family: str, branch: str) -> TaskSpec:
    """The first frozen task of a branch whose golden holds no recovery (no failing call); else a generated variant of it.

    Some branches are frozen only inside two-request tasks; a variant of the family stands in for them here.
    """
    for task_id in tb.list_tasks(domain="retail"):
        spec = tb.load_task(task_id)
        if spec.family == family and branch in spec.tags and not any(c.expect_error for c in spec.golden):
            return spec
    fam = load_domain("retail").family(family)
    for seed in range(2, 200):
        if fam.branch_for(seed, "train") == branch:
            spec = fam.instance(seed, split="train")
            if not any(c.expect_error for c in spec.golden):
                return spec
    raise LookupError(f"no plain {family} task of branch {branch}")


def _replay(spec: TaskSpec, edit: Edit) -> dict:
    calls = edit([ToolCall(name=c.name, arguments=dict(c.arguments)) for c in spec.golden])
    env = tb.make(spec)
    try:
        return tb.run_episode(env, tb.OracleAgent(calls), seed=0)
    finally:
        env.close()


WRONG_RUNS = [
    # (family, task, what the agent got wrong, edit, the check that must fail)
    ("ST005", ("ST005", "refund_no_restock"), "reships an item that cannot be restocked in time instead of refunding it",
     _replace("refund_order_amount", lambda a: ToolCall(name="create_replacement_order", arguments={"order_id": a["order_id"], "line_no": 1, "reason": "damaged_in_transit"})),
     "effect:refunds:insert#1"),
    ("ST006", ("ST006", "investigate_high_value"), "sends a courtesy replacement for a $200+ order instead of opening a carrier investigation",
     _replace("open_carrier_investigation", lambda a: ToolCall(name="create_replacement_order", arguments={"order_id": a["order_id"], "line_no": 1, "reason": "missing"})),
     "effect:carrier_investigations:insert#1"),
    ("ST007", ("ST007", "customer_error_fee"), "reships to the corrected address without the reship fee",
     _set("create_replacement_order", reship_fee=None), "effect:charges:insert#1"),
    ("ST008", ("ST008", "opened_restocking"), "forgets the restocking fee on an opened TV, laptop or appliance",
     _set("create_return", restocking_fee=None), "effect:returns:insert#1"),
    ("ST009", ("ST009", "outside_window"), "exchanges an item delivered outside the return window",
     lambda calls: _insert_before("create_ticket", ToolCall(name="create_exchange", arguments={"order_id": calls[_index(calls, "get_order")].arguments["order_id"], "line_no": 1, "new_sku": _variant(calls)}))(calls),
     "no_collateral"),
    ("ST010", ("ST010", "defect_repair"), "asks the repair centre to replace an item that policy says is repaired",
     _set("file_warranty_claim", resolution="replace"), "effect:warranty_claims:insert#1"),
    ("ST011", ("ST011", "partial_capped"), "refunds 15% of an expensive item without the $100 cap",
     lambda calls: _set("refund_order_amount", amount=round(float(calls[_index(calls, "refund_order_amount")].arguments["amount"]) + 12.35, 2))(calls),
     "effect:refunds:insert#1"),
    ("ST012", ("ST012", "reschedule_too_late"), "moves an installation that is less than 2 days away",
     lambda calls: _insert_before("create_ticket", ToolCall(name="reschedule_installation", arguments={"installation_id": "INS-" + calls[_index(calls, "get_order")].arguments["order_id"][4:], "new_date": "2026-03-10"}))(calls),
     "no_collateral"),
    ("ST013", ("ST013", "cancel_label_keep_shipping"), "refunds the shipping fee of an order that already had a label",
     lambda calls: _set("issue_refund", amount=float(_branch_task("ST013", "cancel_label_keep_shipping").patch.insert["orders"][0]["total"]))(calls),
     "effect:refunds:insert#1"),
    ("ST014", ("ST014", "express_standard"), "charges a standard account the Plus express-upgrade fee",
     _set("change_shipping_speed", upgrade_fee=7.99), "effect:charges:insert#1"),
    ("ST015", ("ST015", "not_stackable_refuse"), "applies a non-stackable code to an order that already has a discount",
     lambda calls: _insert_before("create_ticket", ToolCall(name="apply_promotion_adjustment", arguments={"order_id": calls[_index(calls, "get_order")].arguments["order_id"], "code": "SPRING15", "amount": 1.0}))(calls),
     "no_collateral"),
    ("ST016", ("ST016", "cancel_no_refund"), "refunds the membership fee after the 14-day window",
     lambda calls: _insert_before("create_ticket", ToolCall(name="refund_membership_fee", arguments={"membership_id": "MEM-" + calls[_index(calls, "get_membership")].arguments["customer_id"][4:], "amount": 59.0}))(calls),
     "no_collateral"),
    ("ST017", ("ST017", "reuse_open_escalate"), "reuses the open ticket but skips the escalation to high priority",
     _set("update_ticket", priority=None), "effect:tickets[{ticket}]:update"),
    ("ST017", ("ST017", "new_after_old_solved"), "reopens a ticket solved more than 7 days ago instead of opening a new one",
     _replace("create_ticket", lambda a: ToolCall(name="update_ticket", arguments={"ticket_id": int(a["order_id"][4:]), "status": "hold", "priority": "high"})),
     "effect:tickets:insert#1"),
    ("ST031", ("ST031", "duplicate_and_return"), "refunds the duplicate charge but never opens the return the customer asked for next",
     lambda calls: [c for c in calls if c.name != "create_return"], "effect:returns:insert#1"),
]


def _variant(calls: list[ToolCall]) -> str:
    """The other colour of the product an exchange task is about."""
    sku = calls[_index(calls, "get_product")].arguments["sku"]
    pairs = {"BW-HP-NC7": "BW-HP-NC7-SV", "BW-SB200": "BW-SB200-W", "BW-VAC-X2": "BW-VAC-X2-R", "BW-KT-17": "BW-KT-17-W"}
    return pairs.get(sku) or {v: k for k, v in pairs.items()}[sku]


@pytest.mark.parametrize("family,where,mistake,edit,failing", WRONG_RUNS, ids=[f"{w[0]}-{w[1][1]}" for w in WRONG_RUNS])
def test_a_plausible_mistake_fails_with_the_right_check(family, where, mistake, edit, failing):
    spec = _branch_task(*where)
    assert spec.family == family
    ticket = next((t["id"] for t in spec.patch.insert.get("tickets", [])), None)
    failing = failing.format(ticket=ticket)
    info = _replay(spec, edit)
    assert info["verdict"] == 0.0, mistake
    assert info["checks"][failing] is False, (mistake, {k: v for k, v in info["checks"].items() if v is not True})
    assert info["failure_category"] == "wrong_state_update", mistake


def test_every_new_family_has_a_wrong_run():
    families = set(load_domain("retail").families) - {"ST001", "ST002", "ST003", "ST004", "ST030"}
    assert families <= {w[0] for w in WRONG_RUNS}


def test_telling_the_customer_a_wrong_points_balance_is_incomplete_resolution():
    spec = _branch_task("ST016", "points_balance")
    env = tb.make(spec)
    try:
        info = tb.run_episode(env, tb.OracleAgent(list(spec.golden), closing="You have 12 reward points."), seed=0)
    finally:
        env.close()
    assert info["verdict"] == 0.0
    assert info["checks"]["mentions:states_balance"] is False
    assert info["failure_category"] == "incomplete_user_resolution"


def test_the_address_is_released_only_when_asked():
    env = tb.make(_branch_task("ST007", "carrier_error_free"))
    try:
        obs, _ = env.reset(seed=0)
        fact = next(f.text for f in env.unwrapped.task.user.facts if "should have gone" in f.text)
        obs, *_ = env.step("Could you tell me your email address?")
        assert fact not in obs["messages"][-1]["content"]
        obs, *_ = env.step("Which address did you mean the parcel to go to?")
        assert fact in obs["messages"][-1]["content"]
    finally:
        env.close()


def test_the_domain_is_at_least_as_rich_as_the_papers_retail_set():
    domain = load_domain("retail")
    tools = [t for name, t in domain.toolbox.tools.items() if name != "end_conversation"]
    writes = [t for t in tools if t.writes]
    assert len(domain.db.tables) >= 20
    assert len(tools) >= 30 and len(writes) >= 14
    assert len(domain.kb_documents()) >= 8
    assert len(domain.policy.split()) >= 900
    tasks = tb.list_tasks(domain="retail")
    assert len(tasks) >= 100
    assert len({tb.load_task(t).family for t in tasks}) >= 15


# --------------------------------------------------------------------------- the first five families

def _replace(spec, name, **changes):
    return [ToolCall(name=c.name, arguments={**c.arguments, **changes}) if c.name == name else c for c in spec.golden]


def _run(task, calls):
    env = tb.make(task)
    info = tb.run_episode(env, tb.OracleAgent(calls), seed=0)
    env.close()
    return info


def test_st001_refund_of_the_wrong_amount():
    spec = _branch_task("ST001", "cancel_processing")
    amount = next(c.arguments["amount"] for c in spec.golden if c.name == "issue_refund")
    info = _run(spec, _replace(spec, "issue_refund", amount=round(amount / 2, 2)))
    assert info["verdict"] == 0.0 and info["checks"]["effect:refunds:insert#1"] is False
    assert info["failure_category"] == "wrong_state_update"


def test_st002_refunding_the_first_payment_instead_of_the_duplicate():
    spec = _branch_task("ST002", "duplicate")
    first = spec.patch.insert["payments"][0]["id"]
    info = _run(spec, _replace(spec, "issue_refund", payment_id=first))
    assert info["verdict"] == 0.0
    assert info["checks"]["effect:refunds:insert#1"] is False
    assert info["checks"][f"effect:payments[{first}B]:update"] is False
    assert info["checks"]["no_collateral"] is False
    assert info["failure_category"] == "wrong_state_update"


def test_st003_store_credit_without_the_policy_amount():
    spec = _branch_task("ST003", "credit_due")
    info = _run(spec, _replace(spec, "issue_store_credit", amount=25.0))  # a round goodwill figure, not 10%
    assert info["verdict"] == 0.0 and info["checks"]["effect:store_credits:insert#1"] is False
    assert info["failure_category"] == "wrong_state_update"


def test_st003_credit_where_the_policy_gives_none():
    spec = _branch_task("ST003", "too_recent")  # under 5 days late: no compensation
    assert "too_recent" in spec.tags
    customer = spec.patch.insert["customers"][0]["id"]
    calls = list(spec.golden) + [ToolCall(name="issue_store_credit", arguments={"customer_id": customer, "amount": 10.0, "reason": "delivery_delay"})]
    info = _run(spec, calls)
    assert info["verdict"] == 0.0 and info["checks"]["no_collateral"] is False
    assert info["failure_category"] == "wrong_state_update"


def test_st004_a_new_ticket_instead_of_reusing_the_open_one():
    spec = _branch_task("ST004", "delivered_now")
    ticket = next(c.arguments["ticket_id"] for c in spec.golden if c.name == "update_ticket")
    requester = spec.patch.insert["ticket_users"][0]["id"]
    calls = [c for c in spec.golden if c.name != "update_ticket"] + [
        ToolCall(name="create_ticket", arguments={"requester_id": requester, "subject": "Parcel update", "category": "delivery", "status": "solved"})
    ]
    info = _run(spec, calls)
    assert info["verdict"] == 0.0
    assert info["checks"][f"effect:tickets[{ticket}]:update"] is False
    assert info["checks"]["no_collateral"] is False
    assert info["failure_category"] == "wrong_state_update"
