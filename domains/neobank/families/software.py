"""Software family: free, pooled and paid-seat licences, seat reclaim, and contractor limits."""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

from thinkingbox_env.authoring import Openings, seed_rows
from thinkingbox_env.authoring.dimensions import carries
from thinkingbox_env.authoring.saying import iso, ts, usd
from thinkingbox_env.authoring.saying import policy_ref as P

from ..rules import EMPLOYEES, POOLS, RECLAIM_AFTER_DAYS, SOFTWARE, TODAY
from ._base import Rows
from ._dimensions import LICENCE_FAULT
from ._draft import DeskDraft
from ._people import Person
from .hardware import HardwareFamily

SEED_SEATS = {pool: sum(1 for r in seed_rows(__file__, "licence_assignments") if r["pool_id"] == pool and r["status"] == "active")
              for pool in {p["id"] for p in POOLS.values()}}
FILLERS = ["EMP-10001", "EMP-10002", "EMP-10003", "EMP-10004", "EMP-10005", "EMP-10006"]
FREE = sorted(s for s, r in SOFTWARE.items() if r["licence_kind"] == "free")
POOLED = sorted(s for s, r in SOFTWARE.items() if r["licence_kind"] == "pooled")
PAID = sorted(s for s, r in SOFTWARE.items() if r["licence_kind"] == "paid_seat")
NOT_FOR_CONTRACTORS = sorted(s for s, r in SOFTWARE.items() if r["contractor_allowed"] == "false")
USES = {"SW-QUILL": "to work on our services", "SW-STAT": "for the quarterly analysis", "SW-INK": "to fill in and sign PDF forms",
        "SW-FRAME": "to design the new onboarding screens", "SW-VAULT": "to store team credentials safely", "SW-TABLE": "to query the reporting database",
        "SW-DIAG": "to draw architecture diagrams", "SW-MODEL": "to build the credit-risk models"}
TIMEOUT = "the licence server did not respond"
UNLISTED = [("Pixelmate Photo Studio", "to retouch photos for the app store listing"), ("Loopwise Screen Recorder", "to record product demos"),
            ("Gridwork Mind Maps", "to plan our team's quarter")]


class SoftwareLicence(HardwareFamily):
    code = "NB008"
    name = "software_licence"
    number = 8
    description = "An employee asks for a software licence."
    branches = ("free", "pool_seat", "reclaim", "pool_full_buy", "paid_seat", "already_holds", "contractor_refused", "off_catalogue")
    openings = Openings("NB008", {
        "plain": "Hi, can I get a licence for {sw}?",
        "upfront_email": "Hello from {email}: I need {sw} {use}.",
        "reason": "I need {sw} {use}. Could you set me up?",
        "urgent": "Could you get me {sw} today? I'm stuck without it.",
        "vague": "I need some software installed for my work.",
        "colleague": "A colleague said you can give me a {sw} seat. Could you?",
        "short_b": "{sw} licence please",
        "long_b": "Hi there, I've started a piece of work where I'll need {sw} {use}. What do I need to do to get it?",
        "setup_b": "Morning, could you set me up with {sw}? I need it {use}.",
    }, held_out=("short_b", "long_b", "setup_b"))

    def make(self, rng: random.Random, seed: int, branch: str, person: Person | None) -> DeskDraft:
        sw = {"free": FREE, "paid_seat": PAID, "contractor_refused": NOT_FOR_CONTRACTORS}.get(branch, POOLED)
        sw_id = rng.choice(sw)
        contractor = branch == "contractor_refused"
        p = person or self.person(rng, seed, contractor=contractor)
        if contractor and p.contract is None:
            p.sign_contract(rng, TODAY + timedelta(days=rng.randint(30, 200)))
        pool = POOLS.get(sw_id)
        extra: Rows = {}
        seats: list[dict[str, Any]] = []
        if branch in ("reclaim", "pool_full_buy") and pool:
            n = rng.randint(2, 4)
            idle = sorted(rng.sample(range(RECLAIM_AFTER_DAYS + 1, 200), 2), reverse=True) if branch == "reclaim" else []
            recent = [rng.randint(0, RECLAIM_AFTER_DAYS - 10) for _ in range(n)]
            for k, days in enumerate(idle[:1] + idle[1:] + recent):
                seats.append({"id": f"LIC-{p.uid}{k + 2}", "pool_id": pool["id"], "employee_id": FILLERS[k], "status": "active",
                              "assigned_at": ts(TODAY - timedelta(days=days + 30)), "last_used_on": iso(TODAY - timedelta(days=days))})
        if branch == "already_holds" and pool:
            seats.append({"id": f"LIC-{p.uid}1", "pool_id": pool["id"], "employee_id": p.id, "status": "active",
                          "assigned_at": ts(TODAY - timedelta(days=90)), "last_used_on": iso(TODAY - timedelta(days=2))})
        if seats:
            extra["licence_assignments"] = seats
        d = self.draft(branch, p, extra)
        if branch in ("reclaim", "pool_full_buy") and pool:
            d.update("licence_pools", {"id": pool["id"]}, seats_total=SEED_SEATS.get(pool["id"], 0) + len(seats))
        name = SOFTWARE[sw_id]["name"]
        use = USES[sw_id]
        if branch == "off_catalogue":
            name, use = rng.choice(UNLISTED)
        d.opening, d.origin = self.openings.pick(rng, self.split, sw=name, use=use, email=p.given_email)
        self.request_clause = f"I need {name} {use}"
        d.identify()
        d.fact(f"I need {name} {use}.", "software", ["which software", "what software", "what for", "which product"], value=name)
        if d.origin.endswith("/vague"):
            d.ask("Which software do you need, and what for?")
        d.read("search_software", query=name.split()[0])
        d.read("list_licences", employee_id=p.id)
        if pool and branch not in ("contractor_refused", "off_catalogue"):
            d.read("get_licence_pool", software_id=sw_id)
        if branch == "off_catalogue":
            d.ticket(f"Software outside the catalogue: {name}", "software", "open", team="procurement")
            d.reply(f"{name} isn't in our software catalogue, so it needs a supplier and security review before anyone can use it. "
                    f"I've passed ticket {d.ids['tickets']} to the procurement team, who will come back to you.")
            d.mention("escalates_unlisted", [str(d.ids["tickets"])], ["you now have"])
        elif branch == "contractor_refused":
            d.ticket(f"{name} for a contractor refused", "software", "solved")
            d.reply(f"I'm sorry, {name} is not licensed for contractors, so I can't assign it to you.")
            d.mention("refuses_contractor", ["contractors"])
        elif branch == "already_holds":
            d.ticket(f"{name} licence check", "software", "solved")
            d.reply(f"You already hold a {name} seat ({seats[0]['id']}), so there's nothing to add; sign in with your work account.")
            d.mention("says_already_holds", ["already"])
        elif branch in ("free", "pool_seat", "reclaim"):
            released = ""
            if branch == "reclaim":
                oldest = min(seats, key=lambda r: (r["last_used_on"], r["id"]))
                d.write("release_licence", {"assignment_id": "record:get_licence_pool"},
                        idempotent="a released seat cannot be released again", assignment_id=oldest["id"])
                released = (f" The pool was full, so I reclaimed a seat that had not been used since {oldest['last_used_on']} "
                            f"(more than {RECLAIM_AFTER_DAYS} days).")
            if carries(LICENCE_FAULT, code=self.code, seed=seed) and branch != "reclaim":
                d.fault("assign_licence", f"{TIMEOUT}; try again")
                d.tags.append("recovery")
                d.failing("assign_licence", TIMEOUT, software_id=sw_id, employee_id=p.id)
                d.inform("The licence server didn't answer just now, so the seat isn't assigned yet. Is it all right if I try again?")
            lid = d.ids["licence_assignments"]
            d.write("assign_licence", {"software_id": "record:search_software", "employee_id": "record:find_employee"},
                    idempotent="a second seat of the same software for the same person is refused", software_id=sw_id, employee_id=p.id)
            d.ticket(f"{name} licence assigned", "software", "solved")
            d.reply(f"You now have a {name} seat ({lid}); sign in with your work account to activate it.{released}")
            d.mention("states_seat", [str(lid)])
        else:  # pool_full_buy or paid_seat
            qty_why = P("Paid software seats") if branch == "paid_seat" else P("Software licences and pools")
            tier, approver, total = self.procure(d, sw_id, SOFTWARE[sw_id]["annual_cost"], source_item="record:search_software",
                                                 quantity_why=qty_why)
            d.ticket(f"Purchase of a {name} seat", "procurement", "pending")
            lead = ("Every seat in the pool is in use and none has been idle long enough to reclaim, so "
                    if branch == "pool_full_buy" else f"{name} is bought per seat, so ")
            d.reply(f"{lead}I've raised purchase request {d.ids['procurement_requests']} for one seat at {usd(total)} a year; it goes to "
                    f"{EMPLOYEES[approver]['name']} for approval, and your ticket stays pending until the seat is set up.")
            d.mention("states_purchase", [str(d.ids["procurement_requests"])])
        d.intent = f"Get {name}."
        return d
