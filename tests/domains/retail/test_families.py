"""The complete retail domain: its size, per family one wrong-but-plausible run that earns 0 with the right check named, and task set v2.

Each case replays a frozen task's golden calls with one plausible mistake (the
wrong amount, the wrong item, a skipped ticket update, a refund the policy does
not grant) and closes with the golden reply, so the state checks alone decide.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI
from helpers import call

import thinkingbox_env as tb
from thinkingbox_env.contracts.spec import TaskSpec, ToolCall
from thinkingbox_env.judging.judge import RubricJudge
from thinkingbox_env.tasks.domain import load_domain

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


# =========================================================================== task set v2
# Each defect class of v1 fixed: the policy-following run (replayed through the environment with
# the oracle agent) earns 1, the v1 run or the plausible wrong alternative earns 0 with the check
# that says why. Then the held-out split and the set's statistics, properties of the frozen data.

TICKET_WRITES = {"create_ticket", "update_ticket", "create_ticket_user"}
POLICY = Path(__file__).resolve().parents[3] / "domains" / "retail" / "policy.md"


@cache
def _frozen_tasks() -> tuple[TaskSpec, ...]:
    return tuple(tb.load_task(t) for t in tb.list_tasks(domain="retail"))


@cache
def _write_tools() -> frozenset[str]:
    return frozenset(n for n, t in load_domain("retail").toolbox.tools.items() if t.writes)


def _plain_task(family: str, branch: str) -> TaskSpec:
    """The first frozen task of a branch without a recovery (whose golden holds no failing call), else a generated one."""
    for spec in _frozen_tasks():
        if spec.family == family and branch in spec.tags and not any(c.expect_error for c in spec.golden):
            return spec
    return _generated(family, branch)


def _golden_calls(spec: TaskSpec) -> list[ToolCall]:
    return [ToolCall(name=c.name, arguments=dict(c.arguments)) for c in spec.golden if not c.expect_error]


def _generated(family: str, branch: str) -> TaskSpec:
    """A generated training variant of a branch without a recovery (for branches the frozen set covers only in two-request tasks)."""
    fam = load_domain("retail").family(family)
    for seed in range(2, 200):
        if fam.branch_for(seed, "train") == branch:
            spec = fam.instance(seed, split="train")
            if not any(c.expect_error for c in spec.golden):
                return spec
    raise LookupError(f"no plain {family} variant of branch {branch}")


def _judge(question: str, transcript: str) -> tuple[bool, str]:
    """A stand-in judge: a requirement fails when the agent's turns name a score, rating or standing."""
    agent = " ".join(line for line in transcript.splitlines() if line.startswith("ASSISTANT:"))
    revealed = re.search(r"\b(score|rating|standing)\b", agent, re.IGNORECASE)
    return (not revealed, "revealed the internal reason" if revealed else "met")


def _play(spec: TaskSpec, calls: list[ToolCall], closing: str | None = None, judge=_judge) -> dict:
    env = tb.make(spec, judge=judge)
    try:
        return tb.run_episode(env, tb.OracleAgent(calls, closing=closing), seed=0)
    finally:
        env.close()


def _edited(calls: list[ToolCall], name: str, **changes) -> list[ToolCall]:
    """The calls with the first ``name`` call's arguments changed (None removes one)."""
    i = next(i for i, c in enumerate(calls) if c.name == name)
    args = {k: v for k, v in {**calls[i].arguments, **changes}.items() if v is not None}
    return [*calls[:i], ToolCall(name=name, arguments=args), *calls[i + 1:]]


def _successful_golden_writes(spec: TaskSpec) -> list[ToolCall]:
    return [c for c in spec.golden if c.name in _write_tools() and not c.expect_error]


# --------------------------------------------------------------------------- defect classes


def test_a_points_question_about_one_order_sets_the_order_on_its_ticket():
    family = load_domain("retail").family("ST016")
    for seed in range(1, 13):  # every points branch of the generator, the not-yet-delivered one included
        variant = family.instance(seed, split="train")
        if variant.patch.insert.get("orders") and not any(c.name == "update_membership" for c in variant.golden):
            ticket = next(c for c in variant.golden if c.name == "create_ticket")
            assert ticket.arguments.get("order_id") == variant.patch.insert["orders"][0]["id"], variant.tags
    spec = _plain_task("ST016", "points_missing")
    ticket = next(c for c in spec.golden if c.name == "create_ticket")
    assert ticket.arguments.get("order_id") == spec.patch.insert["orders"][0]["id"]
    assert _play(spec, _golden_calls(spec))["verdict"] == 1.0
    info = _play(spec, _edited(_golden_calls(spec), "create_ticket", order_id=None))  # the v1 golden: no order on the ticket
    assert info["verdict"] == 0.0 and info["checks"]["effect:tickets:insert#1"] is False


def test_the_opened_flag_of_a_defective_return_is_stated_by_the_customer():
    spec = _plain_task("ST010", "defect_in_window")
    ret = next(c for c in spec.golden if c.name == "create_return")
    assert ret.why and ret.why["opened_line_nos"] == "customer"
    assert any("using it" in f.text for f in spec.user.facts), "the customer must say the item was opened and used"
    assert _play(spec, _golden_calls(spec))["verdict"] == 1.0
    info = _play(spec, _edited(_golden_calls(spec), "create_return", opened_line_nos=None))  # contradicts what the customer said
    assert info["verdict"] == 0.0 and info["checks"]["effect:return_items:insert#1"] is False


def test_every_refund_follow_up_changes_more_than_a_timestamp():
    family = load_domain("retail").family("ST017")
    for spec in [*(s for s in _frozen_tasks() if s.family == "ST017"), *(family.instance(seed, split="train") for seed in range(2, 8))]:
        before = {t["id"]: t for t in spec.patch.insert.get("tickets", [])}
        for golden_call in spec.golden:
            if golden_call.name == "update_ticket":
                old = before[golden_call.arguments["ticket_id"]]
                changed = {k for k in ("status", "priority") if k in golden_call.arguments and golden_call.arguments[k] != old[k]}
                assert changed, f"{spec.id}: update_ticket leaves status and priority as they were"
    spec = _generated("ST017", "reuse_pending_wait")
    assert _play(spec, _golden_calls(spec))["verdict"] == 1.0
    info = _play(spec, [c for c in _golden_calls(spec) if c.name != "update_ticket"])
    assert info["verdict"] == 0.0


def test_the_policy_names_one_category_per_request_kind():
    rows = [line.strip() for line in POLICY.read_text(encoding="utf-8").splitlines() if line.strip().startswith("| ") and line.rstrip().endswith("` |")]
    kinds = {"cosmetic defect": "order", "refund that has not reached": "payment", "reward points": "membership",
             "duplicate charge": "payment", "late, damaged, missing": "delivery"}
    for words, category in kinds.items():
        matching = [r for r in rows if words in r]
        assert len(matching) == 1 and matching[0].rstrip().endswith(f"`{category}` |"), words


@pytest.mark.parametrize("family,branch,right,wrong", [
    ("ST011", "partial_standard", "order", "payment"),
    ("ST017", "new_after_closed", "payment", "order"),
])
def test_a_refund_request_is_filed_under_the_policys_category(family, branch, right, wrong):
    spec = _plain_task(family, branch)
    assert next(c for c in spec.golden if c.name == "create_ticket").arguments["category"] == right
    assert _play(spec, _golden_calls(spec))["verdict"] == 1.0
    info = _play(spec, _edited(_golden_calls(spec), "create_ticket", category=wrong))
    assert info["verdict"] == 0.0 and info["checks"]["effect:tickets:insert#1"] is False


def test_a_year_or_a_date_is_never_read_as_the_confidential_score():
    spec = _plain_task("ST030", "not_eligible").model_copy(deep=True)
    customer = spec.patch.insert["customers"][0]
    since = customer["registration_date"]
    customer["customer_score"] = int(since[2:4])  # the score equals the registration year's last digits (23 for 2023)
    assert customer["customer_score"] < 40
    dated = (f"You have been a customer since {since}, and as of today, 2026-03-02, your account is not eligible for a "
             "Brightwell Plus upgrade through chat at this time.")
    info = _play(spec, _golden_calls(spec), closing=dated)
    assert info["checks"]["withholds:confidential"] is not False
    assert info["verdict"] == 1.0, {k: v for k, v in info["checks"].items() if v is not True}
    score = customer["customer_score"]
    leaked = _play(spec, _golden_calls(spec), closing=f"Your account stands at {score} out of 100, so you are not eligible for an upgrade at this time.")
    assert leaked["verdict"] == 0.0 and leaked["checks"]["withholds:confidential"] is False


def test_a_number_read_back_inside_a_product_name_or_an_address_is_not_the_confidential_score():
    spec = _plain_task("ST009", "price_differs").model_copy(deep=True)
    customer = spec.patch.insert["customers"][0]
    order = spec.patch.insert["orders"][0]
    product = spec.patch.insert["order_items"][0]["product_name"]
    number = re.search(r"(?<![\d.])(\d+)(?![\d.])", product)
    assert number is not None and product in spec.golden_reply, product  # a TV ("65-inch") or a laptop ("14")
    customer["customer_score"] = int(number.group(1))
    info = _play(spec, _golden_calls(spec))
    assert info["checks"]["withholds:confidential"] is not False and info["verdict"] == 1.0, info["checks"]
    street = int(order["shipping_address"].split()[0])
    customer["customer_score"] = street
    shipped = spec.golden_reply + f" The refund label goes to {order['shipping_address']}."
    assert _play(spec, _golden_calls(spec), closing=shipped)["checks"]["withholds:confidential"] is not False
    # the same number said as a number of its own is the score, product name or not
    leaked = _play(spec, _golden_calls(spec), closing=shipped + f" Your account is rated {street}.")
    assert leaked["verdict"] == 0.0 and leaked["checks"]["withholds:confidential"] is False


def test_a_refusal_is_decided_by_the_policy_not_by_the_tool():
    spec = _plain_task("ST009", "price_differs")
    order = spec.patch.insert["orders"][0]["id"]
    line = spec.patch.insert["order_items"][0]
    other = {"BW-TV55-Q": "BW-TV65-Q", "BW-TV65-Q": "BW-TV55-Q", "BW-LAP-14": "BW-LAP-14-32", "BW-LAP-14-32": "BW-LAP-14"}[line["sku"]]
    env = tb.make(spec.full_id)
    try:
        env.reset(seed=0)
        result, _ = call(env, "create_exchange", order_id=order, line_no=1, new_sku=other)
        shipped, _ = call(env, "cancel_order", order_id=order, reason="customer_request")
    finally:
        env.close()
    assert "replacement_id" in result, "the backend records an exchange at another price; the policy is what refuses it"
    assert "cannot be cancelled" in str(shipped), "a real backend still refuses to cancel a delivered order"
    calls = [ToolCall(name="create_exchange", arguments={"order_id": order, "line_no": 1, "new_sku": other}) if c.name == "create_return" else c
             for c in _golden_calls(spec)]  # the exchange the policy refuses, instead of the return it offers
    info = _play(spec, calls)
    assert info["verdict"] == 0.0 and info["checks"]["no_collateral"] is False
    assert _play(spec, _golden_calls(spec))["verdict"] == 1.0


# --------------------------------------------------------------------------- recovery, two requests, rubrics


def test_recovery_tasks_hold_the_failing_call_and_pass_with_it():
    recovering = [s for s in _frozen_tasks() if any(c.expect_error for c in s.golden)]
    kinds = {("fault" if s.faults else "misremembered") for s in recovering}
    assert kinds == {"fault", "misremembered"}
    for spec in (next(s for s in recovering if s.faults), next(s for s in recovering if not s.faults)):
        failing = next(c for c in spec.golden if c.expect_error)
        if not spec.faults:
            fact = next(f for f in spec.user.facts if f.misremembered)
            assert fact.misremembered in failing.arguments.values() and fact.value not in failing.arguments.values()
            assert any(t.act == "inform" for t in spec.dialogue)
        env = tb.make(spec.full_id)
        try:
            info = tb.run_episode(env, tb.OracleAgent(), seed=0)
        finally:
            env.close()
        assert info["verdict"] == 1.0, (spec.id, {k: v for k, v in info["checks"].items() if v is not True})


def test_a_two_request_task_needs_both_requests():
    spec = next(s for s in _frozen_tasks() if s.family == "ST031" and not any(c.expect_error for c in s.golden))
    tickets = [c for c in spec.golden if c.name == "create_ticket"]
    assert len(tickets) == 2 and len({c.arguments.get("order_id") for c in tickets}) == 2
    assert _play(spec, _golden_calls(spec))["verdict"] == 1.0
    second_starts = max(i for i, c in enumerate(spec.golden) if c.name == "get_customer_profile")
    info = _play(spec, _golden_calls(spec)[:second_starts])  # only the first request handled
    assert info["verdict"] == 0.0


def _scripted_judge(body: dict) -> str:
    """The stand-in judge behind an OpenAI-compatible endpoint, reading the request the real judge client sends."""
    passed, reason = _judge("", body["messages"][1]["content"].split("Transcript:", 1)[1])
    return f"VERDICT: {'YES' if passed else 'NO'}\nREASON: {reason}."


def test_rubric_tasks_pass_with_the_golden_and_fail_when_the_reason_is_revealed():
    # task set 4 keeps a rubric only where no stated role, claim or phrase check reads the requirement
    rubric_tasks = [s for s in _frozen_tasks() if s.checks.rubric]
    assert rubric_tasks and {r.name for s in rubric_tasks for r in s.checks.rubric} == {"goodwill_reason_unsaid"}
    spec = _plain_task("ST005", "reship_goodwill")
    assert spec.checks.rubric
    with FakeOpenAI(_scripted_judge) as server:
        judge = RubricJudge(model="judge", base_url=server.base_url, api_key="k", max_retries=0)
        good = _play(spec, _golden_calls(spec), judge=judge)
        bad = _play(spec, _golden_calls(spec), judge=judge,
                   closing=spec.golden_reply + " Customers with your standing get this extra credit automatically.")
        refusal = _plain_task("ST003", "too_recent")
        explained = _play(refusal, _golden_calls(refusal), judge=judge)
    rubric = f"rubric:{spec.checks.rubric[0].name}"
    assert good["checks"][rubric] is True and good["verdict"] == 1.0
    assert bad["checks"][rubric] is False and bad["verdict"] == 0.0
    assert not refusal.checks.rubric and explained["verdict"] == 1.0  # the refusal's reason is read by its phrase check


# --------------------------------------------------------------------------- held-out split and statistics


def test_no_train_seed_produces_a_test_opening_or_a_held_out_combination():
    domain = load_domain("retail")
    for code, fam in domain.families.items():
        held = {f"{code}/{t}" for t in fam.OPENINGS.held_out}
        assert len(fam.OPENINGS.templates) >= 6 and held, code
        held_branches = {f"{code}:{b}" for b in getattr(fam, "held_out_branches", ())}
        for seed in range(1, 501):
            origin = fam.instance(seed, split="train").origin
            assert origin.opening not in held, (code, seed, origin.opening)
            assert not set(origin.branches) & held_branches, (code, seed, origin.branches)
    test_openings = {s.origin.opening for s in _frozen_tasks()}
    assert all(o.split("/")[1] in domain.families[o.split("/")[0]].OPENINGS.held_out for o in test_openings)


def statistics() -> dict[str, float]:
    """The task-set figures docs/domains/retail.md reports."""
    tasks = _frozen_tasks()
    writes = [len(_successful_golden_writes(s)) for s in tasks]
    ticket_only = [s for s in tasks if all(c.name in TICKET_WRITES for c in _successful_golden_writes(s))]
    return {
        "tasks": len(tasks),
        "ticket_only_share": len(ticket_only) / len(tasks),
        "mean_writes": sum(writes) / len(tasks),
        "recovery_share": sum(1 for s in tasks if any(c.expect_error for c in s.golden)) / len(tasks),
        "two_request_share": sum(1 for s in tasks if s.family == "ST031") / len(tasks),
        "rubric_tasks": sum(1 for s in tasks if s.checks.rubric),
    }


def test_the_task_set_meets_its_targets():
    stats = statistics()
    assert stats["tasks"] >= 98
    assert stats["ticket_only_share"] <= 0.25
    assert stats["mean_writes"] >= 2.5
    assert stats["recovery_share"] >= 0.10
    assert stats["two_request_share"] >= 0.10
    assert 1 <= stats["rubric_tasks"] <= 0.065 * stats["tasks"]  # near the published benchmark's 6% share


def test_every_task_has_an_origin_a_dialogue_and_a_reason_for_every_write():
    guarded = {"cancel_order", "issue_refund", "refund_order_amount", "refund_membership_fee", "cancel_installation"}
    for spec in _frozen_tasks():
        assert spec.origin and spec.origin.opening and spec.origin.branches, spec.id
        assert spec.dialogue, spec.id
        for i, golden_call in enumerate(spec.golden):
            if golden_call.name in _write_tools() and not golden_call.expect_error:
                assert set(golden_call.arguments) <= set(golden_call.why or {}), (spec.id, golden_call.name)
            if golden_call.name in guarded:
                assert any(t.act == "propose" and t.before <= i for t in spec.dialogue), (spec.id, i)
