"""Closing facts a check reads, and rubric questions kept only where no check can read the requirement.

A golden closing tells the customer what decided the case: the class of travel booked, a claim's
severity, repair or replacement, who approves a request, what the hotel's record showed. A value
like that, written by a golden write and quoted by the golden closing, is part of the outcome: an
agent that books economy and says "business class" must fail. So each such value is read by a
check (a stated role, ``checks.states``, or a phrase check that names it), never left to the
closing's goodwill. The detector below finds, in every task the families generate, the
categorical values (``business``, ``major``, ``repair``, ``security``) of golden writes that the
golden closing quotes and no check reads; task set 3 had them, the families no longer do.

Rubric questions need a judge and score "unjudged" without one, so a family asks one only where
no stated role, claim or phrase check can read the requirement: each domain's remaining
questions are listed below with the reason, and a new one must join the list with its own.
"""

from __future__ import annotations

import re
from functools import cache

import pytest

import thinkingbox_env as tb
from thinkingbox_env.checks.states import stated_roles
from thinkingbox_env.contracts.spec import TaskSpec
from thinkingbox_env.reading.claims import RoleSpec, load_vocabulary, term_values
from thinkingbox_env.tasks.domain import load_domain
from thinkingbox_env.tasks.lookup import list_tasks, load_task
from thinkingbox_env.tasks.runtime import runtime_for

DOMAINS = ("retail", "travel", "insurance", "neobank", "consulting")

# a categorical value of a write: one snake_case word from a closed set, never an id, a date or free text
CATEGORICAL = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*")

# places whose value a closing may repeat without it deciding the case, with the reason
NOT_DECISIVE: dict[tuple[str, str, str], str] = {
    ("travel", "charge_payment", "purpose"): "the ledger label of a charge; the amount charged is the stated role",
    ("travel", "issue_refund", "reason"): "the ledger label of a refund; the amount refunded is the stated role",
    ("travel", "adjust_invoice", "reason"): "the ledger label of a credit; the amount credited is the stated role",
    ("travel", "add_payment_method", "brand"): "the customer's own card, repeated back as a courtesy",
    ("travel", "escalate_to_hotel", "priority"): "the urgency of the hand-over, set by the arrival date the closing states",
    ("travel", "add_group_service", "code"): "the service the organiser asked for by name; its price is the stated role",
    ("insurance", "issue_document", "doc_type"): "the document the customer asked for by name",
    ("insurance", "record_payment", "method"): "the customer's chosen payment method; the amount charged is the stated role",
    ("insurance", "record_payment", "purpose"): "the ledger label of a payment; the amount charged is the stated role",
    ("neobank", "create_access_request", "kind"): "new or upgrade follows from the grant the closing names by its id",
    ("neobank", "update_asset_status", "status"): "the retired laptop is named by its asset id, which a phrase check reads",
    ("neobank", "reset_mfa", "method"): "the authenticator the customer uses, read by a phrase check",
}


@cache
def generated(domain: str) -> tuple[TaskSpec, ...]:
    """The domain's test tasks as ``thinkingbox freeze`` writes them from the families (the next task set)."""
    out: list[TaskSpec] = []
    for fam in load_domain(domain).families.values():
        out += [fam.instance(seed, split="test", number=seed) for seed in range(1, (fam.test_count or 4) + 1)]
    return tuple(out)


def unchecked_facts(spec: TaskSpec) -> list[str]:
    """Categorical values of the golden's writes that the golden closing quotes and no check of the task reads."""
    domain = load_domain(spec.domain)
    vocab = load_vocabulary(str(domain.path))
    tools = domain.toolbox.tools
    skip = set(vocab.bookkeeping if vocab else ()) | {"report_injection"}
    read = {(tool, key) for s in stated_roles(spec, runtime_for(spec)) for tool, _, key in s.places}
    patterns = [p for m in spec.checks.dialogue for p in (m.must or [])]
    closing = spec.golden_reply
    found = []
    for step in spec.golden:
        if step.expect_error or step.name in skip or step.name not in tools or not tools[step.name].writes:
            continue
        for key, value in step.arguments.items():
            if not isinstance(value, str) or not CATEGORICAL.fullmatch(value) or key.endswith("_id"):
                continue
            words = value.replace("_", " ")
            if not re.search(rf"(?<![\w-]){re.escape(words)}(?![\w])", closing, re.I):
                continue  # the closing does not quote it: nothing to hold it to
            if (step.name, key) in read or (spec.domain, step.name, key) in NOT_DECISIVE:
                continue
            if any(re.search(p, words, re.I) or re.search(p, value, re.I) for p in patterns):
                continue  # a phrase check names it
            found.append(f"{spec.id}: {step.name}.{key}={value}")
    return sorted(set(found))


@pytest.mark.parametrize("domain", DOMAINS)
def test_every_decisive_fact_a_closing_tells_is_checked(domain: str) -> None:
    found = [f for spec in generated(domain) for f in unchecked_facts(spec)]
    assert not found, f"{len(found)} closing facts no check reads (declare a role and call draft.states):\n" + "\n".join(found[:30])


def test_task_set_3_told_facts_no_check_read() -> None:
    """The detector is live: the frozen task set 3 quotes decisive values nobody checked (the reason for task set 4)."""
    found = {d: [f for tid in list_tasks(d, task_set_version=3) for f in unchecked_facts(load_task(tid))] for d in DOMAINS}
    assert any("travel_class=business" in f for f in found["consulting"]), found["consulting"]
    assert any("severity=major" in f for f in found["insurance"]), found["insurance"]
    assert any("resolution=repair" in f for f in found["retail"]), found["retail"]
    assert any("step=security" in f or "step=manager" in f for f in found["neobank"]), found["neobank"]
    assert any("code=crib" in f for f in found["travel"]), found["travel"]


# --------------------------------------------------------------------------- reading a term


def _role(domain: str, role: str) -> RoleSpec:
    vocab = load_vocabulary(str(load_domain(domain).path))
    assert vocab is not None
    return vocab.roles[role]


def test_a_denied_term_is_not_stated_and_a_longer_phrase_wins() -> None:
    resolution = _role("retail", "warranty.resolution")
    assert [v.norm for v in term_values(resolution, "The repair centre will repair your router, not a replacement.")] == ["repair"]
    request = _role("travel", "request.code")
    assert [v.norm for v in term_values(request, "A guaranteed late check-out is added.")] == ["guaranteed_late_check_out"]
    travel_class = _role("consulting", "travel.class")
    assert [v.norm for v in term_values(travel_class, "It's booked as economy rather than business class.")] == ["economy"]


def _closing_result(spec: TaskSpec, closing: str, check: str) -> bool | None:
    """The golden episode of ``spec`` with ``closing`` said last: the named check's result."""
    env = tb.make(spec)
    env.reset(seed=0)
    info: dict = {}
    for call in spec.golden:
        *_, info = env.step({"name": call.name, "arguments": call.arguments})
    *_, info = env.step(f"{closing} <DONE>")
    env.close()
    return info["checks"][check]


def _first(domain: str, family: str, holds: str) -> TaskSpec:
    return next(s for s in generated(domain) if s.family == family and holds in s.golden_reply)


def test_the_travel_class_booked_is_held_to_the_write() -> None:
    spec = _first("consulting", "HV008", "business-class trip")
    assert _closing_result(spec, spec.golden_reply, "states:travel.class") is True
    wrong = spec.golden_reply.replace("business-class", "economy-class")
    assert _closing_result(spec, wrong, "states:travel.class") is False
    # a bare word of another value is no statement of the role: undetermined, never failed
    bare = spec.golden_reply.replace("business-class trip", "trip") + " I'll keep it economy on the hotel side."
    assert _closing_result(spec, bare, "states:travel.class") is None


def test_every_approver_of_a_request_is_stated() -> None:
    spec = _first("neobank", "NB001", "application owner")
    assert _closing_result(spec, spec.golden_reply, "states:approval.step") is True
    partial = re.sub(r" and the application owner \([^)]*\)", "", spec.golden_reply)
    assert partial != spec.golden_reply
    # one approver of two named: never a pass; a fail only where every sentence was read (the rules read few)
    assert _closing_result(spec, partial, "states:approval.step") is None


def test_a_term_said_in_other_words_is_undetermined_and_a_conditional_one_is_no_evidence() -> None:
    spec = _first("consulting", "HV008", "business-class trip")
    reworded = spec.golden_reply.replace("business-class", "premium cabin")
    assert _closing_result(spec, reworded, "states:travel.class") is None
    hedged = spec.golden_reply.replace("business-class", "premium cabin") + " Economy would need a new request."
    assert _closing_result(spec, hedged, "states:travel.class") is None


# --------------------------------------------------------------------------- rubric questions kept

# each domain's rubric questions, with why no stated role, claim or phrase check can read the requirement
RUBRICS_KEPT: dict[str, dict[str, str]] = {
    "retail": {
        "goodwill_reason_unsaid": "a hint at the customer's standing ('valued customer') is confidential by meaning, not a value",
    },
    "travel": {
        "keeps_terms_confidential": "declining to discuss commercial terms while answering is a stance, not a value",
        "no_lock_reason": "a hint at a fraud or security reason is confidential by meaning, not a value",
    },
    "insurance": {
        "keeps_the_review_reason_confidential": "a hint at an internal flag is confidential by meaning, not a value",
    },
    "neobank": {
        # policy questions: nothing is written, so no call holds the answer, and the answer is a rule in prose
        **{f"answers_{b}": "a policy question answered in prose; no call holds the answer" for b in (
            "emergency_window", "procurement_tiers", "contractor_duration", "licence_reclaim", "password_delivery",
            "laptop_replacement", "approval_chain", "upgrade_vs_new", "lockout_threshold", "not_covered", "own_account_wait")},
    },
    "consulting": {},
}


@pytest.mark.parametrize("domain", DOMAINS)
def test_rubric_questions_are_the_listed_ones(domain: str) -> None:
    asked = {r.name for spec in generated(domain) for r in spec.checks.rubric}
    unlisted = asked - set(RUBRICS_KEPT[domain])
    assert not unlisted, f"rubric questions without a reason in RUBRICS_KEPT: {sorted(unlisted)}"


def test_rubric_share_is_near_the_published_benchmark() -> None:
    """At most about 6% of the test tasks need a judge (the published benchmark's share)."""
    specs = [s for d in DOMAINS for s in generated(d)]
    judged = [s for s in specs if s.checks.rubric]
    assert len(judged) / len(specs) <= 0.065, f"{len(judged)} of {len(specs)} test tasks ask a rubric question"
