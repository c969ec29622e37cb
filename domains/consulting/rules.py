"""Halcrow & Vine's service-desk rules, shared by the tools and the task families.

Levels, clearances, onboarding phases, the catalogues and the limits of the
expense and travel policies live here once: a tool that checks a phase move and a
family that draws a task around it read the same rule. Catalogues come from the
seed, the data the tools see.
"""

from __future__ import annotations

from datetime import date, datetime
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from thinkingbox_env.authoring import domain_clock, seed_rows

NOW: datetime = domain_clock(__file__)
TODAY: date = NOW.date()

LEVELS: tuple[str, ...] = ("analyst", "consultant", "senior_consultant", "manager", "principal", "partner")
CLEARANCES: tuple[str, ...] = ("none", "baseline", "enhanced")
PHASES: tuple[str, ...] = ("preboarding", "accounts", "training", "equipped", "complete")
ROLES: tuple[str, ...] = ("developer", "analyst", "designer", "advisor", "leader")

EMPLOYEES: dict[str, dict[str, str]] = {r["id"]: r for r in seed_rows(__file__, "employees")}
ENGAGEMENTS: dict[str, dict[str, str]] = {r["id"]: r for r in seed_rows(__file__, "engagements")}
CLIENTS: dict[str, dict[str, str]] = {r["id"]: r for r in seed_rows(__file__, "clients")}
SYSTEMS: dict[str, dict[str, str]] = {r["id"]: r for r in seed_rows(__file__, "client_systems")}
FOLDERS: dict[str, dict[str, str]] = {r["id"]: r for r in seed_rows(__file__, "doc_folders")}
SOFTWARE: dict[str, dict[str, str]] = {r["sku"]: r for r in seed_rows(__file__, "software_catalog")}
HARDWARE: dict[str, dict[str, str]] = {r["sku"]: r for r in seed_rows(__file__, "hardware_catalog")}
COURSES: dict[str, dict[str, str]] = {r["code"]: r for r in seed_rows(__file__, "courses")}
PREREQUISITES: dict[str, list[str]] = {}
for _row in seed_rows(__file__, "course_prerequisites"):
    PREREQUISITES.setdefault(_row["course_code"], []).append(_row["prerequisite_code"])
EXPENSE_CAPS: dict[str, dict[str, str]] = {r["category"]: r for r in seed_rows(__file__, "expense_policy")}
TRAVEL: dict[str, dict[str, str]] = {r["region"]: r for r in seed_rows(__file__, "travel_policy")}
MANDATORY_COURSES: tuple[str, ...] = tuple(c for c, r in COURSES.items() if r["mandatory"] == "true")
INTERNAL_CLIENT = "CLI-200"

EXPENSE_LATE_DAYS = 60           # lines older than this are not reimbursed
EXPENSE_PRACTICE_HEAD_FROM = Decimal("2000.00")  # claimed totals above go to the practice head
EXPENSE_FINANCE_FROM = Decimal("5000.00")        # claimed totals above go to finance
SOFTWARE_LEAD_APPROVAL_FROM = Decimal("2000.00")  # engagement software above this annual cost
HARDWARE_PROCUREMENT_FROM = Decimal("3000.00")   # any device above this price
MAX_ALLOCATION = 100
APPROVAL_REMINDER_DAYS = 5
# the bounds of the systems of record, far above anything the policy grants
MAX_AMOUNT = Decimal("100000.00")
MAX_TRIP_DAYS = 180  # one travel request is one trip: a return half a year out is a relocation, not a request


def money(value: Any) -> str:
    """An amount as the two-decimal string the database and the seed hold."""
    return str(Decimal(str(value)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def level_rank(level: str) -> int:
    return LEVELS.index(level)


def at_least(level: str, floor: str) -> bool:
    """Whether ``level`` is ``floor`` or above in the career ladder."""
    return level_rank(level) >= level_rank(floor)


def clearance_covers(held: str, required: str) -> bool:
    return CLEARANCES.index(held) >= CLEARANCES.index(required)


def next_phase(phase: str) -> str | None:
    i = PHASES.index(phase)
    return PHASES[i + 1] if i + 1 < len(PHASES) else None


def in_bundle(sku: str, role: str) -> bool:
    """Whether the software is part of the standard bundle of a role."""
    roles = SOFTWARE[sku]["bundle_roles"]
    return roles == "all" or role in roles.split(";")


def expense_line_ok(category: str, amount: Decimal, has_receipt: bool, spent_on: date) -> str | None:
    """Why a line cannot be claimed (over the cap, no receipt, too old), or None when it can."""
    cap = EXPENSE_CAPS[category]
    if amount > Decimal(cap["cap"]):
        return "over_cap"
    if not has_receipt and amount > Decimal(cap["receipt_over"]):
        return "no_receipt"
    if (TODAY - spent_on).days > EXPENSE_LATE_DAYS:
        return "late"
    return None


def trip_estimate(fare: Decimal, region: str, nights: int) -> Decimal:
    """The estimated cost of a trip: the fare quote plus each night at the region's hotel cap."""
    return fare + Decimal(TRAVEL[region]["hotel_night_cap"]) * nights


def business_class_allowed(region: str, level: str) -> bool:
    floor = TRAVEL[region]["business_class_from_level"]
    return bool(floor) and at_least(level, floor)
