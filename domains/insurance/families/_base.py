"""Auto-insurance task families: seeded generators of Ashgrove Mutual customer-service tasks.

Each family is one workflow of the policy with its branches: the action done right,
and the refusal, partial-verification and escalation branches where the right
answer is not to act (or to act differently from what the customer asked). The
wrong-but-plausible moves (a third arrangement, a date past the maximum, an
effective date of today, the wrong vehicle) succeed at the tool level, so only the
checks catch them. Business days, VIN check digits and billing arithmetic come
from ``rules``, so generated tasks and tools compute them identically. This
module holds the shared building blocks; one module per workflow group holds the
families.
"""

from __future__ import annotations

import random
import re
from datetime import date, timedelta
from typing import Any

from thinkingbox_env.authoring import Golden
from thinkingbox_env.family import TaskFamily

from ..rules import NOW, PLAN_FEES, PLAN_MONTHS, TODAY, VIN_ALPHABET, WINDOW_START, add_business_days, make_vin, money, vin_check_digit

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

RELATION_WORDS = {"spouse": ("wife", "husband"), "child": ("daughter", "son"), "sibling": ("sister", "brother"),
                  "parent": ("mother", "father"), "other_household": ("housemate", "housemate")}


def iso(d: date) -> str:
    return d.isoformat()


def add_months(d: date, n: int) -> date:
    m = d.month - 1 + n
    return date(d.year + m // 12, m % 12 + 1, min(d.day, 28))


def say_date(d: date) -> str:
    return f"{d.strftime('%A')}, {d.strftime('%B')} {d.day}, {d.year}"


def usd(x: Any) -> str:
    return f"${money(x):,.2f}"


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
