"""Insurance tools: what the backend enforces, what it leaves to the agent, and what the agent is told."""

from __future__ import annotations

import json

import thinkingbox_env as tb
from thinkingbox_env.domain import load_domain
from thinkingbox_env.kb import search_documents

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
    assert result["results"] and result["results"] == search_documents("insurance", "grace period reinstatement fee", 3)
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
