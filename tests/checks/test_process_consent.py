"""Consent bound to its record and its values, on real episodes of frozen tasks, failing only on evidence.

A proposal licenses a guarded write when it names the write's action, the record the write touches
(its id or identifying attributes) and the values the write uses. Agreement to a proposal that names
another of the customer's records (another booking, another order, another vehicle) with otherwise
right dates and amounts is evidence that the customer agreed to something else, and fails; so does an
amount or date that is not the write's, and a total quoted instead of the amount charged. Agreement to
words the reader cannot read for the write is no evidence either way: the check is undetermined.
"""

from __future__ import annotations

from functools import cache

from thinkingbox_env.checks._write_terms import Reading
from thinkingbox_env.checks.process import process_results, runtime_rows, writes_needing_consent
from thinkingbox_env.checks.verdict_rules import load_verdict_rules
from thinkingbox_env.eval.validate import _run
from thinkingbox_env.tasks.lookup import list_tasks, load_task
from thinkingbox_env.tasks.runtime import runtime_for

DOMAINS = ("retail", "travel", "insurance", "neobank", "consulting")


@cache
def _golden(tid: str) -> tuple:
    spec = load_task(tid)
    rt = runtime_for(spec)
    info = _run(spec, list(spec.golden))
    domain = rt.domain
    rules = [r for r in load_verdict_rules(str(domain.path)).process if r.kind == "consent_before"]
    reading = Reading(str(domain.path), domain.spec.clock.date(), tuple(domain.spec.id_patterns))
    return spec, rt, info["trace"], rules, reading


def _agreed_proposals(trace: list[dict]) -> list[int]:
    """Indexes of the agent messages the customer answered, that name an action (the proposals)."""
    out = []
    for i, e in enumerate(trace[:-1]):
        nxt = trace[i + 1]
        if e.get("role") == "assistant" and e.get("content") and nxt.get("role") == "user" and "?" in e["content"]:
            out.append(i)
    return out


def _with_proposal(trace: list[dict], index: int, text: str) -> list[dict]:
    return [{**e, "content": text} if i == index else e for i, e in enumerate(trace)]


def _consent(tid: str, trace: list[dict]):
    spec, rt, _, rules, reading = _golden(tid)
    return process_results(rules, trace, reading=reading, rows=runtime_rows(rt))[0]


def _proposal_index(tid: str, word: str) -> int:
    trace = _golden(tid)[2]
    return next(i for i in _agreed_proposals(trace) if word in trace[i]["content"])


def test_the_golden_proposal_licenses_its_writes() -> None:
    tid = "travel/TR006_001"
    assert _consent(tid, _golden(tid)[2]).passed is True


def test_a_proposal_naming_another_order_of_the_customer_fails() -> None:
    tid = "retail/ST031_009"
    spec, rt, trace, rules, _ = _golden(tid)
    order = next(c.arguments["order_id"] for c in spec.golden if c.name == "cancel_order")
    others = [r["id"] for r in runtime_rows(rt)(rules[0].objects["order_id"].others, order) if r["id"] != order]
    assert others, "the customer holds another order"
    said = f"ending in {order[-4:]}"  # the golden names the order by its last digits
    i = _proposal_index(tid, said)
    result = _consent(tid, _with_proposal(trace, i, trace[i]["content"].replace(said, f"ending in {others[0][-4:]}")))
    assert result.passed is False and others[0].lower() in result.detail.lower()
    assert "another of the customer's records" in result.detail


def test_a_proposal_naming_another_booking_reference_fails() -> None:
    """With the right dates and amounts, a booking reference that is not the one the write touches is another booking."""
    tid = "travel/TR001_001"
    spec, _, trace, _, _ = _golden(tid)
    booking = next(c.arguments["booking_id"] for c in spec.golden if c.name == "modify_booking")
    other = booking[:-1] + str((int(booking[-1]) + 1) % 10)
    i = _proposal_index(tid, booking)
    result = _consent(tid, _with_proposal(trace, i, trace[i]["content"].replace(booking, other)))
    assert result.passed is False and other in result.detail


def test_a_proposal_the_reader_cannot_read_is_undetermined_not_failed() -> None:
    tid = "travel/TR006_001"
    trace = _golden(tid)[2]
    i = _proposal_index(tid, "cancel")
    result = _consent(tid, _with_proposal(trace, i, "Shall I go ahead and sort all of that out for you now?"))
    assert result.passed is None and result.undetermined and result.to_json()["undetermined"] is True
    assert "the customer agreed, but" in result.detail


def test_a_proposal_that_names_the_action_but_no_record_is_undetermined() -> None:
    tid = "retail/ST001_001"
    trace = _golden(tid)[2]
    i = _proposal_index(tid, "ORD-")
    result = _consent(tid, _with_proposal(trace, i, "I can cancel the order and refund what you paid. Shall I go ahead?"))
    assert result.passed is None and result.undetermined


def test_no_agreement_before_a_guarded_write_fails() -> None:
    tid = "retail/ST001_001"
    trace = _golden(tid)[2]
    i = _proposal_index(tid, "ORD-")
    refused = [{**e, "content": "No, please don't do anything yet."} if k == i + 1 else e for k, e in enumerate(trace)]
    result = _consent(tid, refused)
    assert result.passed is False and "cancel_order" in result.detail


def test_a_lower_amount_or_a_total_quoted_instead_of_the_charge_fails() -> None:
    tid = "travel/TR001_001"
    spec, _, trace, _, _ = _golden(tid)
    charge = next(c.arguments["amount"] for c in spec.golden if c.name == "charge_payment")
    i = _proposal_index(tid, f"{charge:.2f}")
    text = trace[i]["content"]
    lower = _consent(tid, _with_proposal(trace, i, text.replace(f"{charge:.2f}", f"{charge / 2:.2f}")))
    assert lower.passed is False and "the write uses" in lower.detail
    # the new total alone, not the amount charged: a total licenses only what the domain declares it covers (none here)
    total_only = text.split(", and I would charge")[0] + ". Shall I go ahead?"
    assert f"{charge:.2f}" not in total_only and "$" in total_only
    result = _consent(tid, _with_proposal(trace, i, total_only))
    assert result.passed is False and "charge_payment" in result.detail


def test_a_date_that_is_not_the_writes_fails() -> None:
    tid = "insurance/IN005_001"
    trace = _golden(tid)[2]
    i = _proposal_index(tid, "2026-05-19")
    result = _consent(tid, _with_proposal(trace, i, trace[i]["content"].replace("today, 2026-05-19", "2026-05-22")))
    assert result.passed is False and "2026-05-19" in result.detail


def test_a_change_exactly_as_the_customer_asked_needs_no_proposal_and_another_date_does() -> None:
    for tid, needed in (("insurance/IN010_001", False), ("insurance/IN007_002", False),
                        ("insurance/IN010_002", True), ("insurance/IN007_001", True)):
        spec = load_task(tid)
        info = _run(spec, list(spec.golden), consent="none")
        result = next(d for d in info["check_details"] if d["name"] == "process:consent_before_irreversible")
        assert result["passed"] is (not needed), (tid, result)
        if not needed:
            assert "not required: as the customer asked" in result["detail"]


def _sibling_rewrites(tid: str) -> list[tuple[str, list[dict]]]:
    """The golden trace with each agreed proposal naming, instead of the record a guarded write touches,
    another record of the same customer (its id and identifying attributes swapped in; dates and amounts kept),
    or where the task's state holds no other record of that kind, another reference of the same kind."""
    spec, rt, trace, rules, reading = _golden(tid)
    rows = runtime_rows(rt)
    if not writes_needing_consent(rules, trace, reading, rows):
        return []
    out = []
    for call in spec.golden:
        rule = next((r for r in rules if call.name in r.writes), None)
        if rule is None or call.expect_error is not None:
            continue
        for arg, obj in rule.objects.items():
            value = call.arguments.get(arg)
            if value is None or not obj.others or not obj.must_name:
                continue
            target = rows(obj.identify, value)
            siblings = [r for r in rows(obj.others, value) if str(next(iter(r.values()))) != str(value)]
            if not target:
                continue
            if not siblings and not str(value)[-1:].isdigit():
                continue
            if not siblings:
                # no other record of the kind in this task's state: another reference of the same kind
                other = str(value)[:-1] + str((int(str(value)[-1]) + 1) % 10)
                siblings = [{**target[0], next(iter(target[0])): other}]
            swaps = [(str(a), str(b)) for a, b in zip(target[0].values(), siblings[0].values())
                     if a is not None and b is not None and str(a) != str(b)]
            for i in _agreed_proposals(trace):
                text = trace[i]["content"]
                if not any(a in text for a, _ in swaps):
                    continue
                for a, b in swaps:
                    text = text.replace(a, b)
                out.append((f"{tid} {call.name} {value}->{next(iter(siblings[0].values()))}", _with_proposal(trace, i, text)))
    return out


def test_consent_to_another_record_of_the_customer_never_passes() -> None:
    """Every frozen proposal, rewritten to name another of the customer's records of the same kind, fails."""
    cases = []
    for domain in DOMAINS:
        for tid in list_tasks(domain):
            spec = load_task(tid)
            rules = [r for r in load_verdict_rules(str(runtime_for(spec).domain.path)).process if r.kind == "consent_before"]
            if any(c.name in r.writes for r in rules for c in spec.golden):
                cases += [(label, tid, t) for label, t in _sibling_rewrites(tid)]
    passed = [label for label, tid, t in cases if _consent(tid, t).passed is not False]
    print(f"consent to another record: {len(cases)} cases, {len(passed)} not failed")
    assert len(cases) >= 10
    assert passed == []


def test_an_unreadable_proposal_leaves_the_reward_and_marks_the_process_check_undetermined() -> None:
    """End to end: the episode is graded 1 with the consent check undetermined, not 0 for a wording the reader lacks."""
    spec = load_task("travel/TR006_001")
    dialogue = [t.model_copy(update={"say": "Shall I go ahead and sort all of that out for you now?"}) if t.act == "propose" else t
                for t in spec.dialogue]
    info = _run(spec.model_copy(update={"dialogue": dialogue}), list(spec.golden))
    detail = next(d for d in info["check_details"] if d["name"] == "process:consent_before_irreversible")
    assert detail["passed"] is None and detail.get("undetermined") is True
    assert info["verdict"] == 1.0
