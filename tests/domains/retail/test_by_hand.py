"""retail/ST030_001 stepped by hand: the right run earns 1, each kind of mistake earns 0 with the right check named."""

from __future__ import annotations

import json

from helpers import call

EMAIL = "anders.achterberg98@example.org"
CUSTOMER = "CUS-3000001"


def _start(env):
    obs, _ = env.reset(seed=0)
    obs, r, term, trunc, info = env.step("I can help. What is the email address on your Brightwell account?")
    assert EMAIL in obs["messages"][-1]["content"]  # the scripted user releases the email only when asked
    profile, _ = call(env, "get_customer_profile", email=EMAIL)
    assert profile["id"] == CUSTOMER and profile["tier"] == "standard"
    users, _ = call(env, "search_tickets", table="users", filter=f"email eq '{EMAIL}'")
    requester = users["items"][0]["id"]
    membership, _ = call(env, "get_membership", customer_id=CUSTOMER)
    assert membership["active"] is None
    tickets, _ = call(env, "search_tickets", table="tickets", filter=f"requester_id eq {requester}")
    assert tickets["count"] == 0
    ticket, _ = call(env, "create_ticket", requester_id=requester, subject="Join Plus", category="membership")
    return requester, ticket["id"]


def test_email_is_not_given_unless_asked(st030):
    obs, _ = st030.reset(seed=0)
    assert EMAIL not in json.dumps(obs)
    obs, *_ = st030.step("Sure, I will take care of it.")
    assert EMAIL not in obs["messages"][-1]["content"]


def test_correct_run_by_hand_earns_reward_1(st030):
    requester, ticket_id = _start(st030)
    result, _ = call(st030, "update_membership", customer_id=CUSTOMER, action="upgrade")
    assert result["tier"] == "plus"
    call(st030, "update_ticket", ticket_id=ticket_id, status="solved")
    obs, reward, term, trunc, info = st030.step("Done: you are now a Brightwell Plus member until 2027-03-02. <DONE>")
    assert term and not trunc
    assert reward == 1.0
    assert all(info["checks"].values())
    assert info["failure_category"] is None
    assert info["finish_reason"] == "done_marker"
    assert info["diff"]["customers"]["updated"][0]["changes"] == {"tier": ["standard", "plus"]}


def test_wrong_entity_update_fails(st030):
    requester, ticket_id = _start(st030)
    call(st030, "update_membership", customer_id="CUS-10002", action="upgrade")  # someone else's account
    call(st030, "update_ticket", ticket_id=ticket_id, status="solved")
    obs, reward, term, trunc, info = st030.step("You are now a Plus member. <DONE>")
    assert reward == 0.0
    assert info["checks"][f"effect:customers[{CUSTOMER}]:update"] is False
    assert info["checks"]["effect:memberships:insert#1"] is False
    assert info["checks"]["no_collateral"] is False
    assert "CUS-10002" in json.dumps(info["check_details"])
    assert info["failure_category"] == "wrong_state_update"


def test_missing_ticket_status_change_fails(st030):
    requester, ticket_id = _start(st030)
    call(st030, "update_membership", customer_id=CUSTOMER, action="upgrade")
    obs, reward, term, trunc, info = st030.step("You are now a Brightwell Plus member. <DONE>")
    assert reward == 0.0
    assert info["checks"]["effect:tickets:insert#1"] is False
    assert info["checks"][f"effect:customers[{CUSTOMER}]:update"] is True
    detail = next(d["detail"] for d in info["check_details"] if d["name"] == "effect:tickets:insert#1")
    assert '"status": {"expected": "solved", "actual": "open"}' in detail
    # the ticket that was created is not the expected one, so it is also an unexpected row
    assert info["checks"]["no_collateral"] is False
    assert info["failure_category"] == "wrong_state_update"


def test_extra_refund_fails(st030):
    requester, ticket_id = _start(st030)
    call(st030, "update_membership", customer_id=CUSTOMER, action="upgrade")
    call(st030, "update_ticket", ticket_id=ticket_id, status="solved")
    refund, _ = call(st030, "issue_refund", payment_id="PAY-30001", amount=10.0, reason="goodwill")
    assert "refund_id" in refund
    obs, reward, term, trunc, info = st030.step("You are now a Brightwell Plus member. <DONE>")
    assert reward == 0.0
    assert info["checks"]["no_collateral"] is False
    effect_checks = {k: v for k, v in info["checks"].items() if k.startswith("effect:")}
    assert all(effect_checks.values())
    assert "refunds" in info["diff"] and "payments" in info["diff"]
    assert info["failure_category"] == "wrong_state_update"


def test_lookup_only_is_no_state_changing_action(st030):
    st030.reset(seed=0)
    call(st030, "get_customer_profile", email=EMAIL)
    obs, reward, term, trunc, info = st030.step("Your account looks fine. <DONE>")
    assert reward == 0.0
    assert info["failure_category"] == "no_state_changing_action"


def test_unrecovered_tool_error_is_tool_usage(st030):
    requester, ticket_id = _start(st030)
    err, _ = call(st030, "update_membership", customer_id="CUS-NOPE", action="upgrade")
    assert "error" in err
    obs, reward, term, trunc, info = st030.step("Something went wrong, sorry. <DONE>")
    assert reward == 0.0
    assert info["failure_category"] == "tool_usage"


def test_run_cut_off_before_a_final_answer_is_incomplete_resolution():
    import thinkingbox_env as tb

    env = tb.make("retail/ST030_001", max_actions=9)
    requester, ticket_id = _start(env)
    call(env, "update_membership", customer_id=CUSTOMER, action="upgrade")
    call(env, "update_ticket", ticket_id=ticket_id, status="solved")
    obs, reward, term, trunc, info = env.step("Is there anything else?")
    assert trunc and info["finish_reason"] == "action_limit"
    assert reward == 0.0
    assert info["checks"]["mentions:confirms_upgrade"] is False
    assert info["checks"]["no_collateral"] is True
    assert info["failure_category"] == "incomplete_user_resolution"
    env.close()
