"""Building blocks shared by the order-care families (ST005 to ST017).

The first five families build their instances with ``RetailFamily`` alone and
their frozen tasks depend on its exact random draws, so nothing here changes
it: new helpers live in a subclass.
"""

from __future__ import annotations

import random
from datetime import date, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from .families import NOW, TODAY, RetailFamily, money, ts

# sku -> (name, category, price, variant group); mirrors seed/products.csv
CATALOG: dict[str, tuple[str, str, str, str]] = {
    "BW-TV55-Q": ("Lumora 55-inch QLED TV", "tv", "649.00", "lumora-qled"),
    "BW-TV65-Q": ("Lumora 65-inch QLED TV", "tv", "949.00", "lumora-qled"),
    "BW-SB200": ("Lumora SB200 soundbar", "audio", "179.00", "lumora-sb200"),
    "BW-SB200-W": ("Lumora SB200 soundbar, white", "audio", "179.00", "lumora-sb200"),
    "BW-DW45": ("Kestrel 45 cm dishwasher", "major_appliance", "529.00", "kestrel-dw"),
    "BW-VAC-X2": ("Nimbus X2 cordless vacuum", "small_appliance", "289.00", "nimbus-x2"),
    "BW-VAC-X2-R": ("Nimbus X2 cordless vacuum, rose", "small_appliance", "289.00", "nimbus-x2"),
    "BW-HP-NC7": ("Tessellate NC7 headphones", "audio", "149.00", "tessellate-nc7"),
    "BW-HP-NC7-SV": ("Tessellate NC7 headphones, silver", "audio", "149.00", "tessellate-nc7"),
    "BW-KT-17": ("Arden 1.7 L kettle", "small_appliance", "39.00", "arden-kettle"),
    "BW-KT-17-W": ("Arden 1.7 L kettle, white", "small_appliance", "39.00", "arden-kettle"),
    "BW-LAP-14": ("Corvid 14 laptop", "computer", "999.00", "corvid-14"),
    "BW-LAP-14-32": ("Corvid 14 laptop, 32 GB", "computer", "1199.00", "corvid-14"),
    "BW-RTR-6": ("Meshline AX6 router", "networking", "119.00", "meshline-ax6"),
    "BW-MW-25": ("Arden 25 L microwave", "small_appliance", "129.00", "arden-mw"),
    "BW-WM-8": ("Kestrel 8 kg washing machine", "major_appliance", "749.00", "kestrel-wm"),
    "BW-CAB-H": ("Braidline HDMI cable", "accessory", "19.00", "braidline-hdmi"),
}
# words that ask for a delivery address ("address" alone would also answer "what is your email address?")
ADDRESS_WORDS = ["which address", "what address", "correct address", "right address", "intended", "new address",
                 "delivery address", "shipping address", "full address", "where"]
INSTALL_SKU = ("SVC-INSTALL", "Installation service", "99.00")
INSTALLABLE = ["BW-TV55-Q", "BW-TV65-Q", "BW-DW45", "BW-WM-8"]
RESTOCKING = {"tv": Decimal("0.15"), "major_appliance": Decimal("0.15"), "computer": Decimal("0.10")}


def item(sku: str) -> tuple[str, str, str]:
    """The (sku, name, price) triple ``RetailFamily.order`` takes."""
    name, _, price, _ = CATALOG[sku]
    return sku, name, price


def price(sku: str) -> Decimal:
    return Decimal(CATALOG[sku][2])


VARIANTS = frozenset({"BW-SB200-W", "BW-VAC-X2-R", "BW-HP-NC7-SV", "BW-KT-17-W", "BW-LAP-14-32"})


def skus(low: float = 0, high: float = 10**6, categories: tuple[str, ...] | None = None) -> list[str]:
    """Base-model SKUs priced in [low, high), optionally of some categories."""
    return [
        sku for sku, (_, cat, p, _) in CATALOG.items()
        if sku not in VARIANTS and low <= Decimal(p) < high and (categories is None or cat in categories)
    ]


def cents(value: Decimal) -> Decimal:
    return value.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def day_after(days: int) -> date:
    """A working day (Monday to Saturday) ``days`` or a little more after today."""
    day = TODAY + timedelta(days=days)
    while day.weekday() == 6:
        day += timedelta(days=1)
    return day


def dollars(value: Decimal | str) -> str:
    return f"${money(value)}"


def rx(text: str) -> str:
    """A literal for a dialogue regex."""
    return text.replace("$", r"\$").replace(".", r"\.")


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
             reply: str, dialogue: list[dict[str, Any]], idempotent: dict[int, str], tags: list[str]) -> dict[str, Any]:
        return {
            "description": description,
            "user": {"opening": opening, "facts": facts, "intent": intent},
            "patch": patch,
            "golden": golden,
            "golden_reply": reply,
            "checks": {"dialogue": dialogue},
            "idempotent_writes": idempotent,
            "tags": tags,
        }


__all__ = ["ADDRESS_WORDS", "CATALOG", "CareFamily", "INSTALLABLE", "INSTALL_SKU", "NOW", "RESTOCKING", "TODAY", "cents", "day_after", "dollars", "item", "money", "price", "rx", "skus", "ts"]
