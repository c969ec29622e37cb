"""Tidewell's IT policy as code, shared by the tools and the task families.

Approval chains, grant lengths, emergency windows, procurement tiers, licence
reclaim and the troubleshooting steps owed before a replacement live here once:
a family that draws a task and the documents an agent reads state the same
numbers, and the catalogues come from the seed the tools read. Families import
this module, never ``tools``.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from thinkingbox_env.authoring import domain_clock, seed_rows

NOW: datetime = domain_clock(__file__)
TODAY: date = NOW.date()

LEVEL_RANK = {"read": 1, "write": 2, "admin": 3}
# approval code -> the approval steps, in the order they are requested
CHAINS: dict[str, tuple[str, ...]] = {
    "none": (),
    "manager": ("manager",),
    "manager_owner": ("manager", "app_owner"),
    "manager_owner_security": ("manager", "app_owner", "security"),
}
SECURITY_DEPARTMENT = "DEP-SEC"
FINANCE_DEPARTMENT = "DEP-FIN"
# admin on a restricted application is reserved for these roles
RESTRICTED_ADMIN_ROLES = frozenset({"ROLE-SRE", "ROLE-SEC"})
# emergency production access: severity -> longest window in hours (other severities get none)
EMERGENCY_HOURS = {"SEV1": 8, "SEV2": 4}
EMERGENCY_LEVEL = "write"
# the most hours one emergency grant may run in the access system itself
MAX_EMERGENCY_HOURS = 24
# account security
SUSPICIOUS_FAILED_LOGINS = 10  # confidential: never told to the employee
# procurement: the highest total each tier approves
MANAGER_LIMIT = Decimal("500.00")
DIRECTOR_LIMIT = Decimal("3000.00")
# licences: a pooled seat unused this many days may be reclaimed
RECLAIM_AFTER_DAYS = 45
# hardware: a laptop older than this many years is retired rather than repaired
LAPTOP_RETIRE_YEARS = 4
PERIPHERAL_LIMITS = {"monitor": 2}  # other kinds: one per person
# symptom -> the steps the employee must have tried before a laptop is replaced
TROUBLESHOOTING: dict[str, tuple[str, ...]] = {
    "no_power": ("power_reset", "charger_swap"),
    "battery": ("battery_diagnostic",),
    "display": ("external_display_test",),
    "keyboard": ("external_keyboard_test",),
    "overheating": ("fan_diagnostic", "os_update"),
}
STEPS: tuple[str, ...] = tuple(sorted({s for steps in TROUBLESHOOTING.values() for s in steps}))

APPLICATIONS: dict[str, dict[str, str]] = {r["id"]: r for r in seed_rows(__file__, "applications")}
LEVELS: dict[tuple[str, str], dict[str, str]] = {(r["app_id"], r["level"]): r for r in seed_rows(__file__, "access_levels")}
ROLE_DEFAULTS: dict[str, dict[str, str]] = {}
for _r in seed_rows(__file__, "role_defaults"):
    ROLE_DEFAULTS.setdefault(_r["role_id"], {})[_r["app_id"]] = _r["level"]
ROLES: dict[str, dict[str, str]] = {r["id"]: r for r in seed_rows(__file__, "roles")}
DEPARTMENTS: dict[str, dict[str, str]] = {r["id"]: r for r in seed_rows(__file__, "departments")}
EMPLOYEES: dict[str, dict[str, str]] = {r["id"]: r for r in seed_rows(__file__, "employees")}
MODELS: dict[str, dict[str, str]] = {r["id"]: r for r in seed_rows(__file__, "asset_models")}
SOFTWARE: dict[str, dict[str, str]] = {r["id"]: r for r in seed_rows(__file__, "software")}
POOLS: dict[str, dict[str, str]] = {r["software_id"]: r for r in seed_rows(__file__, "licence_pools")}


def money(value: Any) -> Decimal:
    return Decimal(str(value)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def chain(app_id: str, level: str) -> tuple[str, ...]:
    """The approval steps a request for ``level`` on ``app_id`` needs (none for a role default)."""
    return CHAINS[LEVELS[(app_id, level)]["approval"]]


def max_days(app_id: str, level: str) -> int | None:
    raw = LEVELS[(app_id, level)]["max_days"]
    return int(raw) if raw else None


def contractor_allowed(app_id: str, level: str) -> bool:
    return LEVELS[(app_id, level)]["contractor_allowed"] == "true"


def default_level(role_id: str, app_id: str) -> str | None:
    return ROLE_DEFAULTS.get(role_id, {}).get(app_id)


def covered_by_role(role_id: str, app_id: str, level: str) -> bool:
    """A level at or below the role's default for the application needs no approval."""
    d = default_level(role_id, app_id)
    return d is not None and LEVEL_RANK[d] >= LEVEL_RANK[level]


def may_hold(role_id: str, app_id: str, level: str) -> bool:
    """Admin on a restricted application is reserved for SRE and security roles."""
    return not (level == "admin" and APPLICATIONS[app_id]["classification"] == "restricted" and role_id not in RESTRICTED_ADMIN_ROLES)


def procurement_tier(total: Decimal) -> str:
    if total <= MANAGER_LIMIT:
        return "manager"
    if total <= DIRECTOR_LIMIT:
        return "director"
    return "finance"


def emergency_hours(severity: str) -> int | None:
    return EMERGENCY_HOURS.get(severity)


def expiry(days: int | None) -> str | None:
    """The expiry timestamp of a grant made now that runs ``days`` days."""
    return None if days is None else (NOW + timedelta(days=days)).strftime("%Y-%m-%d %H:%M:%S")


def security_approver() -> str:
    return DEPARTMENTS[SECURITY_DEPARTMENT]["head_id"]


def finance_approver() -> str:
    return DEPARTMENTS[FINANCE_DEPARTMENT]["head_id"]


def reclaimable(last_used: date | None) -> bool:
    return last_used is None or (TODAY - last_used).days >= RECLAIM_AFTER_DAYS
