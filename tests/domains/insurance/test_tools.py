"""Insurance tools: what the backend enforces, what it leaves to the agent, and what the agent is told."""

from __future__ import annotations

import json

import pytest

import thinkingbox_env as tb
from thinkingbox_env.tasks.domain import load_domain
from thinkingbox_env.toolkit.kb import search_documents

DOMAIN = load_domain("insurance")


def call(env, tool: str, **arguments):
    """Step one tool call by hand and return its parsed result."""
    obs, *_ = env.step({"name": tool, "arguments": arguments})
    return json.loads(obs["messages"][-1]["content"])


def test_the_backend_does_not_enforce_policy():
    """The tools record well-formed requests; refusing is the agent's job."""
    env = tb.make("insurance/IN009_003")  # lapsed too long: reinstatement must be refused
    spec = env.task
    assert "lapsed_too_long" in spec.tags
    env.reset(seed=0)
    policy = spec.patch.insert["policies"][0]["id"]
    result = call(env, "reinstate_policy", policy_id=policy, effective_date="2026-05-19")
    assert result["status"] == "active"
    obs, reward, *_ , info = env.step("Reinstated. <DONE>")
    assert reward == 0.0 and info["checks"]["no_collateral"] is False
    env.close()


def test_policy_search_reads_this_domains_knowledge_base():
    env = tb.make("insurance/IN001_001")
    env.reset(seed=0)
    result = call(env, "search_policy", query="grace period reinstatement fee")
    env.close()
    assert result["results"] and result["results"] == search_documents(load_domain("insurance").path / "kb", "grace period reinstatement fee", 3)
    assert set(r["source"] for r in result["results"]) <= set(DOMAIN.kb_documents())


def test_verify_identity_locks_after_three_failed_attempts_and_brute_force_stops():
    """Guessing the SSN's last four over the tool stops at the limit; the lock is in state for checks."""
    env = tb.make("insurance/IN003_001")
    env.reset(seed=0)
    state = env.unwrapped.state
    cust = state.query_one("SELECT id, date_of_birth, ssn_last4 FROM customers WHERE ssn_last4 IS NOT NULL ORDER BY id LIMIT 1")
    dob = cust["date_of_birth"].isoformat()
    answered, refused = [], []
    for n in range(10_000):
        guess = f"{n:04d}"
        if guess == cust["ssn_last4"]:
            continue  # the attacker reaches the right value only after every wrong one before it
        obs, *_ = env.step({"name": "verify_identity", "arguments": {"customer_id": cust["id"], "date_of_birth": dob, "ssn_last4": guess}})
        content = obs["messages"][-1]["content"]
        (refused if "locked" in content and "error" in content else answered).append(guess)
        if len(refused) == 2:
            break
    assert len(answered) == 3 and len(refused) == 2
    before = state.query_one("SELECT level, failed_attempts FROM identity_verifications WHERE customer_id = ?", [cust["id"]])
    assert before == {"level": "partial", "failed_attempts": 3}
    result = call(env, "verify_identity", customer_id=cust["id"], date_of_birth=dob, ssn_last4=cust["ssn_last4"])
    assert "locked" in result["error"] and "3 failed attempts" in result["error"]
    status = call(env, "get_verification_status", customer_id=cust["id"])
    assert status["verification_level"] == "partial" and status["locked"] is True and status["failed_attempts"] == 3
    env.close()


def test_a_mistyped_factor_counts_but_does_not_lock_and_the_right_one_still_verifies():
    env = tb.make("insurance/IN003_001")
    env.reset(seed=0)
    cust = env.unwrapped.state.query_one("SELECT id, date_of_birth, ssn_last4 FROM customers WHERE ssn_last4 IS NOT NULL ORDER BY id LIMIT 1")
    dob = cust["date_of_birth"].isoformat()
    wrong = call(env, "verify_identity", customer_id=cust["id"], date_of_birth="1900-01-01")
    assert wrong["verification_level"] == "none" and wrong["failed_attempts"] == 1 and wrong["attempts_left"] == 2
    right = call(env, "verify_identity", customer_id=cust["id"], date_of_birth=dob, ssn_last4=cust["ssn_last4"])
    assert right["verification_level"] == "full" and "failed_attempts" not in right
    env.close()


def _first(env, sql):
    return env.unwrapped.state.query_one(sql)


def _refused(env, tool: str, arguments: dict, expected: str) -> None:
    """The call is refused with a message naming the problem, and the state does not move."""
    from helpers import state_hash

    before = state_hash(env)
    obs, *_ = env.step({"name": tool, "arguments": arguments})
    content = obs["messages"][-1]["content"]
    assert "error" in content and expected in content, content
    assert state_hash(env) == before


def _bad_vin(good: str) -> str:
    wrong = "0" if good[8] != "0" else "1"
    return good[:8] + wrong + good[9:]


INVARIANTS = {
    "cancellation backdated to 0001-01-01": lambda p: ("schedule_cancellation", {"policy_id": p["policy"], "effective_date": "0001-01-01", "reason": "other"}, "outside the range"),
    "cancellation before the policy took effect": lambda p: ("schedule_cancellation", {"policy_id": p["policy"], "effective_date": p["before_policy"], "reason": "other"}, "took effect"),
    "a due date in year 9999": lambda p: ("grant_extension", {"billing_account_id": p["billing"], "new_due_date": "9999-12-31"}, "outside the range"),
    "a driver born in 2999": lambda p: ("add_driver", dict(p["driver"], date_of_birth="2999-01-01"), "outside the range"),
    "a driver born in the future": lambda p: ("add_driver", dict(p["driver"], date_of_birth="2030-01-01"), "after today"),
    "a driver with an empty name": lambda p: ("add_driver", dict(p["driver"], full_name="   "), "full_name must not be empty"),
    "a driver's name with control characters": lambda p: ("add_driver", dict(p["driver"], full_name="Ann\x07Lee"), "control characters"),
    "a VIN that validate_vin rejects": lambda p: ("add_vehicle", dict(p["vehicle"], vin=_bad_vin(p["vehicle"]["vin"])), "does not pass validate_vin"),
    "an 8-digit last four of the SSN": lambda p: ("verify_identity", {"customer_id": p["customer"], "date_of_birth": p["dob"], "ssn_last4": "12345678"}, "exactly 4 digits"),
    "a claim with an empty description": lambda p: ("file_claim", dict(p["claim"], description=""), "description must not be empty"),
    "a ticketing user with an empty name": lambda p: ("create_ticket_user", {"name": "", "email": "ann.lee@example.com"}, "name must not be empty"),
    "a ticketing user with a malformed e-mail": lambda p: ("create_ticket_user", {"name": "Ann Lee", "email": "ann.lee"}, "not an e-mail address"),
}


def _insurance_fixture(env) -> dict:
    from datetime import timedelta

    pol = _first(env, "SELECT id, effective_date FROM policies WHERE status = 'active' ORDER BY id LIMIT 1")
    veh = _first(env, f"SELECT id FROM vehicles WHERE policy_id = '{pol['id']}' AND status = 'active' ORDER BY id LIMIT 1")
    cust = _first(env, "SELECT id, date_of_birth FROM customers ORDER BY id LIMIT 1")
    good_vin = _first(env, "SELECT vin FROM vehicles ORDER BY id LIMIT 1")["vin"]
    return {
        "policy": pol["id"],
        "before_policy": (pol["effective_date"] - timedelta(days=1)).isoformat(),
        "billing": _first(env, "SELECT id FROM billing_accounts ORDER BY id LIMIT 1")["id"],
        "customer": cust["id"], "dob": cust["date_of_birth"].isoformat(),
        "driver": {"policy_id": pol["id"], "full_name": "Ann Lee", "date_of_birth": "1990-04-02", "license_number": "Z1234567",
                   "license_state": "OR", "relationship": "spouse", "effective_date": "2026-05-20"},
        "vehicle": {"policy_id": pol["id"], "vin": good_vin, "model": "CR-V", "coverage": "full", "effective_date": "2026-05-20"},
        "claim": {"policy_id": pol["id"], "vehicle_id": veh["id"], "date_of_loss": "2026-05-18", "loss_type": "glass",
                  "severity": "minor", "injuries": False, "drivable": True, "description": "x"},
    }


@pytest.mark.parametrize("invariant", list(INVARIANTS))
def test_each_backend_invariant_refuses_an_absurd_write(invariant):
    env = tb.make("insurance/IN003_001")
    env.reset(seed=0)
    tool, arguments, expected = INVARIANTS[invariant](_insurance_fixture(env))
    _refused(env, tool, arguments, expected)
    env.close()


def test_the_invariants_leave_sane_writes_alone():
    """The same calls with plausible values go through: the invariants bound data, not business."""
    env = tb.make("insurance/IN003_001")
    env.reset(seed=0)
    p = _insurance_fixture(env)
    assert call(env, "validate_vin", vin=p["vehicle"]["vin"])["valid"] is True
    assert call(env, "validate_vin", vin=_bad_vin(p["vehicle"]["vin"]))["valid"] is False
    assert "error" not in call(env, "add_driver", **p["driver"])
    assert "error" not in call(env, "file_claim", **dict(p["claim"], description="Chipped windscreen"))
    result = call(env, "schedule_cancellation", policy_id=p["policy"], effective_date="2026-06-01", reason="other")
    assert result["status"] == "scheduled"
    env.close()
