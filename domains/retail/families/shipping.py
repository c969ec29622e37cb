"""Shipping families: late deliveries, damaged or attempted parcels, delivered-but-missing, returned to sender."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from ..rules import NOW, TODAY, money, price
from . import openings
from ._base import ADDRESS_WORDS, CITIES, PRODUCTS, STREETS, CareFamily, RetailFamily, dollars, item, rx, skus, ts

# --------------------------------------------------------------------------- ST003 late delivery


class LateDelivery(RetailFamily):
    code = "ST003"
    name = "late_delivery"
    number = 3
    description = "A customer's parcel is late; compensation depends on delay, order value and earlier credit."
    branches = ("credit_due", "credit_capped_high_priority", "too_recent", "small_order", "already_credited")
    # the frozen test set: every action branch, the refusals the two-request family does not cover
    TEST_BRANCHES = ("credit_due", "credit_capped_high_priority", "too_recent")
    OPENINGS = openings.ST003
    SECTION = "policy#late-deliveries"
    WHY = {"issue_store_credit.amount": "policy#late-deliveries"}

    def draw(self, rng: random.Random, seed: int) -> dict[str, Any]:
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
        rubric: list[dict[str, str]] = []
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
            rubric = [{"name": "explains_no_compensation", "question": f"Does the agent explain that no compensation is due because {why}, "
                       "without promising any credit or refund?"}]
        golden.append({"name": "create_ticket", "arguments": {"requester_id": ids["ticket_user"], "subject": f"Late delivery of {ids['order']}", "category": "delivery", "priority": priority, "status": "hold", "order_id": ids["order"]}})
        return {
            "description": f"Late delivery, branch '{branch}' ({days_late} days late, total {order['total']}).",
            "user": {
                "opening": self.open(rng, order=ids["order"], email=email, product=items[0]["product_name"]),
                "facts": [self.email_fact(email), self.order_fact(ids["order"])],
                "intent": "Find out where the parcel is and get compensated if the policy allows.",
            },
            "patch": patch,
            "golden": golden,
            "golden_reply": reply,
            "checks": {"dialogue": dialogue, "rubric": rubric},
            "idempotent_writes": idempotent,
            "tags": ["delivery", branch],
        }


def _stock_patch(fam: CareFamily, rng: random.Random, patch: dict[str, Any], sku: str, stock: str) -> None:
    """in: leave the seed stock; backordered: restock within 14 days; none: no restock in time."""
    if stock == "backordered":
        fam.out_of_stock(patch, sku, TODAY + timedelta(days=rng.randint(3, 14)))
    elif stock == "none":
        fam.out_of_stock(patch, sku, rng.choice([None, TODAY + timedelta(days=rng.randint(20, 45))]))


class DeliveryException(CareFamily):
    code = "ST005"
    name = "delivery_exception"
    number = 5
    description = "The carrier reports an exception: a damaged parcel is replaced or refunded (with goodwill for high-score customers); an attempted delivery is waited out."
    branches = ("reship_in_stock", "reship_backordered", "refund_no_restock", "reship_goodwill", "attempted_wait", "refund_goodwill")
    OPENINGS = openings.ST005
    SECTION = "policy#damaged-parcels-and-other-carrier-exceptions"
    WHY = {"refund_order_amount.amount": "record:get_order", "create_replacement_order.line_no": "record:get_order",
           "issue_store_credit.amount": "policy#damaged-parcels-and-other-carrier-exceptions"}

    def draw(self, rng: random.Random, seed: int) -> dict[str, Any]:
        branch = self.branch(seed)
        goodwill = branch.endswith("goodwill")
        ids, name, email, patch = self.start(rng, seed, score=rng.randint(80, 97) if goodwill else rng.randint(45, 79))
        sku = rng.choice(skus(75))
        placed = NOW - timedelta(days=rng.randint(3, 6), hours=rng.randint(1, 8))
        order = self.placed_order(rng, ids, patch, "shipped", placed, [item(sku)])
        ship, events = self.shipment(rng, ids, "in_transit", placed, placed + timedelta(days=5))
        ship["status"] = "exception"
        event = "Exception: delivery attempted, no one available to sign" if branch == "attempted_wait" else "Exception: parcel damaged in transit"
        events.append({"shipment_id": ids["shipment"], "seq": 3, "event_time": ts(NOW - timedelta(hours=rng.randint(3, 30))),
                       "location": rng.choice(["Salem, OR", "Yakima, WA", "Bend, OR"]), "description": event})
        self.add(patch, "shipments", ship)
        self.add(patch, "tracking_events", *events)
        stock = {"reship_backordered": "backordered", "refund_no_restock": "none", "refund_goodwill": "none"}.get(branch, "in")
        _stock_patch(self, rng, patch, sku, stock)
        total = Decimal(order["total"])
        priority = "high" if total >= 500 else "normal"
        golden = self.identify(email) + [
            {"name": "get_shipment", "arguments": {"order_id": ids["order"]}},
            {"name": "get_order", "arguments": {"order_id": ids["order"]}},
        ]
        idempotent: dict[int, str] = {}
        product = item(sku)[1]
        if branch == "attempted_wait":
            golden.append(self.find_tickets(ids))
            golden.append(self.ticket(ids, f"Delivery attempt on {ids['order']}", "delivery", "hold", ids["order"], priority))
            reply = f"The carrier tried to deliver your {product} but nobody was available; it will try again on the next business day. I've put your ticket on hold until it is delivered."
            dialogue = [{"name": "no_replacement_promised", "must": [r"try again|next business day"], "must_not": [r"replacement|refund"]}]
            return self.body(f"Delivery exception, branch '{branch}'.", self.open(rng, order=ids["order"], email=email, product=product), [self.email_fact(email), self.order_fact(ids["order"])],
                             "Find out what happened to the parcel.", patch, golden, reply, dialogue, idempotent, ["delivery", branch])
        golden.append({"name": "get_product", "arguments": {"sku": sku}})
        golden.append(self.find_tickets(ids))
        if stock == "none":
            golden.append({"name": "refund_order_amount", "arguments": {"order_id": ids["order"], "amount": float(price(sku)), "reason": "damaged_item"}})
            idempotent[len(golden) - 1] = "the order is fully refunded by the first call, so a second refund is refused"
            reply = f"The carrier damaged your {product} in transit and it is out of stock with no restock in time, so I refunded {dollars(price(sku))} to your card."
            dialogue = [{"name": "states_refund", "must": [rx(money(price(sku)))]}]
        else:
            golden.append({"name": "create_replacement_order", "arguments": {"order_id": ids["order"], "line_no": 1, "reason": "damaged_in_transit"}})
            when = "it ships right away" if stock == "in" else "it is backordered and ships when stock arrives"
            reply = f"The carrier damaged your {product} in transit. I've sent a free replacement; {when}."
            dialogue = [{"name": "promises_replacement", "must": [r"replacement"], "must_not": [r"refunded"]}]
        rubric: list[dict[str, str]] = []
        if goodwill:
            golden.append({"name": "issue_store_credit", "arguments": {"customer_id": ids["customer"], "amount": 15.0, "reason": "goodwill", "order_id": ids["order"]}})
            reply += " I've also added $15.00 store credit to your account for the trouble."
            dialogue.append({"name": "mentions_goodwill", "must": [r"15\.00"], "must_not": [r"\bscore\b"]})
            rubric = [{"name": "goodwill_reason_unsaid", "question": "Does the agent give the $15.00 store credit without revealing, in any words, "
                       "why this customer receives it (no mention or hint of an internal score, rating or customer standing)?"}]
        golden.append(self.ticket(ids, f"Damaged parcel {ids['order']}", "delivery", "solved", ids["order"], priority))
        return self.body(f"Delivery exception, branch '{branch}'.", self.open(rng, order=ids["order"], email=email, product=product),
                         [self.email_fact(email), self.order_fact(ids["order"])], "Find out what happened to the parcel and get it sorted out.",
                         patch, golden, reply, dialogue, idempotent, ["delivery", branch], rubric)


class MissingPackage(CareFamily):
    code = "ST006"
    name = "delivered_not_received"
    number = 6
    description = "Tracking says delivered but nothing arrived: wait 48 hours, then a courtesy replacement or refund under $200, or a carrier investigation from $200."
    branches = ("replace_in_stock", "replace_backordered", "refund_out_of_stock", "investigate_high_value", "too_early_wait")
    # the frozen test set: every action branch, the refusals the two-request family does not cover
    TEST_BRANCHES = ("replace_in_stock", "replace_backordered", "refund_out_of_stock", "investigate_high_value", "too_early_wait", "replace_in_stock")
    OPENINGS = openings.ST006
    SECTION = "policy#delivered-but-not-received"
    WHY = {"refund_order_amount.amount": "record:get_order", "create_replacement_order.line_no": "record:get_order"}

    def draw(self, rng: random.Random, seed: int) -> dict[str, Any]:
        branch = self.branch(seed)
        ids, name, email, patch = self.start(rng, seed)
        sku = rng.choice(skus(200) if branch == "investigate_high_value" else skus(75, 200) if branch != "too_early_wait" else skus(75))
        delivered = NOW - (timedelta(hours=rng.randint(5, 40)) if branch == "too_early_wait" else timedelta(days=rng.randint(3, 9), hours=rng.randint(1, 8)))
        placed = delivered - timedelta(days=4)
        order = self.placed_order(rng, ids, patch, "delivered", placed, [item(sku)])
        ship, events = self.shipment(rng, ids, "delivered", placed, placed + timedelta(days=5), delivered)
        self.add(patch, "shipments", ship)
        self.add(patch, "tracking_events", *events)
        stock = {"replace_backordered": "backordered", "refund_out_of_stock": "none"}.get(branch, "in")
        _stock_patch(self, rng, patch, sku, stock)
        total = Decimal(order["total"])
        product = item(sku)[1]
        golden = self.identify(email) + [
            {"name": "get_shipment", "arguments": {"order_id": ids["order"]}},
            {"name": "get_order", "arguments": {"order_id": ids["order"]}},
        ]
        idempotent: dict[int, str] = {}
        if branch == "too_early_wait":
            golden.append(self.find_tickets(ids))
            golden.append(self.ticket(ids, f"Parcel not received {ids['order']}", "delivery", "pending", ids["order"], "high" if total >= 500 else "normal"))
            reply = (f"The carrier scanned your {product} as delivered on {ts(delivered)[:16]} UTC, less than 48 hours ago. Parcels are often left with a neighbour "
                     "or in a safe place: please check around and let us know if it hasn't turned up.")
            dialogue = [{"name": "asks_to_check_first", "must": [r"neighbou?r"], "must_not": [r"replacement|refunded|investigation"]}]
        elif branch == "investigate_high_value":
            golden.append(self.find_tickets(ids))
            golden.append({"name": "open_carrier_investigation", "arguments": {"order_id": ids["order"], "reason": "missing"}})
            idempotent[len(golden) - 1] = "a second investigation of the same shipment is refused while the first is open"
            golden.append(self.ticket(ids, f"Parcel not received {ids['order']}", "delivery", "hold", ids["order"], "high" if total >= 500 else "normal"))
            reply = f"I've opened an investigation with {ship['carrier']} for your {product}. It usually takes 5 to 8 business days; your ticket is on hold until the carrier answers."
            dialogue = [{"name": "mentions_investigation", "must": [r"investigation"], "must_not": [r"replacement|refunded"]}]
        else:
            golden.append({"name": "get_product", "arguments": {"sku": sku}})
            golden.append(self.find_tickets(ids))
            if stock == "none":
                golden.append({"name": "refund_order_amount", "arguments": {"order_id": ids["order"], "amount": float(price(sku)), "reason": "item_not_received"}})
                idempotent[len(golden) - 1] = "the order is fully refunded by the first call, so a second refund is refused"
                reply = f"Your {product} can't be replaced right now, so I refunded {dollars(price(sku))} to your card."
                dialogue = [{"name": "states_refund", "must": [rx(money(price(sku)))]}]
            else:
                golden.append({"name": "create_replacement_order", "arguments": {"order_id": ids["order"], "line_no": 1, "reason": "missing"}})
                reply = f"I'm sorry your {product} didn't reach you. I've sent a courtesy replacement at no cost."
                dialogue = [{"name": "promises_replacement", "must": [r"replacement"], "must_not": [r"investigation"]}]
            golden.append(self.ticket(ids, f"Parcel not received {ids['order']}", "delivery", "solved", ids["order"]))
        opening = self.open(rng, order=ids["order"], email=email, product=product)
        return self.body(f"Delivered but not received, branch '{branch}'.", opening, [self.email_fact(email), self.order_fact(ids["order"])],
                         "Get the missing parcel sorted out.", patch, golden, reply, dialogue, idempotent, ["delivery", branch])


class ReturnToSender(CareFamily):
    code = "ST007"
    name = "return_to_sender"
    number = 7
    description = "A parcel came back to the warehouse: reship free when the carrier erred, with a reship fee when the address was entered wrong (waived for Plus)."
    branches = ("carrier_error_free", "customer_error_fee", "customer_error_plus_free")
    # the frozen test set: every action branch, the refusals the two-request family does not cover
    TEST_BRANCHES = ("carrier_error_free", "customer_error_fee", "customer_error_plus_free", "customer_error_fee")
    OPENINGS = openings.ST007
    SECTION = "policy#returned-to-sender"
    WHY = {"reship_fee": "kb/shipping_changes.md", "create_replacement_order.line_no": "record:get_order"}

    def draw(self, rng: random.Random, seed: int) -> dict[str, Any]:
        branch = self.branch(seed)
        tier = "plus" if branch == "customer_error_plus_free" else "standard"
        ids, name, email, patch = self.start(rng, seed, tier=tier)
        sku = rng.choice(skus(40))
        placed = NOW - timedelta(days=rng.randint(6, 12))
        order = self.placed_order(rng, ids, patch, "shipped", placed, [item(sku)], tier)
        city, state, zip_code = rng.choice(CITIES)
        number = rng.randint(100, 989)
        street = rng.choice(STREETS)
        intended = f"{number} {street}, {city}, {state} {zip_code}"
        if branch == "carrier_error_free":
            order["shipping_address"] = intended
        else:
            typo = rng.choice([f"{number + rng.randint(1, 9)} {street}", f"{number} {rng.choice([s for s in STREETS if s != street])}"])
            order["shipping_address"] = f"{typo}, {city}, {state} {zip_code}"
        ship, events = self.shipment(rng, ids, "in_transit", placed, placed + timedelta(days=5))
        ship["status"] = "returned_to_sender"
        events.append({"shipment_id": ids["shipment"], "seq": 3, "event_time": ts(NOW - timedelta(days=rng.randint(1, 3))),
                       "location": "Reno, NV", "description": "Returned to sender: recipient address not found"})
        self.add(patch, "shipments", ship)
        self.add(patch, "tracking_events", *events)
        fee = 12.0 if branch == "customer_error_fee" else 0.0
        args: dict[str, Any] = {"order_id": ids["order"], "line_no": 1, "reason": "returned_to_sender", "shipping_address": intended}
        if fee:
            args["reship_fee"] = fee
        golden = self.identify(email) + [
            {"name": "get_shipment", "arguments": {"order_id": ids["order"]}},
            {"name": "get_order", "arguments": {"order_id": ids["order"]}},
            {"name": "get_product", "arguments": {"sku": sku}},
            self.find_tickets(ids),
            {"name": "create_replacement_order", "arguments": args},
            self.ticket(ids, f"Parcel returned to sender {ids['order']}", "delivery", "solved", ids["order"], "high" if Decimal(order["total"]) >= 500 else "normal"),
        ]
        product = item(sku)[1]
        if branch == "carrier_error_free":
            reply = f"The address on the order was right, so the carrier made the mistake: I've reshipped your {product} to {intended} free of charge."
            dialogue = [{"name": "no_fee", "must": [r"free"], "must_not": [r"12\.00"]}]
        elif fee:
            reply = f"The order had the address {order['shipping_address']}, which the carrier couldn't find. I've reshipped your {product} to {intended}; the reship fee is $12.00."
            dialogue = [{"name": "states_fee", "must": [r"12\.00"]}]
        else:
            reply = f"The order had the address {order['shipping_address']}. I've reshipped your {product} to {intended}; as a Brightwell Plus member you pay no reship fee."
            dialogue = [{"name": "no_fee_for_plus", "must": [r"no reship fee|free"], "must_not": [r"12\.00"]}]
        facts = [self.email_fact(email), self.order_fact(ids["order"]),
                 {"text": f"It should have gone to {intended}.", "unlock": ADDRESS_WORDS}]
        self.ask("Which address did you mean the parcel to go to? Please give the full address.")
        opening = self.open(rng, order=ids["order"], email=email, product=product)
        return self.body(f"Return to sender, branch '{branch}'.", opening, facts, "Get the returned parcel reshipped to the right address.",
                         patch, golden, reply, dialogue, {}, ["delivery", branch])
