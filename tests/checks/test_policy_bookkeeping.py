"""Bookkeeping the policy prescribes or allows on the request's own ticket never fails an episode.

Every domain's policy tracks a request on one ticket and asks for record keeping on it: a note
on the joiner's onboarding ticket (consulting), a note on a refund traced with the bank
(retail), an escalation's team and priority (all five). Two things must hold for every test task
the families freeze and a few training variants of every family:

- an agent that does the golden's work and also notes what it did on the request's own ticket
  (one the golden run creates or updates, or one a policy sentence below names for the case)
  passes exactly as the golden does: the note is bookkeeping (``bookkeeping:`` in the domain's
  ``verdicts.yaml``), neither collateral nor a required effect;
- where a policy sentence below applies to the task's case, the golden run does what it says.

The other direction holds too: a note on a ticket that is not the request's, or a change of
the own ticket's status or priority beyond the golden's, still fails the state checks.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

import pytest

import thinkingbox_env as tb
from thinkingbox_env.checks._bookkeeping import bookkeeping_problems, bookkeeping_rule, is_bookkeeping_call, without_bookkeeping
from thinkingbox_env.checks.verdict_rules import BookkeepingSpec
from thinkingbox_env.contracts.spec import TaskSpec, ToolCall
from thinkingbox_env.state.diff import StateDiff
from thinkingbox_env.tasks.domain import load_domain
from thinkingbox_env.tasks.runtime import runtime_for

DOMAINS = ("retail", "travel", "insurance", "neobank", "consulting")
VARIANTS = 3  # training variants drawn per family, so that the generator, not only the frozen sample, is held
NOTE = "Noted on the ticket what was checked and done in this conversation."

Tickets = dict[int, dict[str, Any]]


# --------------------------------------------------------------------------- what the golden run does to tickets


@dataclass(frozen=True)
class Case:
    """A task with what the imperatives read: the tickets before the episode, the golden's calls and its tickets after."""

    spec: TaskSpec
    before: Tickets  # every ticket of the task's initial state, by id
    after: Tickets  # the tickets the golden run creates or updates, as they end
    calls: tuple[ToolCall, ...]  # the golden calls that succeeded


def case(spec: TaskSpec) -> Case:
    runtime = runtime_for(spec)
    state = runtime.new_state()
    try:
        before = {r["id"]: dict(r) for r in state.rows("tickets")}
    finally:
        state.close()
    after: Tickets = {}
    calls = []
    for call, result in zip(spec.golden, runtime.golden.results):
        if not result.ok:
            continue
        calls.append(call)
        if call.name in ("create_ticket", "update_ticket"):
            after[result.content["id"]] = dict(result.content)
    return Case(spec, before, after, tuple(calls))


def called(c: Case, tool: str) -> list[dict[str, Any]]:
    return [dict(call.arguments) for call in c.calls if call.name == tool]


# --------------------------------------------------------------------------- the policy's imperatives


@dataclass(frozen=True)
class Imperative:
    """One sentence of a domain's policy that prescribes record keeping, with the case it applies to.

    ``applies`` returns the tickets the sentence is about in the task (none: it does not apply);
    ``performed`` whether the golden run does what it says on them. ``own``: the tickets it names
    are the request's own, so that a note on them is bookkeeping the policy allows.
    """

    domain: str
    name: str
    policy: str  # quoted from policy.md, so that the sentence and this test cannot drift apart
    applies: Callable[[Case], set[int]]
    performed: Callable[[Case, set[int]], bool]
    own: bool = False


def _pending_onboarding(c: Case, employee: str) -> set[int]:
    return {t for t, r in c.before.items() if r["category"] == "onboarding" and r["status"] == "pending" and r["employee_id"] == employee}


def _onboarding_started(c: Case) -> set[int]:
    """The joiner's pending onboarding ticket, where the golden starts what a phase's condition misses."""
    joiners = {a["employee_id"] for tool in ("request_background_check", "enrol_course", "order_hardware") for a in called(c, tool)}
    return {t for e in joiners for t in _pending_onboarding(c, e)}


def _onboarding_advanced(c: Case) -> set[int]:
    """The joiner's pending onboarding ticket, where the golden moves the onboarding on: the request's ticket, reused."""
    return {t for a in called(c, "advance_onboarding") for t in _pending_onboarding(c, a["employee_id"])}


def _noted_keeping_status(c: Case, tickets: set[int]) -> bool:
    notes = {a["ticket_id"] for a in called(c, "update_ticket") if a.get("note") and a.get("status") in (None, "pending")}
    return tickets <= notes and all(c.after.get(t, c.before[t])["status"] == "pending" for t in tickets)


def _no_second_onboarding_ticket(c: Case, tickets: set[int]) -> bool:
    return not [a for a in called(c, "create_ticket") if a.get("category") == "onboarding"]


def _opened_by_golden(c: Case) -> set[int]:
    return {t for t, r in c.after.items() if r["status"] == "open"}


def _consulting_escalation(c: Case, tickets: set[int]) -> bool:
    return all(c.after[t]["assigned_team"] and c.after[t]["priority"] == ("high" if c.after[t]["assigned_team"] in ("security", "hr_ops")
                                                                           else "normal") for t in tickets)


def _escalated(priorities: tuple[str, ...]) -> Callable[[Case, set[int]], bool]:
    return lambda c, tickets: all(c.after[t]["assigned_team"] and c.after[t]["priority"] in priorities for t in tickets)


def _refund_traced(c: Case) -> set[int]:
    """A ticket the golden puts on hold with high priority outside a delivery issue: a refund the payments team traces."""
    return {t for t, r in c.after.items() if r["status"] == "hold" and r["priority"] == "high" and r["category"] != "delivery"}


def _carries_a_note(c: Case, tickets: set[int]) -> bool:
    noted = {a["ticket_id"] for a in called(c, "update_ticket") if a.get("note")}
    return all(t in noted or (t not in c.before and c.after[t]["description"]) for t in tickets)


def _hotel_escalated(c: Case) -> set[int]:
    return set(c.after) if called(c, "escalate_to_hotel") else set()


def _one_open_for_a_team(c: Case, tickets: set[int]) -> bool:
    return any(c.after[t]["status"] == "open" and c.after[t]["assigned_team"] and c.after[t]["priority"] == "high" for t in tickets)


def _emergency_granted(c: Case) -> set[int]:
    return set(c.after) if called(c, "grant_emergency_access") else set()


def _emergency_review(c: Case, tickets: set[int]) -> bool:
    want = {"category": "incident", "priority": "urgent", "assigned_team": "security", "status": "open"}
    return any(all(c.after[t][k] == v for k, v in want.items()) for t in tickets)


def _with_team(c: Case) -> set[int]:
    return {t for t, r in c.after.items() if r["assigned_team"]}


IMPERATIVES = (
    Imperative("consulting", "onboarding_note", "Note it on the joiner's onboarding ticket and keep it pending.",
               _onboarding_started, _noted_keeping_status, own=True),
    Imperative("consulting", "onboarding_ticket_reused", "Reuse an open or pending ticket about the same request instead of opening a "
               "second one.", _onboarding_advanced, _no_second_onboarding_ticket, own=True),
    Imperative("consulting", "escalation", "Escalated tickets are open, with high priority for security and HR operations and normal "
               "priority otherwise.", _opened_by_golden, _consulting_escalation),
    Imperative("retail", "refund_trace_note", "escalate: the ticket gets priority `high`, status `hold` (the payments team traces it with "
               "the bank), and a note.", _refund_traced, _carries_a_note, own=True),
    Imperative("travel", "hotel_escalation_ticket", "open the ticket for `partner_relations` (status `open`, priority `high`)",
               _hotel_escalated, _one_open_for_a_team),
    Imperative("travel", "escalation", "The priority is `high` for an internal escalation", _opened_by_golden, _escalated(("high",))),
    Imperative("insurance", "escalation", "`assigned_team` set to that team, priority **high** (or **urgent** where this policy says so)",
               _opened_by_golden, _escalated(("high", "urgent"))),
    Imperative("neobank", "escalation", "Tickets escalate to these teams (assigned_team), always with status open",
               _with_team, lambda c, tickets: all(c.after[t]["status"] == "open" for t in tickets)),
    Imperative("neobank", "emergency_review", "category incident, priority urgent, assigned to the security team, status open",
               _emergency_granted, _emergency_review),
)


def imperatives(domain: str) -> list[Imperative]:
    return [i for i in IMPERATIVES if i.domain == domain]


def own_tickets(c: Case) -> set[int]:
    """The request's own tickets: those the golden run creates or updates, and those an imperative names for the case."""
    own = set(c.after)
    for imp in imperatives(c.spec.domain):
        if imp.own:
            own |= imp.applies(c)
    return own


# --------------------------------------------------------------------------- the tasks and the episodes


@cache
def specs(domain: str) -> tuple[TaskSpec, ...]:
    """The domain's test tasks as ``thinkingbox freeze`` writes them from the families, and a few training variants of each family.

    The tasks come from the family code rather than ``task_specs/``, so that the test holds what the
    next freeze writes; rubric questions are left out (they want a judge).
    """
    out: list[TaskSpec] = []
    for fam in load_domain(domain).families.values():
        out += [fam.instance(seed, split="test", number=seed) for seed in range(1, (fam.test_count or 4) + 1)]
        out += [fam.instance(seed, split="train") for seed in range(1, VARIANTS + 1)]
    return tuple(s.model_copy(update={"checks": s.checks.model_copy(update={"rubric": []})}) for s in out)


def run(spec: TaskSpec, calls: list[ToolCall]) -> dict[str, Any]:
    env = tb.ThinkingboxEnv(spec, max_actions=300)
    try:
        return tb.run_episode(env, tb.OracleAgent(calls), seed=0)
    finally:
        env.close()


def state_failures(info: dict[str, Any]) -> list[str]:
    return [k for k, v in info["checks"].items() if (k.startswith("effect:") or k == "no_collateral") and v is False]


def note(ticket: int, **changes: Any) -> ToolCall:
    return ToolCall(name="update_ticket", arguments={"ticket_id": ticket, "note": NOTE, **changes})


def bookkeeping_failures(domain: str) -> list[str]:
    """The tasks in which the golden plus a note on each of the request's own tickets fails where the golden alone passes."""
    failures = []
    for spec in specs(domain):
        c = case(spec)
        own = sorted(own_tickets(c))
        if not own:
            continue
        golden = run(spec, list(spec.golden))
        noted = run(spec, [*spec.golden, *(note(t) for t in own)])
        if state_failures(noted) or noted["verdict"] != golden["verdict"]:
            failures.append(f"{spec.full_id} (tickets {own}): {state_failures(noted) or noted['verdict']}")
    return failures


def skipped_imperatives(domain: str) -> list[str]:
    """The tasks in which an imperative applies to the case and the golden run does not do what it says."""
    out = []
    for spec in specs(domain):
        c = case(spec)
        for imp in imperatives(domain):
            tickets = imp.applies(c)
            if tickets and not imp.performed(c, tickets):
                out.append(f"{spec.full_id}: {imp.name} on tickets {sorted(tickets)}")
    return out


# --------------------------------------------------------------------------- the tests


@pytest.mark.parametrize("domain", DOMAINS)
def test_every_domain_declares_its_bookkeeping_and_the_imperatives_quote_its_policy(domain):
    rule = bookkeeping_rule(load_domain(domain))
    assert rule is not None and rule.table == "tickets" and "status" not in rule.columns
    policy = " ".join(load_domain(domain).policy.split())  # a sentence may wrap in policy.md
    for imp in imperatives(domain):
        assert imp.policy in policy, (domain, imp.name)


@pytest.mark.parametrize("domain", DOMAINS)
def test_a_note_on_the_requests_own_ticket_never_fails(domain):
    failures = bookkeeping_failures(domain)
    assert failures == [], f"{len(failures)} tasks: " + "; ".join(failures)


@pytest.mark.parametrize("domain", DOMAINS)
def test_where_the_policy_prescribes_record_keeping_the_golden_does_it(domain):
    skipped = skipped_imperatives(domain)
    assert skipped == [], f"{len(skipped)} tasks: " + "; ".join(skipped)


@pytest.mark.parametrize("domain", DOMAINS)
def test_a_prescribed_note_is_not_required_either(domain):
    """The golden's notes that change nothing but the stamp are dropped: the checks accept doing them or not."""
    rule = bookkeeping_rule(load_domain(domain))
    skipped = 0
    for spec in specs(domain):
        bare = [c for c in spec.golden if not is_bookkeeping_call(c.name, c.arguments, rule)]
        if len(bare) == len(spec.golden):
            continue
        skipped += 1
        assert not state_failures(run(spec, bare)), spec.full_id
    assert skipped or domain != "consulting"  # the onboarding goldens note on the onboarding ticket


def _unrelated(c: Case, own: set[int]) -> int | None:
    """A ticket of the task's state that is not the request's and can still be changed (not closed)."""
    return next((t for t in sorted(c.before) if t not in own and c.before[t]["status"] != "closed"), None)


@pytest.mark.parametrize("domain", DOMAINS)
def test_a_dishonest_agent_still_fails(domain):
    """A note on another ticket, or the own ticket's status or priority moved off the golden's, is still a wrong state."""
    statuses = load_domain(domain).ticketing.statuses
    tried = 0
    for spec in specs(domain)[::4]:
        c = case(spec)
        own = own_tickets(c)
        if not own:
            continue
        tried += 1
        other = _unrelated(c, own)
        if other is not None:
            assert state_failures(run(spec, [*spec.golden, note(other)])) == ["no_collateral"], (spec.full_id, other)
        t = min(own)
        final = c.after.get(t, c.before.get(t))
        status = next(s for s in statuses if s not in (final["status"], "closed"))
        assert state_failures(run(spec, [*spec.golden, note(t, status=status)])), (spec.full_id, t, status)
        priority = "urgent" if final["priority"] != "urgent" else "normal"
        assert state_failures(run(spec, [*spec.golden, note(t, priority=priority)])), (spec.full_id, t, priority)
    assert tried >= 5


def _effects(*effects: tuple[str, ...]) -> StateDiff:
    return StateDiff(tables={}, effects=Counter(effects), created_keys={})


RULE = BookkeepingSpec(table="tickets", columns=["updated_at"], tool="update_ticket", key="ticket_id", note="note")


def test_only_the_stamp_on_an_own_row_is_left_out():
    golden = _effects(("update", "tickets", "[7]", '{"status":"solved","updated_at":"T"}'), ("update", "tickets", "[8]", '{"updated_at":"T"}'))
    agent = _effects(("update", "tickets", "[7]", '{"status":"solved","updated_at":"T"}'), ("update", "tickets", "[9]", '{"updated_at":"T"}'))
    g, a = without_bookkeeping(golden, agent, RULE)
    assert dict(g.effects) == {("update", "tickets", "[7]", '{"status":"solved"}'): 1}  # ticket 8's note: not required
    assert ("update", "tickets", "[9]", '{"updated_at":"T"}') in a.effects  # ticket 9 is not the request's: compared
    assert without_bookkeeping(golden, agent, None) == (golden, agent)


def test_a_wrong_declaration_fails_at_load():
    domain = load_domain("retail")
    assert bookkeeping_problems(RULE, domain) == []
    bad = BookkeepingSpec(table="tickets", columns=["id", "description", "colour"], tool="get_ticket", key="ticket_id", note="text")
    problems = " | ".join(bookkeeping_problems(bad, domain))
    for part in ("'id' is the key", "'description' is volatile", "'colour' is not a column", "get_ticket' writes nothing",
                 "note 'text' is not an argument"):
        assert part in problems
    assert "not a table" in bookkeeping_problems(BookkeepingSpec(table="nope", columns=["x"], tool="update_ticket", key="k", note="n"),
                                                 domain)[0]
