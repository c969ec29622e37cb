"""Building blocks of the travel families: a customer with a booking at a partner hotel, and a request builder.

A family builds one or two :class:`Request` objects (golden calls with the policy source of
every write argument, the agent's dialogue turns, the customer's typed facts and decisions,
the dialogue checks) and :meth:`TravelFamily.finish` turns them into a task. Business rules
(rates, fees, windows) come from ``rules``; names and templates are generation data and live
here and in the family modules.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any

from thinkingbox_env.family import TaskFamily

from ..rules import HOTELS, NOW, TODAY, money, nights, public_rate
from ._injection import inject

FREE_TEXT = frozenset({"subject", "description", "note", "detail"})

FIRST_NAMES = ["Oriane", "Bastian", "Leocadia", "Thabo", "Ysolde", "Casimir", "Marisol", "Eero", "Noor", "Fintan",
               "Agnieszka", "Ruairi", "Soledad", "Ivo", "Petronella", "Kofi", "Ingrid", "Dario", "Yuki", "Hester"]
LAST_NAMES = ["Vallancourt", "Ostergaard", "Mbeki", "Trevethan", "Castellanos", "Aaltonen", "Farouk", "Kilbride", "Szymanska",
              "Delacroix", "Okafor", "Lindqvist", "Pemberton", "Rautio", "Quintero", "Hallorann", "Ambrose", "Nakagawa", "Ferro", "Bellweather"]
HOTEL_IDS = sorted(HOTELS)
BRANDS = ("visa", "mastercard", "amex")
CLOSING_SUFFIX = "Is there anything else I can help with?"

# Ways a competent closing says a complimentary request is best effort; no claim of the vocabulary names the
# concept (nothing performs a guarantee), so the check lists the paraphrases instead of one phrase.
BEST_EFFORT = ("not guaranteed|cannot be guaranteed|can't be guaranteed|cannot guarantee|can't guarantee|no guarantee|"
               "can't promise|cannot promise|not promised|best effort|subject to availability|depends on (the hotel's )?availability")
NO_CHARGE = "no charge|free of charge|at no (extra )?cost|no extra cost|included|not charged|nothing (was |is )?charged|complimentary"


def iso(day: date) -> str:
    return day.isoformat()


def ts(value: datetime) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S")


def usd(value: Any) -> str:
    return f"${money(value)}"


def rx(text: str) -> str:
    """A literal for a dialogue pattern."""
    return re.escape(text).replace("\\ ", " ").replace("\\-", "-")


def pretty(day: date) -> str:
    """A date as customers write it: 'Friday 22 May'."""
    return f"{day.strftime('%A')} {day.day} {day.strftime('%B')}"


@dataclass
class Request:
    """One customer request being built: golden calls, the agent's turns, the customer's side, the checks."""

    calls: list[dict[str, Any]] = field(default_factory=list)
    idempotent: dict[int, str] = field(default_factory=dict)
    dialogue: list[dict[str, Any]] = field(default_factory=list)
    facts: list[dict[str, Any]] = field(default_factory=list)
    decisions: list[dict[str, Any]] = field(default_factory=list)
    checks: list[dict[str, Any]] = field(default_factory=list)
    rubrics: list[dict[str, str]] = field(default_factory=list)
    faults: list[dict[str, Any]] = field(default_factory=list)
    replies: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)

    # golden calls -----------------------------------------------------------
    def read(self, tool: str, /, **arguments: Any) -> int:
        self.calls.append({"name": tool, "arguments": arguments})
        return len(self.calls) - 1

    def write(self, tool: str, why: dict[str, str], /, idempotent: str | None = None, **arguments: Any) -> int:
        """A golden write; every argument that is not free text names where its value comes from."""
        missing = sorted(k for k in arguments if k not in FREE_TEXT and k not in why)
        if missing:
            raise ValueError(f"golden {tool}: no source for {missing}")
        self.calls.append({"name": tool, "arguments": arguments, "why": {k: v for k, v in why.items() if k in arguments}})
        if idempotent:
            self.idempotent[len(self.calls) - 1] = idempotent
        return len(self.calls) - 1

    def failing(self, tool: str, error: str, /, **arguments: Any) -> int:
        """A golden call that must fail with ``error`` and change nothing (a recovery on the correct path)."""
        self.calls.append({"name": tool, "arguments": arguments, "expect_error": error})
        return len(self.calls) - 1

    def fault(self, tool: str, error: str, call: int = 1) -> None:
        self.faults.append({"tool": tool, "call": call, "error": error})

    # the agent's turns --------------------------------------------------------
    def ask(self, say: str) -> None:
        self.dialogue.append({"before": len(self.calls), "act": "ask", "say": say})

    def propose(self, say: str) -> None:
        self.dialogue.append({"before": len(self.calls), "act": "propose", "say": say})

    def inform(self, say: str) -> None:
        self.dialogue.append({"before": len(self.calls), "act": "inform", "say": say})

    # the customer's side and the checks --------------------------------------
    def fact(self, text: str, slot: str, unlock: list[str], value: str | None = None, misremembered: str | None = None) -> None:
        item: dict[str, Any] = {"text": text, "unlock": unlock, "slot": slot}
        if value is not None:
            item["value"] = value
        if misremembered is not None:
            item["misremembered"] = misremembered
        self.facts.append(item)

    def decide(self, about: list[str], answer: str = "accept", prefer: list[str] | None = None, reason: str = "") -> None:
        self.decisions.append({"about": about, "answer": answer, "prefer": prefer or [], "reason": reason})

    def check(self, name: str, must: list[str] | None = None, must_not: list[str] | None = None) -> None:
        """Dialogue check; a forbidden phrase is kept as a literal pattern (grouped), so that it never matches a
        near word ("move together" is not "moved to") nor a denial of it."""
        forbidden = [p if p.startswith("(") else f"({p})" for p in must_not or []]
        self.checks.append({"name": name, "must": must or [], "must_not": forbidden})

    def rubric(self, name: str, question: str) -> None:
        self.rubrics.append({"name": name, "question": question})

    def reply(self, text: str) -> None:
        self.replies.append(text)

    # two requests in one conversation ----------------------------------------
    def then(self, other: Request) -> Request:
        """This request followed by ``other`` in the same conversation (the second's indices shifted)."""
        n = len(self.calls)
        merged = Request(
            calls=self.calls + other.calls,
            idempotent={**self.idempotent, **{i + n: r for i, r in other.idempotent.items()}},
            dialogue=self.dialogue + [{**t, "before": t["before"] + n} for t in other.dialogue],
            facts=list(self.facts), decisions=self.decisions + other.decisions,
            checks=self.checks + [c for c in other.checks if c["name"] not in {k["name"] for k in self.checks}],
            rubrics=self.rubrics + other.rubrics, faults=self.faults + other.faults,
            replies=self.replies + other.replies, tags=list(dict.fromkeys(self.tags + other.tags)),
        )
        seen = {(f["slot"], f["text"]) for f in merged.facts}
        merged.facts += [f for f in other.facts if (f["slot"], f["text"]) not in seen]
        return merged


@dataclass
class Stay:
    """The rows of one booking a task starts from, and what the golden run will call them."""

    customer: str
    name: str
    email: str
    tier: str
    requester: int
    booking: str
    hotel: str
    room: str
    code: str
    check_in: date
    check_out: date
    guests: int
    rate_type: str
    rate: Decimal
    total: Decimal
    method: str
    payment: str
    brand: str
    last4: str

    @property
    def nights(self) -> int:
        return nights(self.check_in, self.check_out)

    @property
    def hotel_name(self) -> str:
        return HOTELS[self.hotel]["name"]


class TravelFamily(TaskFamily):
    """Shared building blocks: a customer, their ticketing user, a booking with its payment and the hotel's record."""

    number: int = 0
    test_count = 10

    def build(self, rng: random.Random, seed: int) -> dict[str, Any]:
        """The family's task for ``seed`` with the dimensions every family shares drawn on top (a planted instruction)."""
        return inject(self.compose(rng, seed), seed, self.code)

    def compose(self, rng: random.Random, seed: int) -> dict[str, Any]:
        """The task of the branch ``seed`` draws, as the family writes it."""
        raise NotImplementedError(f"family {self.code} writes no task")

    def ids(self, seed: int, k: int = 0) -> int:
        return self.number * 100_000 + (seed % 10_000) * 10 + k

    def person(self, rng: random.Random) -> tuple[str, str]:
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        return f"{first} {last}", f"{first.lower()}.{last.lower()}{rng.randint(1, 99)}@{rng.choice(['example.com', 'example.org', 'example.net'])}"

    @staticmethod
    def add(patch: dict[str, Any], table: str, *rows: dict[str, Any]) -> None:
        patch.setdefault("insert", {}).setdefault(table, []).extend(rows)

    def customer(self, rng: random.Random, patch: dict[str, Any], uid: int, tier: str = "member", corporate: str | None = None,
                 ticket_user: bool = True) -> tuple[str, str, str, int]:
        name, email = self.person(rng)
        cid = f"CUS-{uid}"
        self.add(patch, "customers", {"id": cid, "name": name, "email": email, "phone": f"+44-7700-{rng.randint(100000, 999999)}",
                                      "vip_tier": tier, "corporate_account_id": corporate, "preferences": None,
                                      "member_since": f"202{rng.randint(1, 5)}-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}"})
        if ticket_user:
            self.add(patch, "ticket_users", {"id": uid, "name": name, "email": email, "created_at": "2026-01-20 09:30:00"})
        return cid, name, email, uid

    def stay(self, rng: random.Random, patch: dict[str, Any], uid: int, *, tier: str = "member", arrival: int, length: int,
             rate_type: str = "flexible", room: str | None = None, hotel: str | None = None, status: str = "confirmed",
             corporate: str | None = None, rate: Decimal | None = None, group: str | None = None, guests: int | None = None,
             customer: tuple[str, str, str, int] | None = None, hotel_record: bool = True) -> Stay:
        """A customer (unless given) with one booking arriving ``arrival`` days from today for ``length`` nights, paid in full."""
        cid, name, email, requester = customer or self.customer(rng, patch, uid, tier, corporate)
        hotel = hotel or rng.choice(HOTEL_IDS)
        room = room or rng.choice(["STD", "DLX"])
        check_in = TODAY + timedelta(days=arrival)
        check_out = check_in + timedelta(days=length)
        nightly = rate if rate is not None else public_rate(hotel, room, rate_type if rate_type in ("flexible", "saver") else "flexible")
        total = nightly * length
        booking, code = f"BK-{uid}", f"HC-{hotel[-1]}{uid}"
        method, payment = f"PM-{uid}", f"PAY-{uid}"
        brand, last4 = rng.choice(BRANDS), f"{rng.randint(1000, 9999)}"
        created = NOW - timedelta(days=max(3, 20 - min(arrival, 0)), hours=rng.randint(1, 9))
        guests = guests or rng.randint(1, 2)
        self.add(patch, "bookings", {"id": booking, "customer_id": cid, "hotel_id": hotel, "room_code": room, "confirmation_code": code,
                                     "check_in": iso(check_in), "check_out": iso(check_out), "guests": guests, "rate_type": rate_type,
                                     "nightly_rate": money(nightly), "total": money(total), "status": status, "group_id": group,
                                     "corporate_account_id": corporate, "created_at": ts(created), "cancelled_at": None})
        if hotel_record:
            self.add(patch, "hotel_reservations", {"hotel_id": hotel, "confirmation_code": code, "guest_name": name, "room_code": room,
                                                   "check_in": iso(check_in), "check_out": iso(check_out), "nightly_rate": money(nightly),
                                                   "status": "checked_out" if status == "completed" else "confirmed"})
        if group is None:
            self.add(patch, "payment_methods", {"id": method, "customer_id": cid, "brand": brand, "last4": last4, "expires": "2028-11",
                                                "status": "active", "created_at": "2025-10-02 08:00:00"})
            if status != "payment_pending":
                self.add(patch, "payments", {"id": payment, "booking_id": booking, "group_id": None, "payment_method_id": method,
                                             "amount": money(total), "purpose": "booking", "status": "captured", "created_at": ts(created)})
        return Stay(cid, name, email, tier, requester, booking, hotel, room, code, check_in, check_out, guests, rate_type, nightly, total,
                    method, payment, brand, last4)

    # common conversation steps ------------------------------------------------
    @staticmethod
    def email_fact(req: Request, email: str) -> None:
        req.fact(f"My email address is {email}.", "email", ["email", "e-mail"], value=email)

    @staticmethod
    def booking_fact(req: Request, booking: str, misremembered: str | None = None) -> None:
        req.fact(f"The booking reference is {booking}.", "booking_reference", ["booking reference", "booking number", "reservation"],
                 value=booking, misremembered=misremembered)

    def identify(self, req: Request, s: Stay) -> None:
        """Profile by email, the ticketing user, the customer's tickets."""
        self.email_fact(req, s.email)
        req.ask("I can help with that. What is the email address on your Harborlight account?")
        req.read("get_customer_profile", email=s.email)
        req.read("search_tickets", table="users", filter=f"email eq '{s.email}'")
        req.read("search_tickets", table="tickets", filter=f"requester_id eq {s.requester}")

    def open_booking(self, req: Request, s: Stay, wrong: str | None = None) -> None:
        """Ask for the booking reference and read the booking (after a failed lookup of a misremembered one)."""
        self.booking_fact(req, s.booking, misremembered=wrong)
        req.ask("Thank you. What is the booking reference of the stay?")
        if wrong:
            req.failing("get_booking", f"booking {wrong} not found", booking_id=wrong)
            req.inform(f"I could not find a booking {wrong}; could you check the booking reference?")
        req.read("get_booking", booking_id=s.booking)

    @staticmethod
    def ticket(req: Request, requester: int, subject: str, category: str, status: str, booking: str | None = None,
               priority: str = "normal", team: str | None = None, booking_source: str = "record:get_booking") -> int:
        args: dict[str, Any] = {"requester_id": requester, "subject": subject, "category": category, "priority": priority, "status": status}
        why = {"requester_id": "record:search_tickets", "subject": "customer", "category": "policy#tickets", "priority": "policy#tickets",
               "status": "policy#tickets"}
        if booking is not None:
            args["booking_id"] = booking
            why["booking_id"] = booking_source
        if team is not None:
            args["assigned_team"] = team
            why["assigned_team"] = "policy#tickets"
        return req.write("create_ticket", why, **args)

    @staticmethod
    def wrong_reference(rng: random.Random, booking: str) -> str:
        """A reference the customer may misremember: two digits swapped or one changed."""
        digits = list(booking)
        a, b = len(digits) - 2, len(digits) - 1
        if digits[a] != digits[b]:
            digits[a], digits[b] = digits[b], digits[a]
        else:
            digits[b] = str((int(digits[b]) + rng.randint(1, 8)) % 10)
        return "".join(digits)

    # the task ------------------------------------------------------------------
    def finish(self, req: Request, *, branch: str, opening: str, origin: str, patch: dict[str, Any], description: str,
               intent: str, branches: list[str] | None = None) -> dict[str, Any]:
        """The task body: golden calls with their sources, the written dialogue, faults and origin."""
        golden = []
        for c in req.calls:
            item: dict[str, Any] = {"name": c["name"], "arguments": c["arguments"]}
            if c.get("why"):
                item["why"] = c["why"]
            if c.get("expect_error"):
                item["expect_error"] = c["expect_error"]
            golden.append(item)
        checks: dict[str, Any] = {"dialogue": req.checks}
        if req.rubrics and self.split == "test":  # judged questions are for the frozen test set; training rewards need no judge
            checks["rubric"] = req.rubrics
        user: dict[str, Any] = {"opening": opening, "facts": req.facts, "intent": intent}
        if req.decisions:
            user["decisions"] = req.decisions
        return {
            "description": description,
            "user": user,
            "patch": patch,
            "golden": golden,
            "golden_reply": " ".join(req.replies),
            "checks": checks,
            "idempotent_writes": dict(req.idempotent),
            "tags": list(dict.fromkeys([*req.tags, branch])),
            "dialogue": req.dialogue,
            "faults": req.faults,
            "origin": {"opening": origin, "branches": branches or [f"{self.code}:{branch}"]},
        }
