"""The desk's ticket for each request: looked for first, then opened with the status that says what happens next."""

from __future__ import annotations

from typing import Any

from thinkingbox_env.authoring.saying import policy_ref

from ._draft import DeskDraft


def existing_tickets(d: DeskDraft, who: dict[str, Any]) -> int:
    """Look for the requester's unsolved tickets (the policy has the desk check before opening one)."""
    return d.read("search_tickets", table="tickets", filter=f"requester_id eq {who['ticket_user']} and status ne 'solved'")


def ticket(d: DeskDraft, who: dict[str, Any], subject: str, category: str, status: str, description: str = "",
           team: str | None = None, priority: str | None = None) -> int:
    """Open the request's ticket: solved, pending on someone, or open with the team it is escalated to."""
    why = {"requester_id": "record:search_tickets" if who.get("ticket_user") == who["uid"] else policy_ref("Tickets"),
           "category": policy_ref("Tickets"), "status": policy_ref("Tickets"), "employee_id": "record:get_employee",
           "subject": "customer", "description": "customer"}
    args: dict[str, Any] = {"requester_id": who["ticket_user"], "subject": subject, "category": category, "status": status,
                            "employee_id": who["id"], "description": description or subject}
    if team:
        args["assigned_team"] = team
        why["assigned_team"] = policy_ref("Escalation")
    if priority:
        args["priority"] = priority
        why["priority"] = policy_ref("Escalation")
    return d.write("create_ticket", why, **args)


__all__ = ["existing_tickets", "ticket"]
