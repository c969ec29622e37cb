"""Software family: free, pooled and paid-seat licences, seat reclaim, and contractor limits."""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

from thinkingbox_env.authoring import Openings, seed_rows

from ..rules import EMPLOYEES, POOLS, RECLAIM_AFTER_DAYS, SOFTWARE, TODAY
from ._base import P, Person, ask, fresh, inform, patch_of, ts, usd
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

    def make(self, rng: random.Random, seed: int, branch: str, person: Person | None) -> dict[str, Any]:
        sw = {"free": FREE, "paid_seat": PAID, "contractor_refused": NOT_FOR_CONTRACTORS}.get(branch, POOLED)
        sw_id = rng.choice(sw)
        contractor = branch == "contractor_refused"
        p = person or self.person(rng, seed, contractor=contractor)
        if contractor and p.contract is None:
            self.contract(rng, p, TODAY + timedelta(days=rng.randint(30, 200)))
        pool = POOLS.get(sw_id)
        extra: dict[str, list[dict[str, Any]]] = {}
        update: list[dict[str, Any]] = []
        seats: list[dict[str, Any]] = []
        if branch in ("reclaim", "pool_full_buy") and pool:
            n = rng.randint(2, 4)
            idle = sorted(rng.sample(range(RECLAIM_AFTER_DAYS + 1, 200), 2), reverse=True) if branch == "reclaim" else []
            recent = [rng.randint(0, RECLAIM_AFTER_DAYS - 10) for _ in range(n)]
            for k, days in enumerate(idle[:1] + idle[1:] + recent):
                seats.append({"id": f"LIC-{self.uid_of(p)}{k + 2}", "pool_id": pool["id"], "employee_id": FILLERS[k], "status": "active",
                              "assigned_at": ts(TODAY - timedelta(days=days + 30)), "last_used_on": (TODAY - timedelta(days=days)).isoformat()})
            update.append({"table": "licence_pools", "key": {"id": pool["id"]}, "set": {"seats_total": SEED_SEATS.get(pool["id"], 0) + len(seats)}})
        if branch == "already_holds" and pool:
            seats.append({"id": f"LIC-{self.uid_of(p)}1", "pool_id": pool["id"], "employee_id": p.id, "status": "active",
                          "assigned_at": ts(TODAY - timedelta(days=90)), "last_used_on": (TODAY - timedelta(days=2)).isoformat()})
        if seats:
            extra["licence_assignments"] = seats
        patch = patch_of(self.rows(p), extra, update=update)
        nxt = self.next_ids(patch)
        name = SOFTWARE[sw_id]["name"]
        use = USES[sw_id]
        if branch == "off_catalogue":
            name, use = rng.choice(UNLISTED)
        g, turns, facts = fresh()
        opening = self.openings.pick(rng, self.split, sw=name, use=use, email=p.given_email)
        self.request_clause = f"I need {name} {use}"
        self.identify(g, p, turns, facts)
        facts.append({"text": f"I need {name} {use}.", "unlock": ["which software", "what software", "what for", "which product"],
                      "slot": "software", "value": name})
        if opening[1].endswith("/vague"):
            turns.append(ask(len(g), "Which software do you need, and what for?"))
        g.add("search_software", query=name.split()[0])
        g.add("list_licences", employee_id=p.id)
        faults: list[dict[str, Any]] = []
        if pool and branch not in ("contractor_refused", "off_catalogue"):
            g.add("get_licence_pool", software_id=sw_id)
        assign_why = {"software_id": "record:search_software", "employee_id": "record:find_employee"}
        once = "a second seat of the same software for the same person is refused"
        if branch == "off_catalogue":
            self.ticket(g, p, nxt, f"Software outside the catalogue: {name}", "software", "open", team="procurement")
            reply = (f"{name} isn't in our software catalogue, so it needs a supplier and security review before anyone can use it. "
                     f"I've passed ticket {nxt['tickets']} to the procurement team, who will come back to you.")
            mentions = [{"name": "escalates_unlisted", "must": [str(nxt["tickets"])], "must_not": ["you now have"]}]
        elif branch == "contractor_refused":
            self.ticket(g, p, nxt, f"{name} for a contractor refused", "software", "solved")
            reply = f"I'm sorry, {name} is not licensed for contractors, so I can't assign it to you."
            mentions = [{"name": "refuses_contractor", "must": ["contractors"]}]
        elif branch == "already_holds":
            self.ticket(g, p, nxt, f"{name} licence check", "software", "solved")
            reply = f"You already hold a {name} seat ({seats[0]['id']}), so there's nothing to add; sign in with your work account."
            mentions = [{"name": "says_already_holds", "must": ["already"]}]
        elif branch in ("free", "pool_seat", "reclaim"):
            released = ""
            if branch == "reclaim":
                oldest = min(seats, key=lambda r: (r["last_used_on"], r["id"]))
                g.add("release_licence", idempotent="a released seat cannot be released again", assignment_id=oldest["id"],
                      why={"assignment_id": "record:get_licence_pool"})
                released = (f" The pool was full, so I reclaimed a seat that had not been used since {oldest['last_used_on']} "
                            f"(more than {RECLAIM_AFTER_DAYS} days).")
            if seed % 5 == 3 and branch != "reclaim":
                faults.append({"tool": "assign_licence", "call": 1, "error": f"{TIMEOUT}; try again"})
                g.add("assign_licence", software_id=sw_id, employee_id=p.id, expect_error=TIMEOUT)
                turns.append(inform(len(g), "The licence server didn't answer just now, so the seat isn't assigned yet. Is it all right if I try again?"))
            lid = nxt["licence_assignments"]
            g.add("assign_licence", idempotent=once, software_id=sw_id, employee_id=p.id, why=assign_why)
            self.ticket(g, p, nxt, f"{name} licence assigned", "software", "solved")
            reply = f"You now have a {name} seat ({lid}); sign in with your work account to activate it.{released}"
            mentions = [{"name": "states_seat", "must": [str(lid)]}]
        else:  # pool_full_buy or paid_seat
            qty_why = P("Paid software seats") if branch == "paid_seat" else P("Software licences and pools")
            tier, approver, total = self.procure(g, p, sw_id, SOFTWARE[sw_id]["annual_cost"], source_item="record:search_software", quantity_why=qty_why)
            self.ticket(g, p, nxt, f"Purchase of a {name} seat", "procurement", "pending")
            lead = ("Every seat in the pool is in use and none has been idle long enough to reclaim, so "
                    if branch == "pool_full_buy" else f"{name} is bought per seat, so ")
            reply = (f"{lead}I've raised purchase request {nxt['procurement_requests']} for one seat at {usd(total)} a year; it goes to "
                     f"{EMPLOYEES[approver]['name']} for approval, and your ticket stays pending until the seat is set up.")
            mentions = [{"name": "states_purchase", "must": [str(nxt["procurement_requests"])]}]
        return self.finish(branch=branch, p=p, patch=patch, g=g, turns=turns, facts=facts, opening=opening, faults=faults,
                           intent=f"Get {name}.", reply=reply, mentions=mentions)
