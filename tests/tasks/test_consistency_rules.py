"""Consistency rules every domain's tasks keep, each a small detector run over every domain.

A review of task set 3 found consistency defects fixed in one domain and left in the others: an
opening that already states the value the customer then misremembers, a "third time I'm trying to
reach someone" with no earlier contact on record, a planted record dated before the record it
cites, and a person staffed over 100% at once. Each rule here is one detector over a task spec and
the state it runs on (the domain's seed rows with the task's patch applied), written for every
domain's schema rather than one family's, so a rule fixed in one domain holds in all of them.

The tests assert that the family generators produce no violation (the seeds ``thinkingbox freeze``
writes and a sample of training seeds), that the current frozen set has none once it is a set
frozen after these rules (version 4 on), and that every detector finds the violations known in task
set 3, so each rule is shown to fail on the set it was written against.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import date, datetime
from functools import cache
from typing import Any

import pytest
from task_rows import generated, load_tasks, starting_rows, task_set_3

import thinkingbox_env as tb
from thinkingbox_env.contracts.spec import TaskSpec
from thinkingbox_env.tasks.domain import load_domain
from thinkingbox_env.tasks.lookup import current_task_set_version

DOMAINS = ("retail", "travel", "insurance", "neobank", "consulting")
TRAIN_SEEDS = 30  # training variants per family, beside the test seeds 1..test_count freeze writes


# --------------------------------------------------------------------------- the state a task runs on


@dataclass(frozen=True)
class State:
    """A task's starting rows: the seed with the patch applied, and which rows the patch inserted."""

    tables: dict[str, list[dict[str, Any]]]
    planted: dict[str, list[dict[str, Any]]]
    clock: datetime

    def rows(self, table: str) -> list[dict[str, Any]]:
        return self.tables.get(table, [])


def state_of(spec: TaskSpec) -> State:
    """The rows a task starts from: seed rows, then the patch's deletes, updates and inserts."""
    tables, planted = starting_rows(spec)
    return State(tables, planted, load_domain(spec.domain).spec.clock)


def _day(value: Any) -> date | None:
    """A date or timestamp value as a day; None for anything else (free text, null)."""
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if isinstance(value, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2})?.*)?", value.strip()):
        return date.fromisoformat(value.strip()[:10])
    return None


# --------------------------------------------------------------------------- rule (a): the opening never gives away a withheld value


def given_away(spec: TaskSpec) -> list[str]:
    """Misremembered values whose right value the customer's up-front text already states.

    A customer who misremembers their booking reference, policy number or incident must not have
    written the right one in the opening (nor be told it as their goal or their later request): the
    agent would have it before the recovery the task is built around, and a simulated user reading
    both would say either.
    """
    up_front = {"opening": spec.user.opening, "intent": spec.user.intent, "change": spec.user.change.to if spec.user.change else ""}
    found = []
    for fact in spec.user.facts:
        if fact.misremembered and fact.value:
            found += [f"{where} states {fact.value!r}, misremembered as {fact.misremembered!r}"
                      for where, text in up_front.items() if re.search(rf"(?<![\w-]){re.escape(fact.value)}(?![\w-])", text)]
    return found


# --------------------------------------------------------------------------- rule (b): a repeat contact has an earlier one on record

# What a customer writes when they say they have contacted the company about this before: an ordinal
# "time" of writing or trying, "again" as a greeting, an earlier call or message, chasing or following
# up, a reply that never came, the runaround. "Again" alone is not one ("the wrong model again").
REPEAT_CONTACT = re.compile("|".join([
    r"\b(second|third|fourth|fifth|umpteenth|\d+(st|nd|rd|th)) time (I'm|I am|I've|I have|that I|we're|we've)\b",
    r"\b(hello|hi|hey|hiya) again\b",
    r"\b(I|we)('ve| have)? (already |previously |just )?(called|phoned|rang|written|wrote|emailed|e-mailed|messaged|contacted|chatted)"
    r"( (to )?(you|your \w+|support|the desk|someone|somebody))?( (about|regarding) (this|it))? (before|earlier|already|yesterday|last \w+|\w+ ago)\b",
    r"\b(I|we)('ve| have)? (already |previously )?(raised|reported|opened|logged|filed|submitted) (a|my|the|this) (ticket|case|request|complaint)\b",
    r"\b(I|we) (opened|raised|logged) a ticket\b",
    r"\b(follow(ing)?[- ]up|chas(e|ing)) (on |up )?(my|the|our|an?) (earlier |previous |last |open )?(ticket|request|case|complaint|report|message|call)",
    r"\bmy (earlier|previous|last|open|existing|original) (ticket|request|message|call|case|complaint|email|e-mail)\b",
    r"\b(heard|got) nothing back\b|\bnever heard back\b|\b(no ?one|nobody) (has |ever )?(got|gotten|come|came|written|wrote) back\b",
    r"\b(no ?one|nobody) (has |ever )?(replied|answered|responded)\b",
    r"\brunaround\b",
    r"\bstill waiting (on|for) (you|your (reply|answer|team)|a (reply|response|call ?back|answer)|someone|somebody)\b",
    r"\b(as|like) I (said|mentioned|explained|wrote) (before|earlier|last time)\b",
    r"\btrying to (reach|get hold of|get through to) (someone|somebody|you|anyone|anybody|a person|support)\b",
    r"\bI (asked|called|wrote|reported|complained|requested|chased)\b[^.?!]{0,60}?\b(last (week|month|time)|(\w+ )?(days|weeks|months) ago|yesterday)\b",
    r"\bticket \d+\b",
]), re.IGNORECASE)

# A sentence that names someone else the customer dealt with before it says so ("I've asked the hotel directly twice
# and heard nothing back") tells of a contact with them, not with the company, unless it speaks to the company ("you").
THIRD_PARTY = re.compile(r"\b(the|my|our) (hotel|airline|carrier|courier|driver|client|bank|police|landlord|seller|shop|store|garage|"
                         r"manager|boss|agency|recruiter|vendor|supplier|partner|hospital|doctor)\b", re.IGNORECASE)
TO_US = re.compile(r"\b(you|your (team|desk|company|support|agents?)|support|the desk)\b", re.IGNORECASE)


def repeat_claim(text: str) -> str | None:
    """The words that say this is a repeat contact with the company, or None."""
    for sentence in re.split(r"(?<=[.!?])\s+", text):
        for claim in REPEAT_CONTACT.finditer(sentence):
            told = sentence[:claim.end()]  # who was contacted is named before the words or in them, not after
            if THIRD_PARTY.search(told) and not TO_US.search(told):
                continue
            return claim.group(0)
    return None


EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
ID_TOKEN = re.compile(r"\b[A-Z]{2,4}-\d{3,}\b")


def _said_up_front(spec: TaskSpec) -> str:
    return " ".join([spec.user.opening, spec.user.intent, spec.user.change.to if spec.user.change else ""])


def _customer_emails(spec: TaskSpec, state: State) -> set[str]:
    """The e-mail addresses the customer is known by: written in what they say, or on a record their id names."""
    said = " ".join([_said_up_front(spec), *(f.text for f in spec.user.facts)])
    emails = {m.rstrip(".").lower() for m in EMAIL.findall(said)}
    ids = set(ID_TOKEN.findall(said))
    for rows in state.tables.values():
        for row in rows:
            if str(row.get("id")) in ids and row.get("email"):
                emails.add(str(row["email"]).lower())
    return emails


def earlier_contacts(spec: TaskSpec, state: State) -> list[dict[str, Any]]:
    """The customer's tickets created before the task begins (the contacts the ticketing system holds)."""
    emails = _customer_emails(spec, state)
    users = {str(u["id"]) for u in state.rows("ticket_users") if str(u.get("email", "")).lower() in emails}
    today = state.clock.date()
    return [t for t in state.rows("tickets") if str(t.get("requester_id")) in users
            and (_day(t.get("created_at")) is None or _day(t.get("created_at")) <= today)]


def earlier_requests(spec: TaskSpec, state: State, claim: str) -> list[dict[str, Any]]:
    """Requests of the customer's the records hold that the claim names ("I asked to cancel" and a cancellation):
    rows with a ``requested_at`` before today, of a table whose name the claim says, on the customer's record or on a
    record of theirs (their policy), found through ``*_id`` columns. A request someone else made for them (a
    background check) is no contact of theirs, and a claim that names no record needs a ticket."""
    named = {t for t in state.tables if t[:5].lower() in claim.lower()}
    emails = _customer_emails(spec, state)
    mine = {str(r["id"]) for rows in state.tables.values() for r in rows if r.get("id") is not None and str(r.get("email", "")).lower() in emails}
    today = state.clock.date()
    found: list[dict[str, Any]] = []
    for _ in range(2):  # the customer's rows, then the rows on those (a policy, then its cancellation)
        linked = [r for rows in state.tables.values() for r in rows
                  if any(c.endswith("_id") and str(v) in mine for c, v in r.items() if v is not None)]
        found += [r for t in named for r in state.rows(t) if any(r is x for x in linked)
                  and (day := _day(r.get("requested_at"))) is not None and day <= today]
        mine |= {str(r["id"]) for r in linked if r.get("id") is not None}
    return found


def unrecorded_repeat(spec: TaskSpec, state: State) -> list[str]:
    """A repeat contact the customer claims up front with no earlier ticket or request of theirs on record."""
    claim = repeat_claim(_said_up_front(spec))
    if claim is None or earlier_contacts(spec, state) or earlier_requests(spec, state, claim):
        return []
    return [f"says {claim!r} with no earlier ticket or request on record"]


# --------------------------------------------------------------------------- rule (c): no planted record predates what it cites

# When a row came into being: the first of these it has. A reference may be made only on or after
# the referenced row began: its own creation, or the day it took effect (a policy, a contract, a
# driver or vehicle on a policy) when that day has come.
CREATED = ("created_at", "placed_at", "reported_at", "requested_at", "submitted_at", "sent_at", "ordered_at", "opened_at",
           "opened_on", "issued_at", "issued_on", "granted_at", "assigned_at", "assigned_on", "enrolled_at", "logged_at",
           "captured_at", "paid_at", "verified_at", "event_time", "registration_date", "member_since", "customer_since")
STARTED = ("effective_date", "start_date", "valid_from")


def _created(row: dict[str, Any]) -> tuple[str, date] | None:
    for column in CREATED:
        day = _day(row.get(column))
        if day is not None:
            return column, day
    return None


def _began(row: dict[str, Any], today: date) -> tuple[str, date] | None:
    """When a referenced row began: its creation, else its start once started (a future start is a plan, not a beginning)."""
    created = _created(row)
    started = [(c, d) for c in STARTED if (d := _day(row.get(c))) is not None and d <= today]
    return max([*([created] if created else []), *started], key=lambda cd: cd[1], default=None)


@cache
def _references(domain: str) -> dict[str, dict[str, str]]:
    """``table -> column -> referenced table`` as ``domain.yaml`` declares them."""
    return {t: dict(meta.references) for t, meta in load_domain(domain).spec.tables.items()}


def _index(state: State) -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """Every row with an ``id``, by that id (an id shared by two tables lists both)."""
    out: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for table, rows in state.tables.items():
        for row in rows:
            if row.get("id") is not None:
                out.setdefault(str(row["id"]), []).append((table, row))
    return out


def _cited(domain: str, table: str, row: dict[str, Any], index: dict[str, list[tuple[str, dict[str, Any]]]]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(column, table, row) of each row a row cites: a declared reference, or an ``*_id`` column whose value is one row's id."""
    declared = _references(domain).get(table, {})
    for column, value in row.items():
        if value is None or not (column in declared or column.endswith("_id")):
            continue
        hits = [(t, r) for t, r in index.get(str(value), []) if r is not row]
        if column in declared:
            hits = [(t, r) for t, r in hits if t == declared[column]]
        if len(hits) == 1:
            yield column, hits[0][0], hits[0][1]


def predated(spec: TaskSpec, state: State) -> list[str]:
    """Rows the patch plants dated before a row they cite began."""
    index = _index(state)
    today = state.clock.date()
    found = []
    for table, rows in state.planted.items():
        for row in rows:
            created = _created(row)
            if created is None:
                continue
            for column, cited_table, cited in _cited(spec.domain, table, row, index):
                began = _began(cited, today)
                if began is not None and created[1] < began[1]:
                    found.append(f"{table} {row.get('id', '')} {created[0]} {created[1]} is before {column} {cited_table} "
                                 f"{cited.get('id')} {began[0]} {began[1]}")
    return found


# --------------------------------------------------------------------------- rule (d): no one is over capacity


def _number(value: Any) -> float:
    return float(value) if value not in (None, "") else 0.0


def overallocated(spec: TaskSpec, state: State) -> list[str]:
    """People whose active allocations on engagements running at the same time add up to more than 100%.

    Checked at each day an engagement of theirs starts (a total over overlapping periods is highest at
    one of those days); a staffing row that has ended no longer counts.
    """
    engagements = {str(e["id"]): e for e in state.rows("engagements")}
    by_person: dict[str, list[tuple[date, date, float, str]]] = {}
    for row in state.rows("staffing"):
        eng = engagements.get(str(row.get("engagement_id")))
        if row.get("status") != "active" or eng is None:
            continue
        start, end = _day(eng.get("start_date")), _day(eng.get("end_date"))
        if start is None or end is None:
            continue
        by_person.setdefault(str(row["employee_id"]), []).append((start, end, _number(row.get("allocation")), str(eng["id"])))
    found = []
    for person, spans in by_person.items():
        for day in sorted({s for s, _, _, _ in spans}):
            running = [(a, e) for s, end, a, e in spans if s <= day <= end]
            total = sum(a for a, _ in running)
            if total > 100:
                found.append(f"{person} is staffed {total:g}% on {day} ({', '.join(e for _, e in running)})")
                break
    return found


PERIPHERALS = ("monitor", "dock", "headset", "keyboard", "mouse")


def _holdings(state: State) -> Iterator[tuple[str, str, int]]:
    """``(holder, what, over_by)`` for each holding a policy caps that is held beyond its cap."""
    counts: dict[tuple[str, str], int] = {}
    limits: dict[tuple[str, str], int] = {}

    def hold(holder: Any, what: str, limit: int) -> None:
        counts[(str(holder), what)] = counts.get((str(holder), what), 0) + 1
        limits[(str(holder), what)] = limit

    # neobank: one active grant per application; two monitors and one of every other kind of standard peripheral in use
    # (laptops and phones are not capped: a person may hold a second laptop, and a task may ask which one is faulty)
    for row in state.rows("access_grants"):
        if row.get("status") == "active" and row.get("app_id") is not None:
            hold(row.get("employee_id"), f"active grant on {row['app_id']}", 1)
    kinds = {str(m["id"]): str(m["kind"]) for m in state.rows("asset_models")}
    for row in state.rows("assets"):
        if row.get("status") == "in_use" and row.get("assigned_to") and kinds.get(str(row.get("model_id"))) in PERIPHERALS:
            kind = kinds[str(row["model_id"])]
            hold(row["assigned_to"], f"{kind} in use", 2 if kind == "monitor" else 1)
    # neobank: no more active licence assignments than a pool has seats
    seats = {str(p["id"]): int(p["seats_total"]) for p in state.rows("licence_pools")}
    for row in state.rows("licence_assignments"):
        if row.get("status") == "active" and str(row.get("pool_id")) in seats:
            hold(row["pool_id"], "active seat", seats[str(row["pool_id"])])
    # consulting: one active device per category
    for row in state.rows("device_assignments"):
        if row.get("status") == "active":
            hold(row.get("employee_id"), f"active {row.get('category')}", 1)
    for key, n in counts.items():
        if n > limits[key]:
            yield key[0], key[1], n - limits[key]


def over_capacity(spec: TaskSpec, state: State) -> list[str]:
    """Holdings a policy caps held beyond the cap in the state a task starts from.

    A grant per application, devices per kind, seats per licence pool and devices per category are
    capacities as much as a person's 100%: a task may ask for one more, never start from one too many.
    """
    return [f"{holder} holds {over} {what} beyond the limit" for holder, what, over in _holdings(state)]


# --------------------------------------------------------------------------- the rules, the tasks they run over


Detector = Callable[[TaskSpec, State], list[str]]
RULES: dict[str, Detector] = {
    "given_away": lambda spec, state: given_away(spec),
    "unrecorded_repeat": unrecorded_repeat,
    "predated": predated,
    "overallocated": overallocated,
    "over_capacity": over_capacity,
}


def violations(specs: Iterable[TaskSpec], rule: str) -> dict[str, list[str]]:
    """``task id -> findings`` for the tasks a rule flags."""
    detector = RULES[rule]
    found = {}
    for spec in specs:
        if hits := detector(spec, state_of(spec)):
            found[spec.id] = hits
    return found











# The violations known in task set 3, by rule and domain: each detector must find exactly these.
KNOWN_IN_TASK_SET_3: dict[str, dict[str, set[str]]] = {
    # the right booking reference or incident number up front where the customer then gives a wrong one
    "given_away": {"travel": {"TR011_002", "TR011_006", "TR011_010"},      # "For booking BK-... at ..." (id_and_hotel)
                   "neobank": {"NB005_002", "NB005_006", "NB005_010"}},    # the goal named the right incident
    # "Third time I'm trying to reach someone", "second time I'm writing", "the runaround", "Hello again!"
    "unrecorded_repeat": {"insurance": {"IN001_004", "IN001_007", "IN001_008", "IN001_010", "IN001_011", "IN005_004",
                                        "IN011_001", "IN011_002", "IN011_006", "IN011_007", "IN011_011"},
                          "neobank": {"NB002_001", "NB002_002", "NB002_004", "NB002_005", "NB002_006", "NB002_008"}},
    # an order placed before its customer registered, a payment before its booking, a grant or a device before the
    # employee joined
    "predated": {"retail": {"ST008_006", "ST008_008", "ST010_001", "ST031_007"},
                 "travel": {"TR005_005"},
                 "neobank": {"NB003_004", "NB003_011"},
                 "consulting": {"HV004_009"}},
    # both halves of a two-request conversation staffed the employee: 110% or 120%
    "overallocated": {"consulting": {"HV010_003", "HV010_006", "HV010_011", "HV010_014"}},
    "over_capacity": {},
}


# --------------------------------------------------------------------------- tests


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("domain", DOMAINS)
def test_the_family_generators_break_no_rule(domain: str, rule: str) -> None:
    found = violations(generated(domain, TRAIN_SEEDS), rule)
    assert not found, found


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("domain", DOMAINS)
def test_a_frozen_set_after_task_set_3_breaks_no_rule(domain: str, rule: str) -> None:
    if current_task_set_version(domain) <= 3:
        pytest.skip(f"{domain}'s frozen set is still task set 3; the generators are checked instead")
    found = violations(load_tasks(tb.list_tasks(domain=domain)), rule)
    assert not found, found


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("domain", DOMAINS)
def test_each_detector_finds_the_violations_known_in_task_set_3(domain: str, rule: str) -> None:
    specs = task_set_3(domain)
    if specs is None:
        pytest.skip(f"{domain} keeps no task set 3")
    found = {task.split("@")[0] for task in violations(specs, rule)}
    assert found == KNOWN_IN_TASK_SET_3[rule].get(domain, set())


def test_the_repeat_contact_detector_finds_the_earlier_requests_task_set_2_told_of() -> None:
    """Consulting's task set 2 opened "This is the third time I'm asking" with no ticket on record (docs/domains/consulting.md)."""
    specs = load_tasks(tb.list_tasks("consulting", task_set_version=2))
    assert set(violations(specs, "unrecorded_repeat")) == {"HV001_005", "HV001_006", "HV001_008", "HV001_009", "HV001_010", "HV010_008"}


@pytest.mark.parametrize(("text", "claim"), [
    ("Third time I'm trying to reach someone about this.", "Third time I'm"),
    ("This is the second time I'm writing about these.", "second time I'm"),
    ("Hello again! Small one today.", "Hello again"),
    ("I called you last week about the refund and nobody got back to me.", "I called you last week"),
    ("I asked to cancel my car insurance last week, but I've changed my mind.", "I asked to cancel my car insurance last week"),
    ("Sorry to chase, but I'm following up on my ticket about a late parcel.", "following up on my ticket"),
    ("I've been meaning to do this for weeks and keep getting the runaround.", "runaround"),
    ("Your site let me order the wrong model again!", None),
    ("Finance is chasing me about your invoice again.", None),
    ("I've asked the hotel directly twice and heard nothing back. Can you help?", None),
    ("The client is waiting on me and I still have no access.", None),
])
def test_a_repeat_contact_is_read_in_any_words_and_only_with_the_company(text: str, claim: str | None) -> None:
    assert repeat_claim(text) == claim


def test_a_holding_over_its_cap_is_found() -> None:
    """No task set holds one, so a second active grant on one application and a second active device of a category are planted."""
    grant = next(s for s in generated("neobank", TRAIN_SEEDS) if any(g["status"] == "active" for g in s.patch.insert.get("access_grants", [])))
    twice = grant.model_copy(deep=True)
    row = next(g for g in twice.patch.insert["access_grants"] if g["status"] == "active")
    twice.patch.insert["access_grants"].append({**row, "id": f"{row['id']}X"})
    assert not over_capacity(grant, state_of(grant)) and over_capacity(twice, state_of(twice))
    device = next(s for s in generated("consulting", TRAIN_SEEDS) if any(r["status"] == "active" for r in s.patch.insert.get("device_assignments", [])))
    twice = device.model_copy(deep=True)
    row = next(r for r in twice.patch.insert["device_assignments"] if r["status"] == "active")
    twice.patch.insert["device_assignments"].append({**row, "asset_tag": f"{row['asset_tag']}X"})
    assert not over_capacity(device, state_of(device)) and over_capacity(twice, state_of(twice))
