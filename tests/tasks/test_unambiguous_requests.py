"""Requests with one reading: the record a golden write acts on is the one the customer's words pick out.

A review of task set 3 named the defect class of a request with two defensible readings where the
golden picks one and the other fails: a customer with two orders (two bookings, two vehicles on the
policy) who asks to return "my order" and never says which, so that an agent acting on the other
one, as the words allow, fails a task it did nothing wrong in. The detector here is written for every domain's schema: the
record a golden write names by its key argument, the other records of that table the same customer
holds in the same status (records the same write could act on, as the policy reads), and what the
customer says up front or knows as a fact (opening, goal, later request, facts' texts and values).
The target is identified when, against each other candidate, those words name something of the
target's that the candidate does not share: its id, a value of one of its columns (a date, a
destination, a make and model), or of a row on it (an order's items) or cited by it (a hotel's name).

Matching is generous on purpose (any distinguishing word of four letters or more, dates in the
ways people write them) so that a clear request is never flagged: flagging a clear task is as wrong
as missing an ambiguous one.

An amount, date or choice the write needs that the customer never states and the policy does not
determine is not detected here: telling a value the policy derives from one the golden chose needs
each policy's arithmetic, and a detector that guesses would flag clear tasks. In task sets 3 and 4
every date a golden write holds that is neither said by the customer nor on record (24 of them) is
the policy's: a driver or vehicle change effective tomorrow, the next business day for a due date
that falls on a weekend, a grant's standard duration.

The tests assert that the family generators write no unidentified target (the seeds ``thinkingbox
freeze`` writes and a sample of training seeds), that the current frozen set has none once it is a
set frozen after this rule (version 4 on), and that the detector finds exactly the tasks listed as
known in task set 3: none, since every such write there is told apart by an order number, a product,
a make and model, a driver's name, an application or an asset tag. Planted cases (an unnamed vehicle,
a second vehicle of the same make and model, an order number withheld) show that it fails where it should.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import date
from typing import Any

import pytest
from task_rows import generated, load_tasks, starting_rows, task_set_3

import thinkingbox_env as tb
from thinkingbox_env.contracts.spec import TaskSpec
from thinkingbox_env.tasks.domain import load_domain
from thinkingbox_env.tasks.lookup import current_task_set_version

DOMAINS = ("retail", "travel", "insurance", "neobank", "consulting")
TRAIN_SEEDS = 20  # training variants per family, beside the test seeds 1..test_count freeze writes

# Tools whose writes are the conversation's own bookkeeping (a ticket, a ticket user, an identity check), not an act on
# one of the customer's records the request chooses.
NOT_A_CHOICE = ("create_ticket", "create_ticket_user", "update_ticket", "verify_identity", "report_injection")


# --------------------------------------------------------------------------- the state a task runs on


@dataclass(frozen=True)
class State:
    """A task's starting rows: the seed with the patch applied, with every row that has an id indexed by it."""

    tables: dict[str, list[dict[str, Any]]]
    by_id: dict[str, list[tuple[str, dict[str, Any]]]]

    def rows(self, table: str) -> list[dict[str, Any]]:
        return self.tables.get(table, [])


def state_of(spec: TaskSpec) -> State:
    """The rows a task starts from: seed rows, then the patch's deletes, updates and inserts."""
    tables, _ = starting_rows(spec)
    by_id: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for table, rows in tables.items():
        for row in rows:
            if row.get("id") not in (None, ""):
                by_id.setdefault(str(row["id"]), []).append((table, row))
    return State(tables, by_id)


# --------------------------------------------------------------------------- whose a record is, and what tells it apart

# The columns that say whose a record is, most direct first: a customer's or an employee's own, else the record it
# hangs off (an order's installation, a policy's vehicle), whose owner is then looked up in turn.
OWNER = ("customer_id", "employee_id", "assigned_to", "requester_id")
PARENT = ("policy_id", "order_id", "booking_id", "billing_account_id", "contract_id", "group_id", "engagement_id")


def owner(state: State, row: dict[str, Any], depth: int = 0) -> str | None:
    """The customer or employee a record belongs to, through the records it hangs off; None if none is found."""
    for column in OWNER:
        if row.get(column) not in (None, ""):
            return str(row[column])
    if depth < 3:
        for column in PARENT:
            for _, parent in state.by_id.get(str(row.get(column)), []) if row.get(column) not in (None, "") else []:
                if (found := owner(state, parent, depth + 1)) is not None:
                    return found
    return None


def _key_columns(row: dict[str, Any]) -> list[str]:
    """The columns a record is named by: its id and the ``*_id`` columns citing other records."""
    return [c for c in row if c == "id" or c.endswith("_id") or c == "assigned_to"]


def descriptors(state: State, record: dict[str, Any]) -> list[str]:
    """Every value a customer could name a record by: its own columns, the rows on it (an order's items) and the rows
    either cites (the hotel of a booking, the product of an item)."""
    near = [record]
    rid = str(record.get("id"))
    for rows in state.tables.values():
        near += [r for r in rows if r is not record and any(str(r.get(c)) == rid for c in _key_columns(r) if c != "id")]
    cited = []
    for row in near:
        for column in _key_columns(row):
            if column != "id" and row.get(column) not in (None, ""):
                cited += [r for _, r in state.by_id.get(str(row[column]), [])]
    return [str(v) for row in [*near, *cited] for v in row.values() if v not in (None, "")]


STOP = {"with", "from", "that", "this", "have", "your", "order", "orders", "none", "true", "false", "null", "standard",
        "active", "listed", "confirmed", "pending", "delivered", "shipped", "processing", "street", "unit"}


def _day(value: str) -> date | None:
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}([ T].*)?", value.strip()):
        try:
            return date.fromisoformat(value.strip()[:10])
        except ValueError:
            return None
    return None


def tokens(value: str) -> set[str]:
    """The words a value can be named by: each word of four or more characters or with a digit, the whole value, and a
    date as people write it (12 May, May 12, 12/05, the month)."""
    value = value.strip()
    out = {value.lower()}
    if (day := _day(value)) is not None:
        month, short = day.strftime("%B").lower(), day.strftime("%b").lower()
        out |= {f"{day.day} {month}", f"{month} {day.day}", f"{day.day} {short}", f"{short} {day.day}",
                f"{day.day:02d}/{day.month:02d}", f"{day.month}/{day.day}", f"{day.day}/{day.month}"}
        if month != "may":  # "in March" names a month; "may" is mostly the verb
            out.add(month)
        return out
    if len(value) > 60 or value.count(" ") >= 8:  # free text (a justification, a description) names nothing by its words
        return out
    for word in re.findall(r"[A-Za-z0-9][A-Za-z0-9.-]*[A-Za-z0-9]|[A-Za-z0-9]", value):
        if (len(word) >= 4 or any(ch.isdigit() for ch in word)) and word.lower() not in STOP:
            out.add(word.lower())
    return out


def said(spec: TaskSpec) -> str:
    """Everything the customer says or knows about the request: opening, goal, later request, each fact's text and value."""
    parts = [spec.user.opening, spec.user.intent, spec.user.change.to if spec.user.change else ""]
    parts += [t for f in spec.user.facts for t in (f.text, f.value or "")]
    return " ".join(parts).lower()


def _named(text: str, token: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(token)}(?![\w-])", text) is not None


def _table_of(state: State, value: Any) -> tuple[str, dict[str, Any]] | None:
    hits = state.by_id.get(str(value), [])
    return hits[0] if len(hits) == 1 else None


def targets(spec: TaskSpec, state: State) -> Iterator[tuple[str, str, str, dict[str, Any]]]:
    """``(tool, argument, table, row)`` for each existing record a golden write names by a key argument."""
    tools = load_domain(spec.domain).toolbox.tools
    for step in spec.golden:
        if step.expect_error or step.name in NOT_A_CHOICE or step.name not in tools or not tools[step.name].writes:
            continue
        for argument, value in step.arguments.items():
            if isinstance(value, str) and (hit := _table_of(state, value)) is not None:
                yield step.name, argument, hit[0], hit[1]


# Records a customer names through the record they hang off: a payment, a refund, a protection plan or an installation is
# chosen by the order (or booking, or billing account) the customer names, and among one order's records by the policy (a
# duplicate charge, the plan that covers accidental damage), so these are identified at their parent.
THROUGH_PARENT = ("order_id", "booking_id", "billing_account_id", "contract_id", "payment_id")


def chosen_record(state: State, table: str, row: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The record the customer's words have to pick out for a write on ``row``: the row, or the record it hangs off."""
    for _ in range(3):
        parents = [hit for c in THROUGH_PARENT if row.get(c) not in (None, "") and (hit := _table_of(state, row[c]))]
        if not parents:
            break
        table, row = parents[0]
    return table, row


def unidentified_target(spec: TaskSpec, state: State) -> list[str]:
    """Golden writes on a record the customer's words do not tell apart from another of theirs the write could act on.

    The other records are the customer's records of the same table in the same status, less those the golden acts on
    with the same tool too (copies of every vehicle's ID card choose nothing)."""
    text = said(spec)
    written = [(tool, chosen_record(state, table, row)) for tool, _, table, row in targets(spec, state)]
    found = []
    seen = set()
    for tool, (table, row) in written:
        who = owner(state, row)
        if who is None or (tool, table, row["id"]) in seen:
            continue
        seen.add((tool, table, row["id"]))
        acted = {str(r["id"]) for t, (_, r) in written if t == tool}
        mine = tokens_of(state, row)
        others = [r for r in state.rows(table) if str(r["id"]) not in acted and owner(state, r) == who
                  and r.get("status") == row.get("status")]
        alike = [r["id"] for r in others if not any(_named(text, t) for t in mine - tokens_of(state, r))]
        if alike:
            found.append(f"{tool} on {table} {row['id']} of {who}: nothing said tells it from {', '.join(map(str, alike))}")
    return found


def tokens_of(state: State, record: dict[str, Any]) -> set[str]:
    """Every word and value a record can be named by (computed per pair of records, so that what two share names neither)."""
    return {t for v in descriptors(state, record) for t in tokens(v)}


# --------------------------------------------------------------------------- the tasks it runs over


def violations(specs: Iterable[TaskSpec]) -> dict[str, list[str]]:
    """``task id -> findings`` for the tasks whose target is not identified."""
    return {spec.id: hits for spec in specs if (hits := unidentified_target(spec, state_of(spec)))}











# The tasks of task set 3 whose target the detector finds unidentified, by domain. None: every golden write on a
# record of the customer's that has a sibling the same write could act on is told apart by the opening, the goal or a fact
# (an order number, the product, a vehicle's make and model, a driver's name, an application's name); see the tests below
# for what the detector flags and what it leaves.
KNOWN_IN_TASK_SET_3: dict[str, set[str]] = {}

# Task set 3 tasks with a sibling record that the request does not tell apart, and rightly so: the golden acts on every
# sibling (an ID card for each vehicle), or the policy chooses among one order's records (the duplicate of two identical
# charges, the protection plan that covers accidental damage). A looser reading would flag them.
SETTLED_BY_THE_GOLDEN_OR_THE_POLICY = {"insurance": {"IN003_002", "IN003_009"},
                                       "retail": {"ST001_003", "ST002_001", "ST002_003", "ST010_004", "ST031_003"}}


# --------------------------------------------------------------------------- tests


@pytest.mark.parametrize("domain", DOMAINS)
def test_the_family_generators_write_no_ambiguous_target(domain: str) -> None:
    found = violations(generated(domain, TRAIN_SEEDS))
    assert not found, found


@pytest.mark.parametrize("domain", DOMAINS)
def test_a_frozen_set_after_task_set_3_has_no_ambiguous_target(domain: str) -> None:
    if current_task_set_version(domain) <= 3:
        pytest.skip(f"{domain}'s frozen set is still task set 3; the generators are checked instead")
    found = violations(load_tasks(tb.list_tasks(domain=domain)))
    assert not found, found


@pytest.mark.parametrize("domain", DOMAINS)
def test_the_detector_finds_the_ambiguous_targets_known_in_task_set_3(domain: str) -> None:
    specs = task_set_3(domain)
    if specs is None:
        pytest.skip(f"{domain} keeps no task set 3")
    assert {task.split("@")[0] for task in violations(specs)} == KNOWN_IN_TASK_SET_3.get(domain, set())


def _vehicle_removal() -> TaskSpec:
    """A removal of a vehicle the customer names by make and model, on a policy with two other vehicles."""
    spec = next(s for s in generated("insurance", TRAIN_SEEDS) if s.family == "IN007" and s.split == "test"
                and any(g.name == "remove_vehicle" for g in s.golden) and len(s.patch.insert.get("vehicles", [])) > 1)
    return spec.model_copy(deep=True)


def test_a_vehicle_the_customer_does_not_name_is_found() -> None:
    """Named by make and model the removal is clear; "my car" on a policy of several is not, nor is the make and model
    when a second vehicle of that make and model is insured too."""
    clear = _vehicle_removal()
    target = next(g.arguments["vehicle_id"] for g in clear.golden if g.name == "remove_vehicle")
    row = next(v for v in clear.patch.insert["vehicles"] if v["id"] == target)
    assert not unidentified_target(clear, state_of(clear))
    unnamed = clear.model_copy(deep=True)
    for words in (f"{row['year']} {row['make']} {row['model']}", f"{row['make']} {row['model']}", row["model"], row["make"]):
        unnamed.user.opening = unnamed.user.opening.replace(words, "car")
        unnamed.user.intent = unnamed.user.intent.replace(words, "car")
    assert unidentified_target(unnamed, state_of(unnamed))
    twin = clear.model_copy(deep=True)
    twin.patch.insert["vehicles"].append({**row, "id": f"{row['id']}9", "vin": "1HGCM82633A004352"})
    assert unidentified_target(twin, state_of(twin))


def _without_order_number(spec: TaskSpec) -> TaskSpec:
    out = spec.model_copy(deep=True)
    out.user.facts = [f for f in out.user.facts if not (f.value or "").startswith("ORD-")]
    return out


def test_an_order_told_apart_only_by_its_number_needs_the_number() -> None:
    """A customer with two delivered orders who writes "Broken product, need help." is clear once the order number is
    a fact they give, and undetermined without it."""
    tasks = [s for s in generated("retail", TRAIN_SEEDS) if s.family == "ST010" and s.split == "test"]
    unclear = [s for s in tasks if unidentified_target(_without_order_number(s), state_of(s))]
    assert unclear
    assert not [s.id for s in unclear if unidentified_target(s, state_of(s))]


@pytest.mark.parametrize("domain", sorted(SETTLED_BY_THE_GOLDEN_OR_THE_POLICY))
def test_siblings_the_golden_or_the_policy_settles_are_not_flagged(domain: str) -> None:
    specs = task_set_3(domain)
    if specs is None:
        pytest.skip(f"{domain} keeps no task set 3")
    settled = [s for s in specs if s.id.split("@")[0] in SETTLED_BY_THE_GOLDEN_OR_THE_POLICY[domain]]
    assert len(settled) == len(SETTLED_BY_THE_GOLDEN_OR_THE_POLICY[domain])
    assert not violations(settled)


@pytest.mark.parametrize(("value", "named"), [
    ("2026-06-04", {"4 june", "june 4", "jun 4", "4/6"}),
    ("Lumora 65-inch QLED TV", {"lumora", "65-inch", "qled"}),
    ("I need to make changes, not just look, and here is a long justification for it.", set()),
])
def test_a_value_is_named_by_its_words_and_dates_as_people_write_them(value: str, named: set[str]) -> None:
    assert named <= tokens(value)
    if not named:
        assert tokens(value) == {value.lower()}
