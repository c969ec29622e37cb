"""The ids a request's golden run mints, also when an earlier request of the same conversation minted some first.

A second request is written on its own, but its golden run plays after the first one's: every
sequence the first request drew from has moved on by the rows it created, and the second
request's patch joins the first's.
"""

from __future__ import annotations

import re
from typing import Any

from thinkingbox_env.authoring import TaskDraft, predict_next_ids

# the sequence each golden write draws an id from
MINTS = {"create_ticket": "tickets", "create_ticket_user": "ticket_users", "create_access_request": "access_requests",
         "request_approval": "approvals", "provision_access": "access_grants", "grant_emergency_access": "access_grants",
         "reset_password": "security_actions", "unlock_account": "security_actions", "reset_mfa": "security_actions",
         "log_troubleshooting": "troubleshooting_steps", "create_procurement_request": "procurement_requests",
         "assign_licence": "licence_assignments"}
_NUMBER = re.compile(r"^(.*?)(\d+)$")


def _shift(value: Any, by: int) -> Any:
    """``value`` moved ``by`` places along its sequence (a number, or a prefixed zero-padded number)."""
    if by == 0:
        return value
    if isinstance(value, int):
        return value + by
    m = _NUMBER.match(str(value))
    assert m is not None, value
    return f"{m.group(1)}{int(m.group(2)) + by:0{len(m.group(2))}d}"


def minted(draft: TaskDraft) -> dict[str, int]:
    """How many ids each sequence hands out in ``draft``'s golden run (a call that fails mints nothing)."""
    counts: dict[str, int] = {}
    for call in draft.golden:
        if call.get("expect_error") is None and call["name"] in MINTS:
            table = MINTS[call["name"]]
            counts[table] = counts.get(table, 0) + 1
    return counts


def next_ids(patch: dict[str, Any], earlier: TaskDraft | None = None) -> dict[str, Any]:
    """The first id each sequence hands out in a request with ``patch``, played after ``earlier`` (where given)."""
    if earlier is None:
        return predict_next_ids(__file__, patch)
    merged: dict[str, Any] = {"insert": {t: list(rows) for t, rows in earlier.patch.get("insert", {}).items()}}
    for t, rows in (patch.get("insert") or {}).items():
        kept = merged["insert"].setdefault(t, [])
        kept.extend(r for r in rows if r not in kept)
    merged["update"] = list(earlier.patch.get("update", [])) + list(patch.get("update", []))
    moved = minted(earlier)
    return {t: _shift(v, moved.get(t, 0)) for t, v in predict_next_ids(__file__, merged).items()}
