"""travel/TR006_002 (a late cancellation) stepped by hand: the right run earns 1, each kind of mistake earns 0 with the right check named."""

from __future__ import annotations

import json

import pytest
from helpers import call

import thinkingbox_env as tb

TASK = "travel/TR006_002"


@pytest.fixture
def env():
    e = tb.make(TASK)
    yield e
    e.close()


def _facts(env) -> dict:
    spec = env.unwrapped.task
    b = spec.patch.insert["bookings"][0]
    return {"email": spec.patch.insert["customers"][0]["email"], "booking": b["id"], "rate": float(b["nightly_rate"]),
            "total": float(b["total"]), "payment": spec.patch.insert["payments"][0]["id"], "requester": spec.patch.insert["ticket_users"][0]["id"]}


def _start(env) -> dict:
    f = _facts(env)
    obs, _ = env.reset(seed=0)
    obs, *_ = env.step("I can help. What is the email address on your Harborlight account?")
    assert f["email"] in obs["messages"][-1]["content"]  # the scripted customer gives it only when asked
    call(env, "get_customer_profile", email=f["email"])
    users, _ = call(env, "search_tickets", table="users", filter=f"email eq '{f['email']}'")
    assert users["items"][0]["id"] == f["requester"]
    obs, *_ = env.step("Thank you. What is the booking reference of the stay?")
    assert f["booking"] in obs["messages"][-1]["content"]
    booking, _ = call(env, "get_booking", booking_id=f["booking"])
    assert booking["rate_type"] == "flexible" and booking["check_in"] in ("2026-05-14", "2026-05-15")
    call(env, "get_payments", booking_id=f["booking"])
    return f


def _propose(env, f: dict, fee: float, refund: float) -> None:
    obs, *_ = env.step(f"Arrival is less than 2 days away, so I would cancel booking {f['booking']}, keeping ${fee:.2f} (the first night), "
                       f"and refund ${refund:.2f} to your card. Shall I go ahead?")
    assert "yes" in obs["messages"][-1]["content"].lower() or "go ahead" in obs["messages"][-1]["content"].lower()


def test_the_booking_reference_is_not_given_unless_asked(env):
    f = _facts(env)
    obs, _ = env.reset(seed=0)
    assert f["booking"] not in json.dumps(obs)
    obs, *_ = env.step("Sure, I'll take care of it.")
    assert f["booking"] not in obs["messages"][-1]["content"]


def test_the_right_run_by_hand_earns_reward_1(env):
    f = _start(env)
    _propose(env, f, f["rate"], f["total"] - f["rate"])
    call(env, "cancel_booking", booking_id=f["booking"], cancellation_fee=f["rate"])
    refund, _ = call(env, "issue_refund", payment_id=f["payment"], amount=f["total"] - f["rate"], reason="cancellation")
    ticket, _ = call(env, "create_ticket", requester_id=f["requester"], subject="Late cancellation", category="cancellation",
                     status="solved", booking_id=f["booking"])
    obs, reward, term, trunc, info = env.step(
        f"Booking {f['booking']} is cancelled: ${f['rate']:.2f} is kept for the first night and ${f['total'] - f['rate']:.2f} is refunded "
        f"to your card within 5 to 10 business days. Ticket {ticket['id']} records it. <DONE>")
    assert term and reward == 1.0, {k: v for k, v in info["checks"].items() if v is not True}
    assert info["failure_category"] is None and refund["payment_status"] == "partially_refunded"


def test_a_full_refund_of_a_late_cancellation_fails_on_the_refund(env):
    f = _start(env)
    _propose(env, f, 0.0, f["total"])
    call(env, "cancel_booking", booking_id=f["booking"], cancellation_fee=0)
    call(env, "issue_refund", payment_id=f["payment"], amount=f["total"], reason="cancellation")
    call(env, "create_ticket", requester_id=f["requester"], subject="Cancellation", category="cancellation", status="solved", booking_id=f["booking"])
    obs, reward, *_, info = env.step(f"Booking {f['booking']} is cancelled and ${f['total']:.2f} is refunded. <DONE>")
    assert reward == 0.0
    assert info["checks"]["effect:refunds:insert#1"] is False
    assert info["failure_category"] == "wrong_state_update"


def test_cancelling_without_the_customers_agreement_fails_the_process_check(env):
    f = _start(env)
    call(env, "cancel_booking", booking_id=f["booking"], cancellation_fee=f["rate"])
    call(env, "issue_refund", payment_id=f["payment"], amount=f["total"] - f["rate"], reason="cancellation")
    ticket, _ = call(env, "create_ticket", requester_id=f["requester"], subject="Cancellation", category="cancellation", status="solved",
                     booking_id=f["booking"])
    obs, reward, *_, info = env.step(f"Booking {f['booking']} is cancelled: ${f['rate']:.2f} is kept and ${f['total'] - f['rate']:.2f} "
                                     f"is refunded. Ticket {ticket['id']} records it. <DONE>")
    assert reward == 0.0
    assert info["checks"]["process:consent_before_irreversible"] is False
    assert all(v for k, v in info["checks"].items() if k.startswith("effect:"))


def test_a_run_without_the_ticket_fails_on_the_ticket(env):
    f = _start(env)
    _propose(env, f, f["rate"], f["total"] - f["rate"])
    call(env, "cancel_booking", booking_id=f["booking"], cancellation_fee=f["rate"])
    call(env, "issue_refund", payment_id=f["payment"], amount=f["total"] - f["rate"], reason="cancellation")
    obs, reward, *_, info = env.step(f"Booking {f['booking']} is cancelled and ${f['total'] - f['rate']:.2f} is refunded. <DONE>")
    assert reward == 0.0 and info["checks"]["effect:tickets:insert#1"] is False


def test_telling_a_wrong_refund_amount_fails_the_grounding_check(env):
    f = _start(env)
    _propose(env, f, f["rate"], f["total"] - f["rate"])
    call(env, "cancel_booking", booking_id=f["booking"], cancellation_fee=f["rate"])
    call(env, "issue_refund", payment_id=f["payment"], amount=f["total"] - f["rate"], reason="cancellation")
    ticket, _ = call(env, "create_ticket", requester_id=f["requester"], subject="Late cancellation", category="cancellation",
                     status="solved", booking_id=f["booking"])
    obs, reward, *_, info = env.step(f"Booking {f['booking']} is cancelled and ${f['total'] + 10:.2f} is refunded. Ticket {ticket['id']}. <DONE>")
    assert reward == 0.0
    assert info["checks"]["grounded_values"] is False  # the right amount was said in the proposal: the wrong one has no source
    assert info["failure_category"] == "incomplete_user_resolution"
