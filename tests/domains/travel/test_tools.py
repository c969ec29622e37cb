"""Harborlight tools: what the backend refuses (and leaves unchanged), what it leaves to the agent, and what it tells."""

from __future__ import annotations

import pytest
from helpers import call, state_hash

import thinkingbox_env as tb
from thinkingbox_env.tasks.domain import load_domain
from thinkingbox_env.toolkit.kb import search_documents

DOMAIN = load_domain("travel")


@pytest.fixture
def env():
    """A flexible booking arriving in a few days (TR001_001), plus the seed's group, invoice and bookings."""
    e = tb.make("travel/TR001_001")
    e.reset(seed=0)
    yield e
    e.close()


def _booking(env) -> dict:
    return env.unwrapped.task.patch.insert["bookings"][0]


def _refused(env, tool: str, arguments: dict, expected: str) -> None:
    """The call is refused with a message naming the problem, and the state does not move."""
    before = state_hash(env)
    obs, *_ = env.step({"name": tool, "arguments": arguments})
    content = obs["messages"][-1]["content"]
    assert "error" in content and expected in content, content
    assert state_hash(env) == before


def test_the_tool_set_is_typed_and_split_into_reads_and_writes():
    box = DOMAIN.toolbox
    writes = {n for n, t in box.tools.items() if t.writes}
    assert {"modify_booking", "cancel_booking", "charge_payment", "issue_refund", "change_group_dates", "adjust_invoice",
            "escalate_to_hotel", "record_hotel_verification", "issue_compensation", "add_payment_method"} <= writes
    assert "detail" in box["escalate_to_hotel"].free_text_arguments
    assert "reason" not in box["issue_refund"].free_text_arguments


def test_policy_search_finds_the_windows_and_the_escalation_matrix():
    top = search_documents(load_domain("travel").path / "kb", "cancel flexible booking platinum member free cancellation window", 3)
    assert top[0]["source"] == "cancellations.md"
    top = search_documents(load_domain("travel").path / "kb", "hotel has no record of the reservation escalate duty manager", 3)
    assert "hotel_verification.md" in [t["source"] for t in top]


def test_the_partner_record_is_marked_internal_and_the_public_hotel_record_hides_it(env):
    hotel = _booking(env)["hotel_id"]
    public, _ = call(env, "get_hotel", hotel_id=hotel)
    assert "commission_pct" not in public and "partner_tier" not in public
    internal, _ = call(env, "get_hotel_partner_record", hotel_id=hotel)
    assert internal["internal"] is True and internal["commission_pct"] > 0
    assert "never share" in DOMAIN.toolbox["get_hotel_partner_record"].description.lower()


def test_a_modification_keeps_the_rate_records_the_change_and_returns_the_difference(env):
    b = _booking(env)
    result, _ = call(env, "modify_booking", booking_id=b["id"], check_in=b["check_in"], check_out="2026-06-30"
                     if b["check_out"] < "2026-06-29" else b["check_out"], change_fee=0)
    assert float(result["nightly_rate"]) == float(b["nightly_rate"])
    assert float(result["price_difference"]) == float(result["new_total"]) - float(b["total"])
    history, _ = call(env, "get_booking_history", booking_id=b["id"])
    assert history["changes"][0]["change"] == "dates"
    payments, _ = call(env, "get_payments", booking_id=b["id"])
    assert [p["purpose"] for p in payments["payments"]] == ["booking"]  # nothing charged by the change itself


def test_a_sold_out_night_refuses_the_change(env):
    b = _booking(env)
    env.unwrapped.state.execute("INSERT INTO room_inventory VALUES (?, ?, ?, 0)", [b["hotel_id"], b["room_code"], b["check_out"]])
    after = b["check_out"][:8] + f"{int(b['check_out'][8:]) + 1:02d}" if int(b["check_out"][8:]) < 28 else b["check_out"]
    if after != b["check_out"]:
        _refused(env, "modify_booking", {"booking_id": b["id"], "check_in": b["check_in"], "check_out": after}, "cannot be made")


BACKEND_REFUSALS = {
    "a booking that does not exist": lambda b: ("get_booking", {"booking_id": "BK-1"}, "not found"),
    "a check-out before the check-in": lambda b: ("modify_booking", {"booking_id": b["id"], "check_in": b["check_out"], "check_out": b["check_in"]},
                                                  "must be after"),
    "a stay moved into the past": lambda b: ("modify_booking", {"booking_id": b["id"], "check_in": "2026-05-01", "check_out": "2026-05-03"},
                                             "in the past"),
    "a stay in year 9999": lambda b: ("modify_booking", {"booking_id": b["id"], "check_in": "9999-01-01", "check_out": "9999-01-02"},
                                      "outside the range"),
    "a stay of 45 nights": lambda b: ("modify_booking", {"booking_id": b["id"], "check_in": b["check_in"], "check_out": "2026-08-30"}, "at most 30"),
    "a cancellation fee above the total": lambda b: ("cancel_booking", {"booking_id": b["id"], "cancellation_fee": 99999.0}, "more than the booking total"),
    "a refund above what was paid": lambda b: ("issue_refund", {"payment_id": f"PAY-{b['id'][3:]}", "amount": 9999.0, "reason": "cancellation"},
                                               "left to refund"),
    "a negative refund": lambda b: ("issue_refund", {"payment_id": f"PAY-{b['id'][3:]}", "amount": -5.0, "reason": "cancellation"}, "positive"),
    "a charge of a billion dollars": lambda b: ("charge_payment", {"payment_method_id": f"PM-{b['id'][3:]}", "amount": 1e9, "purpose": "extra",
                                                                    "booking_id": b["id"]}, "above the limit"),
    "a charge to someone else's card": lambda b: ("charge_payment", {"payment_method_id": "PM-50001", "amount": 10.0, "purpose": "extra",
                                                                      "booking_id": b["id"]}, "does not belong"),
    "an expired card": lambda b: ("add_payment_method", {"customer_id": b["customer_id"], "brand": "visa", "last4": "4242", "expires": "2025-01"},
                                  "expired"),
    "a card number that is not four digits": lambda b: ("add_payment_method", {"customer_id": b["customer_id"], "brand": "visa", "last4": "42",
                                                                               "expires": "2029-01"}, "last4"),
    "an escalation to another hotel than the booking's": lambda b: ("escalate_to_hotel", {
        "hotel_id": "HTL-101" if b["hotel_id"] != "HTL-101" else "HTL-102", "issue": "missing_reservation", "contact_role": "reservations",
        "priority": "high", "booking_id": b["id"]}, "is not at hotel"),
    "compensation for a stay that has not happened": lambda b: ("issue_compensation", {"booking_id": b["id"], "kind": "travel_credit",
                                                                                       "amount": 20.0, "reason": "noise"}, "completed stays"),
    "points that are not a whole number": lambda b: ("issue_compensation", {"booking_id": "BK-990001", "kind": "points", "amount": 10.5,
                                                                            "reason": "noise"}, "whole positive number"),
    "a group service after the group leaves": lambda b: ("add_group_service", {"group_id": "GRP-3001", "code": "meeting_room",
                                                                               "service_date": "2026-09-01", "quantity": 1}, "outside the group's stay"),
    "an invoice credit above the line": lambda b: ("adjust_invoice", {"invoice_id": "INV-70001", "line_no": 1, "amount": 600.0,
                                                                      "reason": "negotiated_rate"}, "left to credit"),
    "an invoice line that does not exist": lambda b: ("adjust_invoice", {"invoice_id": "INV-70001", "line_no": 9, "amount": 6.0,
                                                                         "reason": "negotiated_rate"}, "no line 9"),
    "a ticketing user with an empty name": lambda b: ("create_ticket_user", {"name": " ", "email": "a.b@example.com"}, "must not be empty"),
}


@pytest.mark.parametrize("refusal", list(BACKEND_REFUSALS))
def test_each_backend_invariant_refuses_an_absurd_write(env, refusal):
    tool, arguments, expected = BACKEND_REFUSALS[refusal](_booking(env))
    _refused(env, tool, arguments, expected)


def test_the_invariants_leave_sane_writes_alone(env):
    b = _booking(env)
    for tool, arguments in [
        ("add_payment_method", {"customer_id": b["customer_id"], "brand": "amex", "last4": "0005", "expires": "2030-02"}),
        ("charge_payment", {"payment_method_id": f"PM-{b['id'][3:]}", "amount": 55.0, "purpose": "extra", "booking_id": b["id"]}),
        ("add_special_request", {"booking_id": b["id"], "code": "quiet_room"}),
        ("issue_compensation", {"booking_id": "BK-990001", "kind": "points", "amount": 2000, "reason": "noise"}),
        ("adjust_invoice", {"invoice_id": "INV-70001", "line_no": 1, "amount": 89.25, "reason": "negotiated_rate"}),
    ]:
        obs, *_ = env.step({"name": tool, "arguments": arguments})
        assert "error" not in obs["messages"][-1]["content"], (tool, obs["messages"][-1]["content"])
    loyalty, _ = call(env, "get_loyalty_account", customer_id="CUS-10001")
    assert loyalty["balance"] == 1395 + 2000


def test_a_second_identical_request_is_refused(env):
    b = _booking(env)
    call(env, "add_special_request", booking_id=b["id"], code="high_floor", detail="any")
    _refused(env, "add_special_request", {"booking_id": b["id"], "code": "high_floor"}, "already has")


def test_moving_a_group_moves_every_room_and_records_one_change_each(env):
    group, _ = call(env, "get_group", group_id="GRP-3001")
    assert group["bookings"] == []  # the seed group has no rooms: add two
    state = env.unwrapped.state
    for k in range(2):
        state.execute("INSERT INTO bookings VALUES (?, 'CUS-10002', 'HTL-106', 'STD', ?, '2026-08-14', '2026-08-17', 2, 'group', 184.50, 553.50,"
                      " 'confirmed', 'GRP-3001', NULL, '2026-02-01 10:00:00', NULL)", [f"BK-77{k}", f"HC-F77{k}"])
    result, _ = call(env, "change_group_dates", group_id="GRP-3001", check_in="2026-08-15", check_out="2026-08-18", change_fee=0)
    assert [r["booking_id"] for r in result["rooms_changed"]] == ["BK-770", "BK-771"]
    after, _ = call(env, "get_group", group_id="GRP-3001")
    assert {(r["check_in"], r["check_out"]) for r in after["bookings"]} == {("2026-08-15", "2026-08-18")}


def test_a_released_booking_takes_no_payment():
    env = tb.make("travel/TR005_005")
    env.reset(seed=0)
    try:
        b = env.unwrapped.task.patch.insert["bookings"][0]
        assert b["status"] == "released"
        _refused(env, "charge_payment", {"payment_method_id": f"PM-{b['id'][3:]}", "amount": float(b["total"]), "purpose": "balance_due",
                                         "booking_id": b["id"]}, "released")
    finally:
        env.close()


def test_a_scheduled_timeout_fails_once_and_changes_nothing():
    env = tb.make("travel/TR006_010")
    env.reset(seed=0)
    try:
        refund = next(c for c in env.unwrapped.task.golden if c.name == "issue_refund")
        b = env.unwrapped.task.patch.insert["bookings"][0]
        call(env, "cancel_booking", booking_id=b["id"], cancellation_fee=0)
        _refused(env, "issue_refund", dict(refund.arguments), "timed out")
        result, _ = call(env, "issue_refund", **refund.arguments)
        assert result["payment_status"] == "refunded"
    finally:
        env.close()
