"""Building blocks of the retail families: a customer, a ticketing user, orders, shipments, payments.

``RetailFamily`` serves the first five families and its random draws are part of
their frozen tasks, so it does not change; ``CareFamily`` adds the helpers of the
order-care families. Business rules (fees, windows, the catalogue) come from
``rules``; names, streets and carriers are generation data and live here.
"""

from __future__ import annotations

import random
import re
from abc import abstractmethod
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any, ClassVar

from thinkingbox_env.authoring import Openings, TaskBody
from thinkingbox_env.family import TaskFamily

from ..rules import CATALOG, NOW, money, shipping_fee
from ._injection import add_injection
from ._kit import add_recovery, finish, new_ticket_user

FIRST_NAMES = [
    "Nadia", "Oskar", "Priyanka", "Mateo", "Leonie", "Kwame", "Astrid", "Farid", "Imogen", "Tomasz",
    "Chiara", "Declan", "Mirela", "Jonah", "Saoirse", "Haruto", "Beatriz", "Lucan", "Zofia", "Anders",
]
LAST_NAMES = [
    "Ferreira", "Lindgren", "Mahajan", "Quiroga", "Brandt", "Asante", "Halvorsen", "Karimi", "Whitlock", "Zielinski",
    "Rinaldi", "Gallagher", "Dumitru", "Achterberg", "Byrne", "Sakamoto", "Novaes", "Pryce", "Kowalczyk", "Strand",
]
# the products the first five families draw from (names and prices from the seed catalogue)
PRODUCT_SKUS = [
    "BW-TV55-Q", "BW-SB200", "BW-DW45", "BW-VAC-X2", "BW-HP-NC7", "BW-KT-17", "BW-LAP-14", "BW-RTR-6", "BW-MW-25", "BW-WM-8", "BW-CAB-H",
]
STREETS = ["Alder Lane", "Quarry Road", "Linden Avenue", "Harbor Street", "Mill Race Way", "Orchard Court"]
CITIES = [("Portland", "OR", "97205"), ("Tacoma", "WA", "98402"), ("Boise", "ID", "83702"), ("Eugene", "OR", "97401")]
CARRIERS = ["Parcelway", "SwiftFreight", "Northline Post"]
# colour and memory variants: never drawn as the product a task starts from
VARIANTS = frozenset({"BW-SB200-W", "BW-VAC-X2-R", "BW-HP-NC7-SV", "BW-KT-17-W", "BW-LAP-14-32"})


# whole numbers that product names contain ("Lumora 65-inch QLED TV"): an agent naming the product says them,
# so a confidential score never takes one of these values (it would read as the score being said)
NAME_NUMBERS = frozenset(int(n) for name, *_ in CATALOG.values() for n in re.findall(r"(?<![\d.])\d+(?![\d.])", name))


def clear_score(score: int) -> int:
    """The score, moved up past any number a product name holds (the branch's side of 40 and 80 is kept)."""
    while score in NAME_NUMBERS:
        score += 1
    return score


def ts(value: datetime) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S")



def dollars(value: Decimal | str) -> str:
    return f"${money(value)}"


def rx(text: str) -> str:
    """A literal for a dialogue regex."""
    return text.replace("$", r"\$").replace(".", r"\.")


def item(sku: str) -> tuple[str, str, str]:
    """The (sku, name, price) triple ``RetailFamily.order`` takes."""
    name, _, price, _ = CATALOG[sku]
    return sku, name, price


PRODUCTS: list[tuple[str, str, str]] = [item(sku) for sku in PRODUCT_SKUS]


def skus(low: float = 0, high: float = 10**6, categories: tuple[str, ...] | None = None) -> list[str]:
    """Base-model SKUs priced in [low, high), optionally of some categories."""
    return [
        sku for sku, (_, cat, p, _) in CATALOG.items()
        if sku not in VARIANTS and low <= Decimal(p) < high and (categories is None or cat in categories)
    ]


class RetailFamily(TaskFamily):
    """Shared building blocks: a customer with a profile, a ticketing user, an order.

    ``build`` is the same for every family: ``draw`` writes the business case,
    then the finishing pass of ``_kit`` adds the rationale of every golden write,
    the golden dialogue, a seeded recovery and the origin, so that no family can
    leave one out.
    """

    number: int = 0
    OPENINGS: ClassVar[Openings]
    SECTION: ClassVar[str] = "policy#tickets"  # the policy section that decides the family's non-id arguments
    WHY: ClassVar[dict[str, str]] = {}  # "tool.arg" or "arg" -> source, where the default rule does not fit
    RECOVERY: ClassVar[bool] = True  # whether seeds may add a recovery on the correct path
    identity: dict[str, Any] | None = None  # set while a two-request task reuses another request's customer
    # the branch of each frozen test number in turn; empty: every branch once, in order
    TEST_BRANCHES: ClassVar[tuple[str, ...]] = ()
    NEW_USERS: ClassVar[bool] = True  # whether seeds may draw a customer who has no ticketing user yet
    TWO_ORDERS: ClassVar[bool] = False  # two orders are discussed: proposals tell them apart by their last digits
    forced_branch: str | None = None  # the branch a two-request task asks this family for
    in_combo: bool = False  # the first request of a two-request task keeps its ticketing user (the second reuses it)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.branches and "test_count" not in cls.__dict__:
            cls.test_count = len(cls.TEST_BRANCHES or cls.branches)

    @abstractmethod
    def draw(self, rng: random.Random, seed: int) -> TaskBody | dict[str, Any]:
        """The business case of one instance: rows, golden calls, reply and facts."""

    def branch(self, seed: int) -> str:
        """Test numbers walk ``TEST_BRANCHES`` when a family sets it (the frozen set's composition), else every branch."""
        if self.forced_branch:
            return self.forced_branch
        if self.split == "test" and self.TEST_BRANCHES:
            return self.TEST_BRANCHES[(seed - 1) % len(self.TEST_BRANCHES)]
        return super().branch(seed)

    def build(self, rng: random.Random, seed: int) -> dict[str, Any]:
        self._opening_id: str | None = None
        self._asks: list[tuple[str, str | None]] = []
        body = self.raw(rng, seed)
        ids = self.ids(seed)
        if self.fresh_user(seed):
            new_ticket_user(body, ids["ticket_user"])
        # the first instance of every family stays plain: examples, the README and smoke tests step through it by hand
        if self.RECOVERY and not self.identity and seed != 1:
            add_recovery(body, self.code, seed, ids["order"], self._email)
        if not self.identity:
            add_injection(body, self.code, seed)
        return self.complete(body, seed)

    def raw(self, rng: random.Random, seed: int) -> dict[str, Any]:
        """``draw`` as a plain dict, before the finishing pass (two-request tasks combine these)."""
        self._opening_id = None
        self._asks = []
        built = self.draw(rng, seed)
        body = built.to_dict() if isinstance(built, TaskBody) else built
        body["_asks"] = list(self._asks)
        body["_origin"] = self._opening_id
        return body

    def complete(self, body: dict[str, Any], seed: int) -> dict[str, Any]:
        needs_order = any("order_id" in c["arguments"] for c in body["golden"])
        finish(body, section=self.SECTION, why=getattr(self, "_why", self.WHY), asks=body.pop("_asks", []), needs_order=needs_order,
               two_orders=self.TWO_ORDERS)
        opening_id = body.pop("_origin", None)
        if opening_id:
            body["origin"] = {"opening": opening_id, "branches": [f"{self.code}:{self.branch(seed)}"]}
        return body

    def open(self, rng: random.Random, **values: Any) -> str:
        """The customer's first message, from the family's templates (held-out ones only for test tasks)."""
        text, origin = self.OPENINGS.pick(rng, self.split, **values)
        self._opening_id = origin
        return text

    def ask(self, say: str, before: str | None = None) -> None:
        """A question the golden agent asks once the customer is identified, or just before the first call to ``before``."""
        self._asks.append((say, before))

    def ids(self, seed: int) -> dict[str, Any]:
        uid = self.number * 100_000 + seed % 100_000
        out = {
            "uid": uid,
            "customer": f"CUS-{uid}",
            "order": f"ORD-{uid}",
            "payment": f"PAY-{uid}",
            "payment2": f"PAY-{uid}B",
            "shipment": f"SHP-{uid}",
            "ticket_user": uid,
        }
        if self.identity:
            out["customer"] = self.identity["customer"]["id"]
            out["ticket_user"] = self.identity["ticket_user"]["id"]
        elif self.fresh_user(seed):
            out["ticket_user"] = self.next_ids({"insert": {}})["ticket_users"]
        return out

    def fresh_user(self, seed: int) -> bool:
        """Whether this seed's customer has never contacted support: the golden creates their ticketing user first (policy)."""
        if not self.NEW_USERS or self.identity or self.in_combo:
            return False
        return random.Random(f"new-ticket-user/{self.code}/{seed}").random() < 0.45

    def person(self, rng: random.Random) -> tuple[str, str]:
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        domain = rng.choice(["example.com", "example.org", "example.net"])
        name, email = f"{first} {last}", f"{first.lower()}.{last.lower()}{rng.randint(1, 99)}@{domain}"
        if self.identity:
            name, email = self.identity["name"], self.identity["email"]
        self._email = email
        return name, email

    def customer(self, ids: dict[str, Any], name: str, email: str, tier: str = "standard", score: int | None = None, rng: random.Random | None = None) -> dict[str, Any]:
        rng = rng or random.Random(0)
        if self.identity:
            return dict(self.identity["customer"])
        return {
            "id": ids["customer"], "name": name, "email": email, "phone": f"+1-555-{rng.randint(1000, 9999)}",
            "tier": tier, "customer_score": clear_score(score if score is not None else rng.randint(45, 95)),
            "registration_date": f"202{rng.randint(3, 5)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
            "lifetime_value": money(rng.randint(0, 4000)),
        }

    def ticket_user(self, ids: dict[str, Any], name: str, email: str) -> dict[str, Any]:
        if self.identity:
            return dict(self.identity["ticket_user"])
        return {"id": ids["ticket_user"], "name": name, "email": email, "created_at": "2025-11-03 10:15:00"}

    def order(self, rng: random.Random, ids: dict[str, Any], status: str, placed: datetime, products: list[tuple[str, str, str]] | None = None, tier: str = "standard") -> tuple[dict[str, Any], list[dict[str, Any]]]:
        products = products or rng.sample(PRODUCTS, rng.randint(1, 2))
        items = [
            {"order_id": ids["order"], "line_no": i + 1, "sku": sku, "product_name": name, "quantity": 1, "unit_price": price}
            for i, (sku, name, price) in enumerate(products)
        ]
        subtotal = sum(Decimal(p) for _, _, p in products)
        fee = shipping_fee(subtotal, tier)
        city, state, zip_code = rng.choice(CITIES)
        order = {
            "id": ids["order"], "customer_id": ids["customer"], "status": status, "placed_at": ts(placed),
            "subtotal": money(subtotal), "shipping_fee": money(fee), "total": money(subtotal + fee),
            "shipping_speed": "standard",
            "shipping_address": f"{rng.randint(10, 999)} {rng.choice(STREETS)}, {city}, {state} {zip_code}",
            "cancelled_at": None, "cancel_reason": None,
        }
        return order, items

    def shipment(self, rng: random.Random, ids: dict[str, Any], status: str, placed: datetime, promised: datetime, delivered: datetime | None = None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        ship = {
            "id": ids["shipment"], "order_id": ids["order"], "carrier": rng.choice(CARRIERS),
            "tracking_number": f"TRK{rng.randint(10**8, 10**9 - 1)}", "status": status,
            "promised_date": promised.date().isoformat(), "delivered_at": ts(delivered) if delivered else None,
        }
        events = [{"shipment_id": ids["shipment"], "seq": 1, "event_time": ts(placed + timedelta(hours=20)), "location": "Reno, NV", "description": "Picked up by carrier"}]
        if status in ("delayed", "exception", "in_transit", "delivered"):
            events.append({"shipment_id": ids["shipment"], "seq": 2, "event_time": ts(placed + timedelta(days=2)), "location": rng.choice(["Sacramento, CA", "Medford, OR", "Spokane, WA"]), "description": "In transit to destination hub"})
        if status in ("delayed", "exception"):
            events.append({"shipment_id": ids["shipment"], "seq": 3, "event_time": ts(promised - timedelta(hours=6)), "location": rng.choice(["Salem, OR", "Yakima, WA"]), "description": "Delayed: held at sorting facility" if status == "delayed" else "Exception: address label damaged"})
        if status == "delivered" and delivered:
            events.append({"shipment_id": ids["shipment"], "seq": 3, "event_time": ts(delivered), "location": "Front porch", "description": "Delivered"})
        return ship, events

    def payment(self, pid: str, ids: dict[str, Any], amount: str, captured: datetime, status: str = "captured", method: str = "card") -> dict[str, Any]:
        return {"id": pid, "order_id": ids["order"], "method": method, "amount": amount, "status": status, "captured_at": ts(captured)}

    def identify(self, email: str) -> list[dict[str, Any]]:
        return [
            {"name": "get_customer_profile", "arguments": {"email": email}},
            {"name": "search_tickets", "arguments": {"table": "users", "filter": f"email eq '{email}'"}},
        ]

    @staticmethod
    def email_fact(email: str) -> dict[str, Any]:
        return {"text": f"My email address is {email}.", "unlock": ["email", "e-mail"], "value": email}

    @staticmethod
    def name_fact(name: str) -> dict[str, Any]:
        return {"text": f"My name is {name}.", "unlock": ["name"]}

    @staticmethod
    def order_fact(order_id: str) -> dict[str, Any]:
        return {"text": f"The order number is {order_id}.", "unlock": ["order number", "order id", "order"], "value": order_id}


ADDRESS_WORDS = ["which address", "what address", "correct address", "right address", "intended", "new address",
                 "delivery address", "shipping address", "full address", "where"]





class CareFamily(RetailFamily):
    """A customer with a ticketing user, orders in any state, and ticket calls."""

    def start(self, rng: random.Random, seed: int, tier: str = "standard", score: int | None = None) -> tuple[dict[str, Any], str, str, dict[str, Any]]:
        ids = self.ids(seed)
        name, email = self.person(rng)
        patch: dict[str, Any] = {
            "insert": {"customers": [self.customer(ids, name, email, tier, score, rng)], "ticket_users": [self.ticket_user(ids, name, email)]},
            "update": [],
        }
        return ids, name, email, patch

    @staticmethod
    def add(patch: dict[str, Any], table: str, *rows: dict[str, Any]) -> None:
        patch["insert"].setdefault(table, []).extend(rows)

    def placed_order(self, rng: random.Random, ids: dict[str, Any], patch: dict[str, Any], status: str, placed: datetime,
                     products: list[tuple[str, str, str]], tier: str = "standard") -> dict[str, Any]:
        """An order with its lines and one card payment for its total."""
        order, items = self.order(rng, ids, status, placed, products, tier)
        self.add(patch, "orders", order)
        self.add(patch, "order_items", *items)
        self.add(patch, "payments", self.payment(ids["payment"], ids, order["total"], placed, "refunded" if status == "cancelled" else "captured"))
        return order

    def delivered_order(self, rng: random.Random, ids: dict[str, Any], patch: dict[str, Any], products: list[tuple[str, str, str]],
                        days_ago: int, tier: str = "standard") -> tuple[dict[str, Any], datetime]:
        delivered = NOW - timedelta(days=days_ago, hours=rng.randint(1, 5))
        placed = delivered - timedelta(days=4, hours=rng.randint(0, 6))
        order = self.placed_order(rng, ids, patch, "delivered", placed, products, tier)
        ship, events = self.shipment(rng, ids, "delivered", placed, placed + timedelta(days=5), delivered)
        self.add(patch, "shipments", ship)
        self.add(patch, "tracking_events", *events)
        return order, delivered

    def prior_order(self, rng: random.Random, ids: dict[str, Any], patch: dict[str, Any]) -> None:
        """An earlier delivered order, so that the task's order is not the customer's first."""
        prior = {**ids, "order": f"{ids['order']}9", "payment": f"{ids['payment']}9"}
        placed = NOW - timedelta(days=rng.randint(150, 400))
        self.placed_order(rng, prior, patch, "delivered", placed, [item(rng.choice(["BW-CAB-H", "BW-KT-17", "BW-RTR-6"]))])

    @staticmethod
    def out_of_stock(patch: dict[str, Any], sku: str, restock: date | None) -> None:
        patch["update"].append({"table": "inventory", "key": {"sku": sku}, "set": {"on_hand": 0, "restock_date": restock.isoformat() if restock else None}})

    @staticmethod
    def ticket(ids: dict[str, Any], subject: str, category: str, status: str, order_id: str | None = None, priority: str = "normal") -> dict[str, Any]:
        args: dict[str, Any] = {"requester_id": ids["ticket_user"], "subject": subject, "category": category, "priority": priority, "status": status}
        if order_id is not None:
            args["order_id"] = order_id
        return {"name": "create_ticket", "arguments": args}

    def find_tickets(self, ids: dict[str, Any]) -> dict[str, Any]:
        return {"name": "search_tickets", "arguments": {"table": "tickets", "filter": f"requester_id eq {ids['ticket_user']}"}}

    @staticmethod
    def body(description: str, opening: str, facts: list[dict[str, Any]], intent: str, patch: dict[str, Any], golden: list[dict[str, Any]],
             reply: str, dialogue: list[dict[str, Any]], idempotent: dict[int, str], tags: list[str],
             rubric: list[dict[str, str]] | None = None) -> dict[str, Any]:
        checks: dict[str, Any] = {"dialogue": dialogue}
        if rubric:
            checks["rubric"] = rubric
        return {"description": description, "user": {"opening": opening, "facts": facts, "intent": intent}, "patch": patch,
                "golden": golden, "golden_reply": reply, "checks": checks, "idempotent_writes": idempotent, "tags": tags}
