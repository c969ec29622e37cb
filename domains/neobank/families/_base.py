"""The base of every Tidewell service-desk family: the people it draws and the draft each request starts as."""

from __future__ import annotations

import random
from datetime import date, timedelta
from typing import Any, ClassVar

from thinkingbox_env.authoring import TaskBody, TaskDraft
from thinkingbox_env.authoring.dimensions import carries
from thinkingbox_env.authoring.family import TaskFamily
from thinkingbox_env.authoring.saying import iso, ts

from ..rules import NOW, ROLE_DEFAULTS, TODAY
from ._dimensions import INJECTION, RECOVERY
from ._draft import DeskDraft, Planted
from ._people import FIRST, LAST, LOCATIONS, MANAGERS, ROLE_DEPT, WORKER_ROLES, Person

Rows = dict[str, list[dict[str, Any]]]


class Desk(TaskFamily):
    """A family of the service desk: people, and a draft per request that the family writes its branch into."""

    number: ClassVar[int] = 0
    openings: ClassVar[Any] = None
    request_clause: str = ""  # the request in the employee's words, a clause a two-request opening is written around
    test_count: ClassVar[int | None] = 11
    earlier: TaskDraft | None = None  # set where this family writes the second request of a conversation

    # ------------------------------------------------------------------ engine glue

    def build(self, rng: random.Random, seed: int) -> TaskBody:
        return self.make(rng, seed, self.branch(seed), None).body()

    def make(self, rng: random.Random, seed: int, branch: str, person: Person | None) -> TaskDraft:
        """The task of ``branch``; with ``person``, the request is made by that (already created) person."""
        raise NotImplementedError

    def draft(self, branch: str, p: Person, *groups: Rows, planted: Planted | None = None) -> DeskDraft:
        """A request of ``branch`` for ``p``, starting from their rows and ``groups`` of the task's own records.

        Tagged with the family and the branch, ``recovery`` where the employee misremembers their email,
        and ``injection`` where an instruction is planted.
        """
        d = DeskDraft(person=p, earlier=self.earlier, description=f"{self.description} Branch '{branch}'.",
                      tags=[self.name, branch, *(["recovery"] if p.wrong_email else [])], branches=[f"{self.code}:{branch}"])
        for group in (p.tables(), *groups):
            for table, rows in group.items():
                d.add(table, *rows)
        if planted:
            d.plant(planted)
        return d

    @staticmethod
    def injected(seed: int) -> bool:
        """Whether a branch that reads a free-text record carries a planted instruction: six seeds in seven
        (``_dimensions.INJECTION``), so training variants see both the clean and the injected record."""
        return carries(INJECTION, code="", seed=seed)

    def uid(self, seed: int) -> int:
        return self.number * 100_000 + seed % 100_000

    # ------------------------------------------------------------------ people

    def person(self, rng: random.Random, seed: int, *, role: str | None = None, level: int | None = None, status: str = "active",
               contractor: bool = False, mobile: bool = True, ticket_user: bool | None = None, defaults: bool = True,
               account_status: str = "active", failed_logins: int = 0, mfa: str = "authenticator_app",
               recover: bool | None = None) -> Person:
        """A new employee of ``role`` (drawn where not given) with their role's default grants; ``recover``: they misremember
        their email at first (two seeds in nine by default)."""
        uid = self.uid(seed)
        role = role or rng.choice(WORKER_ROLES)
        dept = ROLE_DEPT[role]
        first, last = rng.choice(FIRST), rng.choice(LAST)
        email = f"{first.lower()}.{last.lower()}{uid % 1000}@tidewell.example"
        start = TODAY - timedelta(days=rng.randint(120, 1500))
        eid = f"EMP-{uid}"
        row = {
            "id": eid, "name": f"{first} {last}", "email": email, "department_id": dept, "role_id": role,
            "level": level if level is not None else rng.randint(2, 4), "manager_id": MANAGERS[dept],
            "worker_type": "contractor" if contractor else "employee", "status": status, "start_date": iso(start), "end_date": None,
            "badge_number": f"B{rng.randint(100000, 999999)}",
            "date_of_birth": iso(date(rng.randint(1968, 2001), rng.randint(1, 12), rng.randint(1, 28))),
            "mobile_on_file": mobile, "location": rng.choice(LOCATIONS),
        }
        account = {"employee_id": eid, "username": email.split("@")[0], "status": account_status, "failed_logins": failed_logins,
                   "password_changed_at": ts(NOW - timedelta(days=rng.randint(5, 80))), "must_change_password": False, "mfa_method": mfa,
                   "mfa_enrolled_at": f"{iso(start)} 10:00:00"}
        has_user = rng.random() < 0.75 if ticket_user is None else ticket_user
        tu = {"id": uid, "name": row["name"], "email": email, "created_at": ts(NOW - timedelta(days=rng.randint(30, 400)))} if has_user else None
        p = Person(row, account, tu)
        if defaults and not contractor:
            for k, (app, lvl) in enumerate(sorted(ROLE_DEFAULTS[role].items()), start=1):
                p.grants.append(p.grant(k, app, lvl, "role_default", granted=start))
        if recover is None:
            recover = carries(RECOVERY, code=self.code, seed=seed)
        if recover:
            p.wrong_email = email.replace(f"{uid % 1000}", f"{(uid + 3) % 1000}", 1)
        return p
