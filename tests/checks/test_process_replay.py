"""Every guarded frozen task, and a training variant of every family, replayed without its proposal turns.

The consent check must fail exactly where the written policy asks for the customer's agreement and
pass elsewhere. Where that is comes from the family's branch, not from the check's own reader: a
family generator builds its branches so that the write is, or is not, what the customer asked for
(a removal asked for a date in the past and made today; an extension asked beyond the limit and
granted at it; a prerequisite offered instead of the course asked for), and the table below says
which branches those are. A write the policy guards every time (a cancellation, a charge, an order)
needs agreement in every branch; a write the policy never guards (a retail refund, an installation
cancellation) in none. With its proposals the golden passes the consent check in every task.
"""

from __future__ import annotations

import re
from functools import cache

import pytest

from thinkingbox_env.checks.verdict_rules import load_verdict_rules
from thinkingbox_env.contracts.spec import TaskSpec
from thinkingbox_env.eval.validate import _run
from thinkingbox_env.tasks.domain import domain_dirs
from thinkingbox_env.tasks.lookup import generate_variant, list_tasks, load_task

DOMAINS = ("retail", "travel", "insurance", "neobank", "consulting")

# the branches in which a write guarded "only when not what the customer asked" differs from the request
ASKS_WHERE = {
    "add_driver": {"IN004:add_tomorrow"},  # asked for today; a new driver is covered from tomorrow
    "add_vehicle": {"IN006:add_old_purchase"},  # bought over 14 days ago: covered from tomorrow, not the purchase date
    "remove_driver": {"IN005:remove_moved_out"},  # asked for the past moving-out date; removed today
    "remove_vehicle": {"IN007:remove_sold"},  # asked for the past sale date; removed today
    "schedule_cancellation": {"IN010:backdated_request"},  # asked for a past date; cancelled today
    "grant_extension": {"IN001:beyond_max", "IN001:weekend_request"},  # the maximum offered, or the next business day
    "set_installment_plan": {"IN002:switch_monthly_autopay"},  # autopay, which the customer did not ask for
    "record_payment": {"IN009:reinstate", "IN009:elite_fee_waived"},  # an amount the customer never named
    "enrol_course": {"HV007:prerequisite_offered"},  # the prerequisite offered instead of the course asked for
}
# writes the policy never asks agreement for that a check once demanded it for
NEVER = {"retail": {"issue_refund", "refund_order_amount", "refund_membership_fee", "cancel_installation"},
         "neobank": {"revoke_access"}}
_VIOLATION = re.compile(r"(\w+) without the customer's agreement")


@cache
def _consent_rule(domain: str):
    return next(r for r in load_verdict_rules(str(domain_dirs()[domain])).process if r.kind == "consent_before")


def _branches(spec: TaskSpec) -> set[str]:
    return set(spec.origin.branches) if spec.origin else set()


def expected_violations(spec: TaskSpec) -> set[str]:
    """The golden's writes the policy asks agreement for, in this task's branch."""
    rule = _consent_rule(spec.domain)
    out = set()
    for call in spec.golden:
        if call.expect_error is not None or call.name not in rule.writes:
            continue
        cond = rule.condition(call.name)
        if cond == "always" or cond == "not_as_asked" and _branches(spec) & ASKS_WHERE.get(call.name, set()):
            out.add(call.name)
    return out


def considered(spec: TaskSpec) -> bool:
    """Whether the golden holds a write a consent rule guards, or one the policy never guards but a check once did."""
    rule = _consent_rule(spec.domain)
    names = {c.name for c in spec.golden if c.expect_error is None}
    return bool(names & (set(rule.writes) | NEVER.get(spec.domain, set())))


def replay(spec: TaskSpec) -> tuple[dict, dict]:
    """The consent check's result on the golden with its proposals, and with none."""
    name = f"process:{_consent_rule(spec.domain).name}"
    out = []
    for consent in ("before", "none"):
        info = _run(spec, list(spec.golden), consent=consent)
        out.append(next(d for d in info["check_details"] if d["name"] == name))
    return out[0], out[1]


def _check(spec: TaskSpec) -> str | None:
    """Why the task's replays disagree with the policy, or None."""
    with_proposals, without = replay(spec)
    if with_proposals["passed"] is False:
        return f"{spec.full_id}: the golden with its proposals fails: {with_proposals['detail']}"
    want = expected_violations(spec)
    got = set(_VIOLATION.findall(without["detail"])) if without["passed"] is False else set()
    if got != want or (want and without["passed"] is not False):
        return (f"{spec.full_id} ({sorted(_branches(spec))}): without proposals the check names {sorted(got) or 'nothing'} "
                f"({without['passed']}: {without['detail'][:300]}); the policy asks agreement for {sorted(want) or 'nothing'}")
    return None


@pytest.mark.parametrize("domain", DOMAINS)
def test_every_guarded_frozen_task_fails_without_its_proposals_exactly_where_the_policy_asks(domain: str) -> None:
    specs = [s for s in (load_task(t) for t in list_tasks(domain)) if considered(s)]
    problems = [p for p in map(_check, specs) if p]
    asked = sum(bool(expected_violations(s)) for s in specs)
    assert not problems, "\n".join(problems)
    assert specs and asked  # every domain has tasks where its policy asks for agreement
    print(f"{domain}: {len(specs)} tasks replayed, {asked} fail without proposals, {len(specs) - asked} pass")


@pytest.mark.parametrize("domain", DOMAINS)
def test_a_training_variant_of_every_guarded_family_fails_without_its_proposals_exactly_where_the_policy_asks(domain: str) -> None:
    # the families whose frozen tasks hold such a write; per family the first two variants that do (a branch is drawn)
    families = sorted({s.family for s in (load_task(t) for t in list_tasks(domain)) if considered(s)})
    problems, replayed = [], 0
    for code in families:
        found = 0
        for seed in range(100_000, 100_040):
            spec = generate_variant(domain, code, seed)
            if not considered(spec):
                continue
            found += 1
            problem = _check(spec)
            if problem:
                problems.append(problem)
            if found == 2:
                break
        replayed += found
    print(f"{domain}: {replayed} variants of {len(families)} families replayed")
    assert replayed >= len(families), domain
    assert not problems, "\n".join(problems)


def test_the_over_demanded_writes_are_replayed_and_pass_without_proposals() -> None:
    """Retail refunds and installation cancellations: 17 frozen tasks whose golden has no cancel_order."""
    specs = [s for s in (load_task(t) for t in list_tasks("retail")) if considered(s) and not expected_violations(s)]
    assert len(specs) >= 17
    for spec in specs:
        assert replay(spec)[1]["passed"] is True, spec.full_id
