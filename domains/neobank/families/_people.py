"""The people a service-desk task is about: generation data, and an employee with the rows that describe them.

Names, places and agencies are generation data and live here; policy numbers come from ``rules``.
A ``Person`` outlives one request: in a two-request conversation the second request finds them
already identified and their ticketing user already known.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

from thinkingbox_env.authoring.saying import iso

from ..rules import DEPARTMENTS, EMPLOYEES, ROLES, TODAY

FIRST = ["Aoife", "Benedikt", "Carys", "Dmitri", "Elspeth", "Faisal", "Greer", "Hollis", "Inka", "Jarrah", "Kalinda", "Lorcan",
         "Mireille", "Nikolai", "Orla", "Pascale", "Quillon", "Rosalind", "Stellan", "Thea", "Ulrike", "Valentin", "Wilhelmina",
         "Xavi", "Yara", "Zephyr", "Amara", "Bodhi", "Cressida", "Dagny"]
LAST = ["Abernethy", "Bellamy", "Calloway", "Dunleavy", "Eriksen", "Fenwick", "Galbraith", "Hargreave", "Iverson", "Jessop",
        "Kavanagh", "Lindqvist", "Montague", "Nightingale", "Okafor", "Pemberton", "Quarrie", "Rasmussen", "Sinclair", "Thistlewood",
        "Underwood", "Vandermeer", "Whitcombe", "Yardley"]
LOCATIONS = ["Leith office", "Canal Street office", "Remote"]
AGENCIES = ["Brightpath Talent", "Northgate Contracting", "Saltmarsh Digital"]

# the line managers in the seed, per department (requesters report to them)
MANAGERS = {e["department_id"]: e["id"] for e in EMPLOYEES.values() if e["level"] == "5" and e["role_id"] != "ROLE-DIR"
            and e["id"] not in ("EMP-10019", "EMP-10020")}
ROLE_DEPT = {r: ROLES[r]["department_id"] for r in ROLES}
WORKER_ROLES = ["ROLE-SWE", "ROLE-SRE", "ROLE-DAN", "ROLE-PAY", "ROLE-FRA", "ROLE-CMP", "ROLE-ACC", "ROLE-HRP", "ROLE-CSA", "ROLE-SEC"]


@dataclass
class Person:
    """An employee (or contractor) created for a task, with the rows that describe them."""

    row: dict[str, Any]
    account: dict[str, Any]
    ticket_user: dict[str, Any] | None
    grants: list[dict[str, Any]] = field(default_factory=list)
    contract: dict[str, Any] | None = None
    wrong_email: str | None = None  # the email the person gives first, when they misremember it
    identified: bool = False  # found in the directory earlier in the conversation (a second request)
    requester_id: int | None = None  # their ticketing user, once looked up or created

    @property
    def id(self) -> str:
        return str(self.row["id"])

    @property
    def uid(self) -> str:
        """The number of their employee id: the stem of every id written for them (grants, assets, requests)."""
        return self.id.split("-")[1]

    @property
    def email(self) -> str:
        return str(self.row["email"])

    @property
    def given_email(self) -> str:
        """The email the person writes first (an opening never states a value their facts say they get wrong)."""
        return self.wrong_email or self.email

    @property
    def name(self) -> str:
        return str(self.row["name"])

    @property
    def first(self) -> str:
        return self.name.split()[0]

    @property
    def manager(self) -> str:
        return str(self.row["manager_id"])

    @property
    def department(self) -> str:
        return str(self.row["department_id"])

    @property
    def head(self) -> str:
        return DEPARTMENTS[self.department]["head_id"]

    @property
    def sponsor(self) -> str | None:
        return self.contract["sponsor_id"] if self.contract else None

    def grant(self, k: int, app: str, level: str, source: str, granted: date | None = None, status: str = "active",
              expires: str | None = None, request: str | None = None) -> dict[str, Any]:
        """An access grant row of theirs, the ``k``-th (by default granted 200 days ago, or on their first day if they joined since)."""
        g = granted or max(TODAY - timedelta(days=200), date.fromisoformat(str(self.row["start_date"])))
        return {"id": f"GRT-{self.uid}{k:02d}", "employee_id": self.id, "app_id": app, "level": level, "status": status, "source": source,
                "request_id": request, "incident_id": None, "granted_at": f"{iso(g)} 09:00:00", "expires_at": expires}

    def sign_contract(self, rng: random.Random, end: date, status: str = "active") -> None:
        """Their contract, ending on ``end``; it has started (an active contract never starts after today)."""
        start = min(end - timedelta(days=rng.randint(200, 300)), TODAY - timedelta(days=rng.randint(20, 90)))
        self.contract = {"id": f"CTR-{self.uid}", "employee_id": self.id, "agency": rng.choice(AGENCIES),
                         "sponsor_id": MANAGERS[self.department], "start_date": iso(start),
                         "end_date": iso(end), "status": status}
        self.row["start_date"] = iso(start)  # a contractor joined with this contract
        for grant in self.grants:  # nothing was granted to them before they joined
            grant["granted_at"] = max(str(grant["granted_at"]), f"{iso(start)} 09:00:00")
        self.account["mfa_enrolled_at"] = f"{iso(start)} 10:00:00"
        self.row["end_date"] = iso(end)

    def tables(self) -> dict[str, list[dict[str, Any]]]:
        """Their rows by table, in the order a task's patch inserts them (tables they have no row in left out)."""
        out: dict[str, list[dict[str, Any]]] = {"employees": [self.row], "accounts": [self.account]}
        if self.ticket_user:
            out["ticket_users"] = [self.ticket_user]
        if self.grants:
            out["access_grants"] = list(self.grants)
        if self.contract:
            out["contractor_contracts"] = [self.contract]
        return out
