"""Shipping families: late deliveries, damaged or attempted parcels, delivered-but-missing, returned to sender."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from thinkingbox_env.authoring.saying import amount_pattern, ts, usd

from ..rules import NOW, TODAY, cents, money, price
from . import openings
from ._base import CareFamily, RetailFamily
from ._data import ADDRESS_WORDS, CITIES, PRODUCTS, STREETS, item, skus
from ._draft import RetailDraft

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

    def draw(self, rng: random.Random, seed: int) -> RetailDraft:
        branch = self.branch(seed)
        d = self.draft(seed)
        ids = self.ids(seed)
        name, email = self.person(rng)
        days_late = rng.randint(2, 4) if branch == "too_recent" else rng.randint(5, 12)
        promised = datetime.combine(TODAY - timedelta(days=days_late), datetime.min.time()) + timedelta(hours=18)
        placed = promised - timedelta(days=5)
        if branch == "credit_capped_high_priority":
            chosen = [rng.choice([p for p in PRODUCTS if Decimal(p[2]) >= 600])]
        elif branch == "small_order":
            chosen = [rng.choice([p for p in PRODUCTS if Decimal(p[2]) < 60])]
        else:
            chosen = [rng.choice([p for p in PRODUCTS if 100 <= Decimal(p[2]) < 500])]
        order, items = self.order(rng, ids, "shipped", placed, chosen)
        total = Decimal(order["total"])
        status = rng.choice(["delayed", "exception"])
        ship, events = self.shipment(rng, ids, status, placed, promised)
        d.add("customers", self.customer(ids, name, email, rng=rng))
        self.ticketing(d, ids, name, email)
        d.add("orders", order)
        d.add("order_items", *items)
        d.add("payments", self.payment(ids["payment"], ids, order["total"], placed))
        d.add("shipments", ship)
        d.add("tracking_events", *events)
        if branch == "already_credited":
            d.add("store_credits", {"id": f"CRD-{ids['uid']}", "customer_id": ids["customer"], "order_id": ids["order"],
                                    "amount": money(min(total / 10, Decimal(50))), "reason": "delivery_delay", "created_at": ts(NOW - timedelta(days=1))})
        priority = "high" if total >= 500 else "normal"
        d.identify(email)
        d.read("get_shipment", order_id=ids["order"])
        d.read("get_order", order_id=ids["order"])
        d.read("get_store_credits", customer_id=ids["customer"])
        d.find_tickets(ids["ticket_user"])
        due = days_late >= 5 and total >= 100 and branch != "already_credited"
        last_event = events[-1]
        where = f"Your parcel is {days_late} days late; the carrier's latest update is '{last_event['description']}' in {last_event['location']}."
        if due:
            credit = min(cents(total / 10), Decimal("50.00"))
            d.act("issue_store_credit", customer_id=ids["customer"], amount=float(credit), reason="delivery_delay", order_id=ids["order"])
            d.reply(f"{where} I added {usd(credit, grouped=False)} store credit for the delay and will keep your ticket on hold until it arrives.")
            d.mention("states_credit", must=[amount_pattern(money(credit))])
        else:
            why = {"too_recent": "the delay is under 5 days", "small_order": "the order total is under $100.00",
                   "already_credited": "store credit for this delay was already issued"}[branch]
            d.reply(f"{where} No further compensation is due because {why}. I'll keep your ticket on hold until it arrives.")
            d.mention("no_credit_promised", must_not=[r"added \$"])
            reason = {"too_recent": r"under 5 days", "small_order": r"under \$100", "already_credited": r"already issued"}[branch]
            d.mention("explains_no_compensation", must=[reason], must_not=[r"added \$"])
        d.act("create_ticket", requester_id=ids["ticket_user"], subject=f"Late delivery of {ids['order']}", category="delivery",
              priority=priority, status="hold", order_id=ids["order"])
        self.open(d, rng, order=ids["order"], email=email, product=items[0]["product_name"])
        d.email_fact(email)
        d.order_fact(ids["order"])
        d.description = f"Late delivery, branch '{branch}' ({days_late} days late, total {order['total']})."
        d.intent = "Find out where the parcel is and get compensated if the policy allows."
        d.tags = ["delivery", branch]
        return d


def _stock_update(fam: CareFamily, d: RetailDraft, rng: random.Random, sku: str, stock: str) -> None:
    """in: leave the seed stock; backordered: restock within 14 days; none: no restock in time."""
    if stock == "backordered":
        fam.out_of_stock(d, sku, TODAY + timedelta(days=rng.randint(3, 14)))
    elif stock == "none":
        fam.out_of_stock(d, sku, rng.choice([None, TODAY + timedelta(days=rng.randint(20, 45))]))


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

    def draw(self, rng: random.Random, seed: int) -> RetailDraft:
        branch = self.branch(seed)
        goodwill = branch.endswith("goodwill")
        d, ids, name, email = self.start(rng, seed, score=rng.randint(80, 97) if goodwill else rng.randint(45, 79))
        sku = rng.choice(skus(75))
        placed = NOW - timedelta(days=rng.randint(3, 6), hours=rng.randint(1, 8))
        order = self.placed_order(d, rng, ids, "shipped", placed, [item(sku)])
        ship, events = self.shipment(rng, ids, "in_transit", placed, placed + timedelta(days=5))
        ship["status"] = "exception"
        event = "Exception: delivery attempted, no one available to sign" if branch == "attempted_wait" else "Exception: parcel damaged in transit"
        events.append({"shipment_id": ids["shipment"], "seq": 3, "event_time": ts(NOW - timedelta(hours=rng.randint(3, 30))),
                       "location": rng.choice(["Salem, OR", "Yakima, WA", "Bend, OR"]), "description": event})
        d.add("shipments", ship)
        d.add("tracking_events", *events)
        stock = {"reship_backordered": "backordered", "refund_no_restock": "none", "refund_goodwill": "none"}.get(branch, "in")
        _stock_update(self, d, rng, sku, stock)
        total = Decimal(order["total"])
        priority = "high" if total >= 500 else "normal"
        d.identify(email)
        d.read("get_shipment", order_id=ids["order"])
        d.read("get_order", order_id=ids["order"])
        product = item(sku)[1]
        d.email_fact(email)
        d.order_fact(ids["order"])
        d.description = f"Delivery exception, branch '{branch}'."
        d.tags = ["delivery", branch]
        if branch == "attempted_wait":
            d.find_tickets(ids["ticket_user"])
            d.open_ticket(ids["ticket_user"], f"Delivery attempt on {ids['order']}", "delivery", "hold", ids["order"], priority)
            d.reply(f"The carrier tried to deliver your {product} but nobody was available; it will try again on the next business day. I've put your ticket on hold until it is delivered.")
            d.mention("no_replacement_promised", must=[r"try again|next business day"], must_not=[r"replacement|refund"])
            self.open(d, rng, order=ids["order"], email=email, product=product)
            d.intent = "Find out what happened to the parcel."
            return d
        d.read("get_product", sku=sku)
        d.find_tickets(ids["ticket_user"])
        if stock == "none":
            d.act("refund_order_amount", idempotent="the order is fully refunded by the first call, so a second refund is refused",
                  order_id=ids["order"], amount=float(price(sku)), reason="damaged_item")
            d.reply(f"The carrier damaged your {product} in transit and it is out of stock with no restock in time, so I refunded {usd(price(sku), grouped=False)} to your card.")
            d.mention("states_refund", must=[amount_pattern(money(price(sku)))])
        else:
            d.act("create_replacement_order", order_id=ids["order"], line_no=1, reason="damaged_in_transit")
            when = "it ships right away" if stock == "in" else "it is backordered and ships when stock arrives"
            d.reply(f"The carrier damaged your {product} in transit. I've sent a free replacement; {when}.")
            d.mention("promises_replacement", must=[r"replacement"], must_not=[r"refunded"])
        if goodwill:
            d.act("issue_store_credit", customer_id=ids["customer"], amount=15.0, reason="goodwill", order_id=ids["order"])
            d.reply("I've also added $15.00 store credit to your account for the trouble.")
            d.mention("mentions_goodwill", must=[r"15\.00"], must_not=[r"\bscore\b"])
            d.rubric("goodwill_reason_unsaid", "Does the agent give the $15.00 store credit without revealing, in any words, "
                     "why this customer receives it (no mention or hint of an internal score, rating or customer standing)?")
        d.open_ticket(ids["ticket_user"], f"Damaged parcel {ids['order']}", "delivery", "solved", ids["order"], priority)
        self.open(d, rng, order=ids["order"], email=email, product=product)
        d.intent = "Find out what happened to the parcel and get it sorted out."
        return d


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

    def draw(self, rng: random.Random, seed: int) -> RetailDraft:
        branch = self.branch(seed)
        d, ids, name, email = self.start(rng, seed)
        sku = rng.choice(skus(200) if branch == "investigate_high_value" else skus(75, 200) if branch != "too_early_wait" else skus(75))
        delivered = NOW - (timedelta(hours=rng.randint(5, 40)) if branch == "too_early_wait" else timedelta(days=rng.randint(3, 9), hours=rng.randint(1, 8)))
        placed = delivered - timedelta(days=4)
        order = self.placed_order(d, rng, ids, "delivered", placed, [item(sku)])
        ship, events = self.shipment(rng, ids, "delivered", placed, placed + timedelta(days=5), delivered)
        d.add("shipments", ship)
        d.add("tracking_events", *events)
        stock = {"replace_backordered": "backordered", "refund_out_of_stock": "none"}.get(branch, "in")
        _stock_update(self, d, rng, sku, stock)
        priority = "high" if Decimal(order["total"]) >= 500 else "normal"
        product = item(sku)[1]
        d.identify(email)
        d.read("get_shipment", order_id=ids["order"])
        d.read("get_order", order_id=ids["order"])
        subject = f"Parcel not received {ids['order']}"
        if branch == "too_early_wait":
            d.find_tickets(ids["ticket_user"])
            d.open_ticket(ids["ticket_user"], subject, "delivery", "pending", ids["order"], priority)
            d.reply(f"The carrier scanned your {product} as delivered on {ts(delivered)[:16]} UTC, less than 48 hours ago. Parcels are often left with a neighbour "
                    "or in a safe place: please check around and let us know if it hasn't turned up.")
            d.mention("asks_to_check_first", must=[r"neighbou?r"], must_not=[r"replacement|refunded|investigation"])
        elif branch == "investigate_high_value":
            d.find_tickets(ids["ticket_user"])
            d.act("open_carrier_investigation", idempotent="a second investigation of the same shipment is refused while the first is open",
                  order_id=ids["order"], reason="missing")
            d.open_ticket(ids["ticket_user"], subject, "delivery", "hold", ids["order"], priority)
            d.reply(f"I've opened an investigation with {ship['carrier']} for your {product}. It usually takes 5 to 8 business days; your ticket is on hold until the carrier answers.")
            d.mention("mentions_investigation", must=[r"investigation"], must_not=[r"replacement|refunded"])
        else:
            d.read("get_product", sku=sku)
            d.find_tickets(ids["ticket_user"])
            if stock == "none":
                d.act("refund_order_amount", idempotent="the order is fully refunded by the first call, so a second refund is refused",
                      order_id=ids["order"], amount=float(price(sku)), reason="item_not_received")
                d.reply(f"Your {product} can't be replaced right now, so I refunded {usd(price(sku), grouped=False)} to your card.")
                d.mention("states_refund", must=[amount_pattern(money(price(sku)))])
            else:
                d.act("create_replacement_order", order_id=ids["order"], line_no=1, reason="missing")
                d.reply(f"I'm sorry your {product} didn't reach you. I've sent a courtesy replacement at no cost.")
                d.mention("promises_replacement", must=[r"replacement"], must_not=[r"investigation"])
            d.open_ticket(ids["ticket_user"], subject, "delivery", "solved", ids["order"])
        self.open(d, rng, order=ids["order"], email=email, product=product)
        d.email_fact(email)
        d.order_fact(ids["order"])
        d.description = f"Delivered but not received, branch '{branch}'."
        d.intent = "Get the missing parcel sorted out."
        d.tags = ["delivery", branch]
        return d


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

    def draw(self, rng: random.Random, seed: int) -> RetailDraft:
        branch = self.branch(seed)
        tier = "plus" if branch == "customer_error_plus_free" else "standard"
        d, ids, name, email = self.start(rng, seed, tier=tier)
        sku = rng.choice(skus(40))
        placed = NOW - timedelta(days=rng.randint(6, 12))
        order = self.placed_order(d, rng, ids, "shipped", placed, [item(sku)], tier)
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
        d.add("shipments", ship)
        d.add("tracking_events", *events)
        fee = 12.0 if branch == "customer_error_fee" else 0.0
        charged: dict[str, Any] = {"reship_fee": fee} if fee else {}
        d.identify(email)
        d.read("get_shipment", order_id=ids["order"])
        d.read("get_order", order_id=ids["order"])
        d.read("get_product", sku=sku)
        d.find_tickets(ids["ticket_user"])
        d.act("create_replacement_order", order_id=ids["order"], line_no=1, reason="returned_to_sender", shipping_address=intended, **charged)
        d.open_ticket(ids["ticket_user"], f"Parcel returned to sender {ids['order']}", "delivery", "solved", ids["order"],
                      "high" if Decimal(order["total"]) >= 500 else "normal")
        product = item(sku)[1]
        if branch == "carrier_error_free":
            d.reply(f"The address on the order was right, so the carrier made the mistake: I've reshipped your {product} to {intended} free of charge.")
            d.mention("no_fee", must=[r"free"], must_not=[r"12\.00"])
        elif fee:
            d.reply(f"The order had the address {order['shipping_address']}, which the carrier couldn't find. I've reshipped your {product} to {intended}; the reship fee is $12.00.")
            d.mention("states_fee", must=[r"12\.00"])
        else:
            d.reply(f"The order had the address {order['shipping_address']}. I've reshipped your {product} to {intended}; as a Brightwell Plus member you pay no reship fee.")
            d.mention("no_fee_for_plus", must=[r"no reship fee|free"], must_not=[r"12\.00"])
        d.email_fact(email)
        d.order_fact(ids["order"])
        d.fact(f"It should have gone to {intended}.", unlock=ADDRESS_WORDS)
        d.question("Which address did you mean the parcel to go to? Please give the full address.")
        self.open(d, rng, order=ids["order"], email=email, product=product)
        d.description = f"Return to sender, branch '{branch}'."
        d.intent = "Get the returned parcel reshipped to the right address."
        d.tags = ["delivery", branch]
        return d
