"""Auto-insurance task families: seeded generators of Ashgrove Mutual customer-service tasks.

Each family is one workflow of the policy with its branches: the action done right,
and the refusal, partial-verification and escalation branches where the right
answer is not to act (or to act differently from what the customer asked). The
wrong-but-plausible moves (a third arrangement, a date past the maximum, an
effective date of today, the wrong vehicle) succeed at the tool level, so only the
checks catch them. Business days, VIN check digits and billing arithmetic come
from ``tools.py``, so generated tasks and tools compute them identically.
"""

from __future__ import annotations

import random
import re
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any

from thinkingbox_env.family import TaskFamily

from .tools import (
    ARRANGEMENT_LIMITS,
    DOCS_BASE_URL,
    EXTENSION_MAX_BUSINESS_DAYS,
    PLAN_FEES,
    PLAN_MONTHS,
    REINSTATEMENT_FEE,
    VIN_ALPHABET,
    add_business_days,
    cancellation_refund,
    installment_quote,
    is_business_day,
    make_vin,
    money,
    next_business_day,
    vin_check_digit,
)

NOW = datetime(2026, 5, 19, 14, 0, 0)
TODAY = NOW.date()
TOMORROW = TODAY + timedelta(days=1)
WINDOW_START = date(2025, 5, 19)  # arrangements on or after this date count toward the tier limit
NOW_TS = "2026-05-19 14:00:00"

FIRST_NAMES = [
    "Rosalind", "Tobias", "Ingrid", "Emeric", "Yasmin", "Dorian", "Marisol", "Caspian", "Wren", "Thaddeus",
    "Noor", "Bartholomew", "Linnea", "Osvaldo", "Perpetua", "Ravi", "Solveig", "Ezekiel", "Annika", "Florian",
    "Matilde", "Cyrus", "Henrietta", "Joaquin", "Leilani", "Magnus", "Odette", "Quincy", "Sabine", "Teodor",
]
LAST_NAMES = [
    "Abernathy", "Castellanos", "Drummond", "Eklund", "Fairweather", "Gutierrez", "Holloway", "Ishikawa", "Jankowski",
    "Kilpatrick", "Lindqvist", "Marchetti", "Nakashima", "Oyelaran", "Penhallow", "Quintero", "Rasmussen", "Szabo",
    "Thorsby", "Underhill", "Vasquez", "Wetherby", "Yamamoto", "Zelinski", "Achebe", "Bellweather", "Corcoran", "Dunmore",
]
HOUSEHOLD_FIRST = ["Priya", "Milo", "Greta", "Soren", "Ines", "Callum", "Maeve", "Tariq", "Elodie", "Bram", "Zara", "Felix", "Nell", "Arlo"]
STATES = {
    "OR": ("Oregon", "503"), "WA": ("Washington", "206"), "ID": ("Idaho", "208"), "NV": ("Nevada", "775"),
    "AZ": ("Arizona", "602"), "CO": ("Colorado", "303"), "UT": ("Utah", "801"),
}
SECURITY = [
    ("What was the name of your first pet?", ["Biscuit", "Pepper", "Juniper", "Waffles", "Captain", "Mochi"]),
    ("What street did you grow up on?", ["Alder Street", "Birchwood Lane", "Ridgecrest Drive", "Larkin Avenue"]),
    ("What was the make of your first car?", ["Datsun", "Plymouth", "Saab", "Oldsmobile", "Geo"]),
    ("In what city was your mother born?", ["Spokane", "Pueblo", "Flagstaff", "Medford", "Ogden"]),
]
CATALOG = [  # (WMI, make, model, kind)
    ("2HG", "Honda", "Civic", "sedan"), ("5FN", "Honda", "Pilot", "SUV"), ("JHM", "Honda", "Fit", "hatchback"),
    ("4T1", "Toyota", "Camry", "sedan"), ("JTD", "Toyota", "Corolla", "sedan"), ("2T3", "Toyota", "RAV4", "SUV"),
    ("5TD", "Toyota", "Highlander", "SUV"), ("1FM", "Ford", "Escape", "SUV"), ("1FT", "Ford", "F-150", "pickup"),
    ("1G1", "Chevrolet", "Malibu", "sedan"), ("3GN", "Chevrolet", "Equinox", "SUV"), ("1GC", "Chevrolet", "Silverado", "pickup"),
    ("JF1", "Subaru", "Impreza", "hatchback"), ("JF2", "Subaru", "Outback", "wagon"), ("4S4", "Subaru", "Forester", "SUV"),
    ("JM1", "Mazda", "Mazda3", "sedan"), ("JM3", "Mazda", "CX-5", "SUV"), ("KM8", "Hyundai", "Tucson", "SUV"),
    ("5NP", "Hyundai", "Elantra", "sedan"), ("5XY", "Kia", "Sorento", "SUV"), ("KNA", "Kia", "Forte", "sedan"),
    ("1N4", "Nissan", "Altima", "sedan"), ("5N1", "Nissan", "Rogue", "SUV"), ("3VW", "Volkswagen", "Jetta", "sedan"),
    ("1C4", "Jeep", "Grand Cherokee", "SUV"), ("5YJ", "Tesla", "Model 3", "sedan"),
]
COLORS = ["silver", "white", "black", "blue", "red", "gray", "green", "bronze"]
LENDERS = ["Cascade Federal Credit Union", "Sagebrush Auto Finance", "Pinecrest Bank", "Red Rock Lending"]
ANY_DATE = r"(20\d\d-\d\d-\d\d|\b(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.? \d{1,2}\b|\b\d{1,2}/\d{1,2}\b|\btoday\b|\btomorrow\b)"
AMOUNT = r"\$ ?\d[\d,]*(\.\d\d)?"
EXTENSION_WORDS = ["extend", "extension", "due date", "date", "when", "until"]


# --------------------------------------------------------------------------- small helpers


def iso(d: date) -> str:
    return d.isoformat()


def add_months(d: date, n: int) -> date:
    m = d.month - 1 + n
    return date(d.year + m // 12, m % 12 + 1, min(d.day, 28))


def say_date(d: date) -> str:
    return f"{d.strftime('%A')}, {d.strftime('%B')} {d.day}, {d.year}"


def usd(x: Any) -> str:
    return f"${money(x):,.2f}"


class Golden:
    """Golden tool calls, with the reasons that make some writes idempotent."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.idempotent: dict[int, str] = {}

    def add(self, tool_name: str, /, *, idempotent: str | None = None, **arguments: Any) -> None:
        self.calls.append({"name": tool_name, "arguments": dict(arguments)})
        if idempotent:
            self.idempotent[len(self.calls) - 1] = idempotent


class Household:
    """A customer with one policy, its billing account, drivers and vehicles, as patch rows."""

    def __init__(self) -> None:
        self.rows: dict[str, list[dict[str, Any]]] = {}

    def put(self, table: str, row: dict[str, Any]) -> dict[str, Any]:
        self.rows.setdefault(table, []).append(row)
        return row

    def patch(self) -> dict[str, Any]:
        return {"insert": {t: list(rs) for t, rs in self.rows.items() if rs}}


class InsuranceFamily(TaskFamily):
    """Shared building blocks: a household, identity facts, the identification golden, tickets."""

    number: int = 0

    def branch(self, seed: int) -> str:
        return self.branches[(seed - 1) % len(self.branches)]

    def ids(self, seed: int) -> dict[str, Any]:
        uid = self.number * 1_000_000 + seed % 1_000_000
        return {
            "uid": uid, "customer": f"CUS-{uid}", "policy": f"AGM-{uid}", "billing": f"BA-{uid}",
            "ticket_user": uid, "driver": lambda k: f"DRV-{uid}{k}", "vehicle": lambda k: f"VEH-{uid}{k}",
            "claim": lambda k: f"CLM-{uid}{k}", "arrangement": lambda k: f"ARR-{uid}{k}", "doc": lambda k: f"DOC-{uid}{k}",
            "cancellation": lambda k: f"CXL-{uid}{k}", "reinstatement": lambda k: f"RIN-{uid}{k}", "payment": lambda k: f"PMT-{uid}{k}",
        }

    # ---------------------------------------------------------------- people and things

    def person(self, rng: random.Random) -> dict[str, Any]:
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        dom = rng.choice(["example.com", "example.net", "example.org"])
        dob = date(rng.randint(1958, 1996), rng.randint(1, 12), rng.randint(1, 28))
        return {"first": first, "last": last, "name": f"{first} {last}", "email": f"{first.lower()}.{last.lower()}{rng.randint(2, 98)}@{dom}", "dob": dob}

    def license_number(self, rng: random.Random, state: str) -> str:
        return f"{state[0]}{rng.randint(1000000, 9999999)}"

    def vin(self, rng: random.Random, wmi: str, year: int) -> str:
        vds = "".join(rng.choice(VIN_ALPHABET[:23]) for _ in range(5))
        return make_vin(wmi, vds, year, rng.choice("ABCDEFGHKLMNPRSTUVWXYZ"), f"{rng.randint(0, 999999):06d}")

    def bad_vin(self, rng: random.Random, vin: str) -> str:
        """The VIN with one character misread, so that the check digit no longer matches."""
        while True:
            pos = rng.choice([3, 4, 5, 6, 7, 11, 12, 13, 14, 15, 16])
            alt = rng.choice([c for c in VIN_ALPHABET if c != vin[pos] and (pos < 11 or c.isdigit())])
            bad = vin[:pos] + alt + vin[pos + 1:]
            if vin_check_digit(bad) != bad[8]:
                return bad

    def household(
        self,
        rng: random.Random,
        ids: dict[str, Any],
        *,
        tier: str | None = None,
        state: str | None = None,
        plan: str | None = None,
        n_vehicles: int = 1,
        security: bool | None = None,
        ssn: bool | None = None,
        fraud: bool = False,
        ticket_user: bool | None = None,
        exclude_states: tuple[str, ...] = (),
        eff: date | None = None,
    ) -> tuple[Household, dict[str, Any]]:
        """Rows for a customer with an active policy; returns the household and a handle dict."""
        h = Household()
        p = self.person(rng)
        tier = tier or rng.choice(["standard", "standard", "preferred", "preferred", "elite"])
        state = state or rng.choice([s for s in STATES if s not in exclude_states])
        security = rng.random() < 0.75 if security is None else security
        ssn = rng.random() < 0.6 if ssn is None else ssn
        ticket_user = rng.random() < 0.8 if ticket_user is None else ticket_user
        question, answers = rng.choice(SECURITY)
        if eff is None:
            eff = TODAY - timedelta(days=rng.randint(20, 170))
            eff = eff.replace(day=min(eff.day, 28))
        exp = add_months(eff, 12)
        premium = money(rng.randint(90, 260) * 10)
        plan = plan or rng.choice(["monthly", "quarterly", "semiannual", "full"])
        cadence = PLAN_MONTHS[plan]
        n = 12 // cadence
        base = money(premium / n)
        dues = [add_months(eff, i * cadence) for i in range(n)]
        paid_count = sum(1 for d in dues if d <= TODAY)
        next_due = next((d for d in dues if d > TODAY), exp)
        amount = base + PLAN_FEES[plan] if next_due != exp else money(0)
        cust = h.put("customers", {
            "id": ids["customer"], "name": p["name"], "email": p["email"], "phone": f"+1-{STATES[state][1]}-555-{rng.randint(1000, 9999)}",
            "date_of_birth": iso(p["dob"]), "tier": tier, "mailing_state": state,
            "customer_since": iso(eff - timedelta(days=rng.choice([0, 0, 365, 730, 1500]))),
            "security_question": question if security else None, "security_answer": rng.choice(answers) if security else None,
            "ssn_last4": f"{rng.randint(0, 9999):04d}" if ssn else None, "fraud_flag": fraud,
        })
        if ticket_user:
            h.put("ticket_users", {"id": ids["ticket_user"], "name": p["name"], "email": p["email"], "created_at": "2025-03-02 11:20:00"})
        pol = h.put("policies", {
            "id": ids["policy"], "customer_id": ids["customer"], "state": state, "status": "active",
            "effective_date": iso(eff), "expiration_date": iso(exp), "annual_premium": str(premium),
            "grace_period_end": None, "lapse_date": None, "cancellation_date": None, "cancel_reason": None,
        })
        bill = h.put("billing_accounts", {
            "id": ids["billing"], "policy_id": ids["policy"], "pay_plan": plan, "autopay": rng.random() < 0.4,
            "status": "current", "due_date": iso(next_due), "amount_due": str(amount), "past_due_amount": "0.00",
            "paid_to_date": str(money(base * paid_count)), "installment_fee": str(PLAN_FEES[plan]),
        })
        self_driver = h.put("drivers", {
            "id": ids["driver"](1), "policy_id": ids["policy"], "full_name": p["name"], "date_of_birth": iso(p["dob"]),
            "license_number": self.license_number(rng, state), "license_state": state, "relationship": "self",
            "status": "listed", "effective_date": iso(eff), "end_date": None,
        })
        picks = rng.sample(CATALOG, n_vehicles)
        colors = rng.sample(COLORS, n_vehicles)
        vehicles = []
        kinds: dict[str, str] = {}
        for k, ((wmi, make, model, kind), color) in enumerate(zip(picks, colors), start=1):
            year = rng.randint(2013, 2025)
            vehicles.append(h.put("vehicles", {
                "id": ids["vehicle"](k), "policy_id": ids["policy"], "vin": self.vin(rng, wmi, year), "year": year,
                "make": make, "model": model, "color": color, "coverage": "full" if year >= 2019 or rng.random() < 0.5 else "liability",
                "lienholder": None, "status": "active", "effective_date": iso(eff), "end_date": None,
            }))
            kinds[vehicles[-1]["id"]] = kind
        handle = {
            "p": p, "tier": tier, "state": state, "customer": cust, "policy": pol, "billing": bill, "self_driver": self_driver,
            "vehicles": vehicles, "ticket_user": ticket_user, "security": security, "ssn": ssn, "premium": premium, "plan": plan,
            "eff": eff, "exp": exp, "kinds": kinds,
        }
        return h, handle

    @staticmethod
    def describe(v: dict[str, Any]) -> str:
        return f"{v['color']} {v['year']} {v['make']} {v['model']}"

    def add_driver_row(self, h: Household, ids: dict[str, Any], k: int, rng: random.Random, relationship: str, status: str = "listed",
                       first: str | None = None, last: str | None = None, age: tuple[int, int] = (17, 60), state: str = "OR",
                       effective: date | None = None) -> dict[str, Any]:
        first = first or rng.choice(HOUSEHOLD_FIRST)
        dob = date(TODAY.year - rng.randint(*age), rng.randint(1, 12), rng.randint(1, 28))
        return h.put("drivers", {
            "id": ids["driver"](k), "policy_id": ids["policy"], "full_name": f"{first} {last}", "date_of_birth": iso(dob),
            "license_number": self.license_number(rng, state), "license_state": state, "relationship": relationship,
            "status": status, "effective_date": iso(effective or TODAY - timedelta(days=rng.randint(60, 300))), "end_date": None,
        })

    # ---------------------------------------------------------------- identity

    def choose_factor(self, rng: random.Random, hd: dict[str, Any]) -> str:
        options = ["policy_number", "policy_number"]
        if hd["security"]:
            options.append("security_answer")
        if hd["ssn"]:
            options.append("ssn")
        return rng.choice(options)

    def identity_facts(self, hd: dict[str, Any], factor: str | None) -> list[dict[str, Any]]:
        cust = hd["customer"]
        facts = [
            {"text": f"My email address is {cust['email']}.", "unlock": ["email", "e-mail"]},
            {"text": f"My date of birth is {cust['date_of_birth']}.", "unlock": ["date of birth", "birth", "dob", "birthday", "born"]},
        ]
        if factor == "policy_number":
            facts.append({"text": f"My policy number is {hd['policy']['id']}.", "unlock": ["policy number", "policy #", "policy no"]})
        elif factor == "security_answer":
            facts.append({"text": f"The answer to my security question is {cust['security_answer']}.", "unlock": ["security"]})
        elif factor == "ssn":
            facts.append({"text": f"The last four digits of my SSN are {cust['ssn_last4']}.", "unlock": ["ssn", "social security", "last four", "last 4"]})
        else:  # partial verification only
            facts.append({"text": "I don't have my policy number with me right now.", "unlock": ["policy number", "policy #", "policy no"]})
            facts.append({"text": "I'm sorry, I don't remember the answer to my security question.", "unlock": ["security"]})
            if cust["ssn_last4"] is not None:
                facts.append({"text": "I'd rather not give any part of my Social Security number in a chat.", "unlock": ["ssn", "social security", "last four", "last 4"]})
            else:
                facts.append({"text": f"The last four digits of my SSN are {hd['fake_ssn']}.", "unlock": ["ssn", "social security", "last four", "last 4"]})
        return facts

    def identify(self, g: Golden, hd: dict[str, Any], factor: str | None, requester: int) -> None:
        cust = hd["customer"]
        g.add("find_customer", email=cust["email"])
        g.add("get_customer_profile", customer_id=cust["id"])
        args: dict[str, Any] = {"customer_id": cust["id"], "date_of_birth": cust["date_of_birth"]}
        if factor == "policy_number":
            args["policy_number"] = hd["policy"]["id"]
        elif factor == "security_answer":
            args["security_answer"] = cust["security_answer"]
        elif factor == "ssn":
            args["ssn_last4"] = cust["ssn_last4"]
        g.add("verify_identity", idempotent="verifying again with the same factors records the same level", **args)
        g.add("search_tickets", table="users", filter=f"email eq '{cust['email']}'")
        if not hd["ticket_user"]:
            g.add("create_ticket_user", idempotent="a second ticketing user with the same email is refused", name=cust["name"], email=cust["email"])

    def requester(self, hd: dict[str, Any], ids: dict[str, Any], nxt: dict[str, Any]) -> int:
        return ids["ticket_user"] if hd["ticket_user"] else nxt["ticket_users"]

    def ticket(self, g: Golden, requester: int, hd: dict[str, Any], subject: str, category: str, status: str,
               priority: str = "normal", team: str | None = None) -> None:
        args: dict[str, Any] = {"requester_id": requester, "subject": subject, "category": category, "policy_id": hd["policy"]["id"],
                                "priority": priority, "status": status}
        if team:
            args["assigned_team"] = team
        g.add("create_ticket", **args)

    def finish(self, rng: random.Random, h: Household, hd: dict[str, Any], branch: str, description: str, opening: str,
               facts: list[dict[str, Any]], intent: str, g: Golden, reply: str, dialogue: list[dict[str, Any]],
               sql: list[dict[str, Any]] | None = None, tags: list[str] | None = None) -> dict[str, Any]:
        return {
            "description": description,
            "user": {"opening": opening, "facts": facts, "intent": intent},
            "patch": h.patch(),
            "golden": g.calls,
            "golden_reply": reply,
            "checks": {"dialogue": dialogue, "sql": sql or []},
            "idempotent_writes": g.idempotent,
            "tags": [self.name, branch, *(tags or [])],
        }

    def setup_identity(self, rng: random.Random, hd: dict[str, Any], branch: str) -> str | None:
        hd["fake_ssn"] = f"{rng.randint(0, 9999):04d}"
        if branch.startswith("partial_verification"):
            return None
        return self.choose_factor(rng, hd)


def partial_reply(request: str) -> str:
    return (f"I confirmed your date of birth, but {request} needs full verification: one of your policy number, the answer to "
            "your security question, or the last four digits of the SSN on file. I can't complete it without one of them, so I've "
            "left your ticket pending; contact us again with one of those factors and we'll finish it.")


PARTIAL_DIALOGUE: list[dict[str, Any]] = []  # backend only: the pending ticket and the missing change carry the outcome


def arrangement_limit_sql(ids: dict[str, Any], limit: int) -> dict[str, Any]:
    return {
        "name": "arrangements_within_tier_limit",
        "query": f"SELECT count(*) <= {limit} FROM payment_arrangements WHERE billing_account_id = '{ids['billing']}' "
                 f"AND created_at >= TIMESTAMP '{WINDOW_START} 00:00:00'",
    }


def arrangement_rows(ids: dict[str, Any], rng: random.Random, recent: int, old: int, start_k: int = 1) -> list[dict[str, Any]]:
    """Past arrangements: ``recent`` inside the 12-month window, ``old`` before it."""
    rows = []
    k = start_k
    recent_days = sorted(rng.sample(range(20, 360), recent), reverse=True)
    old_days = sorted(rng.sample(range(368, 700), old), reverse=True)
    for days in old_days + recent_days:
        created = NOW - timedelta(days=days, hours=rng.randint(0, 5))
        prev = created.date() + timedelta(days=rng.randint(0, 3))
        if rng.random() < 0.7:
            rows.append({"id": ids["arrangement"](k), "billing_account_id": ids["billing"], "arrangement_type": "extension",
                         "previous_due_date": iso(prev), "new_due_date": iso(add_business_days(prev, rng.randint(3, 7))),
                         "previous_plan": None, "new_plan": None, "created_at": created.strftime("%Y-%m-%d %H:%M:%S")})
        else:
            a, b = rng.sample(["monthly", "quarterly", "semiannual"], 2)
            rows.append({"id": ids["arrangement"](k), "billing_account_id": ids["billing"], "arrangement_type": "installment_plan",
                         "previous_due_date": None, "new_due_date": None, "previous_plan": a, "new_plan": b,
                         "created_at": created.strftime("%Y-%m-%d %H:%M:%S")})
        k += 1
    return rows


def seq_id(first: str, offset: int) -> str:
    """The id a sequence hands out ``offset`` steps after ``first`` (same prefix and width)."""
    m = re.match(r"^(.*?)(\d+)$", first)
    assert m is not None
    return f"{m.group(1)}{int(m.group(2)) + offset:0{len(m.group(2))}d}"


# --------------------------------------------------------------------------- IN001 billing extension


class BillingExtension(InsuranceFamily):
    code = "IN001"
    name = "billing_extension"
    number = 1
    description = "A customer asks to move a payment due date; tier limits, business-day maxima and policy status decide."
    branches = ("within_limit", "beyond_max", "limit_reached", "old_arrangement", "weekend_request", "lapsed_policy", "fraud_flag",
                "partial_verification")

    def build(self, rng: random.Random, seed: int) -> dict[str, Any]:
        branch = self.branch(seed)
        ids = self.ids(seed)
        h, hd = self.household(rng, ids, plan=rng.choice(["monthly", "quarterly"]), fraud=branch == "fraud_flag")
        factor = self.setup_identity(rng, hd, branch)
        tier, pol, bill = hd["tier"], hd["policy"], hd["billing"]
        limit, nmax = ARRANGEMENT_LIMITS[tier], EXTENSION_MAX_BUSINESS_DAYS[tier]
        amount = Decimal(bill["amount_due"])
        lapse = None
        if branch == "lapsed_policy":
            lapse = TODAY - timedelta(days=rng.randint(3, 25))
            due = lapse - timedelta(days=16)
            pol.update(status="lapsed", lapse_date=iso(lapse), grace_period_end=iso(lapse - timedelta(days=1)))
            bill.update(status="lapsed", past_due_amount=str(amount))
            state = "was due"
        elif rng.random() < 0.45:
            due = TODAY - timedelta(days=rng.randint(2, 5))
            while not is_business_day(due):
                due -= timedelta(days=1)
            pol.update(status="grace_period", grace_period_end=iso(due + timedelta(days=15)))
            bill.update(status="past_due", past_due_amount=str(amount))
            state = "was due"
        else:
            due = next_business_day(TODAY + timedelta(days=rng.randint(1, 8)))
            state = "is due"
        bill["due_date"] = iso(due)
        maxd = add_business_days(due, nmax)
        if branch == "limit_reached":
            recent, old = limit, rng.randint(0, 1)
        elif branch == "old_arrangement":
            recent, old = limit - 1, rng.randint(1, 2)
        else:
            recent, old = rng.randint(0, limit - 1), 0
        for row in arrangement_rows(ids, rng, recent, old):
            h.put("payment_arrangements", row)
        lo = max(TODAY, due)
        span = [lo + timedelta(days=i) for i in range(1, 45)]
        within = [d for d in span if d <= maxd and is_business_day(d)]
        off_days = [d for d in span if d <= maxd and not is_business_day(d) and next_business_day(d) <= maxd]
        new = None
        if branch == "beyond_max":
            req = maxd + timedelta(days=rng.randint(3, 21))
            new = maxd
        elif branch == "weekend_request" and off_days:
            req = rng.choice(off_days)
            new = next_business_day(req)
        elif branch == "lapsed_policy":
            req = next_business_day(TODAY + timedelta(days=rng.randint(5, 15)))
        else:
            req = rng.choice(within)
            if branch in ("within_limit", "old_arrangement", "weekend_request"):
                new = req
        nxt = self.next_ids(h.patch())
        requester = self.requester(hd, ids, nxt)
        g = Golden()
        self.identify(g, hd, factor, requester)
        subject = f"Payment extension request on {pol['id']}"
        dialogue: list[dict[str, Any]]
        if factor is None:
            self.ticket(g, requester, hd, subject, "billing", "pending")
            reply, dialogue = partial_reply("a payment extension"), PARTIAL_DIALOGUE
        else:
            g.add("get_policy", policy_id=pol["id"])
            g.add("get_billing_account", policy_id=pol["id"])
            g.add("get_arrangement_history", billing_account_id=ids["billing"])
            if branch == "fraud_flag":
                self.ticket(g, requester, hd, subject, "billing", "open", "high", "special_investigations")
                reply = ("Your request needs a review by another team before any payment arrangement can be made, so I can't move the due "
                         "date today. I've passed it on with high priority and they will contact you.")
                dialogue = [{"name": "does_not_disclose_fraud_flag", "must_not": [r"fraud"]}]
            elif branch == "lapsed_policy":
                self.ticket(g, requester, hd, subject, "billing", "solved")
                reply = (f"I'm sorry, I can't extend the due date: policy {pol['id']} lapsed on {iso(lapse)} (the payment of {usd(amount)} "
                         f"was due on {iso(due)}). You can still reinstate it, within 30 days of the lapse, by paying the past-due amount "
                         "plus the reinstatement fee.")
                dialogue = []
            elif branch == "limit_reached":
                self.ticket(g, requester, hd, subject, "billing", "solved")
                reply = (f"I'm sorry, I can't grant another extension: your billing account already has {recent} payment arrangement"
                         f"{'s' if recent != 1 else ''} in the last 12 months, which is the limit for the {tier} tier. Your payment of "
                         f"{usd(amount)} remains due on {iso(due)}.")
                dialogue = []
            else:
                assert new is not None
                g.add("grant_extension", idempotent="a second extension to the same date is refused: it is no longer after the due date",
                      billing_account_id=ids["billing"], new_due_date=iso(new))
                self.ticket(g, requester, hd, subject, "billing", "solved")
                reply = f"Done: the due date of your {usd(amount)} payment on policy {pol['id']} is now {iso(new)} ({new.strftime('%A')})."
                if branch == "beyond_max":
                    reply += (f" {iso(req)} is past the latest date your {tier} tier allows ({nmax} business days after the current due date "
                              f"{iso(due)}), so I moved it to that latest date, as you agreed.")
                elif new != req:
                    reply += f" {iso(req)} is not a business day, so the new due date is the next business day."
                dialogue = [{"name": "states_new_due_date", "must": [ANY_DATE]}]
        opening = rng.choice([
            f"Hi, my car insurance payment of {usd(amount)} {state} {say_date(due)}. Could you move the due date to {say_date(req)}?",
            f"Hello. I'm short on money this month; can I get an extension on my auto insurance payment until {say_date(req)}? It {state} {say_date(due)}.",
            f"I need more time to pay my premium. It {state} {say_date(due)} and I'd like to push it to {say_date(req)}.",
        ])
        return self.finish(
            rng, h, hd, branch, f"Billing extension, branch '{branch}' ({tier}, due {iso(due)}, max {iso(maxd)}, requested {iso(req)}).",
            opening, self.identity_facts(hd, factor), "Get more time to pay the auto insurance premium.", g, reply, dialogue,
            sql=[arrangement_limit_sql(ids, limit)], tags=["billing"],
        )


# --------------------------------------------------------------------------- IN002 installment plan


class InstallmentPlan(InsuranceFamily):
    code = "IN002"
    name = "installment_plan"
    number = 2
    description = "A customer asks to change the pay plan; good standing, the arrangement limit and the autopay rule decide."
    branches = ("switch_plan", "switch_monthly_autopay", "past_due", "limit_reached", "already_on_plan", "partial_verification")

    def build(self, rng: random.Random, seed: int) -> dict[str, Any]:
        branch = self.branch(seed)
        ids = self.ids(seed)
        if branch == "switch_monthly_autopay":
            cur, target = rng.choice(["quarterly", "semiannual"]), "monthly"
        elif branch == "already_on_plan":
            cur = rng.choice(["monthly", "quarterly", "semiannual"])
            target = cur
        else:
            cur = rng.choice(["monthly", "quarterly", "semiannual"])
            target = rng.choice([p for p in ("quarterly", "semiannual") if p != cur])
        h, hd = self.household(rng, ids, plan=cur)
        factor = self.setup_identity(rng, hd, branch)
        tier, pol, bill = hd["tier"], hd["policy"], hd["billing"]
        limit = ARRANGEMENT_LIMITS[tier]
        if branch == "switch_monthly_autopay":
            bill["autopay"] = False
        due = date.fromisoformat(bill["due_date"])
        amount = Decimal(bill["amount_due"])
        if branch == "past_due":
            due = TODAY - timedelta(days=rng.randint(2, 8))
            bill.update(due_date=iso(due), status="past_due", past_due_amount=str(amount))
            pol.update(status="grace_period", grace_period_end=iso(due + timedelta(days=15)))
        recent = limit if branch == "limit_reached" else rng.randint(0, limit - 1)
        for row in arrangement_rows(ids, rng, recent, rng.randint(0, 1)):
            h.put("payment_arrangements", row)
        nxt = self.next_ids(h.patch())
        requester = self.requester(hd, ids, nxt)
        g = Golden()
        self.identify(g, hd, factor, requester)
        subject = f"Pay plan change on {pol['id']}"
        if factor is None:
            self.ticket(g, requester, hd, subject, "billing", "pending")
            reply, dialogue = partial_reply("a change of pay plan"), PARTIAL_DIALOGUE
        else:
            g.add("get_billing_account", policy_id=pol["id"])
            g.add("get_arrangement_history", billing_account_id=ids["billing"])
            if branch == "past_due":
                self.ticket(g, requester, hd, subject, "billing", "solved")
                reply = (f"I'm sorry, I can't change your pay plan while {usd(amount)} is past due (it was due on {iso(due)}). Once the "
                         "account is current again, a plan change is possible.")
                dialogue = []
            elif branch == "limit_reached":
                self.ticket(g, requester, hd, subject, "billing", "solved")
                reply = (f"I'm sorry, I can't change your pay plan: a plan change is a payment arrangement, and your account already has "
                         f"{recent} in the last 12 months, the limit for the {tier} tier.")
                dialogue = []
            elif branch == "already_on_plan":
                self.ticket(g, requester, hd, subject, "billing", "solved")
                reply = f"Your billing account {ids['billing']} is already on the {cur} plan, so nothing needed to change."
                dialogue = [{"name": "says_already_on_plan", "must": [r"already"]}]
            else:
                q = installment_quote(hd["premium"], bill["paid_to_date"], due, hd["exp"], target)
                args: dict[str, Any] = {"billing_account_id": ids["billing"], "plan": target}
                if target == "monthly":
                    args["autopay"] = True
                g.add("set_installment_plan", idempotent="a second change to the same plan is refused: the account is already on it", **args)
                self.ticket(g, requester, hd, subject, "billing", "solved")
                reply = (f"Your billing account {ids['billing']} is now on the {target} plan"
                         f"{' with autopay from your account on file' if target == 'monthly' else ''}: {q['installments']} installment"
                         f"{'s' if q['installments'] != 1 else ''} of {usd(q['amount_due'])} (including a {usd(q['installment_fee'])} fee), "
                         f"the first on {iso(due)}.")
                dialogue = [{"name": "states_installment_amount", "must": [AMOUNT]}]
        opening = rng.choice([
            f"Hi, I pay my car insurance {cur if branch != 'already_on_plan' else 'on one plan'} and would like to switch to the {target} plan.",
            f"Can I change how I pay my auto policy? I'd like {target} payments instead.",
            f"Hello, I want to move my auto insurance billing to a {target} plan, please.",
        ])
        facts = self.identity_facts(hd, factor)
        if target == "monthly":
            facts.append({"text": "Yes, automatic payments from my bank account on file are fine with me.",
                          "unlock": ["autopay", "auto-pay", "auto pay", "automatic"]})
        return self.finish(
            rng, h, hd, branch, f"Installment plan change, branch '{branch}' ({tier}, {cur} -> {target}).", opening, facts,
            f"Switch the auto insurance pay plan to {target}.", g, reply, dialogue, sql=[arrangement_limit_sql(ids, limit)], tags=["billing"],
        )


# --------------------------------------------------------------------------- IN003 proof of insurance


class ProofOfInsurance(InsuranceFamily):
    code = "IN003"
    name = "proof_of_insurance"
    number = 3
    description = "A customer asks for an ID card or declarations page; full verification and an in-force policy are required."
    branches = ("id_card_single", "id_card_all", "declarations", "grace_period_allowed", "lapsed_policy", "removed_vehicle",
                "partial_verification")

    def build(self, rng: random.Random, seed: int) -> dict[str, Any]:
        branch = self.branch(seed)
        ids = self.ids(seed)
        n = {"id_card_single": rng.randint(2, 3), "id_card_all": 2, "removed_vehicle": 2}.get(branch, rng.randint(1, 2))
        h, hd = self.household(rng, ids, n_vehicles=n)
        factor = self.setup_identity(rng, hd, branch)
        pol, vehicles = hd["policy"], hd["vehicles"]
        if branch == "id_card_all" and rng.random() < 0.5:
            (wmi, make, model, _kind) = rng.choice([c for c in CATALOG if c[2] not in {v["model"] for v in vehicles}])
            year = rng.randint(2010, 2018)
            gone = TODAY - timedelta(days=rng.randint(10, 60))
            h.put("vehicles", {"id": ids["vehicle"](9), "policy_id": pol["id"], "vin": self.vin(rng, wmi, year), "year": year, "make": make,
                               "model": model, "color": rng.choice(COLORS), "coverage": "liability", "lienholder": None, "status": "removed",
                               "effective_date": pol["effective_date"], "end_date": iso(gone)})
        if branch == "removed_vehicle":
            gone = TODAY - timedelta(days=rng.randint(5, 60))
            vehicles[1].update(status="removed", end_date=iso(gone))
        lapse = None
        if branch == "grace_period_allowed":
            due = TODAY - timedelta(days=rng.randint(2, 10))
            pol.update(status="grace_period", grace_period_end=iso(due + timedelta(days=15)))
            hd["billing"].update(status="past_due", due_date=iso(due), past_due_amount=hd["billing"]["amount_due"])
        elif branch == "lapsed_policy":
            lapse = TODAY - timedelta(days=rng.randint(2, 40))
            pol.update(status="lapsed", lapse_date=iso(lapse), grace_period_end=iso(lapse - timedelta(days=1)))
            hd["billing"].update(status="lapsed", due_date=iso(lapse - timedelta(days=16)), past_due_amount=hd["billing"]["amount_due"])
        target = vehicles[1] if branch == "removed_vehicle" else rng.choice(vehicles)
        named = branch in ("id_card_single", "removed_vehicle") or (branch in ("grace_period_allowed", "partial_verification") and len(vehicles) > 1)
        if branch == "declarations":
            opening = rng.choice([
                "My lender is asking for the declarations page of my auto policy. Can you send it to me?",
                "Hi, I need a copy of my policy's declarations page for my landlord's paperwork.",
            ])
        elif named:
            desc = f"{target['year']} {target['make']} {target['model']}"
            opening = rng.choice([
                f"Hi, I need a copy of my insurance ID card for my {desc}.",
                f"Can you send me the proof-of-insurance card for the {desc}? I got pulled over and couldn't find it.",
            ])
        else:
            opening = rng.choice([
                "Hi, I need copies of my insurance ID cards, please.",
                "Can you email me my auto insurance cards? I can't find them anywhere.",
            ])
        nxt = self.next_ids(h.patch())
        requester = self.requester(hd, ids, nxt)
        g = Golden()
        self.identify(g, hd, factor, requester)
        subject = f"Proof of insurance for {pol['id']}"
        sql = [{
            "name": "documents_only_with_full_verification",
            "query": f"SELECT count(*) = 0 FROM documents WHERE policy_id = '{pol['id']}' AND issued_at = TIMESTAMP '{NOW_TS}' "
                     f"AND NOT EXISTS (SELECT 1 FROM identity_verifications WHERE customer_id = '{ids['customer']}' AND level = 'full')",
        }]
        if factor is None:
            self.ticket(g, requester, hd, subject, "documents", "pending")
            reply, dialogue = partial_reply("releasing an insurance document"), PARTIAL_DIALOGUE
        else:
            g.add("get_policy", policy_id=pol["id"])
            g.add("list_vehicles", policy_id=pol["id"])
            if branch == "lapsed_policy":
                self.ticket(g, requester, hd, subject, "documents", "solved")
                reply = (f"I'm sorry, I can't issue proof of insurance: policy {pol['id']} lapsed on {iso(lapse)} and is not in force. "
                         "If the lapse was less than 30 days ago you can reinstate it by paying the past-due amount and the reinstatement fee.")
                dialogue = []
            elif branch == "removed_vehicle":
                self.ticket(g, requester, hd, subject, "documents", "solved")
                reply = (f"I'm sorry, I can't issue an ID card for the {target['year']} {target['make']} {target['model']}: it was removed from "
                         f"policy {pol['id']} on {target['end_date']} and is no longer insured with us.")
                dialogue = []
            else:
                if branch == "declarations":
                    wanted: list[dict[str, Any] | None] = [None]
                elif named:
                    wanted = [target]
                else:
                    wanted = [v for v in vehicles if v["status"] == "active"]
                links = []
                for i, v in enumerate(wanted):
                    doc_id = seq_id(nxt["documents"], i)
                    if v is None:
                        g.add("issue_document", policy_id=pol["id"], doc_type="declarations_page")
                        links.append((f"the declarations page of {pol['id']}", doc_id))
                    else:
                        g.add("issue_document", policy_id=pol["id"], doc_type="id_card", vehicle_id=v["id"])
                        links.append((f"the ID card for your {v['year']} {v['make']} {v['model']}", doc_id))
                self.ticket(g, requester, hd, subject, "documents", "solved")
                reply = "Here " + ("it is" if len(links) == 1 else "they are") + ": " + "; ".join(
                    f"{what}: {DOCS_BASE_URL}/{pol['id']}/{doc}.pdf" for what, doc in links) + "."
                dialogue = [{"name": "gives_every_link", "must": [re.escape(doc) for _, doc in links]}]
        return self.finish(
            rng, h, hd, branch, f"Proof of insurance, branch '{branch}'.", opening, self.identity_facts(hd, factor),
            "Get proof-of-insurance documents for the auto policy.", g, reply, dialogue, sql=sql, tags=["documents"],
        )


# --------------------------------------------------------------------------- IN004 add driver

RELATION_WORDS = {"spouse": ("wife", "husband"), "child": ("daughter", "son"), "sibling": ("sister", "brother"),
                  "parent": ("mother", "father"), "other_household": ("housemate", "housemate")}


class AddDriver(InsuranceFamily):
    code = "IN004"
    name = "add_driver"
    number = 4
    description = "A customer asks to list a household member as a driver; the MVR, exclusions and the effective-date rule decide."
    branches = ("add_tomorrow", "add_future_date", "excluded_relist", "suspended_license", "violations_review", "partial_verification")

    def build(self, rng: random.Random, seed: int) -> dict[str, Any]:
        branch = self.branch(seed)
        ids = self.ids(seed)
        h, hd = self.household(rng, ids, n_vehicles=rng.randint(1, 2))
        factor = self.setup_identity(rng, hd, branch)
        pol, state, last = hd["policy"], hd["state"], hd["p"]["last"]
        relationship = rng.choice(["child", "child", "spouse", "sibling", "parent", "other_household"])
        gender = rng.randint(0, 1)
        word = RELATION_WORDS[relationship][gender]
        first = rng.choice(HOUSEHOLD_FIRST)
        surname = rng.choice(LAST_NAMES) if relationship == "other_household" else last
        full = f"{first} {surname}"
        age = (16, 19) if relationship == "child" else (30, 75) if relationship == "parent" else (21, 60)
        dob = date(TODAY.year - rng.randint(*age), rng.randint(1, 12), rng.randint(1, 28))
        lic_state = state if rng.random() < 0.8 else rng.choice([s for s in STATES if s != state])
        lic = self.license_number(rng, lic_state)
        status, violations, accidents = "valid", rng.randint(0, 2), rng.randint(0, 1)
        if branch == "suspended_license":
            status = rng.choice(["suspended", "revoked", "expired"])
        elif branch == "violations_review":
            violations, accidents = rng.choice([(rng.randint(3, 5), rng.randint(0, 1)), (rng.randint(0, 2), rng.randint(2, 3))])
        h.put("driver_records", {"license_number": lic, "license_state": lic_state, "full_name": full, "license_status": status,
                                 "violations_3yr": violations, "at_fault_accidents_3yr": accidents, "report_date": iso(TODAY - timedelta(days=rng.randint(1, 20)))})
        if branch == "excluded_relist":
            h.put("drivers", {"id": ids["driver"](3), "policy_id": pol["id"], "full_name": full, "date_of_birth": iso(dob),
                              "license_number": lic, "license_state": lic_state, "relationship": relationship, "status": "excluded",
                              "effective_date": iso(TODAY - timedelta(days=rng.randint(40, 150))), "end_date": None})
        eff = TOMORROW
        if branch == "add_future_date":
            eff = TODAY + timedelta(days=rng.randint(3, 28))
            when = f"starting {say_date(eff)}"
        else:
            when = rng.choice(["starting today", "right away, today if possible", "as of today"])
        nxt = self.next_ids(h.patch())
        requester = self.requester(hd, ids, nxt)
        g = Golden()
        self.identify(g, hd, factor, requester)
        subject = f"Add driver to {pol['id']}"
        if factor is None:
            self.ticket(g, requester, hd, subject, "policy_change", "pending")
            reply, dialogue = partial_reply("adding a driver"), PARTIAL_DIALOGUE
        else:
            g.add("get_policy", policy_id=pol["id"])
            g.add("list_drivers", policy_id=pol["id"])
            g.add("check_driver_record", license_number=lic, license_state=lic_state)
            if branch == "excluded_relist":
                self.ticket(g, requester, hd, subject, "policy_change", "open", "high", "underwriting")
                reply = (f"{full} is on policy {pol['id']} as an excluded driver. Listing an excluded driver again needs an underwriting "
                         "review, so I haven't changed anything; I've sent the request to our underwriting team, who will contact you.")
                dialogue = []
            elif branch == "suspended_license":
                self.ticket(g, requester, hd, subject, "policy_change", "solved")
                reply = (f"I'm sorry, I can't add {full}: the motor-vehicle record shows the licence as {status}. A driver can be added once "
                         "they hold a valid licence.")
                dialogue = []
            elif branch == "violations_review":
                self.ticket(g, requester, hd, subject, "policy_change", "open", "high", "underwriting")
                reply = (f"{full}'s driving record needs an underwriting review before they can be listed, so I haven't added them yet. "
                         "I've sent the request to our underwriting team, who will contact you.")
                dialogue = []
            else:
                g.add("add_driver", idempotent="adding the same licence again is refused: it is already on the policy",
                      policy_id=pol["id"], full_name=full, date_of_birth=iso(dob), license_number=lic, license_state=lic_state,
                      relationship=relationship, effective_date=iso(eff))
                self.ticket(g, requester, hd, subject, "policy_change", "solved")
                reply = f"{full} is now a listed driver on policy {pol['id']}, effective {iso(eff)}."
                if branch == "add_tomorrow":
                    reply += " A new driver's coverage can start tomorrow at the earliest, not today."
                dialogue = [{"name": "states_effective_date", "must": [ANY_DATE]}]
        pronoun = ["her", "his"][gender] if relationship != "other_household" else "their"
        opening = rng.choice([
            f"Hi, I'd like to add my {word} {first} as a driver on my car insurance, {when}.",
            f"Hello, my {word} needs to be able to drive our car. Can you put {first} on my policy {when}?",
        ])
        facts = self.identity_facts(hd, factor) + [{
            "text": f"My {word}'s full name is {full}, {pronoun} date of birth is {iso(dob)}, and {pronoun} {STATES[lic_state][0]} driver's licence "
                    f"number is {lic}.",
            "unlock": ["licen", "full name", "driver's", "their", "her", "his", "details"],
        }]
        return self.finish(
            rng, h, hd, branch, f"Add a driver, branch '{branch}' ({relationship}, effective {iso(eff)}).", opening, facts,
            f"Add the {word} as a listed driver.", g, reply, dialogue, tags=["drivers"],
        )


# --------------------------------------------------------------------------- IN005 driver removal or exclusion


class DriverRemoval(InsuranceFamily):
    code = "IN005"
    name = "driver_removal"
    number = 5
    description = "A customer asks to remove or exclude a driver; the named insured, state rules and open major claims decide."
    branches = ("remove_moved_out", "exclude_driver", "exclusion_not_permitted", "named_insured_refuse", "open_claim_escalate",
                "partial_verification")

    def build(self, rng: random.Random, seed: int) -> dict[str, Any]:
        branch = self.branch(seed)
        ids = self.ids(seed)
        if branch == "exclusion_not_permitted":
            h, hd = self.household(rng, ids, n_vehicles=rng.randint(1, 2), state=rng.choice(["WA", "AZ"]))
        elif branch == "exclude_driver":
            h, hd = self.household(rng, ids, n_vehicles=rng.randint(1, 2), exclude_states=("WA", "AZ"))
        else:
            h, hd = self.household(rng, ids, n_vehicles=rng.randint(1, 2))
        factor = self.setup_identity(rng, hd, branch)
        pol, last, state = hd["policy"], hd["p"]["last"], hd["state"]
        excluding = branch in ("exclude_driver", "exclusion_not_permitted")
        relationship = rng.choice(["sibling", "other_household", "child"]) if excluding else rng.choice(["child", "spouse", "sibling"])
        if branch == "named_insured_refuse":
            relationship = "spouse"
        gender = rng.randint(0, 1)
        word = RELATION_WORDS[relationship][gender]
        first = rng.choice(HOUSEHOLD_FIRST)
        surname = rng.choice(LAST_NAMES) if relationship == "other_household" else last
        drv = self.add_driver_row(h, ids, 2, rng, relationship, first=first, last=surname, state=state,
                                  age=(17, 22) if relationship == "child" else (22, 60))
        if branch == "open_claim_escalate":
            v = hd["vehicles"][0]
            h.put("claims", {"id": ids["claim"](1), "policy_id": pol["id"], "vehicle_id": v["id"], "driver_id": drv["id"],
                             "date_of_loss": iso(TODAY - timedelta(days=rng.randint(6, 40))), "loss_type": "collision", "severity": "major",
                             "injuries": rng.random() < 0.5, "drivable": False, "status": "open",
                             "description": "Intersection collision; vehicle towed.", "reported_at": "2026-04-02 09:30:00"})
        moved = TODAY - timedelta(days=rng.randint(3, 40))
        nxt = self.next_ids(h.patch())
        requester = self.requester(hd, ids, nxt)
        g = Golden()
        self.identify(g, hd, factor, requester)
        subject = f"Driver change on {pol['id']}"
        full = drv["full_name"]
        if factor is None:
            self.ticket(g, requester, hd, subject, "policy_change", "pending")
            reply, dialogue = partial_reply("a driver change"), PARTIAL_DIALOGUE
        else:
            g.add("get_policy", policy_id=pol["id"])
            g.add("list_drivers", policy_id=pol["id"])
            if branch == "named_insured_refuse":
                self.ticket(g, requester, hd, subject, "policy_change", "solved")
                reply = (f"I'm sorry, I can't remove you: you are the named insured on policy {pol['id']}, and the named insured cannot be "
                         "removed or excluded. If you no longer want the policy in your name, it would have to be cancelled and a new one written.")
                dialogue = []
            else:
                g.add("get_claims_by_driver", driver_id=drv["id"])
                if branch == "open_claim_escalate":
                    self.ticket(g, requester, hd, subject, "policy_change", "open", "high", "underwriting")
                    reply = (f"{full} was the driver in an open major claim ({ids['claim'](1)}), so they can't be removed until the claim is "
                             "closed. I've sent your request to our underwriting team, who will contact you.")
                    dialogue = []
                elif branch == "exclusion_not_permitted":
                    self.ticket(g, requester, hd, subject, "policy_change", "solved")
                    reply = (f"I'm sorry, driver exclusions are not permitted on policies written in {STATES[state][0]}, so I can't exclude "
                             f"{full}. If they move out of your household, they can be removed from the policy instead.")
                    dialogue = []
                elif branch == "exclude_driver":
                    g.add("update_driver_status", idempotent="excluding an excluded driver again is refused", driver_id=drv["id"],
                          status="excluded", effective_date=iso(TOMORROW))
                    self.ticket(g, requester, hd, subject, "policy_change", "solved")
                    reply = (f"{full} is now an excluded driver on policy {pol['id']}, effective {iso(TOMORROW)}: there is no coverage when "
                             "they drive your vehicles.")
                    dialogue = [{"name": "states_exclusion_date", "must": [ANY_DATE, r"exclu"]}]
                else:
                    g.add("remove_driver", idempotent="removing a removed driver again is refused", driver_id=drv["id"],
                          effective_date=iso(TODAY), reason="left_household")
                    self.ticket(g, requester, hd, subject, "policy_change", "solved")
                    reply = (f"{full} is removed from policy {pol['id']} effective today, {iso(TODAY)}. Removals can't be backdated to "
                             f"{iso(moved)}.")
                    dialogue = [{"name": "states_removal_date", "must": [ANY_DATE]}]
        if branch == "named_insured_refuse":
            opening = f"Hi, please take me off my car insurance policy. My {word} {first} will be the only one driving from now on."
        elif excluding:
            opening = rng.choice([
                f"My {word} {first} lives with us but has a bad driving record and won't drive our cars. Can you exclude them from my policy?",
                f"I'd like {first}, my {word}, excluded from my auto policy so our premium isn't affected. They never drive our cars.",
            ])
        else:
            opening = rng.choice([
                f"Hi, my {word} {first} moved out on {say_date(moved)} and has their own insurance now. Please take them off my policy as of that date.",
                f"Please remove my {word} {first} from my car insurance; they moved out on {say_date(moved)}.",
            ])
        return self.finish(
            rng, h, hd, branch, f"Driver removal or exclusion, branch '{branch}' ({state}, {relationship}).", opening,
            self.identity_facts(hd, factor), "Take the household member off the policy, or exclude them.", g, reply, dialogue, tags=["drivers"],
        )


# --------------------------------------------------------------------------- IN006 vehicle addition


class VehicleAddition(InsuranceFamily):
    code = "IN006"
    name = "vehicle_addition"
    number = 6
    description = "A customer adds or replaces a vehicle; the VIN check and the acquisition-date rule decide."
    branches = ("add_recent_purchase", "add_old_purchase", "add_future_purchase", "replace_vehicle", "invalid_vin", "partial_verification")

    def build(self, rng: random.Random, seed: int) -> dict[str, Any]:
        branch = self.branch(seed)
        ids = self.ids(seed)
        h, hd = self.household(rng, ids, n_vehicles=rng.randint(1, 2))
        factor = self.setup_identity(rng, hd, branch)
        pol, vehicles = hd["policy"], hd["vehicles"]
        wmi, make, model, kind = rng.choice([c for c in CATALOG if c[2] not in {v["model"] for v in vehicles}])
        if branch == "add_old_purchase":
            acq = TODAY - timedelta(days=rng.randint(15, 50))
        elif branch == "add_future_purchase":
            acq = TODAY + timedelta(days=rng.randint(1, 30))
        else:
            acq = TODAY - timedelta(days=rng.randint(0, 14))
        acq = max(acq, date.fromisoformat(pol["effective_date"]) + timedelta(days=1)) if acq < TODAY else acq
        eff = TOMORROW if branch == "add_old_purchase" else acq
        year = rng.randint(2019, 2026)
        vin = self.vin(rng, wmi, year)
        given_vin = self.bad_vin(rng, vin) if branch == "invalid_vin" else vin
        old = vehicles[0]
        if rng.random() < 0.4:
            coverage, cov_text = old["coverage"], f"The same coverage as my {old['make']} {old['model']}."
        else:
            coverage = rng.choice(["full", "liability"])
            cov_text = "Full coverage, please." if coverage == "full" else "Just liability coverage, please."
        nxt = self.next_ids(h.patch())
        requester = self.requester(hd, ids, nxt)
        g = Golden()
        self.identify(g, hd, factor, requester)
        subject = f"Vehicle change on {pol['id']}"
        desc = f"{year} {make} {model}"
        if factor is None:
            self.ticket(g, requester, hd, subject, "policy_change", "pending")
            reply, dialogue = partial_reply("adding a vehicle"), PARTIAL_DIALOGUE
        else:
            g.add("get_policy", policy_id=pol["id"])
            g.add("list_vehicles", policy_id=pol["id"])
            g.add("validate_vin", vin=given_vin)
            if branch == "invalid_vin":
                self.ticket(g, requester, hd, subject, "policy_change", "pending")
                reply = (f"The VIN {given_vin} doesn't pass the VIN check (the check digit doesn't match), so I can't add the {make} {model} yet. "
                         "Please read the VIN again from the registration or the driver-side door jamb and send it to us; your ticket stays pending.")
                dialogue = [{"name": "asks_for_corrected_vin", "must": [r"\bVIN\b"]}]
            else:
                g.add("add_vehicle", idempotent="adding the same VIN again is refused: it is already on the policy",
                      policy_id=pol["id"], vin=vin, model=model, coverage=coverage, effective_date=iso(eff))
                if branch == "replace_vehicle":
                    g.add("remove_vehicle", idempotent="removing a removed vehicle again is refused", vehicle_id=old["id"],
                          effective_date=iso(eff), reason="traded_in")
                self.ticket(g, requester, hd, subject, "policy_change", "solved")
                reply = f"Your {desc} (VIN {vin}) is on policy {pol['id']} with {coverage} coverage, effective {iso(eff)}."
                if branch == "replace_vehicle":
                    reply += f" The {old['year']} {old['make']} {old['model']} is removed on the same date."
                if branch == "add_old_purchase":
                    reply += (f" Because you bought it on {iso(acq)}, more than 14 days ago, coverage can only start tomorrow; it was not "
                              "insured with us before.")
                dialogue = [{"name": "states_effective_date", "must": [ANY_DATE]}]
        if branch == "replace_vehicle":
            opening = f"Hi, I traded in my {old['year']} {old['make']} {old['model']} for a {desc}. Can you switch my insurance over to the new car?"
        elif branch == "add_future_purchase":
            opening = f"Hello, I'm buying a {desc} soon and want it on my auto policy from the day I get it."
        else:
            opening = rng.choice([f"Hi, I bought a {desc} and need to add it to my auto policy.",
                                  f"I'd like to add my new {model} to my car insurance, please. It's a {desc}."])
        when_text = f"I'm picking it up on {say_date(acq)}." if acq > TODAY else f"I bought it on {say_date(acq)}."
        facts = self.identity_facts(hd, factor) + [
            {"text": f"The VIN is {given_vin}.", "unlock": ["vin", "vehicle identification", "identification number"]},
            {"text": when_text, "unlock": ["when", "purchase", "bought", "buy", "acquire", "pick", "date"]},
            {"text": cov_text, "unlock": ["coverage", "liability", "full", "comprehensive", "collision"]},
        ]
        return self.finish(
            rng, h, hd, branch, f"Vehicle addition, branch '{branch}' (acquired {iso(acq)}, effective {iso(eff)}).", opening, facts,
            "Get the new vehicle insured on the policy.", g, reply, dialogue, tags=["vehicles"],
        )


# --------------------------------------------------------------------------- IN007 vehicle removal and coverage


class VehicleRemovalCoverage(InsuranceFamily):
    code = "IN007"
    name = "vehicle_removal_coverage"
    number = 7
    description = "A customer removes a vehicle or drops its coverage; the last-vehicle rule, dates and lienholders decide."
    branches = ("remove_sold", "remove_future_sale", "remove_last_vehicle", "coverage_drop", "lienholder_refuse", "partial_verification")

    def build(self, rng: random.Random, seed: int) -> dict[str, Any]:
        branch = self.branch(seed)
        ids = self.ids(seed)
        n = 1 if branch == "remove_last_vehicle" else rng.randint(2, 3)
        h, hd = self.household(rng, ids, n_vehicles=n)
        factor = self.setup_identity(rng, hd, branch)
        pol, vehicles = hd["policy"], hd["vehicles"]
        target = rng.choice(vehicles)
        if branch in ("coverage_drop", "lienholder_refuse"):
            target.update(coverage="full", lienholder=rng.choice(LENDERS) if branch == "lienholder_refuse" else None)
        elif branch == "partial_verification" and rng.random() < 0.5:
            target.update(coverage="full", lienholder=None)
        sold = TODAY - timedelta(days=rng.randint(1, 30))
        sale = TODAY + timedelta(days=rng.randint(2, 25))
        nxt = self.next_ids(h.patch())
        requester = self.requester(hd, ids, nxt)
        g = Golden()
        self.identify(g, hd, factor, requester)
        subject = f"Vehicle change on {pol['id']}"
        desc = f"{target['year']} {target['make']} {target['model']}"
        coverage_request = branch in ("coverage_drop", "lienholder_refuse") or (branch == "partial_verification" and target["coverage"] == "full")
        if factor is None:
            self.ticket(g, requester, hd, subject, "policy_change", "pending")
            reply, dialogue = partial_reply("a vehicle or coverage change"), PARTIAL_DIALOGUE
        else:
            g.add("get_policy", policy_id=pol["id"])
            g.add("list_vehicles", policy_id=pol["id"])
            if branch == "remove_last_vehicle":
                self.ticket(g, requester, hd, subject, "policy_change", "solved")
                reply = (f"I'm sorry, I can't remove the {desc}: it is the only vehicle on policy {pol['id']}, and a policy must keep at least "
                         "one vehicle. If you no longer have a car to insure, you can cancel the policy instead.")
                dialogue = []
            elif branch == "lienholder_refuse":
                self.ticket(g, requester, hd, subject, "policy_change", "solved")
                reply = (f"I'm sorry, I can't drop the {desc} to liability only: it is financed through {target['lienholder']}, and a "
                         "financed vehicle must keep full coverage until the lien is released.")
                dialogue = []
            elif branch == "coverage_drop":
                g.add("update_vehicle_coverage", idempotent="setting the same coverage again is refused", vehicle_id=target["id"],
                      coverage="liability", effective_date=iso(TOMORROW))
                self.ticket(g, requester, hd, subject, "policy_change", "solved")
                reply = f"The {desc} will have liability-only coverage from {iso(TOMORROW)}; collision and comprehensive end then."
                dialogue = [{"name": "states_change_date", "must": [ANY_DATE]}]
            else:
                eff = sale if branch == "remove_future_sale" else TODAY
                g.add("remove_vehicle", idempotent="removing a removed vehicle again is refused", vehicle_id=target["id"],
                      effective_date=iso(eff), reason="sold")
                self.ticket(g, requester, hd, subject, "policy_change", "solved")
                reply = f"The {desc} is removed from policy {pol['id']} effective {iso(eff)}."
                if branch == "remove_sold":
                    reply += f" A removal can't be backdated to the sale date ({iso(sold)}), so it takes effect today."
                dialogue = [{"name": "states_removal_date", "must": [ANY_DATE]}]
        if coverage_request:
            opening = rng.choice([
                f"Hi, I'd like to drop collision and comprehensive on my {target['make']} {target['model']} and keep just liability.",
                f"My {target['make']} {target['model']} is getting old; please switch it to liability-only coverage to lower my premium.",
            ])
        elif branch in ("remove_future_sale",):
            opening = f"Hello, I'm selling my {target['make']} {target['model']} on {say_date(sale)}. Please take it off my policy from that day."
        else:
            opening = rng.choice([
                f"Hi, I sold my {target['make']} {target['model']} on {say_date(sold)}. Please remove it from my policy as of the sale date.",
                f"I no longer own my {target['make']} {target['model']}; I sold it on {say_date(sold)}. Can you take it off my insurance?",
            ])
        return self.finish(
            rng, h, hd, branch, f"Vehicle removal or coverage change, branch '{branch}'.", opening, self.identity_facts(hd, factor),
            "Remove the vehicle from the policy or reduce its coverage.", g, reply, dialogue, tags=["vehicles"],
        )


# --------------------------------------------------------------------------- IN008 first notice of loss

SCENARIOS = {
    "collision_minor": [
        ("Someone backed into my car in a grocery store parking lot and dented the rear bumper.", "collision", True, False),
        ("I rear-ended another car at a stoplight at low speed; my front bumper is cracked.", "collision", True, False),
        ("I scraped a concrete pillar in a parking garage and damaged the passenger door.", "collision", True, False),
    ],
    "injury_major": [
        ("I was hit by a car that ran a red light at an intersection.", "collision", None, True),
        ("Another driver sideswiped us on the freeway and we spun into the guardrail.", "collision", None, True),
    ],
    "animal_comprehensive": [
        ("I hit a deer on the highway at night.", "comprehensive", None, False),
        ("An elk ran out in front of me on a mountain road and I couldn't stop in time.", "comprehensive", None, False),
    ],
    "glass_only": [
        ("A rock from a gravel truck cracked my windshield on the interstate.", "glass", True, False),
        ("Hail cracked the rear window, nothing else was damaged.", "glass", True, False),
    ],
}


class FirstNoticeOfLoss(InsuranceFamily):
    code = "IN008"
    name = "first_notice_of_loss"
    number = 8
    description = "A customer reports a loss; the right vehicle and driver, coverage on the date of loss, loss type and severity decide."
    branches = ("collision_minor", "injury_major", "animal_comprehensive", "glass_only", "outside_coverage", "excluded_driver",
                "duplicate_claim", "partial_verification_proceeds")

    def build(self, rng: random.Random, seed: int) -> dict[str, Any]:
        branch = self.branch(seed)
        ids = self.ids(seed)
        h, hd = self.household(rng, ids, n_vehicles=rng.randint(2, 3))
        factor = self.setup_identity(rng, hd, branch)
        pol, vehicles, state = hd["policy"], hd["vehicles"], hd["state"]
        other_rel = rng.choice(["spouse", "child"])
        other = self.add_driver_row(h, ids, 2, rng, other_rel, last=hd["p"]["last"], state=state,
                                    age=(17, 22) if other_rel == "child" else (25, 60), effective=date.fromisoformat(pol["effective_date"]))
        gender = rng.randint(0, 1)
        excluded = None
        if branch == "excluded_driver":
            excluded = self.add_driver_row(h, ids, 3, rng, "sibling", status="excluded", last=hd["p"]["last"], state=state,
                                           effective=date.fromisoformat(pol["effective_date"]))
        eff = date.fromisoformat(pol["effective_date"])
        lapse = reinstated = None
        if branch == "outside_coverage":
            reinstated = TODAY - timedelta(days=rng.randint(4, 12))
            lapse = reinstated - timedelta(days=rng.randint(5, 20))
            if eff > lapse - timedelta(days=30):
                eff = lapse - timedelta(days=rng.randint(40, 120))
                eff = eff.replace(day=min(eff.day, 28))
                pol.update(effective_date=iso(eff), expiration_date=iso(add_months(eff, 12)))
                for row in h.rows["drivers"] + h.rows["vehicles"]:
                    row["effective_date"] = iso(eff)
            pol["lapse_date"] = iso(lapse)
            h.put("reinstatements", {"id": ids["reinstatement"](1), "policy_id": pol["id"], "effective_date": iso(reinstated),
                                     "lapse_days": (reinstated - lapse).days, "created_at": f"{iso(reinstated)} 10:05:00"})
            dol = lapse + timedelta(days=rng.randint(0, (reinstated - lapse).days - 1))
        else:
            dol = TODAY - timedelta(days=rng.randint(1, min(15, (TODAY - eff).days)))
        vehicle = rng.choice(vehicles)
        if branch == "excluded_driver":
            driver, drv_text = excluded, f"My {RELATION_WORDS['sibling'][gender]} {excluded['full_name']} was driving."  # type: ignore[index]
        elif rng.random() < 0.5:
            driver, drv_text = hd["self_driver"], "I was driving."
        else:
            driver = other
            drv_text = f"My {RELATION_WORDS[other_rel][gender]} {other['full_name']} was driving."
        kind = branch if branch in SCENARIOS else "collision_minor"
        text, loss_type, drivable, injuries = rng.choice(SCENARIOS[kind])
        if drivable is None:
            drivable = rng.random() < 0.4
        major = injuries or not drivable
        if branch == "duplicate_claim":
            h.put("claims", {"id": ids["claim"](1), "policy_id": pol["id"], "vehicle_id": vehicle["id"], "driver_id": driver["id"],  # type: ignore[index]
                             "date_of_loss": iso(dol), "loss_type": loss_type, "severity": "major" if major else "minor",
                             "injuries": injuries, "drivable": drivable, "status": "open", "description": text,
                             "reported_at": f"{iso(dol + timedelta(days=1))} 08:40:00"})
        nxt = self.next_ids(h.patch())
        requester = self.requester(hd, ids, nxt)
        g = Golden()
        self.identify(g, hd, factor, requester)
        g.add("get_policy", policy_id=pol["id"])
        g.add("list_vehicles", policy_id=pol["id"])
        g.add("list_drivers", policy_id=pol["id"])
        g.add("get_claims_by_vehicle", vehicle_id=vehicle["id"])
        subject = f"New loss report on {pol['id']}"
        desc = self.describe(vehicle)
        if branch == "outside_coverage":
            self.ticket(g, requester, hd, subject, "claims", "open", "high", "claims")
            reply = (f"Policy {pol['id']} was not in force on {iso(dol)}: it lapsed on {iso(lapse)} and was reinstated on {iso(reinstated)}, "  # type: ignore[arg-type]
                     "so I can't open a claim. I've sent the loss to our claims team for a coverage review; they will contact you.")
            dialogue = []
        elif branch == "excluded_driver":
            self.ticket(g, requester, hd, subject, "claims", "open", "high", "claims")
            reply = (f"{excluded['full_name']} is an excluded driver on policy {pol['id']}, so I can't open a claim for this loss. "  # type: ignore[index]
                     "I've sent it to our claims team for a coverage review; they will contact you.")
            dialogue = []
        elif branch == "duplicate_claim":
            self.ticket(g, requester, hd, subject, "claims", "solved")
            reply = (f"This loss is already reported as claim {ids['claim'](1)} for your {desc}, dated {iso(dol)}, and that claim is open, "
                     "so I didn't open a second one. The adjuster on that claim will keep you updated.")
            dialogue = [{"name": "gives_existing_claim", "must": [re.escape(ids["claim"](1))]}]
        else:
            claim_id = nxt["claims"]
            args: dict[str, Any] = {"policy_id": pol["id"], "vehicle_id": vehicle["id"], "date_of_loss": iso(dol), "loss_type": loss_type,
                                    "severity": "major" if major else "minor", "injuries": injuries, "drivable": drivable, "description": text,
                                    "driver_id": driver["id"]}  # type: ignore[index]
            g.add("file_claim", **args)
            if major:
                self.ticket(g, requester, hd, subject, "claims", "open", "urgent" if injuries else "high", "claims")
                why = "someone was injured" if injuries else "the car can't be driven"
                reply = (f"I've opened claim {claim_id} for your {desc} ({loss_type}, loss on {iso(dol)}). Because {why}, it is a major "
                         "claim: a claims adjuster will contact you with priority.")
            else:
                self.ticket(g, requester, hd, subject, "claims", "solved")
                reply = f"I've opened claim {claim_id} for your {desc} ({loss_type}, loss on {iso(dol)}). An adjuster will contact you about repairs."
            dialogue = [{"name": "gives_claim_number", "must": [re.escape(claim_id)]}]
        injury_text = rng.choice(["My passenger hurt her neck and went to urgent care.", "I hurt my wrist and had it checked at the ER."]) \
            if injuries else "Nobody was hurt."
        drive_text = "The car still drives fine." if drivable else "The car can't be driven; it had to be towed."
        facts = self.identity_facts(hd, factor) + [
            {"text": f"It happened on {say_date(dol)}.", "unlock": ["when", "date of", "what day", "which day", "what date", "happen"]},
            {"text": f"It was my {desc}.", "unlock": ["vehicle", "car", "which", "truck", "suv", "make", "model"]},
            {"text": drv_text, "unlock": ["driving", "driver", "who was", "behind the wheel"]},
            {"text": injury_text, "unlock": ["injur", "hurt", "anyone", "medical"]},
            {"text": drive_text, "unlock": ["drivable", "driveable", "drive it", "be driven", "tow", "still drive"]},
        ]
        opening = rng.choice([f"Hi, I need to report an accident. {text}", f"Hello, I want to file a claim. {text}"])
        return self.finish(
            rng, h, hd, branch, f"First notice of loss, branch '{branch}' ({loss_type}, {'major' if major else 'minor'}).", opening, facts,
            "Report the loss and get a claim opened.", g, reply, dialogue, tags=["claims"],
        )


# --------------------------------------------------------------------------- IN009 reinstatement


class Reinstatement(InsuranceFamily):
    code = "IN009"
    name = "reinstatement"
    number = 9
    description = "A customer whose policy lapsed asks to reinstate it; the 30-day window, payment and the fee rule decide."
    branches = ("reinstate", "elite_fee_waived", "lapsed_too_long", "cancelled_not_lapsed", "cannot_pay_now", "partial_verification")

    def build(self, rng: random.Random, seed: int) -> dict[str, Any]:
        branch = self.branch(seed)
        ids = self.ids(seed)
        if branch == "elite_fee_waived":
            tier = "elite"
        elif branch == "reinstate":
            tier = rng.choice(["standard", "preferred"])
        else:
            tier = None
        days = rng.choice([rng.randint(1, 29), 30]) if branch != "lapsed_too_long" else rng.randint(31, 80)
        lapse = TODAY - timedelta(days=days)
        due = lapse - timedelta(days=16)
        eff = due - timedelta(days=rng.randint(30, 150))
        eff = eff.replace(day=min(eff.day, 28))
        h, hd = self.household(rng, ids, tier=tier, plan=rng.choice(["monthly", "quarterly"]), eff=eff)
        factor = self.setup_identity(rng, hd, branch)
        pol, bill = hd["policy"], hd["billing"]
        past_due = money(Decimal(bill["amount_due"]) * rng.choice([1, 1, 2])) if Decimal(bill["amount_due"]) > 0 else money(150)
        if branch == "cancelled_not_lapsed":
            cdate = TODAY - timedelta(days=rng.randint(3, 25))
            pol.update(status="cancelled", cancellation_date=iso(cdate), cancel_reason="switched_insurer")
            bill.update(status="closed", amount_due="0.00")
            h.put("cancellations", {"id": ids["cancellation"](1), "policy_id": pol["id"], "effective_date": iso(cdate), "reason": "switched_insurer",
                                    "refund_amount": "0.00", "status": "completed", "requested_at": f"{iso(cdate - timedelta(days=6))} 16:10:00"})
        else:
            pol.update(status="lapsed", lapse_date=iso(lapse), grace_period_end=iso(lapse - timedelta(days=1)))
            bill.update(status="lapsed", due_date=iso(due), past_due_amount=str(past_due))
        fee = Decimal("0.00") if hd["tier"] == "elite" else REINSTATEMENT_FEE
        total = money(past_due + fee)
        method = rng.choice(["card_on_file", "bank_account_on_file"])
        nxt = self.next_ids(h.patch())
        requester = self.requester(hd, ids, nxt)
        g = Golden()
        self.identify(g, hd, factor, requester)
        subject = f"Reinstatement of {pol['id']}"
        if factor is None:
            self.ticket(g, requester, hd, subject, "reinstatement", "pending")
            reply, dialogue = partial_reply("reinstating a policy"), PARTIAL_DIALOGUE
        else:
            g.add("get_policy", policy_id=pol["id"])
            g.add("get_billing_account", policy_id=pol["id"])
            if branch == "cancelled_not_lapsed":
                self.ticket(g, requester, hd, subject, "reinstatement", "solved")
                reply = (f"I'm sorry, policy {pol['id']} was cancelled on {pol['cancellation_date']} at your request, and a cancelled policy "
                         "can't be reinstated; only a lapsed one can. You're welcome to apply for a new policy.")
                dialogue = []
            elif branch == "lapsed_too_long":
                self.ticket(g, requester, hd, subject, "reinstatement", "solved")
                reply = (f"I'm sorry, policy {pol['id']} lapsed on {iso(lapse)}, {days} days ago. Reinstatement is only possible within 30 days "
                         "of the lapse, so it can't be reinstated; you can apply for a new policy.")
                dialogue = []
            elif branch == "cannot_pay_now":
                self.ticket(g, requester, hd, subject, "reinstatement", "pending")
                reply = (f"To reinstate policy {pol['id']} the full {usd(total)} ({usd(past_due)} past due plus the {usd(fee)} reinstatement fee) "
                         "must be paid now, so I can't reinstate it today. Your ticket stays pending: contact us when you can pay, within 30 "
                         f"days of the lapse ({iso(lapse + timedelta(days=30))} at the latest).")
                dialogue = []
            else:
                g.add("record_payment", billing_account_id=ids["billing"], amount=float(total), method=method, purpose="reinstatement")
                g.add("reinstate_policy", idempotent="reinstating an active policy again is refused", policy_id=pol["id"], effective_date=iso(TODAY))
                g.add("reset_billing_status", idempotent="resetting again recomputes the same status", billing_account_id=ids["billing"])
                self.ticket(g, requester, hd, subject, "reinstatement", "solved")
                fee_text = f"{usd(past_due)} past due plus the {usd(fee)} reinstatement fee" if fee else f"{usd(past_due)} past due; the reinstatement fee is waived for elite customers"
                reply = (f"Policy {pol['id']} is reinstated effective today, {iso(TODAY)}. I charged {usd(total)} ({fee_text}) to your "
                         f"{method.replace('_', ' ')}. The days from {iso(lapse)} to {iso(TODAY - timedelta(days=1))} remain without coverage.")
                dialogue = [{"name": "states_amount_and_date", "must": [AMOUNT, ANY_DATE]}]
        opening = rng.choice([
            "Hi, I missed a couple of payments and my car insurance lapsed. Can I get it reinstated?",
            "My auto policy isn't active anymore because I didn't pay in time. I'd like to get my coverage back.",
        ]) if branch != "cancelled_not_lapsed" else "Hi, I cancelled my car insurance a little while ago but I'd like to get that policy back."
        pay_text = {"card_on_file": "Please use the card on file.", "bank_account_on_file": "Please use the bank account on file."}[method]
        if branch == "cannot_pay_now":
            pay_text = "I can't pay anything today; I get paid next week."
        facts = self.identity_facts(hd, factor) + [{"text": pay_text, "unlock": ["card", "bank", "payment method", "pay", "method", "charge"]}]
        return self.finish(
            rng, h, hd, branch, f"Reinstatement, branch '{branch}' ({hd['tier']}, {days} days since the lapse).", opening, facts,
            "Get the lapsed auto policy reinstated.", g, reply, dialogue, tags=["reinstatement"],
        )


# --------------------------------------------------------------------------- IN010 policy cancellation


class PolicyCancellation(InsuranceFamily):
    code = "IN010"
    name = "policy_cancellation"
    number = 10
    description = "A customer asks to cancel (or keep) a policy; effective-date limits, open claims and the refund decide."
    branches = ("future_dated", "backdated_request", "too_far_ahead", "open_claim_escalate", "withdraw_pending", "partial_verification")

    def build(self, rng: random.Random, seed: int) -> dict[str, Any]:
        branch = self.branch(seed)
        ids = self.ids(seed)
        n = 1 if branch == "backdated_request" else rng.randint(1, 2)
        h, hd = self.household(rng, ids, n_vehicles=n, plan=rng.choice(["full", "full", "semiannual", "quarterly"]))
        factor = self.setup_identity(rng, hd, branch)
        pol, bill = hd["policy"], hd["billing"]
        reason = rng.choice(["switched_insurer", "moving_out_of_state"])
        if branch == "backdated_request":
            reason = "sold_vehicle"
            asked = TODAY - timedelta(days=rng.randint(3, 40))
            asked = max(asked, date.fromisoformat(pol["effective_date"]) + timedelta(days=1))
            cancel_on = TODAY
        elif branch == "too_far_ahead":
            asked = TODAY + timedelta(days=rng.randint(61, 120))
            cancel_on = None
        else:
            asked = TODAY + timedelta(days=rng.randint(1, 60))
            cancel_on = asked
        if branch == "open_claim_escalate":
            v = hd["vehicles"][0]
            h.put("claims", {"id": ids["claim"](1), "policy_id": pol["id"], "vehicle_id": v["id"], "driver_id": hd["self_driver"]["id"],
                             "date_of_loss": iso(TODAY - timedelta(days=rng.randint(5, 30))), "loss_type": rng.choice(["collision", "glass"]),
                             "severity": "minor", "injuries": False, "drivable": True, "status": "open", "description": "Minor damage, repair pending.",
                             "reported_at": "2026-05-01 12:00:00"})
        if branch == "withdraw_pending":
            requested = TODAY - timedelta(days=rng.randint(2, 10))
            refund = cancellation_refund(hd["premium"], bill["paid_to_date"], bill["past_due_amount"], hd["eff"], hd["exp"], asked)
            h.put("cancellations", {"id": ids["cancellation"](1), "policy_id": pol["id"], "effective_date": iso(asked), "reason": reason,
                                    "refund_amount": str(refund), "status": "scheduled", "requested_at": f"{iso(requested)} 11:45:00"})
            pol.update(status="pending_cancellation", cancellation_date=iso(asked), cancel_reason=reason)
        nxt = self.next_ids(h.patch())
        requester = self.requester(hd, ids, nxt)
        g = Golden()
        self.identify(g, hd, factor, requester)
        subject = f"Cancellation request for {pol['id']}"
        if factor is None:
            self.ticket(g, requester, hd, subject, "cancellation", "pending")
            reply, dialogue = partial_reply("a cancellation"), PARTIAL_DIALOGUE
        else:
            g.add("get_policy", policy_id=pol["id"])
            g.add("get_claims_by_policy", policy_id=pol["id"], status="open")
            g.add("get_cancellations", policy_id=pol["id"])
            if branch == "withdraw_pending":
                g.add("withdraw_cancellation", idempotent="withdrawing a withdrawn cancellation again is refused", cancellation_id=ids["cancellation"](1))
                self.ticket(g, requester, hd, subject, "cancellation", "solved")
                reply = (f"Done: the cancellation scheduled for {iso(asked)} is withdrawn and policy {pol['id']} stays active. No refund will be "
                         "issued, and your billing continues as before.")
                dialogue = [{"name": "confirms_withdrawal", "must": [r"withdr|stays active|remain(s)? active|keep"]}]
            elif branch == "open_claim_escalate":
                self.ticket(g, requester, hd, subject, "cancellation", "open", "high", "claims")
                reply = (f"Policy {pol['id']} has an open claim ({ids['claim'](1)}), so it can't be cancelled in chat. I've sent your request "
                         "to our claims team for review; they will contact you about the claim and the cancellation.")
                dialogue = []
            elif branch == "too_far_ahead":
                self.ticket(g, requester, hd, subject, "cancellation", "solved")
                reply = (f"I'm sorry, {iso(asked)} is more than 60 days away, so I can't schedule the cancellation yet. Please contact us again "
                         f"on or after {iso(asked - timedelta(days=60))} and we'll set it up.")
                dialogue = []
            else:
                assert cancel_on is not None
                refund = cancellation_refund(hd["premium"], bill["paid_to_date"], bill["past_due_amount"], hd["eff"], hd["exp"], cancel_on)
                g.add("get_billing_account", policy_id=pol["id"])
                g.add("quote_cancellation", policy_id=pol["id"], effective_date=iso(cancel_on))
                g.add("schedule_cancellation", idempotent="a second cancellation is refused while one is scheduled",
                      policy_id=pol["id"], effective_date=iso(cancel_on), reason=reason)
                self.ticket(g, requester, hd, subject, "cancellation", "solved")
                reply = f"Policy {pol['id']} is scheduled to cancel on {iso(cancel_on)}. Your refund is {usd(refund)}"
                reply += ", sent to your payment method on file within 10 business days after that date." if refund > 0 else "."
                if branch == "backdated_request":
                    reply += f" A cancellation can't be backdated to {iso(asked)}, so it takes effect today."
                dialogue = [{"name": "states_date_and_refund", "must": [ANY_DATE, AMOUNT]}]
        if branch == "withdraw_pending":
            opening = "Hi, I asked to cancel my car insurance last week, but I've changed my mind. I'd like to keep my policy."
            facts = self.identity_facts(hd, factor)
        elif branch == "backdated_request":
            opening = "Hello, I sold my only car and don't need my auto insurance anymore. Please cancel it as of the day I sold it."
            facts = self.identity_facts(hd, factor) + [
                {"text": f"I sold it on {say_date(asked)}.", "unlock": ["when", "date", "sold", "sale"]}]
        else:
            why = ("I found a cheaper policy with another company" if reason == "switched_insurer"
                   else f"I'm moving to {rng.choice(['Texas', 'Florida', 'Ohio', 'Georgia'])}, where you don't offer policies")
            opening = rng.choice([f"Hi, I'd like to cancel my auto policy. {why}.", f"Please cancel my car insurance; {why}."])
            start = "my new policy starts" if reason == "switched_insurer" else "I move"
            facts = self.identity_facts(hd, factor) + [
                {"text": f"I'd like it cancelled on {say_date(asked)}, the day {start}.", "unlock": ["when", "date", "effective", "start", "move"]}]
        return self.finish(
            rng, h, hd, branch, f"Policy cancellation, branch '{branch}' (asked {iso(asked)}).", opening, facts,
            "Cancel the auto policy (or keep it, after all).", g, reply, dialogue, tags=["cancellation"],
        )


FAMILIES = [
    BillingExtension(), InstallmentPlan(), ProofOfInsurance(), AddDriver(), DriverRemoval(),
    VehicleAddition(), VehicleRemovalCoverage(), FirstNoticeOfLoss(), Reinstatement(), PolicyCancellation(),
]
