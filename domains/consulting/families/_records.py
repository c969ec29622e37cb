"""The requester's records a task starts from: staffing, NDAs, clearance, screening, courses, approvers on leave.

Each function adds the rows of one record to the draft's patch, in the shape the seed
tables hold, so that a branch states its case ("no signed NDA", "the partner is on
leave") as the records the agent will read.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from thinkingbox_env.authoring.saying import iso

from ..rules import EMPLOYEES, TODAY
from ._draft import DeskDraft


def joined_first(d: DeskDraft) -> None:
    """Move a planted employee's start day back to their first dated record where that record came earlier.

    Nobody is assigned a device, enrolled or granted anything before they joined; the start day is
    drawn on its own (its draw stays, so every other value is unchanged) and only ever moved
    earlier. A new starter's future start day stays: their records are prepared ahead of it.
    """
    for employee in d.patch["insert"].get("employees", []):
        if employee.get("status") == "onboarding":
            continue
        dated = [str(row[column])[:10] for table, rows in d.patch["insert"].items() if table != "employees" for row in rows
                 if row.get("employee_id") == employee["id"]
                 for column in ("assigned_on", "assigned_at", "enrolled_at", "granted_at", "sent_at", "requested_at", "ordered_at",
                                "submitted_at", "created_at", "logged_at") if row.get(column)]
        if dated and min(dated) < str(employee["start_date"]):
            employee["start_date"] = min(dated)


def staff(d: DeskDraft, who: dict[str, Any], engagement: str, allocation: int = 50, status: str = "active") -> None:
    """The requester staffed on ``engagement`` at ``allocation`` percent."""
    d.add("staffing", {"employee_id": who["id"], "engagement_id": engagement, "allocation": allocation, "status": status})


def nda(d: DeskDraft, who: dict[str, Any], client: str, status: str = "signed") -> None:
    """An NDA with ``client``, sent in February and signed the next day unless ``status`` says otherwise."""
    d.add("ndas", {"id": f"NDA-{who['uid']}{len(d.patch['insert'].get('ndas', []))}", "employee_id": who["id"], "client_id": client,
                   "status": status, "sent_at": "2026-02-03 09:00:00", "signed_on": "2026-02-04" if status == "signed" else None})


def clearance(d: DeskDraft, who: dict[str, Any], level: str) -> None:
    """The security clearance the requester holds (``none`` has no expiry)."""
    d.add("clearances", {"employee_id": who["id"], "level": level, "valid_to": "2028-12-31" if level != "none" else None})


def background(d: DeskDraft, who: dict[str, Any], status: str) -> None:
    """A background check requested in March, completed where it cleared or failed."""
    d.add("background_checks", {"id": f"BGC-{who['uid']}", "employee_id": who["id"], "status": status,
                                "requested_at": "2026-03-10 09:00:00",
                                "completed_on": "2026-03-24" if status in ("cleared", "failed") else None})


def completed_course(d: DeskDraft, who: dict[str, Any], code: str, months_ago: int = 2, n: int = 0) -> None:
    """A completed enrolment on ``code``, finished about ``months_ago`` months before today."""
    done = TODAY - timedelta(days=30 * months_ago + 3)
    d.add("enrolments", {"id": f"ENR-{who['uid']}{n}", "employee_id": who["id"], "course_code": code, "status": "completed",
                         "enrolled_at": f"{iso(done - timedelta(days=10))} 09:00:00", "completed_on": iso(done)})


def on_leave(d: DeskDraft, employee_id: str) -> str:
    """Put a seed approver on leave; returns their delegate, who approves in their place."""
    d.update("employees", {"id": employee_id}, status="leave")
    return EMPLOYEES[employee_id]["delegate_id"]


__all__ = ["background", "clearance", "completed_course", "nda", "on_leave", "staff"]
