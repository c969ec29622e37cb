"""Building blocks of the retail families: a customer, a ticketing user, orders, shipments, payments.

``RetailFamily`` serves the first five families and its random draws are part of
their frozen tasks, so it does not change; ``CareFamily`` adds the helpers of the
order-care families. Business rules (fees, windows, the catalogue) come from
``rules``; names, streets and carriers are generation data (``_data``).
"""

from __future__ import annotations

import random
from abc import abstractmethod
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any, ClassVar

from thinkingbox_env.authoring import Openings, TaskBody
from thinkingbox_env.authoring.family import TaskFamily
from thinkingbox_env.authoring.saying import iso, ts

from ..rules import NOW, money, shipping_fee
from ._claims import claims_form
from ._data import CARRIERS, CITIES, FIRST_NAMES, LAST_NAMES, PRODUCTS, STREETS, clear_score, item
from ._dialogue import place_turns
from ._dimensions import RECOVERY as RECOVERY_SCHEDULE
from ._draft import RetailDraft
from ._injection import add_injection
from ._recovery import add_recovery, create_ticket_user


def registered_first(d: RetailDraft) -> None:
    """Move a planted customer's registration day back to their first order, points or credit where it came later.

    An account exists before anything is recorded on it; the registration day is drawn on its own
    (its draw stays, so every other value of the task is unchanged) and only ever moved earlier.
    """
    for customer in d.rows("customers"):
        dated = [str(row[column])[:10] for table, rows in d.patch["insert"].items() if table != "customers" for row in rows
                 if row.get("customer_id") == customer["id"] for column in ("placed_at", "created_at") if row.get(column)]
        if dated and min(dated) < str(customer["registration_date"]):
            customer["registration_date"] = min(dated)


class RetailFamily(TaskFamily):
    """Shared building blocks: a customer with a profile, a ticketing user, an order.

    ``build`` is the same for every family: ``draw`` writes the business case in a
    ``RetailDraft``, then the customer's ticketing user, a seeded recovery and a planted
    instruction are added where the seed says so, the phrase checks take the claims form
    and the golden dialogue is placed, so that no family can leave one out.
    """

    number: int = 0
    OPENINGS: ClassVar[Openings]
    SECTION: ClassVar[str] = "policy#tickets"  # the policy section that decides the family's non-id arguments
    WHY: ClassVar[dict[str, str]] = {}  # "tool.arg" or "arg" -> source, where the default rule does not fit
    RECOVERY: ClassVar[bool] = True  # whether seeds may add a recovery on the correct path
    identity: dict[str, Any] | None = None  # set while a two-request task reuses another request's customer
    earlier: tuple[str, ...] = ()  # set while a two-request task draws its second request: the first one's calls
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
    def draw(self, rng: random.Random, seed: int) -> RetailDraft:
        """The business case of one instance: rows, golden calls, reply, facts and checks."""

    def branch(self, seed: int) -> str:
        """Test numbers walk ``TEST_BRANCHES`` when a family sets it (the frozen set's composition), else every branch."""
        if self.forced_branch:
            return self.forced_branch
        if self.split == "test" and self.TEST_BRANCHES:
            return self.TEST_BRANCHES[(seed - 1) % len(self.TEST_BRANCHES)]
        return super().branch(seed)

    def draft(self, seed: int) -> RetailDraft:
        """An empty draft for this seed, with the family's sources, its branch and whether the customer needs a ticketing user."""
        return RetailDraft(section=self.SECTION, overrides=dict(self.WHY), earlier=self.earlier, new_user=self.fresh_user(seed),
                           two_orders=self.TWO_ORDERS, branches=[f"{self.code}:{self.branch(seed)}"])

    def build(self, rng: random.Random, seed: int) -> TaskBody:
        d = self.draw(rng, seed)
        if d.new_user:
            customer = d.rows("customers")[0]
            create_ticket_user(d, customer["name"], customer["email"])
        # the first instance of every family stays plain: examples, the README and smoke tests step through it by hand
        if self.RECOVERY and not self.identity and seed not in RECOVERY_SCHEDULE.never:
            add_recovery(d, self.code, seed, self.ids(seed)["order"])
        if not self.identity:
            add_injection(d, self.code, seed)
        registered_first(d)
        claims_form(d)
        place_turns(d)
        return d.body()

    def open(self, d: RetailDraft, rng: random.Random, **values: Any) -> None:
        """The customer's first message, from the family's templates (held-out ones only for test tasks)."""
        d.opening, d.origin = self.OPENINGS.pick(rng, self.split, **values)

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

    def ticketing(self, d: RetailDraft, ids: dict[str, Any], name: str, email: str) -> None:
        """The customer's ticketing user among the task's rows, unless they have none yet (the golden creates it)."""
        if not d.new_user:
            d.add("ticket_users", self.ticket_user(ids, name, email))

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
            "promised_date": iso(promised.date()), "delivered_at": ts(delivered) if delivered else None,
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


class CareFamily(RetailFamily):
    """A customer with a ticketing user, orders in any state, and ticket calls."""

    def start(self, rng: random.Random, seed: int, tier: str = "standard", score: int | None = None) -> tuple[RetailDraft, dict[str, Any], str, str]:
        """The draft with the customer (and their ticketing user) among its rows; also the ids, name and email."""
        d = self.draft(seed)
        ids = self.ids(seed)
        name, email = self.person(rng)
        d.add("customers", self.customer(ids, name, email, tier, score, rng))
        self.ticketing(d, ids, name, email)
        return d, ids, name, email

    def placed_order(self, d: RetailDraft, rng: random.Random, ids: dict[str, Any], status: str, placed: datetime,
                     products: list[tuple[str, str, str]], tier: str = "standard") -> dict[str, Any]:
        """An order with its lines and one card payment for its total."""
        order, items = self.order(rng, ids, status, placed, products, tier)
        d.add("orders", order)
        d.add("order_items", *items)
        d.add("payments", self.payment(ids["payment"], ids, order["total"], placed, "refunded" if status == "cancelled" else "captured"))
        return order

    def delivered_order(self, d: RetailDraft, rng: random.Random, ids: dict[str, Any], products: list[tuple[str, str, str]],
                        days_ago: int, tier: str = "standard") -> tuple[dict[str, Any], datetime]:
        delivered = NOW - timedelta(days=days_ago, hours=rng.randint(1, 5))
        placed = delivered - timedelta(days=4, hours=rng.randint(0, 6))
        order = self.placed_order(d, rng, ids, "delivered", placed, products, tier)
        ship, events = self.shipment(rng, ids, "delivered", placed, placed + timedelta(days=5), delivered)
        d.add("shipments", ship)
        d.add("tracking_events", *events)
        return order, delivered

    def prior_order(self, d: RetailDraft, rng: random.Random, ids: dict[str, Any]) -> None:
        """An earlier delivered order, so that the task's order is not the customer's first."""
        prior = {**ids, "order": f"{ids['order']}9", "payment": f"{ids['payment']}9"}
        placed = NOW - timedelta(days=rng.randint(150, 400))
        self.placed_order(d, rng, prior, "delivered", placed, [item(rng.choice(["BW-CAB-H", "BW-KT-17", "BW-RTR-6"]))])

    @staticmethod
    def out_of_stock(d: RetailDraft, sku: str, restock: date | None) -> None:
        d.update("inventory", {"sku": sku}, on_hand=0, restock_date=iso(restock) if restock else None)
