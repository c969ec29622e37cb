"""Typed dialogue checks and process checks on real episodes of frozen tasks."""

from thinkingbox_env.agents.baselines import OracleAgent, run_episode
from thinkingbox_env.checks.agreement import agreed
from thinkingbox_env.envs.env import ThinkingboxEnv
from thinkingbox_env.tasks.lookup import load_task


def _run(task_id: str, **oracle) -> dict:
    env = ThinkingboxEnv(load_task(task_id), max_actions=200)
    try:
        return run_episode(env, OracleAgent(**oracle), seed=0)
    finally:
        env.close()


def test_golden_passes_with_typed_and_process_checks_named() -> None:
    info = _run("retail/ST001_001")
    assert info["verdict"] == 1.0
    assert "grounded_values" in info["checks"] and "process:consent_before_irreversible" in info["checks"]
    assert info["checks"]["mentions:mentions_refund"] is True


def test_reformatted_closing_and_trailing_pleasantry_pass() -> None:
    info = _run("retail/ST001_001", closing="Done: ORD-100001 is canceled, and a refund of 568 dollars is on its way.",
                closing_turns=["You're welcome!"])
    assert info["verdict"] == 1.0, info["check_details"]


def test_wrong_amount_fails_grounded_values_naming_the_value() -> None:
    info = _run("retail/ST001_001", closing="Order ORD-100001 is cancelled and $573.19 is being refunded.")
    assert info["checks"]["grounded_values"] is False
    detail = next(d["detail"] for d in info["check_details"] if d["name"] == "grounded_values")
    assert "$573.19" in detail


def _grounding_detail(info: dict) -> str:
    return next(d["detail"] for d in info["check_details"] if d["name"] == "grounded_values")


def test_an_amount_claimed_as_done_must_be_a_written_amount_not_a_count_or_a_policy_figure() -> None:
    # "I added" (simple past) is a claim too; $60 is derivable by the domain arithmetic, but no write made it
    golden = load_task("retail/ST003_002").golden_reply
    info = _run("retail/ST003_002", closing=golden.replace("$50.00", "$60.00"))
    assert info["checks"]["grounded_values"] is False
    assert "$60.00" in _grounding_detail(info)
    # the inventory count 25 changed in this episode (a replacement router), but a count is not a credit of $25.00
    golden = load_task("retail/ST006_006").golden_reply
    info = _run("retail/ST006_006", closing=golden + " I've also added a $25.00 goodwill credit to your account.")
    assert info["checks"]["grounded_values"] is False
    assert "$25.00" in _grounding_detail(info)
    # the amounts the episode did write stay grounded when stated as done
    assert _run("retail/ST003_002")["checks"]["grounded_values"] is True
    assert _run("retail/ST006_006")["checks"]["grounded_values"] is True


def test_opposite_outcome_fails_mentions_by_polarity() -> None:
    info = _run("retail/ST001_001", closing="I wasn't able to cancel order ORD-100001 and no refund was issued.")
    assert info["checks"]["mentions:mentions_refund"] is False


def test_consent_after_the_write_fails_the_process_check() -> None:
    info = _run("retail/ST001_001", consent="after")
    assert info["checks"]["process:consent_before_irreversible"] is False
    assert info["verdict"] == 0.0


def test_agreement_reader() -> None:
    assert agreed("Yes, please go ahead.") is True
    assert agreed("No, don't do that.") is False
    assert agreed("What is the fee?") is None


def test_verification_counts_only_for_the_holder_of_the_policy_the_write_touches() -> None:
    """IN001_001 grants an extension on CUS-1000001's billing account; verifying another customer does not allow it."""
    from thinkingbox_env.contracts.spec import ToolCall

    spec = load_task("insurance/IN001_001")
    other = [ToolCall(name="verify_identity", arguments={"customer_id": "CUS-900001", "date_of_birth": "1971-04-09"})
             if c.name == "verify_identity" else c for c in spec.golden]
    env = ThinkingboxEnv(spec, max_actions=200)
    try:
        info = run_episode(env, OracleAgent(other), seed=0)
    finally:
        env.close()
    verified = [e for e in info["trace"] if e.get("type") == "tool_call" and e["name"] == "verify_identity"]
    assert verified and verified[0]["ok"] and verified[0]["result"]["verification_level"] in ("partial", "full")
    assert info["checks"]["process:identity_verified_before_policy_write"] is False
    detail = next(d["detail"] for d in info["check_details"] if d["name"] == "process:identity_verified_before_policy_write")
    assert "held by CUS-1000001" in detail and "grant_extension" in detail
    assert _run("insurance/IN001_001")["checks"]["process:identity_verified_before_policy_write"] is True
