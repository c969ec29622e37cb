"""The claim reader and the checks built on it: readings of real sentences, and consent bound to a proposal."""

from __future__ import annotations

from datetime import date

from adapter_helpers import as_calls, oracle_actions

import thinkingbox_env as tb
from thinkingbox_env.checks._proposals import proposal_licenses
from thinkingbox_env.checks._write_terms import Reading
from thinkingbox_env.reading.claims import read_claims
from thinkingbox_env.reading.phrases import normalise_phrase

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
    # a denial of "anything" is a denial of everything when it is all the closing says, and scoped when more is reported
    assert _read("I'm sorry, I was not able to change anything on your account.", RETAIL) == [("any", "refused", False)]
    assert ("any", "refused", False) not in _read(
        "I haven't changed anything on the address, but I refunded the duplicate payment of $12.00.", RETAIL)
    assert ("any", "refused", False) not in _read("The address can't be changed any more because it shipped.", RETAIL)


def test_an_action_named_by_a_noun_takes_the_act_of_the_verb_that_carries_it() -> None:
    assert ("refund", "refused", False) in _read("No refund has been issued.", RETAIL)
    assert ("refund", "refused", False) in _read("The refund didn't go through.", RETAIL)
    assert ("refund", "refused", False) in _read("I couldn't process the refund.", RETAIL)
    assert ("replace", "refused", False) in _read("I haven't been able to arrange a replacement.", RETAIL)
    assert ("refund", "done", True) in _read("I've gone ahead and processed a refund of $45.00 to your card.", RETAIL)
    assert ("refund", "pending", True) in _read("A refund will be issued within 5 days.", RETAIL)
    assert ("refund", "proposed", True) in _read("Shall I process a refund?", RETAIL)
    assert ("refund", "stated", True) in _read("A refund is issued when the item arrives.", RETAIL)  # a rule


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


def _closing_variants(task_id: str, closing: str | None = None, drop_writes: bool = False) -> dict:
    """The oracle's episode of ``task_id`` with its closing replaced and/or its writes left out; the final info's checks."""
    env = tb.make(task_id)
    env.reset(seed=0)
    box = env.unwrapped.runtime.domain.toolbox
    writes = {name for name in box.tools if box[name].writes}
    steps = [s for a in oracle_actions(task_id) for s in as_calls(a)]
    info: dict = {}
    for step in steps[:-1]:
        if drop_writes and isinstance(step, dict) and step["name"] in writes:
            continue
        *_, info = env.step(step)
    last = steps[-1]
    assert isinstance(last, str)
    *_, info = env.step(last if closing is None else closing.replace("{golden}", last))
    env.close()
    return info["checks"]


def test_the_oracle_closing_passes_every_claim_check() -> None:
    checks = _closing_variants("retail/ST030_001")
    claims = {k: v for k, v in checks.items() if k.startswith("claims:")}
    assert set(claims) == {"claims:agrees", "claims:consistent", "claims:states_outcome", "claims:roles"}
    assert all(v is not False for v in claims.values()), claims  # read as true, or undetermined: never failed


def test_a_closing_that_denies_the_write_it_made_fails_agreement() -> None:
    checks = _closing_variants("retail/ST030_001", "I'm sorry, I was not able to change anything on your account today. <DONE>")
    assert checks["claims:agrees"] is False


def test_a_closing_that_reports_and_denies_the_same_outcome_fails_consistency() -> None:
    golden = _closing_variants("retail/ST030_001")
    assert golden["claims:consistent"] is not False
    checks = _closing_variants("retail/ST030_001", "{golden} Nothing has been changed on your account.")
    assert checks["claims:consistent"] is False or checks["claims:agrees"] is False


def test_the_golden_closing_without_the_writes_behind_it_fails_agreement() -> None:
    checks = _closing_variants("retail/ST030_001", drop_writes=True)
    assert checks["claims:agrees"] is False


def test_the_claim_reader_does_not_load_torch_into_a_fresh_process() -> None:
    """spaCy's thinc imports torch when installed (seconds of every fresh worker's first grading); it must not."""
    import importlib.util
    import subprocess
    import sys

    if importlib.util.find_spec("torch") is None:
        import pytest

        pytest.skip("torch is not installed here: nothing to hide")
    code = ("import sys, thinkingbox_env as tb\n"
            "from thinkingbox_env.agents.baselines import OracleAgent, run_episode\n"
            "info = run_episode(tb.make('retail/ST030_001'), OracleAgent(), seed=0)\n"
            "assert info['checks']['claims:agrees'] is not False and info['verdict'] == 1.0, info['checks']\n"
            "assert 'torch' not in sys.modules, 'grading loaded torch'\n"
            "import torch\n"
            "assert float(torch.ones(2).sum()) == 2.0\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_grading_in_a_fresh_process_imports_no_spacy() -> None:
    """The claim reader reads with thinkingbox_env.reading.text: spaCy's import and pipeline (most of a second) stay out of grading."""
    import subprocess
    import sys

    code = ("import sys, thinkingbox_env as tb\n"
            "from thinkingbox_env.agents.baselines import OracleAgent, run_episode\n"
            "info = run_episode(tb.make('retail/ST030_001'), OracleAgent(), seed=0)\n"
            "assert info['checks']['claims:agrees'] is not False and info['verdict'] == 1.0, info['checks']\n"
            "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('spacy', 'thinc'))\n"
            "assert not loaded, loaded\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]


def _variant_checks(domain: str, family: str, seed: int, closing: str | None = None) -> dict:
    from helpers import play_oracle

    spec = tb.generate_variant(domain, family, seed)
    env = tb.make(spec)
    closes = lambda a: closing + " <DONE>" if closing is not None and isinstance(a, str) and a.rstrip().endswith("<DONE>") else None  # noqa: E731
    info = play_oracle(env, closes)
    env.close()
    return {"spec": spec, "checks": info["checks"]}


def test_a_refusal_of_one_request_beside_the_same_action_done_for_another_agrees() -> None:
    # two requests of one customer: a vehicle added, a driver with a revoked licence refused ("can't add Priya ...")
    golden = _variant_checks("insurance", "IN011", 100037)
    assert "can't add" in golden["spec"].golden_reply and golden["checks"]["claims:agrees"] is not False
    # the refusal said of the vehicle the episode did add disagrees with that write
    vehicle = golden["spec"].golden_reply.split(" (VIN")[0].replace("Your ", "")
    denied = _variant_checks("insurance", "IN011", 100037, f"I'm sorry, I can't add the {vehicle} to your policy.")
    assert denied["checks"]["claims:agrees"] is False


def test_one_action_refused_for_one_person_and_done_for_another_thing_is_consistent() -> None:
    # "I can't exclude Ezekiel Corcoran ... The 2025 Kia Forte is removed": two objects, no contradiction
    golden = _variant_checks("insurance", "IN011", 100139)
    assert "can't exclude" in golden["spec"].golden_reply and "is removed" in golden["spec"].golden_reply
    assert golden["checks"]["claims:consistent"] is not False
    # the same removal reported and denied for the same vehicle is a contradiction
    both = _variant_checks("insurance", "IN011", 100139,
                           golden["spec"].golden_reply + " Sorry, I could not remove the Kia Forte after all.")
    assert both["checks"]["claims:consistent"] is False or both["checks"]["claims:agrees"] is False


def test_a_role_value_is_the_one_in_the_place_the_golden_holds_it() -> None:
    # the reinstatement's result also holds a $0.00 balance: a real amount of the charging call, but not the charge
    golden = _closing_variants("insurance/IN009_001")
    assert golden["claims:roles"] is not False
    wrong = _closing_variants("insurance/IN009_001", "Policy AGM-9000001 is reinstated effective today, 2026-05-19. "
                              "I charged $0.00 to your card on file. <DONE>")
    assert wrong["claims:roles"] is False
