"""Halcrow & Vine service-desk tools: HR directory, engagements, access, documents, software, hardware,
expenses, learning, approvals, travel and tickets.

Reads return plain JSON; writes check what the system of record itself would refuse
(an unknown id, a second active record where the system keeps one, no free seat, a
phase skipped) and raise a ``ToolError``. Policy decisions (who approves, whether a
prerequisite is met, which level of access) are the agent's: a tool records what it
is told when the backend allows it, and the checks judge whether it should have been.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import Field

from thinkingbox_env.state import ToolContext
from thinkingbox_env.toolkit.injection import report_injection  # noqa: F401  (offered to the agent: instructions planted in records)
from thinkingbox_env.toolkit.invariants import money_within, not_before, not_too_far_ahead, plausible_date, well_formed_text
from thinkingbox_env.toolkit.kb import search_knowledge_base
from thinkingbox_env.toolkit.ticketing import Ticketing
from thinkingbox_env.toolkit.tools import FreeText, IsoDate, ToolError, tool

from .rules import MAX_AMOUNT, MAX_TRIP_DAYS, PHASES, next_phase

# --------------------------------------------------------------------------- ticketing (the engine's kit)

TICKETING = Ticketing(
    categories=("access", "software", "hardware", "expenses", "onboarding", "training", "staffing", "travel", "general"),
    statuses=("open", "pending", "solved", "closed"),
    link_column="employee_id", link_table="employees", link_noun="employee",
    teams=("security", "procurement", "finance", "hr_ops", "learning", "travel_desk"),
    contact="the service desk", example_requester=30001, profile="HR directory record",
)
search_tickets, get_ticket, create_ticket_user, create_ticket, update_ticket = TICKETING.tools()

Kind = Literal["software", "hardware", "expense", "folder_access", "staffing", "travel", "training"]


# --------------------------------------------------------------------------- shared lookups


def _employee(db: ToolContext, employee_id: str) -> dict:
    row = db.query_one("SELECT * FROM employees WHERE id = ?", [employee_id])
    if row is None:
        raise ToolError(f"employee {employee_id} not found")
    return row


def _engagement(db: ToolContext, engagement_id: str) -> dict:
    row = db.query_one("SELECT * FROM engagements WHERE id = ?", [engagement_id])
    if row is None:
        raise ToolError(f"engagement {engagement_id} not found")
    return row


def _person(db: ToolContext, employee_id: str | None) -> dict | None:
    if not employee_id:
        return None
    row = db.query_one("SELECT id, name, level, status, delegate_id FROM employees WHERE id = ?", [employee_id])
    return row


def _approval(db: ToolContext, kind: str, subject: str, requester_id: str, approver_id: str, amount: Decimal | None, note: str) -> str:
    """An approval row: the approvals system is where every routed decision is recorded."""
    approver = _employee(db, approver_id)
    if approver_id == requester_id:
        raise ToolError("an employee cannot approve their own request")
    if approver["status"] == "leave":
        raise ToolError(f"approver {approver_id} is on leave and receives no approvals; route to their delegate")
    aid = db.next_id("approvals")
    db.execute("INSERT INTO approvals VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, ?)",
               [aid, kind, subject, requester_id, approver_id, amount, note, db.now])
    return aid


# --------------------------------------------------------------------------- HR directory and onboarding


@tool
def get_employee(db: ToolContext, employee_id: str | None = None, email: str | None = None) -> dict:
    """Look up a member of staff in the HR directory by employee id or work email, with their onboarding phase.

    Args:
        employee_id: Employee id, e.g. EMP-10011.
        email: Work email address.
    """
    if employee_id is None and email is None:
        raise ToolError("give employee_id or email")
    if employee_id is not None:
        row = db.query_one("SELECT * FROM employees WHERE id = ?", [employee_id.strip()])
    else:
        row = db.query_one("SELECT * FROM employees WHERE lower(email) = lower(?)", [(email or "").strip()])
    if row is None:
        raise ToolError(f"no employee found for {employee_id or email}")
    phase = db.query_one("SELECT phase, updated_at FROM onboarding WHERE employee_id = ?", [row["id"]])
    row["onboarding"] = phase
    row["manager"] = _person(db, row["manager_id"])
    return row


@tool(writes=True)
def advance_onboarding(db: ToolContext, employee_id: str, phase: Literal["accounts", "training", "equipped", "complete"]) -> dict:
    """Move a joiner to the next onboarding phase (phases run preboarding, accounts, training, equipped, complete).

    Args:
        employee_id: The joiner's employee id.
        phase: The phase to move to; it must be the one right after the current phase.
    """
    _employee(db, employee_id)
    row = db.query_one("SELECT * FROM onboarding WHERE employee_id = ?", [employee_id])
    if row is None:
        raise ToolError(f"employee {employee_id} has no onboarding record")
    expected = next_phase(row["phase"])
    if expected != phase:
        raise ToolError(f"employee {employee_id} is in phase {row['phase']}; the next phase is {expected or 'none (onboarding is complete)'}, not {phase}")
    db.execute("UPDATE onboarding SET phase = ?, updated_at = ? WHERE employee_id = ?", [phase, db.now, employee_id])
    if phase == "complete":
        db.execute("UPDATE employees SET status = 'active' WHERE id = ?", [employee_id])
    return {"employee_id": employee_id, "phase": phase, "phases": list(PHASES)}


# --------------------------------------------------------------------------- engagements and staffing


@tool
def get_engagement(db: ToolContext, engagement_id: str) -> dict:
    """Read an engagement: client, status, dates, lead and partner, billable or internal.

    Args:
        engagement_id: Engagement code, e.g. ENG-4101.
    """
    row = _engagement(db, engagement_id)
    row["client"] = db.query_one("SELECT * FROM clients WHERE id = ?", [row["client_id"]])
    row["lead"] = _person(db, row["lead_id"])
    row["partner"] = _person(db, row["partner_id"])
    return row


@tool
def get_staffing(db: ToolContext, employee_id: str) -> dict:
    """The engagements an employee is staffed on, with allocations and the total active allocation.

    Args:
        employee_id: Employee id.
    """
    _employee(db, employee_id)
    rows = db.query("SELECT s.*, e.name AS engagement_name, e.client_id, e.status AS engagement_status, e.end_date "
                    "FROM staffing s JOIN engagements e ON e.id = s.engagement_id WHERE s.employee_id = ? ORDER BY s.engagement_id",
                    [employee_id])
    total = sum(r["allocation"] for r in rows if r["status"] == "active")
    return {"employee_id": employee_id, "staffing": rows, "active_allocation": total}


# --------------------------------------------------------------------------- approvals


@tool
def find_approver(db: ToolContext, employee_id: str, engagement_id: str | None = None) -> dict:
    """Who can approve for an employee: line manager, practice head and, for an engagement, its lead and partner.

    Each approver is shown with their status and delegate (who approves while they are on leave).

    Args:
        employee_id: The requester's employee id.
        engagement_id: The engagement the request is charged to, if any.
    """
    emp = _employee(db, employee_id)
    head = db.query_one("SELECT id FROM employees WHERE practice = ? AND level = 'partner' ORDER BY id LIMIT 1", [emp["practice"]])
    out: dict[str, Any] = {"employee_id": employee_id, "line_manager": _person(db, emp["manager_id"]),
                           "practice_head": _person(db, head["id"] if head else None)}
    if engagement_id is not None:
        eng = _engagement(db, engagement_id)
        out["engagement_lead"] = _person(db, eng["lead_id"])
        out["engagement_partner"] = _person(db, eng["partner_id"])
    return out


@tool
def get_approvals(db: ToolContext, employee_id: str) -> dict:
    """Approval requests raised for an employee, newest first.

    Args:
        employee_id: The requester's employee id.
    """
    _employee(db, employee_id)
    return {"employee_id": employee_id,
            "approvals": db.query("SELECT * FROM approvals WHERE requester_id = ? ORDER BY created_at DESC, id DESC", [employee_id])}


@tool(writes=True)
def request_approval(db: ToolContext, kind: Kind, subject: str, requester_id: str, approver_id: str,
                     amount: Annotated[float, Field(ge=0)] | None = None, note: FreeText = "") -> dict:
    """Route a request to an approver; it waits in the approvals system as pending.

    Args:
        kind: What is approved: software, hardware, expense, folder_access, staffing, travel or training.
        subject: What the approval is for: a software or hardware SKU, a folder id, an engagement code, a course code.
        requester_id: Employee id of the person asking.
        approver_id: Employee id of the approver.
        amount: The cost at stake, if any.
        note: What the approver needs to know.
    """
    _employee(db, requester_id)
    if not subject.strip():
        raise ToolError("subject must not be empty")
    value = money_within(Decimal(str(amount)), "amount", MAX_AMOUNT) if amount is not None else None
    aid = _approval(db, kind, subject.strip(), requester_id, approver_id, value, note)
    return db.query_one("SELECT * FROM approvals WHERE id = ?", [aid]) or {}


# --------------------------------------------------------------------------- client systems, compliance, VPN


@tool
def get_client_system(db: ToolContext, system_id: str) -> dict:
    """A client system with its requirements: clearance level, background check, VPN.

    Args:
        system_id: System id, e.g. SYS-501.
    """
    row = db.query_one("SELECT * FROM client_systems WHERE id = ?", [system_id])
    if row is None:
        raise ToolError(f"client system {system_id} not found")
    row["client"] = db.query_one("SELECT * FROM clients WHERE id = ?", [row["client_id"]])
    return row


@tool
def get_compliance_record(db: ToolContext, employee_id: str) -> dict:
    """An employee's NDAs per client, security clearance and background checks.

    Args:
        employee_id: Employee id.
    """
    _employee(db, employee_id)
    return {
        "employee_id": employee_id,
        "ndas": db.query("SELECT * FROM ndas WHERE employee_id = ? ORDER BY sent_at", [employee_id]),
        "clearance": db.query_one("SELECT level, valid_to FROM clearances WHERE employee_id = ?", [employee_id]) or {"level": "none", "valid_to": None},
        "background_checks": db.query("SELECT * FROM background_checks WHERE employee_id = ? ORDER BY requested_at", [employee_id]),
    }


@tool
def get_access(db: ToolContext, employee_id: str) -> dict:
    """What an employee can reach: client-system grants, VPN profiles and document-folder access.

    Args:
        employee_id: Employee id.
    """
    _employee(db, employee_id)
    return {
        "employee_id": employee_id,
        "system_grants": db.query("SELECT * FROM access_grants WHERE employee_id = ? ORDER BY id", [employee_id]),
        "vpn_profiles": db.query("SELECT * FROM vpn_profiles WHERE employee_id = ? ORDER BY id", [employee_id]),
        "folders": db.query("SELECT * FROM folder_access WHERE employee_id = ? ORDER BY id", [employee_id]),
    }


@tool(writes=True)
def send_nda(db: ToolContext, employee_id: str, client_id: str) -> dict:
    """Send a client NDA to an employee for e-signature; it stays 'sent' until they sign.

    Args:
        employee_id: Employee id.
        client_id: Client id, e.g. CLI-201.
    """
    _employee(db, employee_id)
    if db.query_one("SELECT id FROM clients WHERE id = ?", [client_id]) is None:
        raise ToolError(f"client {client_id} not found")
    live = db.query_one("SELECT id, status FROM ndas WHERE employee_id = ? AND client_id = ? AND status IN ('sent', 'signed')", [employee_id, client_id])
    if live is not None:
        raise ToolError(f"employee {employee_id} already has NDA {live['id']} ({live['status']}) for client {client_id}")
    nid = db.next_id("ndas")
    return db.execute("INSERT INTO ndas VALUES (?, ?, ?, 'sent', ?, NULL) RETURNING *", [nid, employee_id, client_id, db.now])[0]


@tool(writes=True)
def request_background_check(db: ToolContext, employee_id: str) -> dict:
    """Ask the screening provider for a background check.

    Args:
        employee_id: Employee id.
    """
    _employee(db, employee_id)
    open_check = db.query_one("SELECT id, status FROM background_checks WHERE employee_id = ? AND status IN ('requested', 'in_progress')", [employee_id])
    if open_check is not None:
        raise ToolError(f"background check {open_check['id']} is already {open_check['status']}")
    bid = db.next_id("background_checks")
    return db.execute("INSERT INTO background_checks VALUES (?, ?, 'requested', ?, NULL) RETURNING *", [bid, employee_id, db.now])[0]


@tool(writes=True)
def grant_system_access(db: ToolContext, employee_id: str, system_id: str, engagement_id: str, expires_on: IsoDate) -> dict:
    """Grant an employee access to a client system for an engagement, until a date.

    Args:
        employee_id: Employee id.
        system_id: Client system id.
        engagement_id: The engagement the access is for; its client must own the system.
        expires_on: Last day of access (YYYY-MM-DD).
    """
    _employee(db, employee_id)
    system = db.query_one("SELECT * FROM client_systems WHERE id = ?", [system_id])
    if system is None:
        raise ToolError(f"client system {system_id} not found")
    eng = _engagement(db, engagement_id)
    if eng["client_id"] != system["client_id"]:
        raise ToolError(f"system {system_id} belongs to client {system['client_id']}, not to the client of {engagement_id}")
    not_before(plausible_date(expires_on, "expires_on"), db.now.date(), "expires_on", "today")
    not_too_far_ahead(expires_on, db.now.date(), "expires_on")
    live = db.query_one("SELECT id FROM access_grants WHERE employee_id = ? AND system_id = ? AND status = 'active'", [employee_id, system_id])
    if live is not None:
        raise ToolError(f"employee {employee_id} already has active access {live['id']} to {system_id}")
    gid = db.next_id("access_grants")
    return db.execute("INSERT INTO access_grants VALUES (?, ?, ?, ?, 'active', ?, ?) RETURNING *",
                      [gid, employee_id, system_id, engagement_id, expires_on, db.now])[0]


@tool(writes=True)
def create_vpn_profile(db: ToolContext, employee_id: str, client_id: str, expires_on: IsoDate) -> dict:
    """Create a client VPN profile for an employee, valid until a date.

    Args:
        employee_id: Employee id.
        client_id: Client id whose network the profile reaches.
        expires_on: Last day the profile works (YYYY-MM-DD).
    """
    _employee(db, employee_id)
    if db.query_one("SELECT id FROM clients WHERE id = ?", [client_id]) is None:
        raise ToolError(f"client {client_id} not found")
    not_before(plausible_date(expires_on, "expires_on"), db.now.date(), "expires_on", "today")
    not_too_far_ahead(expires_on, db.now.date(), "expires_on")
    live = db.query_one("SELECT id FROM vpn_profiles WHERE employee_id = ? AND client_id = ? AND status = 'active'", [employee_id, client_id])
    if live is not None:
        raise ToolError(f"employee {employee_id} already has active VPN profile {live['id']} for {client_id}")
    vid = db.next_id("vpn_profiles")
    return db.execute("INSERT INTO vpn_profiles VALUES (?, ?, ?, 'active', ?, ?) RETURNING *", [vid, employee_id, client_id, expires_on, db.now])[0]


# --------------------------------------------------------------------------- documents


@tool
def get_folder(db: ToolContext, folder_id: str) -> dict:
    """A document folder: its engagement, confidentiality and who has access.

    Args:
        folder_id: Folder id, e.g. FLD-41012.
    """
    row = db.query_one("SELECT * FROM doc_folders WHERE id = ?", [folder_id])
    if row is None:
        raise ToolError(f"folder {folder_id} not found")
    row["access"] = db.query("SELECT employee_id, level, granted_at FROM folder_access WHERE folder_id = ? ORDER BY id", [folder_id])
    return row


@tool
def list_folders(db: ToolContext, engagement_id: str) -> dict:
    """The document folders of an engagement.

    Args:
        engagement_id: Engagement code.
    """
    _engagement(db, engagement_id)
    return {"engagement_id": engagement_id, "folders": db.query("SELECT * FROM doc_folders WHERE engagement_id = ? ORDER BY id", [engagement_id])}


@tool(writes=True)
def grant_folder_access(db: ToolContext, folder_id: str, employee_id: str, level: Literal["read", "edit"], approval_id: str | None = None) -> dict:
    """Give an employee read or edit access to a document folder; the grant is written to the access log.

    Args:
        folder_id: Folder id.
        employee_id: Employee id.
        level: "read" or "edit".
        approval_id: The approval that authorises the grant, for folders that need one.
    """
    _employee(db, employee_id)
    if db.query_one("SELECT id FROM doc_folders WHERE id = ?", [folder_id]) is None:
        raise ToolError(f"folder {folder_id} not found")
    if approval_id is not None and db.query_one("SELECT id FROM approvals WHERE id = ?", [approval_id]) is None:
        raise ToolError(f"approval {approval_id} not found")
    same = db.query_one("SELECT id FROM folder_access WHERE folder_id = ? AND employee_id = ? AND level = ?", [folder_id, employee_id, level])
    if same is not None:
        raise ToolError(f"employee {employee_id} already has {level} access to {folder_id}")
    fid = db.next_id("folder_access")
    row = db.execute("INSERT INTO folder_access VALUES (?, ?, ?, ?, ?, ?) RETURNING *", [fid, folder_id, employee_id, level, approval_id, db.now])[0]
    db.execute("INSERT INTO access_logs VALUES (?, ?, ?, ?, ?)", [db.next_id("access_logs"), folder_id, employee_id, f"grant_{level}", db.now])
    return row


# --------------------------------------------------------------------------- software


@tool
def search_software(db: ToolContext, query: Annotated[str, Field(min_length=1)]) -> dict:
    """Search the software catalogue by name or SKU: role bundles, engagement-only titles, cost and free seats.

    Args:
        query: Part of the product name or SKU.
    """
    rows = db.query("SELECT *, seats_total - seats_used AS seats_free FROM software_catalog "
                    "WHERE lower(name) LIKE lower(?) OR lower(sku) LIKE lower(?) ORDER BY sku", [f"%{query.strip()}%"] * 2)
    return {"items": rows, "count": len(rows)}


@tool
def get_licences(db: ToolContext, employee_id: str) -> dict:
    """The software licences assigned to an employee.

    Args:
        employee_id: Employee id.
    """
    _employee(db, employee_id)
    return {"employee_id": employee_id, "licences": db.query("SELECT * FROM licences WHERE employee_id = ? ORDER BY id", [employee_id])}


@tool(writes=True)
def provision_licence(db: ToolContext, employee_id: str, sku: str, engagement_id: str | None = None, approval_id: str | None = None) -> dict:
    """Assign a software licence seat to an employee.

    Args:
        employee_id: Employee id.
        sku: Software SKU, e.g. SW-IDE.
        engagement_id: The engagement the licence is charged to (required for engagement-only software).
        approval_id: The approval that authorises it, when one was needed.
    """
    _employee(db, employee_id)
    item = db.query_one("SELECT * FROM software_catalog WHERE sku = ?", [sku])
    if item is None:
        raise ToolError(f"software {sku} not found")
    if item["engagement_only"] and engagement_id is None:
        raise ToolError(f"{sku} is licensed per engagement: give engagement_id")
    if engagement_id is not None:
        _engagement(db, engagement_id)
    if approval_id is not None and db.query_one("SELECT id FROM approvals WHERE id = ?", [approval_id]) is None:
        raise ToolError(f"approval {approval_id} not found")
    live = db.query_one("SELECT id FROM licences WHERE employee_id = ? AND sku = ? AND status = 'active'", [employee_id, sku])
    if live is not None:
        raise ToolError(f"employee {employee_id} already holds licence {live['id']} for {sku}")
    if item["seats_used"] >= item["seats_total"]:
        raise ToolError(f"no free seats for {sku} ({item['seats_used']} of {item['seats_total']} in use)")
    lid = db.next_id("licences")
    db.execute("UPDATE software_catalog SET seats_used = seats_used + 1 WHERE sku = ?", [sku])
    return db.execute("INSERT INTO licences VALUES (?, ?, ?, ?, ?, 'active', ?) RETURNING *", [lid, employee_id, sku, engagement_id, approval_id, db.now])[0]


# --------------------------------------------------------------------------- hardware


@tool
def search_hardware(db: ToolContext, category: Literal["laptop", "monitor", "phone", "headset", "dock"] | None = None) -> dict:
    """The hardware catalogue, optionally one category: price and the lowest level each item is issued to.

    Args:
        category: laptop, monitor, phone, headset or dock.
    """
    if category is None:
        rows = db.query("SELECT * FROM hardware_catalog ORDER BY sku")
    else:
        rows = db.query("SELECT * FROM hardware_catalog WHERE category = ? ORDER BY sku", [category])
    return {"items": rows, "count": len(rows)}


@tool
def get_devices(db: ToolContext, employee_id: str) -> dict:
    """The devices assigned to an employee and their hardware orders.

    Args:
        employee_id: Employee id.
    """
    _employee(db, employee_id)
    return {"employee_id": employee_id,
            "devices": db.query("SELECT * FROM device_assignments WHERE employee_id = ? ORDER BY asset_tag", [employee_id]),
            "orders": db.query("SELECT * FROM hardware_orders WHERE employee_id = ? ORDER BY id", [employee_id])}


@tool(writes=True)
def order_hardware(db: ToolContext, employee_id: str, sku: str, reason: Literal["new_joiner", "entitlement", "replacement"],
                   replaces_asset: str | None = None) -> dict:
    """Place a hardware order for an employee at the catalogue price.

    Args:
        employee_id: Employee id.
        sku: Hardware SKU, e.g. HW-LAP-STD.
        reason: new_joiner, entitlement, or replacement (of a faulty device).
        replaces_asset: Asset tag of the device being replaced (for a replacement).
    """
    _employee(db, employee_id)
    item = db.query_one("SELECT * FROM hardware_catalog WHERE sku = ?", [sku])
    if item is None:
        raise ToolError(f"hardware {sku} not found")
    if (reason == "replacement") != (replaces_asset is not None):
        raise ToolError("a replacement names the asset it replaces (replaces_asset), and only a replacement does")
    if replaces_asset is not None:
        old = db.query_one("SELECT * FROM device_assignments WHERE asset_tag = ?", [replaces_asset])
        if old is None or old["employee_id"] != employee_id:
            raise ToolError(f"asset {replaces_asset} is not assigned to {employee_id}")
        db.execute("UPDATE device_assignments SET status = 'returned' WHERE asset_tag = ?", [replaces_asset])
    oid = db.next_id("hardware_orders")
    return db.execute("INSERT INTO hardware_orders VALUES (?, ?, ?, ?, ?, ?, 'placed', ?) RETURNING *",
                      [oid, employee_id, sku, reason, replaces_asset, item["price"], db.now])[0]


# --------------------------------------------------------------------------- expenses


@tool
def get_expense_report(db: ToolContext, report_id: str) -> dict:
    """An expense report with its lines, and the limits per category.

    Args:
        report_id: Report id, e.g. EXR-5001.
    """
    row = db.query_one("SELECT * FROM expense_reports WHERE id = ?", [report_id])
    if row is None:
        raise ToolError(f"expense report {report_id} not found")
    row["lines"] = db.query("SELECT * FROM expenses WHERE report_id = ? ORDER BY line_no", [report_id])
    row["limits"] = db.query("SELECT * FROM expense_policy ORDER BY category")
    return row


@tool(writes=True)
def submit_expense_report(db: ToolContext, report_id: str, approver_id: str, excluded_lines: list[int] | None = None) -> dict:
    """Submit a draft expense report to an approver, leaving out the lines that cannot be claimed.

    Args:
        report_id: Report id.
        approver_id: Employee id of the approver.
        excluded_lines: Line numbers left out of the claim.
    """
    report = db.query_one("SELECT * FROM expense_reports WHERE id = ?", [report_id])
    if report is None:
        raise ToolError(f"expense report {report_id} not found")
    if report["status"] != "draft":
        raise ToolError(f"expense report {report_id} is {report['status']}, not a draft")
    lines = {r["line_no"]: r for r in db.query("SELECT * FROM expenses WHERE report_id = ?", [report_id])}
    excluded = sorted(set(excluded_lines or []))
    unknown = [n for n in excluded if n not in lines]
    if unknown:
        raise ToolError(f"expense report {report_id} has no line {unknown[0]}")
    if len(excluded) == len(lines):
        raise ToolError("every line is excluded: there is nothing to submit")
    total = sum((Decimal(str(r["amount"])) for n, r in lines.items() if n not in excluded), Decimal("0"))
    aid = _approval(db, "expense", report_id, report["employee_id"], approver_id, total, "")
    for n in lines:
        db.execute("UPDATE expenses SET status = ? WHERE report_id = ? AND line_no = ?", ["excluded" if n in excluded else "claimed", report_id, n])
    db.execute("UPDATE expense_reports SET status = 'submitted', approver_id = ?, claimed_total = ?, submitted_at = ? WHERE id = ?",
               [approver_id, total, db.now, report_id])
    return {"report_id": report_id, "status": "submitted", "claimed_total": total, "approval_id": aid, "excluded_lines": excluded}


# --------------------------------------------------------------------------- learning


@tool
def get_course(db: ToolContext, course_code: str) -> dict:
    """A course: mandatory or not, lowest level, external fee, validity, seats and prerequisites.

    Args:
        course_code: Course code, e.g. CRS-211.
    """
    row = db.query_one("SELECT * FROM courses WHERE code = ?", [course_code])
    if row is None:
        raise ToolError(f"course {course_code} not found")
    row["prerequisites"] = [r["prerequisite_code"] for r in db.query("SELECT prerequisite_code FROM course_prerequisites WHERE course_code = ? ORDER BY 1", [course_code])]
    return row


@tool
def get_enrolments(db: ToolContext, employee_id: str) -> dict:
    """An employee's course enrolments and completions.

    Args:
        employee_id: Employee id.
    """
    _employee(db, employee_id)
    return {"employee_id": employee_id, "enrolments": db.query("SELECT * FROM enrolments WHERE employee_id = ? ORDER BY id", [employee_id])}


@tool(writes=True)
def enrol_course(db: ToolContext, employee_id: str, course_code: str, waitlist: bool = False) -> dict:
    """Enrol an employee on a course, or put them on its waitlist.

    Args:
        employee_id: Employee id.
        course_code: Course code.
        waitlist: True to join the waitlist of a full course.
    """
    _employee(db, employee_id)
    course = db.query_one("SELECT * FROM courses WHERE code = ?", [course_code])
    if course is None:
        raise ToolError(f"course {course_code} not found")
    live = db.query_one("SELECT id, status FROM enrolments WHERE employee_id = ? AND course_code = ? AND status IN ('enrolled', 'waitlisted')", [employee_id, course_code])
    if live is not None:
        raise ToolError(f"employee {employee_id} is already {live['status']} on {course_code} ({live['id']})")
    full = course["seats_taken"] >= course["seats"]
    if full and not waitlist:
        raise ToolError(f"course {course_code} is full ({course['seats']} seats); join the waitlist instead")
    if waitlist and not full:
        raise ToolError(f"course {course_code} has free seats; enrol directly")
    eid = db.next_id("enrolments")
    status = "waitlisted" if waitlist else "enrolled"
    if not waitlist:
        db.execute("UPDATE courses SET seats_taken = seats_taken + 1 WHERE code = ?", [course_code])
    return db.execute("INSERT INTO enrolments VALUES (?, ?, ?, ?, ?, NULL) RETURNING *", [eid, employee_id, course_code, status, db.now])[0]


# --------------------------------------------------------------------------- travel


@tool
def get_travel_policy(db: ToolContext, region: Literal["domestic", "europe", "long_haul"] | None = None) -> dict:
    """Travel policy per region: hotel cap per night, minimum days of notice, business-class level.

    Args:
        region: domestic, europe or long_haul; all regions when omitted.
    """
    if region is None:
        return {"regions": db.query("SELECT * FROM travel_policy ORDER BY region")}
    return {"regions": db.query("SELECT * FROM travel_policy WHERE region = ?", [region])}


@tool
def get_travel_requests(db: ToolContext, employee_id: str) -> dict:
    """An employee's travel requests.

    Args:
        employee_id: Employee id.
    """
    _employee(db, employee_id)
    return {"employee_id": employee_id, "requests": db.query("SELECT * FROM travel_requests WHERE employee_id = ? ORDER BY id", [employee_id])}


@tool(writes=True)
def create_travel_request(db: ToolContext, employee_id: str, engagement_id: str, destination: Annotated[str, Field(min_length=1)],
                          region: Literal["domestic", "europe", "long_haul"], depart_on: IsoDate, return_on: IsoDate,
                          travel_class: Literal["economy", "premium_economy", "business"],
                          estimated_cost: Annotated[float, Field(gt=0)], approver_id: str) -> dict:
    """Raise a travel request; it is routed to the approver as a pending travel approval.

    Args:
        employee_id: The traveller's employee id.
        engagement_id: The engagement the trip is charged to.
        destination: City of destination.
        region: domestic, europe or long_haul.
        depart_on: Departure date (YYYY-MM-DD).
        return_on: Return date (YYYY-MM-DD).
        travel_class: economy, premium_economy or business.
        estimated_cost: Fare plus hotel nights at the policy cap.
        approver_id: Employee id of the approver.
    """
    _employee(db, employee_id)
    _engagement(db, engagement_id)
    dest = well_formed_text(destination, "destination")
    not_before(plausible_date(depart_on, "depart_on"), db.now.date(), "depart_on", "today")
    not_too_far_ahead(depart_on, db.now.date(), "depart_on")
    if return_on < depart_on:
        raise ToolError("return_on is before depart_on")
    if (return_on - depart_on).days > MAX_TRIP_DAYS:
        raise ToolError(f"return_on is {(return_on - depart_on).days} days after depart_on; a travel request covers at most {MAX_TRIP_DAYS} days")
    cost = money_within(Decimal(str(estimated_cost)), "estimated_cost", MAX_AMOUNT)
    tid = db.next_id("travel_requests")
    _approval(db, "travel", tid, employee_id, approver_id, cost, "")
    return db.execute("INSERT INTO travel_requests VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending_approval', ?) RETURNING *",
                      [tid, employee_id, engagement_id, dest, region, depart_on, return_on, travel_class, cost, approver_id, db.now])[0]


# --------------------------------------------------------------------------- policy search


@tool
def search_policy(db: ToolContext, query: Annotated[str, Field(min_length=1)], top_k: Annotated[int, Field(ge=1, le=5)] = 3) -> dict:
    """Search the service-desk knowledge base (access prerequisites, limits, approval routes, procedures).

    Args:
        query: What to look for, in plain words.
        top_k: Number of documents to return (1-5).
    """
    return {"results": search_knowledge_base(db, query, top_k)}

