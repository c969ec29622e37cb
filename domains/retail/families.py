"""Retail task families: seeded generators of Brightwell Electronics support tasks.

Each family is one workflow of the policy with its branches, including the ones
where the right answer is to refuse or to wait. ``build`` returns a complete
task body; the frozen tests in ``task_specs/retail`` are instances of these
families, and training draws fresh ones.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from thinkingbox_env.family import TaskFamily

NOW = datetime(2026, 3, 2, 15, 0, 0)
TODAY = NOW.date()

FIRST_NAMES = [
    "Nadia", "Oskar", "Priyanka", "Mateo", "Leonie", "Kwame", "Astrid", "Farid", "Imogen", "Tomasz",
    "Chiara", "Declan", "Mirela", "Jonah", "Saoirse", "Haruto", "Beatriz", "Lucan", "Zofia", "Anders",
]
LAST_NAMES = [
    "Ferreira", "Lindgren", "Mahajan", "Quiroga", "Brandt", "Asante", "Halvorsen", "Karimi", "Whitlock", "Zielinski",
    "Rinaldi", "Gallagher", "Dumitru", "Achterberg", "Byrne", "Sakamoto", "Novaes", "Pryce", "Kowalczyk", "Strand",
]
PRODUCTS = [
    ("BW-TV55-Q", "Lumora 55-inch QLED TV", "649.00"),
    ("BW-SB200", "Lumora SB200 soundbar", "179.00"),
    ("BW-DW45", "Kestrel 45 cm dishwasher", "529.00"),
    ("BW-VAC-X2", "Nimbus X2 cordless vacuum", "289.00"),
    ("BW-HP-NC7", "Tessellate NC7 headphones", "149.00"),
    ("BW-KT-17", "Arden 1.7 L kettle", "39.00"),
    ("BW-LAP-14", "Corvid 14 laptop", "999.00"),
    ("BW-RTR-6", "Meshline AX6 router", "119.00"),
    ("BW-MW-25", "Arden 25 L microwave", "129.00"),
    ("BW-WM-8", "Kestrel 8 kg washing machine", "749.00"),
    ("BW-CAB-H", "Braidline HDMI cable", "19.00"),
]
STREETS = ["Alder Lane", "Quarry Road", "Linden Avenue", "Harbor Street", "Mill Race Way", "Orchard Court"]
CITIES = [("Portland", "OR", "97205"), ("Tacoma", "WA", "98402"), ("Boise", "ID", "83702"), ("Eugene", "OR", "97401")]
CARRIERS = ["Parcelway", "SwiftFreight", "Northline Post"]


def money(value: Any) -> str:
    return str(Decimal(str(value)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def ts(value: datetime) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S")


class RetailFamily(TaskFamily):
    """Shared building blocks: a customer with a profile, a ticketing user, an order."""

    number: int = 0

    def ids(self, seed: int) -> dict[str, Any]:
        uid = self.number * 100_000 + seed % 100_000
        return {
            "uid": uid,
            "customer": f"CUS-{uid}",
            "order": f"ORD-{uid}",
            "payment": f"PAY-{uid}",
            "payment2": f"PAY-{uid}B",
            "shipment": f"SHP-{uid}",
            "ticket_user": uid,
        }

    def branch(self, seed: int) -> str:
        return self.branches[(seed - 1) % len(self.branches)]

    def person(self, rng: random.Random) -> tuple[str, str]:
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        domain = rng.choice(["example.com", "example.org", "example.net"])
        return f"{first} {last}", f"{first.lower()}.{last.lower()}{rng.randint(1, 99)}@{domain}"

    def customer(self, ids: dict[str, Any], name: str, email: str, tier: str = "standard", score: int | None = None, rng: random.Random | None = None) -> dict[str, Any]:
        rng = rng or random.Random(0)
        return {
            "id": ids["customer"], "name": name, "email": email, "phone": f"+1-555-{rng.randint(1000, 9999)}",
            "tier": tier, "customer_score": score if score is not None else rng.randint(45, 95),
            "registration_date": f"202{rng.randint(3, 5)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
            "lifetime_value": money(rng.randint(0, 4000)),
        }

    def ticket_user(self, ids: dict[str, Any], name: str, email: str) -> dict[str, Any]:
        return {"id": ids["ticket_user"], "name": name, "email": email, "created_at": "2025-11-03 10:15:00"}

    def order(self, rng: random.Random, ids: dict[str, Any], status: str, placed: datetime, products: list[tuple[str, str, str]] | None = None, tier: str = "standard") -> tuple[dict[str, Any], list[dict[str, Any]]]:
        products = products or rng.sample(PRODUCTS, rng.randint(1, 2))
        items = [
            {"order_id": ids["order"], "line_no": i + 1, "sku": sku, "product_name": name, "quantity": 1, "unit_price": price}
            for i, (sku, name, price) in enumerate(products)
        ]
        subtotal = sum(Decimal(p) for _, _, p in products)
        fee = Decimal("0") if subtotal >= 75 or tier == "plus" else Decimal("9.99")
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
        return {"text": f"My email address is {email}.", "unlock": ["email", "e-mail"]}

    @staticmethod
    def name_fact(name: str) -> dict[str, Any]:
        return {"text": f"My name is {name}.", "unlock": ["name"]}

    @staticmethod
    def order_fact(order_id: str) -> dict[str, Any]:
        return {"text": f"The order number is {order_id}.", "unlock": ["order number", "order id", "order"]}


# --------------------------------------------------------------------------- ST030 membership


class MembershipUpgrade(RetailFamily):
    code = "ST030"
    name = "membership_upgrade"
    number = 30
    description = "A customer asks to join Brightwell Plus."
    branches = ("upgrade", "upgrade_new_ticket_user", "already_active", "not_eligible", "rejoin_after_cancel")

    def build(self, rng: random.Random, seed: int) -> dict[str, Any]:
        branch = self.branch(seed)
        ids = self.ids(seed)
        name, email = self.person(rng)
        score = rng.randint(18, 39) if branch == "not_eligible" else rng.randint(45, 95)
        tier = "plus" if branch == "already_active" else "standard"
        patch: dict[str, Any] = {"insert": {"customers": [self.customer(ids, name, email, tier, score, rng)]}}
        if branch != "upgrade_new_ticket_user":
            patch["insert"]["ticket_users"] = [self.ticket_user(ids, name, email)]
        existing = None
        if branch == "already_active":
            existing = {"id": f"MEM-{ids['uid']}", "customer_id": ids["customer"], "plan": "plus", "status": "active",
                        "start_date": "2025-09-14", "end_date": "2026-09-14", "annual_fee": "59.00", "auto_renew": True}
        elif branch == "rejoin_after_cancel":
            existing = {"id": f"MEM-{ids['uid']}", "customer_id": ids["customer"], "plan": "plus", "status": "cancelled",
                        "start_date": "2024-05-02", "end_date": "2025-01-10", "annual_fee": "59.00", "auto_renew": False}
        if existing:
            patch["insert"]["memberships"] = [existing]
        nxt = self.next_ids(patch)
        requester = nxt["ticket_users"] if branch == "upgrade_new_ticket_user" else ids["ticket_user"]
        golden = self.identify(email)
        idempotent: dict[int, str] = {}
        if branch == "upgrade_new_ticket_user":
            golden.append({"name": "create_ticket_user", "arguments": {"name": name, "email": email}})
            idempotent[len(golden) - 1] = "a second ticketing user with the same email is refused"
        golden += [
            {"name": "get_membership", "arguments": {"customer_id": ids["customer"]}},
            {"name": "search_tickets", "arguments": {"table": "tickets", "filter": f"requester_id eq {requester}"}},
        ]
        dialogue: list[dict[str, Any]] = []
        if branch in ("upgrade", "upgrade_new_ticket_user", "rejoin_after_cancel"):
            golden.append({"name": "create_ticket", "arguments": {"requester_id": requester, "subject": "Upgrade to Brightwell Plus", "category": "membership", "status": "open"}})
            golden.append({"name": "update_membership", "arguments": {"customer_id": ids["customer"], "action": "upgrade"}})
            idempotent[len(golden) - 1] = "a second upgrade is refused while the new membership is active"
            golden.append({"name": "update_ticket", "arguments": {"ticket_id": nxt["tickets"], "status": "solved", "note": "Upgraded to Brightwell Plus."}})
            idempotent[len(golden) - 1] = "setting the same status again changes nothing"
            reply = "You are now a Brightwell Plus member: free standard shipping and reward points start today, and the membership runs until 2027-03-02."
            dialogue.append({"name": "confirms_upgrade", "must": [r"plus"], "must_not": [r"not eligible"]})
        elif branch == "already_active":
            golden.append({"name": "create_ticket", "arguments": {"requester_id": requester, "subject": "Brightwell Plus upgrade request", "category": "membership", "status": "solved"}})
            reply = "Your Brightwell Plus membership is already active and runs until 2026-09-14, so no upgrade is needed."
            dialogue.append({"name": "says_already_active", "must": [r"already"]})
        else:
            golden.append({"name": "create_ticket", "arguments": {"requester_id": requester, "subject": "Brightwell Plus upgrade request", "category": "membership", "status": "solved"}})
            reply = "I'm sorry, your account is not eligible for a Brightwell Plus upgrade through chat at this time."
            dialogue.append({"name": "no_score_disclosed", "must": [r"not eligible"], "must_not": [r"\bscore\b", str(score)]})
        opening = rng.choice([
            "I'd like to sign up for Brightwell Plus for the free shipping and reward points. Can you upgrade my account?",
            "Hi, can you upgrade my account to Brightwell Plus? I want the free shipping.",
            "Hello, I want to join the Brightwell Plus membership. Could you set that up?",
        ])
        return {
            "description": f"Membership upgrade, branch '{branch}'.",
            "user": {
                "opening": opening,
                "facts": [self.email_fact(email), self.name_fact(name)],
                "intent": "Join Brightwell Plus for free shipping and reward points.",
            },
            "patch": patch,
            "golden": golden,
            "golden_reply": reply,
            "checks": {"dialogue": dialogue},
            "idempotent_writes": idempotent,
            "tags": ["membership", branch],
        }


# --------------------------------------------------------------------------- ST001 cancellation


class OrderCancellation(RetailFamily):
    code = "ST001"
    name = "order_cancellation"
    number = 1
    description = "A customer asks to cancel an order; only processing orders can be cancelled."
    branches = ("cancel_processing", "refuse_shipped", "cancel_split_payment", "refuse_delivered", "cancel_new_ticket_user")

    def build(self, rng: random.Random, seed: int) -> dict[str, Any]:
        branch = self.branch(seed)
        ids = self.ids(seed)
        name, email = self.person(rng)
        placed = NOW - timedelta(days=rng.randint(1, 3), hours=rng.randint(1, 8))
        status = {"refuse_shipped": "shipped", "refuse_delivered": "delivered"}.get(branch, "processing")
        order, items = self.order(rng, ids, status, placed)
        patch: dict[str, Any] = {"insert": {"customers": [self.customer(ids, name, email, rng=rng)], "orders": [order], "order_items": items}}
        if branch != "cancel_new_ticket_user":
            patch["insert"]["ticket_users"] = [self.ticket_user(ids, name, email)]
        total = Decimal(order["total"])
        if branch == "cancel_split_payment":
            gift = Decimal(rng.choice(["25.00", "50.00"]))
            if gift >= total:  # a gift card never pays for the whole order in this branch
                gift = (total / 2).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
            payments = [self.payment(ids["payment"], ids, money(total - gift), placed), self.payment(ids["payment2"], ids, money(gift), placed, method="gift_card")]
        else:
            payments = [self.payment(ids["payment"], ids, order["total"], placed)]
        patch["insert"]["payments"] = payments
        if status in ("shipped", "delivered"):
            ship, events = self.shipment(rng, ids, "in_transit" if status == "shipped" else "delivered", placed, placed + timedelta(days=5),
                                         delivered=placed + timedelta(days=1, hours=5) if status == "delivered" else None)
            patch["insert"]["shipments"] = [ship]
            patch["insert"]["tracking_events"] = events
        nxt = self.next_ids(patch)
        requester = nxt["ticket_users"] if branch == "cancel_new_ticket_user" else ids["ticket_user"]
        golden = self.identify(email)
        idempotent: dict[int, str] = {}
        if branch == "cancel_new_ticket_user":
            golden.append({"name": "create_ticket_user", "arguments": {"name": name, "email": email}})
            idempotent[len(golden) - 1] = "a second ticketing user with the same email is refused"
        golden += [
            {"name": "get_order", "arguments": {"order_id": ids["order"]}},
            {"name": "search_tickets", "arguments": {"table": "tickets", "filter": f"requester_id eq {requester}"}},
        ]
        if status == "processing":
            golden.append({"name": "get_payments", "arguments": {"order_id": ids["order"]}})
            golden.append({"name": "cancel_order", "arguments": {"order_id": ids["order"], "reason": "customer_request"}})
            idempotent[len(golden) - 1] = "a cancelled order cannot be cancelled again"
            for pay in payments:
                golden.append({"name": "issue_refund", "arguments": {"payment_id": pay["id"], "amount": float(pay["amount"]), "reason": "order_cancelled"}})
                idempotent[len(golden) - 1] = "a fully refunded payment has nothing left to refund"
            golden.append({"name": "create_ticket", "arguments": {"requester_id": requester, "subject": f"Cancel order {ids['order']}", "category": "order", "status": "solved", "order_id": ids["order"]}})
            reply = f"Order {ids['order']} is cancelled and ${order['total']} is being refunded to your original payment method."
            dialogue = [{"name": "mentions_refund", "must": [r"refund", r"cancel"]}]
        else:
            golden.append({"name": "create_ticket", "arguments": {"requester_id": requester, "subject": f"Cancellation request for {ids['order']}", "category": "order", "status": "solved", "order_id": ids["order"]}})
            reply = f"Order {ids['order']} has already been {status}, so it can no longer be cancelled. You can return the items after delivery for a refund."
            dialogue = [{"name": "offers_return", "must": [r"return"]}]
        return {
            "description": f"Order cancellation, branch '{branch}' (order {status}).",
            "user": {
                "opening": rng.choice([
                    "I need to cancel an order I placed a couple of days ago.",
                    "Hi, please cancel my recent order, I ordered the wrong thing.",
                    "Can you cancel my order? I changed my mind.",
                ]),
                "facts": [self.email_fact(email), self.order_fact(ids["order"]), self.name_fact(name)],
                "intent": "Cancel the order and get the money back.",
            },
            "patch": patch,
            "golden": golden,
            "golden_reply": reply,
            "checks": {"dialogue": dialogue},
            "idempotent_writes": idempotent,
            "tags": ["order", branch],
        }


# --------------------------------------------------------------------------- ST002 duplicate charge


class DuplicateCharge(RetailFamily):
    code = "ST002"
    name = "duplicate_charge"
    number = 2
    description = "A customer reports being charged twice for one order."
    branches = ("duplicate", "no_duplicate", "already_refunded", "duplicate_late_second")

    def build(self, rng: random.Random, seed: int) -> dict[str, Any]:
        branch = self.branch(seed)
        ids = self.ids(seed)
        name, email = self.person(rng)
        placed = NOW - timedelta(days=rng.randint(2, 6), hours=rng.randint(0, 6))
        order, items = self.order(rng, ids, "shipped", placed)
        payments = [self.payment(ids["payment"], ids, order["total"], placed)]
        refunds = []
        if branch != "no_duplicate":
            gap = timedelta(hours=rng.randint(20, 23)) if branch == "duplicate_late_second" else timedelta(minutes=rng.randint(1, 30))
            payments.append(self.payment(ids["payment2"], ids, order["total"], placed + gap,
                                         status="refunded" if branch == "already_refunded" else "captured"))
        if branch == "already_refunded":
            refunds.append({"id": f"RFD-{ids['uid']}", "payment_id": ids["payment2"], "order_id": ids["order"], "amount": order["total"],
                            "reason": "duplicate_charge", "created_at": ts(placed + timedelta(days=1))})
        ship, events = self.shipment(rng, ids, "in_transit", placed, placed + timedelta(days=6))
        patch: dict[str, Any] = {"insert": {
            "customers": [self.customer(ids, name, email, rng=rng)], "ticket_users": [self.ticket_user(ids, name, email)],
            "orders": [order], "order_items": items, "payments": payments, "shipments": [ship], "tracking_events": events,
        }}
        if refunds:
            patch["insert"]["refunds"] = refunds
        golden = self.identify(email) + [
            {"name": "get_payments", "arguments": {"order_id": ids["order"]}},
            {"name": "search_tickets", "arguments": {"table": "tickets", "filter": f"requester_id eq {ids['ticket_user']}"}},
        ]
        idempotent: dict[int, str] = {}
        if branch in ("duplicate", "duplicate_late_second"):
            golden.append({"name": "issue_refund", "arguments": {"payment_id": ids["payment2"], "amount": float(order["total"]), "reason": "duplicate_charge"}})
            idempotent[len(golden) - 1] = "the duplicate payment is fully refunded by the first call"
            reply = f"You were charged twice for order {ids['order']}. I refunded the duplicate payment of ${order['total']}; it will reach your card in 3 to 5 business days."
            dialogue = [{"name": "mentions_refund", "must": [r"refund"]}]
        elif branch == "already_refunded":
            reply = f"The second charge on order {ids['order']} was already refunded on {ts(placed + timedelta(days=1))[:10]}, so nothing more is due."
            dialogue = [{"name": "says_already_refunded", "must": [r"already"]}]
        else:
            reply = f"Order {ids['order']} has a single charge of ${order['total']}; there is no duplicate to refund."
            dialogue = [{"name": "no_refund_promised", "must_not": [r"refunded the"]}]
        golden.append({"name": "create_ticket", "arguments": {"requester_id": ids["ticket_user"], "subject": f"Possible double charge on {ids['order']}", "category": "payment", "status": "solved", "order_id": ids["order"]}})
        return {
            "description": f"Duplicate charge, branch '{branch}'.",
            "user": {
                "opening": rng.choice([
                    "I think I was charged twice for my last order. Can you check?",
                    "My card statement shows two charges for one order. Please fix this.",
                ]),
                "facts": [self.email_fact(email), self.order_fact(ids["order"])],
                "intent": "Get a duplicate charge refunded.",
            },
            "patch": patch,
            "golden": golden,
            "golden_reply": reply,
            "checks": {"dialogue": dialogue},
            "idempotent_writes": idempotent,
            "tags": ["payment", branch],
        }


# --------------------------------------------------------------------------- ST003 late delivery


class LateDelivery(RetailFamily):
    code = "ST003"
    name = "late_delivery"
    number = 3
    description = "A customer's parcel is late; compensation depends on delay, order value and earlier credit."
    branches = ("credit_due", "credit_capped_high_priority", "too_recent", "small_order", "already_credited")

    def build(self, rng: random.Random, seed: int) -> dict[str, Any]:
        branch = self.branch(seed)
        ids = self.ids(seed)
        name, email = self.person(rng)
        days_late = rng.randint(2, 4) if branch == "too_recent" else rng.randint(5, 12)
        promised = datetime.combine(TODAY - timedelta(days=days_late), datetime.min.time()) + timedelta(hours=18)
        placed = promised - timedelta(days=5)
        if branch == "credit_capped_high_priority":
            products = [p for p in PRODUCTS if Decimal(p[2]) >= 600]
            chosen = [rng.choice(products)]
        elif branch == "small_order":
            chosen = [rng.choice([p for p in PRODUCTS if Decimal(p[2]) < 60])]
        else:
            chosen = [rng.choice([p for p in PRODUCTS if 100 <= Decimal(p[2]) < 500])]
        order, items = self.order(rng, ids, "shipped", placed, chosen)
        total = Decimal(order["total"])
        status = rng.choice(["delayed", "exception"])
        ship, events = self.shipment(rng, ids, status, placed, promised)
        patch: dict[str, Any] = {"insert": {
            "customers": [self.customer(ids, name, email, rng=rng)], "ticket_users": [self.ticket_user(ids, name, email)],
            "orders": [order], "order_items": items, "payments": [self.payment(ids["payment"], ids, order["total"], placed)],
            "shipments": [ship], "tracking_events": events,
        }}
        if branch == "already_credited":
            patch["insert"]["store_credits"] = [{"id": f"CRD-{ids['uid']}", "customer_id": ids["customer"], "order_id": ids["order"],
                                                 "amount": money(min(total / 10, Decimal(50))), "reason": "delivery_delay", "created_at": ts(NOW - timedelta(days=1))}]
        priority = "high" if total >= 500 else "normal"
        golden = self.identify(email) + [
            {"name": "get_shipment", "arguments": {"order_id": ids["order"]}},
            {"name": "get_order", "arguments": {"order_id": ids["order"]}},
            {"name": "get_store_credits", "arguments": {"customer_id": ids["customer"]}},
            {"name": "search_tickets", "arguments": {"table": "tickets", "filter": f"requester_id eq {ids['ticket_user']}"}},
        ]
        idempotent: dict[int, str] = {}
        due = days_late >= 5 and total >= 100 and branch != "already_credited"
        last_event = events[-1]
        if due:
            credit = min((total / 10).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP), Decimal("50.00"))
            golden.append({"name": "issue_store_credit", "arguments": {"customer_id": ids["customer"], "amount": float(credit), "reason": "delivery_delay", "order_id": ids["order"]}})
            reply = (f"Your parcel is {days_late} days late; the carrier's latest update is '{last_event['description']}' in {last_event['location']}. "
                     f"I added ${money(credit)} store credit for the delay and will keep your ticket on hold until it arrives.")
            dialogue = [{"name": "states_credit", "must": [money(credit).replace(".", r"\.")]}]
        else:
            why = {"too_recent": "the delay is under 5 days", "small_order": "the order total is under $100.00",
                   "already_credited": "store credit for this delay was already issued"}[branch]
            reply = (f"Your parcel is {days_late} days late; the carrier's latest update is '{last_event['description']}' in {last_event['location']}. "
                     f"No further compensation is due because {why}. I'll keep your ticket on hold until it arrives.")
            dialogue = [{"name": "no_credit_promised", "must_not": [r"added \$"]}]
        golden.append({"name": "create_ticket", "arguments": {"requester_id": ids["ticket_user"], "subject": f"Late delivery of {ids['order']}", "category": "delivery", "priority": priority, "status": "hold", "order_id": ids["order"]}})
        return {
            "description": f"Late delivery, branch '{branch}' ({days_late} days late, total {order['total']}).",
            "user": {
                "opening": rng.choice([
                    "My order still hasn't arrived and it was supposed to be here days ago. What's going on?",
                    "Where is my parcel? The tracking has been stuck and it's late.",
                ]),
                "facts": [self.email_fact(email), self.order_fact(ids["order"])],
                "intent": "Find out where the parcel is and get compensated if the policy allows.",
            },
            "patch": patch,
            "golden": golden,
            "golden_reply": reply,
            "checks": {"dialogue": dialogue},
            "idempotent_writes": idempotent,
            "tags": ["delivery", branch],
        }


# --------------------------------------------------------------------------- ST004 ticket follow-up


class TicketFollowUp(RetailFamily):
    code = "ST004"
    name = "ticket_follow_up"
    number = 4
    description = "A customer asks for news on an existing delivery ticket; the ticket is reused and its status set."
    branches = ("delivered_now", "still_delayed", "already_on_hold", "two_tickets")

    def build(self, rng: random.Random, seed: int) -> dict[str, Any]:
        branch = self.branch(seed)
        ids = self.ids(seed)
        name, email = self.person(rng)
        promised = datetime.combine(TODAY - timedelta(days=rng.randint(3, 6)), datetime.min.time()) + timedelta(hours=18)
        placed = promised - timedelta(days=5)
        order, items = self.order(rng, ids, "shipped", placed, [rng.choice([p for p in PRODUCTS if Decimal(p[2]) < 500])])
        delivered = branch in ("delivered_now", "two_tickets")
        ship_status = "delivered" if delivered else "delayed"
        ship, events = self.shipment(rng, ids, ship_status, placed, promised, delivered=NOW - timedelta(hours=rng.randint(3, 20)) if delivered else None)
        if delivered:
            order["status"] = "delivered"
        ticket_id = ids["uid"]
        ticket = {"id": ticket_id, "requester_id": ids["ticket_user"], "subject": f"Where is {ids['order']}?", "description": "Customer reported a late parcel.",
                  "category": "delivery", "priority": "normal", "status": "hold" if branch == "already_on_hold" else "open",
                  "order_id": ids["order"], "created_at": ts(promised + timedelta(days=1)), "updated_at": ts(promised + timedelta(days=1))}
        tickets = [ticket]
        if branch == "two_tickets":
            tickets.insert(0, {"id": ticket_id - 1, "requester_id": ids["ticket_user"], "subject": "Question about an invoice", "description": "Answered.",
                               "category": "payment", "priority": "normal", "status": "solved", "order_id": None,
                               "created_at": "2026-01-12 09:00:00", "updated_at": "2026-01-12 09:30:00"})
        patch: dict[str, Any] = {"insert": {
            "customers": [self.customer(ids, name, email, rng=rng)], "ticket_users": [self.ticket_user(ids, name, email)],
            "orders": [order], "order_items": items, "payments": [self.payment(ids["payment"], ids, order["total"], placed)],
            "shipments": [ship], "tracking_events": events, "tickets": tickets,
        }}
        golden = self.identify(email) + [
            {"name": "search_tickets", "arguments": {"table": "tickets", "filter": f"requester_id eq {ids['ticket_user']} and status ne 'solved'"}},
            {"name": "get_shipment", "arguments": {"order_id": ids["order"]}},
        ]
        idempotent: dict[int, str] = {}
        last = events[-1]
        if delivered:
            golden.append({"name": "update_ticket", "arguments": {"ticket_id": ticket_id, "status": "solved", "note": "Parcel delivered."}})
            idempotent[len(golden) - 1] = "setting the same status again changes nothing"
            reply = f"Good news: order {ids['order']} was delivered on {last['event_time'][:10]}. I've closed out your ticket as solved."
            dialogue = [{"name": "says_delivered", "must": [r"delivered"]}]
        else:
            if branch == "still_delayed":
                golden.append({"name": "update_ticket", "arguments": {"ticket_id": ticket_id, "status": "hold", "note": "Waiting on carrier."}})
                idempotent[len(golden) - 1] = "setting the same status again changes nothing"
            reply = f"Your parcel is still with the carrier; the latest update is '{last['description']}' in {last['location']}. Your ticket stays on hold until it is delivered."
            dialogue = [{"name": "gives_latest_event", "must": [last["location"].split(",")[0]]}]
        return {
            "description": f"Ticket follow-up, branch '{branch}'.",
            "user": {
                "opening": rng.choice([
                    "Hi, I opened a ticket about a late parcel. Any update?",
                    "I'm following up on my support ticket about my delivery. What's the status?",
                ]),
                "facts": [self.email_fact(email), self.order_fact(ids["order"]),
                          {"text": f"The ticket number is {ticket_id}.", "unlock": ["ticket number", "ticket id", "ticket"]}],
                "intent": "Get an update on the existing ticket about the late parcel.",
            },
            "patch": patch,
            "golden": golden,
            "golden_reply": reply,
            "checks": {"dialogue": dialogue},
            "idempotent_writes": idempotent,
            "tags": ["ticket", branch],
        }


FAMILIES = [OrderCancellation(), DuplicateCharge(), LateDelivery(), TicketFollowUp(), MembershipUpgrade()]


# --------------------------------------------------------------------------- order-care families, one module per area

from .families_accounts import MembershipAccount, PromotionDispute, RefundFollowUp  # noqa: E402
from .families_orders import CancelWithInstallation, InstallationService, OrderChanges  # noqa: E402
from .families_returns import CosmeticPartialRefund, Exchange, ReturnWithFees, WarrantyClaim  # noqa: E402
from .families_shipping import DeliveryException, MissingPackage, ReturnToSender  # noqa: E402

FAMILIES += [
    DeliveryException(), MissingPackage(), ReturnToSender(),
    ReturnWithFees(), Exchange(), WarrantyClaim(), CosmeticPartialRefund(),
    InstallationService(), CancelWithInstallation(), OrderChanges(),
    PromotionDispute(), MembershipAccount(), RefundFollowUp(),
]
