"""Which writes need the customer's agreement comes from each domain's policy sentences, and verdicts.yaml says the same.

A consent check that demands agreement the written policy never asks for fails a policy-following
agent (retail refunds and installation cancellations, insurance changes made exactly as asked); one
that misses a write the policy guards rewards an agent that skips the question. The policy reader
(:mod:`thinkingbox_env.checks.policy_rules`) finds the sentences and the writes they guard; these tests hold
verdicts.yaml to it, and check that a disagreement is reported with the tool and the sentence.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from thinkingbox_env.checks.policy_rules import conformance_problems, normalise, policy_guarded_writes
from thinkingbox_env.checks.verdict_rules import ProcessRule, load_verdict_rules
from thinkingbox_env.tasks.domain import domain_dirs, load_domain

DOMAINS = ("retail", "travel", "insurance", "neobank", "consulting")
TASK_SET_3_RULES = Path(__file__).resolve().parents[1] / "data" / "task_set_3_rules"

# what each policy asks, read by hand from its sentences: the reader must find exactly this
EXPECTED = {
    "retail": {"cancel_order": "always"},
    "travel": {t: "always" for t in ("modify_booking", "cancel_booking", "charge_payment", "issue_refund",
                                     "change_group_dates", "add_group_service", "issue_compensation",
                                     "add_special_request")},
    "insurance": {t: "not_as_asked" for t in (
        "add_driver", "add_vehicle", "file_claim", "grant_extension", "issue_document", "record_payment",
        "reinstate_policy", "remove_driver", "remove_vehicle", "reset_billing_status", "schedule_cancellation",
        "set_installment_plan", "update_driver_status", "update_vehicle_coverage", "withdraw_cancellation")},
    "neobank": {"reset_mfa": "always"},
    "consulting": {"order_hardware": "always", "create_travel_request": "always", "enrol_course": "not_as_asked"},
}


def _path(domain: str) -> str:
    return str(domain_dirs()[domain])


def _tools(domain: str):
    return load_domain(domain).toolbox


@pytest.mark.parametrize("domain", DOMAINS)
def test_the_policy_reader_finds_the_writes_each_policy_asks_agreement_for(domain: str) -> None:
    found = {tool: cond for tool, (cond, _) in policy_guarded_writes(_path(domain), _tools(domain)).items()}
    assert found == EXPECTED[domain]


@pytest.mark.parametrize("domain", DOMAINS)
def test_verdicts_yaml_guards_exactly_what_the_policy_asks(domain: str) -> None:
    assert conformance_problems(_path(domain), _tools(domain)) == []


@pytest.mark.parametrize("domain", DOMAINS)
def test_every_guarded_write_quotes_the_policy_sentence_behind_it(domain: str) -> None:
    policy = normalise((domain_dirs()[domain] / "policy.md").read_text(encoding="utf-8"))
    for rule in load_verdict_rules(_path(domain)).process:
        if rule.kind != "consent_before":
            continue
        assert set(rule.writes) <= set(rule.policy)
        for tool, sentence in rule.policy.items():
            assert normalise(sentence) in policy, (tool, sentence)


def test_writes_the_policy_never_asks_agreement_for_are_not_guarded() -> None:
    """The over-demanding guards a review found: refunds and installation cancellations, an access revocation."""
    guarded = {d: {w for r in load_verdict_rules(_path(d)).process if r.kind == "consent_before" for w in r.writes}
               for d in DOMAINS}
    assert not guarded["retail"] & {"issue_refund", "refund_order_amount", "refund_membership_fee", "cancel_installation"}
    assert "revoke_access" not in guarded["neobank"]
    insurance = next(r for r in load_verdict_rules(_path("insurance")).process if r.kind == "consent_before")
    assert {insurance.condition(t) for t in insurance.writes} == {"not_as_asked"}


def _consent_rule(domain: str) -> ProcessRule:
    return next(r for r in load_verdict_rules(_path(domain)).process if r.kind == "consent_before")


def test_a_guard_the_policy_does_not_ask_for_is_reported_with_the_tool() -> None:
    rule = _consent_rule("retail")
    over = rule.model_copy(update={"writes": {**rule.writes, "issue_refund": "refund ${amount:.2f}"}})
    problems = conformance_problems(_path("retail"), _tools("retail"), rules=[over])
    assert any("issue_refund" in p and "no sentence of the policy" in p for p in problems), problems


def test_a_policy_sentence_no_rule_guards_is_reported_with_the_sentence() -> None:
    rule = _consent_rule("retail")
    policy = (domain_dirs()["retail"] / "policy.md").read_text(encoding="utf-8")
    stricter = policy.replace("## Installation\n", "## Installation\n\nConfirm with the customer before cancelling an "
                                                   "installation.\n", 1)
    problems = conformance_problems(_path("retail"), _tools("retail"), rules=[rule], policy=stricter)
    assert any("cancel_installation" in p and "Confirm with the customer before cancelling an installation." in p
               for p in problems), problems


def test_a_sentence_removed_from_the_policy_leaves_its_guard_unexplained() -> None:
    rule = _consent_rule("neobank")
    policy = (domain_dirs()["neobank"] / "policy.md").read_text(encoding="utf-8")
    looser = policy.replace(" Before resetting, tell them that the old factor stops working at once and ask them to confirm.", "")
    assert looser != policy
    problems = conformance_problems(_path("neobank"), _tools("neobank"), rules=[rule], policy=looser)
    assert any("reset_mfa" in p for p in problems), problems


def test_guarding_always_what_the_policy_asks_only_when_not_as_asked_is_reported() -> None:
    rule = _consent_rule("insurance")
    always = rule.model_copy(update={"when": {t: c for t, c in rule.when.items() if t != "schedule_cancellation"}})
    problems = conformance_problems(_path("insurance"), _tools("insurance"), rules=[always])
    assert any("schedule_cancellation" in p and "guards schedule_cancellation always" in p for p in problems), problems


def test_a_quoted_sentence_that_is_not_the_policys_is_reported() -> None:
    rule = _consent_rule("retail")
    misquoted = rule.model_copy(update={"policy": {"cancel_order": "Always confirm before cancelling anything."}})
    problems = conformance_problems(_path("retail"), _tools("retail"), rules=[misquoted])
    assert any("policy.cancel_order quotes" in p for p in problems), problems


def test_a_rule_that_declares_a_condition_for_a_write_it_does_not_guard_does_not_load() -> None:
    with pytest.raises(ValueError, match="when.issue_refund"):
        ProcessRule(name="r", kind="consent_before", writes={"cancel_order": "cancel {order_id}"},
                    when={"issue_refund": "not_as_asked"})
    with pytest.raises(ValueError, match="not one of"):
        ProcessRule(name="r", kind="consent_before", writes={"cancel_order": "cancel {order_id}"},
                    when={"cancel_order": "sometimes"})


# What task set 3's rules guarded that its own policy never asks agreement for (or asks only for a change not as asked).
OVER_DEMANDING_IN_TASK_SET_3 = {
    "retail": {"issue_refund", "refund_order_amount", "refund_membership_fee", "cancel_installation"},
    "insurance": {"record_payment", "remove_driver", "remove_vehicle", "schedule_cancellation"},
    "neobank": {"revoke_access"},
}


@pytest.mark.parametrize("domain", DOMAINS)
def test_the_rules_task_set_3_was_graded_with_disagree_with_its_policy(domain: str) -> None:
    """The same reader over task set 3's policy and verdicts.yaml: every domain's guards disagree with its sentences
    (a guard quoting none, a write guarded that the policy never guards, a guarded write left unguarded)."""
    problems = conformance_problems(str(TASK_SET_3_RULES / domain), _tools(domain))
    assert problems
    over = {tool for tool in OVER_DEMANDING_IN_TASK_SET_3.get(domain, set())
            if any(f"guards {tool}" in p and ("no sentence of the policy" in p or "asks only for a change" in p) for p in problems)}
    assert over == OVER_DEMANDING_IN_TASK_SET_3.get(domain, set())
