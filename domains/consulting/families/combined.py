"""Two requests in one conversation: the same employee asks for two things that touch different systems.

The second request is built by its own family for the employee the first one
identified; a draw whose two halves would disagree about the employee's records
(the same engagement or client in both, an approver put on leave by one half and
asked by the other) is redrawn, so each half's branch still holds in the merged state.
The opening is one message asking for both things, written from each half's clause (the
request as a phrase its facts allow), not two openings joined together.
"""

from __future__ import annotations

import random
from typing import Any

from thinkingbox_env.authoring import StoryOpenings, TaskBody

from ..rules import ENGAGEMENTS, FOLDERS, SYSTEMS
from ._base import DeskFamily
from ._draft import DeskDraft
from ._records import joined_first
from .access import ClientSystemAccess, FolderAccess
from .equipment import HardwareRequest, SoftwareProvisioning
from .people import StaffingRequest, TrainingEnrolment
from .spending import ExpenseSubmission, TravelRequest

PAIRS: dict[str, tuple[type[DeskFamily], type[DeskFamily]]] = {
    "software+access": (SoftwareProvisioning, ClientSystemAccess),
    "hardware+expenses": (HardwareRequest, ExpenseSubmission),
    "travel+expenses": (TravelRequest, ExpenseSubmission),
    "training+staffing": (TrainingEnrolment, StaffingRequest),
    "hardware+staffing": (HardwareRequest, StaffingRequest),
    "software+expenses": (SoftwareProvisioning, ExpenseSubmission),
    "folder+access": (FolderAccess, ClientSystemAccess),
    "training+access": (TrainingEnrolment, ClientSystemAccess),
}
# reports of many lines make almost any amount a sum of some lines, which no stated amount can be checked against
LONG_REPORTS = ("finance_escalate", "practice_head")
# one message from one person asking for both things, in the words each half's facts allow ({a} and {b} are their clauses)
PAIR_OPENINGS = StoryOpenings("HV010", {"pair": ({
    "two": "Hi, two things if you can: I need {a}, and I'd also like {b}.",
    "help": "Could you help me get {a}? I'd also like {b}.",
    "like": "I'd like {a}, and I also need {b} - can you help?",
    "list_b": "Two requests from me, please: I need {a}, and {b}.",
    "plus_b": "Hello - I need {a}, plus {b} if that's possible.",
    "get_b": "Could you get me {a}, and {b} too?",
    "after_b": "I'm after {a} and {b}. Can you do both?",
}, ("list_b", "plus_b", "get_b", "after_b"))})
_KEYS = {"staffing": ("employee_id", "engagement_id"), "clearances": ("employee_id",), "onboarding": ("employee_id",),
         "expenses": ("report_id", "line_no"), "device_assignments": ("asset_tag",)}


def _key(table: str, row: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(row.get(c) for c in _KEYS.get(table, ("id",)))


def _clients(d: DeskDraft) -> set[str]:
    """Every client a draft's records or calls touch."""
    out = {ENGAGEMENTS[r["engagement_id"]]["client_id"] for r in d.patch["insert"].get("staffing", [])}
    out |= {r["client_id"] for r in d.patch["insert"].get("ndas", [])}
    for call in d.golden:
        args = call["arguments"]
        if args.get("engagement_id") in ENGAGEMENTS:
            out.add(ENGAGEMENTS[args["engagement_id"]]["client_id"])
        if args.get("system_id") in SYSTEMS:
            out.add(SYSTEMS[args["system_id"]]["client_id"])
        if args.get("folder_id") in FOLDERS:
            out.add(ENGAGEMENTS[FOLDERS[args["folder_id"]]["engagement_id"]]["client_id"])
    return out


def _approvers(d: DeskDraft) -> set[str]:
    return {c["arguments"]["approver_id"] for c in d.golden if "approver_id" in c["arguments"]} | (
        {"find_approver"} if d.has_call("find_approver") else set())


def fit_allocations(first: DeskDraft, second: DeskDraft) -> None:
    """Lower the second half's staffing allocations so the employee is never staffed over 100% at once.

    Each half stages the employee on its own engagement with an allocation of its own; together they
    could pass the policy's full-time limit, which no state of the firm's records breaks. Only a
    staffing request speaks of an allocation, so the other halves' allocations are the ones lowered.
    """
    if second.code == StaffingRequest.code:
        return
    taken = {_key("staffing", r) for r in first.patch["insert"].get("staffing", [])}
    total = sum(int(r["allocation"]) for r in first.patch["insert"].get("staffing", []) if r["status"] == "active")
    for row in second.patch["insert"].get("staffing", []):
        if row["status"] == "active" and _key("staffing", row) not in taken:
            row["allocation"] = min(int(row["allocation"]), max(10, 100 - total))
            total += row["allocation"]


def clash(first: DeskDraft, second: DeskDraft) -> str | None:
    """Why the two halves cannot share one state, or None."""
    for table, rows in second.patch["insert"].items():
        if table in ("employees", "ticket_users"):
            continue
        mine = {_key(table, r): r for r in first.patch["insert"].get(table, [])}
        for row in rows:
            if _key(table, row) in mine and mine[_key(table, row)] != row:
                return f"{table} row {_key(table, row)} differs"
    if _clients(first) & _clients(second):
        return "both requests touch the same client"
    for a, b in ((first, second), (second, first)):
        if any(u["table"] == "employees" for u in a.patch["update"]) and _approvers(b):
            return "one half puts an approver on leave, the other routes an approval"
    return None


class TwoRequests(DeskFamily):
    code = "HV010"
    name = "two_requests"
    number = 10
    description = "Two requests from one employee in one conversation, each handled by its own workflow and ticket."
    branches = tuple(PAIRS)
    held_out_branches = ("folder+access", "training+access")
    test_count = 14

    def build(self, rng: random.Random, seed: int) -> TaskBody:
        branch = self.branch(seed)
        first_cls, second_cls = PAIRS[branch]
        for attempt in range(60):
            first, second = first_cls(), second_cls()
            first.domain = second.domain = self.domain
            a_seed = seed * 97 + attempt
            first.build(first.rng(a_seed), a_seed)
            da = first.last_draft
            second.shared = first.last_who
            b_seed = seed * 89 + 3 * attempt + 1
            second.build(second.rng(b_seed), b_seed)
            db = second.last_draft
            assert da is not None and db is not None
            if db.branch in LONG_REPORTS:
                continue
            if clash(da, db) is None:
                break
        else:  # pragma: no cover - a draw always exists within a few attempts
            raise RuntimeError(f"{self.code}: no consistent pair for seed {seed}")
        for check in db.checks.get("dialogue", []):  # both halves may name a check alike; the second's get their own names
            check["name"] = f"second_{check['name']}"
        fit_allocations(da, db)
        opening, origin = PAIR_OPENINGS.pick(rng, self.split, "pair", a=da.clause, b=db.clause)
        both = da.then(db, opening)
        both.description = f"Two requests, branch '{branch}': {da.branch} then {db.branch}."
        both.origin = origin
        both.branches = [f"{self.code}:{branch}", *both.branches]
        both.tags.append(branch)
        joined_first(both)
        return both.body()
