"""The claim reader and the checks built on it: readings of real sentences, and consent bound to a proposal."""

from __future__ import annotations

from datetime import date

from thinkingbox_env.checks.process import Reading, proposal_licenses
from thinkingbox_env.claims import read_claims
from thinkingbox_env.verdict_rules import normalise_phrase

RETAIL, INSURANCE, CONSULTING = "domains/retail", "domains/insurance", "domains/consulting"


def _read(text: str, domain: str) -> list[tuple[str, str, bool]]:
    return [(c.action, c.outcome, c.affirmed) for c in read_claims(text, domain)]


def test_outcomes_polarity_and_modality_are_read_per_clause() -> None:
    assert _read("Your order has been called off and I reimbursed $45.00.", RETAIL) == [
        ("cancel", "done", True), ("refund", "done", True)]
    assert ("cancel", "refused", False) in _read("I'm afraid the order could not be cancelled.", RETAIL)
    assert _read("Shall I cancel order ORD-1 for you?", RETAIL) == [("cancel", "proposed", True)]
    assert ("any", "refused", False) in _read("Nothing has gone through on your account.", RETAIL)
    assert _read("I've booked you onto Advanced forecasting.", CONSULTING) == [("enrol", "done", True)]


def test_values_carry_the_role_of_the_word_next_to_them() -> None:
    claims = read_claims("I refunded $12.00 and the $5.00 fee was charged.", RETAIL)
    roles = {rv.value.text: rv.role for c in claims for rv in c.values}
    assert roles == {"$12.00": "refund.amount", "$5.00": "fee.amount"}


def test_lemmas_not_a_stemmer() -> None:
    assert normalise_phrase("the notes were cancelled")[:2] == ["the", "note"]


def test_consent_needs_the_action_the_object_and_an_amount_not_below_the_write() -> None:
    reading = Reading(RETAIL, date(2026, 3, 2), ("ORD-\\d{6,7}", "PAY-\\d{6,7}"))
    write = {"name": "issue_refund", "arguments": {"payment_id": "PAY-100001", "amount": 40.0}}
    assert proposal_licenses("I can pay back $40.00 to payment PAY-100001. Is that OK?", write, reading,
                             "refund ${amount:.2f} to payment {payment_id}")[0]
    vague, why = proposal_licenses("Is it OK if I cancel and refund whatever is needed?", write, reading,
                                   "refund ${amount:.2f} to payment {payment_id}")
    assert not vague and "40.00" in why
    lower, _ = proposal_licenses("Shall I refund $20.00 to payment PAY-100001?", write, reading,
                                 "refund ${amount:.2f} to payment {payment_id}")
    assert not lower
    removal = {"name": "remove_vehicle", "arguments": {"vehicle_id": "VEH-7000001"}}
    ins = Reading(INSURANCE, date(2026, 5, 19), ())
    assert proposal_licenses("Shall I take the 2014 Ford Escape off the policy?", removal, ins)[0]
