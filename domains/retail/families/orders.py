"""Order families: cancellations, installation jobs, cancellations with installation or a label, address and speed changes."""

from __future__ import annotations

import random
from datetime import timedelta
from decimal import Decimal
from typing import Any

from thinkingbox_env.authoring.saying import amount_pattern, iso, ts, usd

from ..rules import CATALOG, INSTALL_FEE, INSTALL_SKU, INSTALLABLE, LATE_CANCEL_CHARGE, NOW, TODAY, cents, day_after, money
from . import openings
from ._base import CareFamily, RetailFamily
from ._data import ADDRESS_WORDS, CITIES, STREETS, item
from ._draft import USER_TWICE, RetailDraft

# --------------------------------------------------------------------------- ST001 cancellation


class OrderCancellation(RetailFamily):
    code = "ST001"
    name = "order_cancellation"
    number = 1
    NEW_USERS = False
    description = "A customer asks to cancel an order; only processing orders can be cancelled."
    branches = ("cancel_processing", "refuse_shipped", "cancel_split_payment", "delivered_return_instead", "cancel_new_ticket_user")
    OPENINGS = openings.ST001
    SECTION = "policy#cancelling-an-order"
    WHY = {"issue_refund.amount": "record:get_payments", "create_ticket_user.name": "record:get_customer_profile",
           "create_ticket_user.email": "record:get_customer_profile"}

    def draw(self, rng: random.Random, seed: int) -> RetailDraft:
        branch = self.branch(seed)
        d = self.draft(seed)
        ids = self.ids(seed)
        name, email = self.person(rng)
        placed = NOW - timedelta(days=rng.randint(1, 3), hours=rng.randint(1, 8))
        status = {"refuse_shipped": "shipped", "delivered_return_instead": "delivered"}.get(branch, "processing")
        order, items = self.order(rng, ids, status, placed)
        d.add("customers", self.customer(ids, name, email, rng=rng))
        d.add("orders", order)
        d.add("order_items", *items)
        if branch != "cancel_new_ticket_user":
            d.add("ticket_users", self.ticket_user(ids, name, email))
        total = Decimal(order["total"])
        if branch == "cancel_split_payment":
            gift = Decimal(rng.choice(["25.00", "50.00"]))
            if gift >= total:  # a gift card never pays for the whole order in this branch
                gift = cents(total / 2)
            payments = [self.payment(ids["payment"], ids, money(total - gift), placed), self.payment(ids["payment2"], ids, money(gift), placed, method="gift_card")]
        else:
            payments = [self.payment(ids["payment"], ids, order["total"], placed)]
        d.add("payments", *payments)
        if status in ("shipped", "delivered"):
            ship, events = self.shipment(rng, ids, "in_transit" if status == "shipped" else "delivered", placed, placed + timedelta(days=5),
                                         delivered=placed + timedelta(days=1, hours=5) if status == "delivered" else None)
            d.add("shipments", ship)
            d.add("tracking_events", *events)
        nxt = self.next_ids(d.patch)
        requester = nxt["ticket_users"] if branch == "cancel_new_ticket_user" else ids["ticket_user"]
        d.identify(email)
        if branch == "cancel_new_ticket_user":
            d.act("create_ticket_user", idempotent=USER_TWICE, name=name, email=email)
        d.read("get_order", order_id=ids["order"])
        d.find_tickets(requester)
        if status == "processing":
            d.read("get_payments", order_id=ids["order"])
            d.act("cancel_order", idempotent="a cancelled order cannot be cancelled again", order_id=ids["order"], reason="customer_request")
            for pay in payments:
                d.act("issue_refund", idempotent="a fully refunded payment has nothing left to refund",
                      payment_id=pay["id"], amount=float(pay["amount"]), reason="order_cancelled")
            d.act("create_ticket", requester_id=requester, subject=f"Cancel order {ids['order']}", category="order", status="solved",
                  order_id=ids["order"])
            d.reply(f"Order {ids['order']} is cancelled and {usd(order['total'], grouped=False)} is being refunded to your original payment method.")
            d.mention("mentions_refund", must=[r"refund", r"cancel"])
        elif status == "delivered":
            # too late to cancel; the customer takes the return the policy offers instead (their only order: no fees)
            d.read("get_shipment", order_id=ids["order"])
            d.write("create_return", {"order_id": "record:get_order", "line_nos": "customer", "reason": "customer"},
                    idempotent="a second return of the same lines is refused",
                    order_id=ids["order"], line_nos=[i["line_no"] for i in items], reason="changed_mind")
            d.act("create_ticket", requester_id=requester, subject=f"Cancellation request for {ids['order']}", category="order",
                  status="solved", order_id=ids["order"])
            refund = order["subtotal"]
            d.reply(f"Order {ids['order']} was already delivered, so it can't be cancelled. I've opened a return for it instead; as it's your "
                    f"first order with us there are no return fees, and {usd(refund, grouped=False)} goes back to your card.")
            d.mention("states_refund", must=[amount_pattern(refund)], must_not=[r"is cancelled"])
            d.question("It has already been delivered, so it can't be cancelled, but I can open a return instead. Would you like that, "
                       "and is everything still unopened?", before="create_return")
        else:
            d.act("create_ticket", requester_id=requester, subject=f"Cancellation request for {ids['order']}", category="order",
                  status="solved", order_id=ids["order"])
            d.reply(f"Order {ids['order']} has already been {status}, so it can no longer be cancelled. You can return the items after delivery for a refund.")
            d.mention("offers_return", must=[r"return", rf"already been {status}"])
        self.open(d, rng, order=ids["order"], email=email, product=items[0]["product_name"])
        d.email_fact(email)
        d.order_fact(ids["order"])
        d.name_fact(name)
        if status == "delivered":
            d.fact("Everything is still sealed in the box.", unlock=["sealed", "opened", "unopened", "condition", "used"])
            d.fact("Yes, a return is fine, as long as I get my money back.", unlock=["return", "send it back", "instead"])
        d.description = f"Order cancellation, branch '{branch}' (order {status})."
        d.intent = "Cancel the order and get the money back."
        d.tags = ["order", branch]
        return d


def _installation(ids: dict[str, Any], status: str, day: str, completed: str | None = None) -> dict[str, Any]:
    return {"id": f"INS-{ids['uid']}", "order_id": ids["order"], "line_no": 1, "kind": "install", "status": status,
            "scheduled_date": day, "completed_at": completed, "fee": "99.00"}


class InstallationService(CareFamily):
    code = "ST012"
    name = "installation_service"
    number = 12
    description = "Installation jobs: reschedule with 2 days' notice, a free revisit within 30 days, cancellation with a late charge."
    branches = ("reschedule", "reschedule_too_late", "revisit", "revisit_too_old", "cancel_refund", "cancel_late_charge")
    # the frozen test set: every action branch, the refusals the two-request family does not cover
    TEST_BRANCHES = ("reschedule", "reschedule_too_late", "revisit", "cancel_refund", "cancel_late_charge", "revisit")
    OPENINGS = openings.ST012
    SECTION = "policy#installation"
    WHY = {"late_cancellation_charge": "kb/installation.md", "refund_order_amount.amount": "kb/installation.md"}

    def draw(self, rng: random.Random, seed: int) -> RetailDraft:
        branch = self.branch(seed)
        d, ids, name, email = self.start(rng, seed)
        sku = rng.choice(INSTALLABLE)
        completed_days = rng.randint(3, 25) if branch == "revisit" else rng.randint(35, 60)
        scheduled = branch not in ("revisit", "revisit_too_old")
        order, delivered = self.delivered_order(d, rng, ids, [item(sku), INSTALL_SKU], rng.randint(1, 6) if scheduled else completed_days + 1)
        if scheduled:
            day = day_after(1) if branch in ("reschedule_too_late", "cancel_late_charge") else day_after(rng.randint(3, 10))
            job = _installation(ids, "scheduled", iso(day))
        else:
            done = NOW - timedelta(days=completed_days, hours=rng.randint(1, 5))
            day = done.date()
            job = _installation(ids, "completed", iso(day), ts(done))
        d.add("installations", job)
        wanted = day_after(rng.randint(3, 15))
        while wanted == day:
            wanted = day_after((wanted - TODAY).days + 1)
        d.identify(email)
        d.read("get_order", order_id=ids["order"])
        d.read("get_installations", order_id=ids["order"])
        d.find_tickets(ids["ticket_user"])
        product = CATALOG[sku][0]
        status = "solved"
        d.email_fact(email)
        d.order_fact(ids["order"])
        asks_date = branch in ("reschedule", "reschedule_too_late", "revisit")
        problem = "Since the installation there's a leak at the connection the installer fitted."
        problem_words = ["what", "problem", "issue", "describe", "wrong"]
        if asks_date:
            d.fact(f"{wanted:%A} {iso(wanted)} would suit me.", unlock=["date", "day", "when"])
        if branch == "reschedule":
            d.act("reschedule_installation", idempotent="moving the appointment to the same day again is refused",
                  installation_id=job["id"], new_date=iso(wanted))
            d.reply(f"Your installation is moved to {iso(wanted)}, free of charge.")
            d.mention("states_new_date", must=[iso(wanted)])
            request = "move the installation appointment"
        elif branch == "reschedule_too_late":
            d.reply(f"Your installation on {iso(day)} is less than 2 days away and already routed, so I can't move it; it stays as booked.")
            d.mention("keeps_appointment", must=[iso(day)], must_not=[r"moved to"])
            request = "change the date of my installation"
        elif branch == "revisit":
            d.act("schedule_revisit", installation_id=job["id"], visit_date=iso(wanted))
            status = "hold"
            d.reply(f"I've booked a free revisit on {iso(wanted)} to fix the installation of your {product}; your ticket stays on hold until then.")
            d.mention("states_revisit_date", must=[iso(wanted)])
            d.fact(problem, unlock=problem_words)
            request = "get someone to fix what the installer did"
        elif branch == "revisit_too_old":
            d.reply(f"Your {product} was installed on {iso(day)}, more than 30 days ago, so a free revisit isn't possible; the manufacturer warranty covers faults from here.")
            d.mention("refuses_revisit", must=[r"30 days"], must_not=[r"booked"])
            d.fact(problem, unlock=problem_words)
            request = "get someone to fix what the installer did"
        else:
            late = branch == "cancel_late_charge"
            charge: dict[str, Any] = {"late_cancellation_charge": float(LATE_CANCEL_CHARGE)} if late else {}
            d.act("cancel_installation", idempotent="a cancelled installation cannot be cancelled again", installation_id=job["id"], **charge)
            refund = INSTALL_FEE - (LATE_CANCEL_CHARGE if late else 0)
            d.act("refund_order_amount", order_id=ids["order"], amount=float(refund), reason="installation_cancelled")
            if late:
                d.reply(f"The {usd(LATE_CANCEL_CHARGE, grouped=False)} late-cancellation charge applies because the appointment was less than 2 days away, "
                        f"so I've cancelled the installation and refunded {usd(refund, grouped=False)} of the installation fee.")
                d.mention("states_refund", must=[amount_pattern(money(refund)), amount_pattern(money(LATE_CANCEL_CHARGE))])
            else:
                d.reply(f"I've cancelled the installation and refunded {usd(refund, grouped=False)} of the installation fee.")
                d.mention("states_refund", must=[amount_pattern(money(refund))])
            d.fact("I'll install it myself and keep the product.", unlock=["keep", "product", "return"])
            request = "cancel the installation but keep the product"
        d.open_ticket(ids["ticket_user"], f"Installation {ids['order']}", "order", status, ids["order"])
        if asks_date:
            d.question("Which day would suit you for the visit? Installers come Monday to Saturday.")
        if branch.startswith("revisit"):
            d.question("What is the problem with the installation?")
        self.open(d, rng, order=ids["order"], email=email, product=product, request=request)
        d.description = f"Installation service, branch '{branch}'."
        d.intent = f"{request[0].upper()}{request[1:]}."
        d.tags = ["installation", branch]
        return d


class CancelWithInstallation(CareFamily):
    code = "ST013"
    name = "cancel_with_installation"
    number = 13
    description = "Order cancellation by status: with a scheduled installation, after a label is created (shipping fee kept), or refused once shipped or delivered."
    branches = ("cancel_with_installation", "cancel_label_keep_shipping", "shipped_refuse", "delivered_refuse", "already_cancelled")
    # the frozen test set: every action branch, the refusals the two-request family does not cover
    TEST_BRANCHES = ("cancel_with_installation", "cancel_label_keep_shipping", "shipped_refuse")
    OPENINGS = openings.ST013
    SECTION = "policy#cancelling-orders-with-installation-or-a-shipping-label"
    WHY = {"cancel_order.reason": "policy#cancelling-an-order", "issue_refund.amount": "record:get_order"}

    def draw(self, rng: random.Random, seed: int) -> RetailDraft:
        branch = self.branch(seed)
        d, ids, name, email = self.start(rng, seed)
        sku = rng.choice(INSTALLABLE)
        with_install = branch != "cancel_label_keep_shipping"
        products = [item(sku), INSTALL_SKU] if with_install else [item(rng.choice(["BW-SB200", "BW-VAC-X2", "BW-HP-NC7", "BW-RTR-6", "BW-MW-25"]))]
        status = {"shipped_refuse": "shipped", "delivered_refuse": "delivered", "already_cancelled": "cancelled"}.get(branch, "processing")
        placed = NOW - timedelta(days=rng.randint(1, 4), hours=rng.randint(1, 8))
        order = self.placed_order(d, rng, ids, status, placed, products)
        if branch == "cancel_label_keep_shipping":
            order["shipping_speed"] = "express"
            order["shipping_fee"] = "19.99"
            order["total"] = money(Decimal(order["subtotal"]) + Decimal("19.99"))
            d.rows("payments")[0]["amount"] = order["total"]
            d.add("shipments", {"id": ids["shipment"], "order_id": ids["order"], "carrier": rng.choice(["Parcelway", "SwiftFreight"]),
                                "tracking_number": f"TRK{rng.randint(10**8, 10**9 - 1)}", "status": "label_created",
                                "promised_date": iso(TODAY + timedelta(days=2)), "delivered_at": None})
            d.add("tracking_events", {"shipment_id": ids["shipment"], "seq": 1, "event_time": ts(NOW - timedelta(hours=rng.randint(2, 9))),
                                      "location": "Reno, NV", "description": "Shipping label created"})
        elif status in ("shipped", "delivered"):
            ship, events = self.shipment(rng, ids, "in_transit" if status == "shipped" else "delivered", placed, placed + timedelta(days=5),
                                         delivered=NOW - timedelta(hours=rng.randint(5, 20)) if status == "delivered" else None)
            d.add("shipments", ship)
            d.add("tracking_events", *events)
        if branch == "already_cancelled":
            order["cancelled_at"] = ts(NOW - timedelta(hours=rng.randint(3, 20)))
            order["cancel_reason"] = "customer_request"
            d.add("refunds", {"id": f"RFD-{ids['uid']}", "payment_id": ids["payment"], "order_id": ids["order"], "amount": order["total"],
                              "reason": "order_cancelled", "created_at": order["cancelled_at"]})
        if with_install:
            install_status = "cancelled" if branch == "already_cancelled" else "scheduled"
            d.add("installations", _installation(ids, install_status, iso(day_after(rng.randint(4, 12)))))
        d.identify(email)
        d.read("get_order", order_id=ids["order"])
        if with_install:
            d.read("get_installations", order_id=ids["order"])
        if status != "processing" or branch == "cancel_label_keep_shipping":
            d.read("get_shipment" if status != "cancelled" else "get_payments", order_id=ids["order"])
        d.find_tickets(ids["ticket_user"])
        product = CATALOG[products[0][0]][0]
        if status == "processing":
            d.read("get_payments", order_id=ids["order"])
            d.act("cancel_order", idempotent="a cancelled order cannot be cancelled again", order_id=ids["order"], reason="customer_request")
            if with_install:
                d.act("cancel_installation", idempotent="a cancelled installation cannot be cancelled again", installation_id=f"INS-{ids['uid']}")
                refund = Decimal(order["total"])
            else:
                refund = Decimal(order["subtotal"])
            d.act("issue_refund", idempotent="what is left on the payment is less than the refund, so a second one is refused",
                  payment_id=ids["payment"], amount=float(refund), reason="order_cancelled")
            if with_install:
                d.reply(f"Order {ids['order']} is cancelled, the installation is cancelled too, and {usd(refund, grouped=False)} is refunded to your card.")
            else:
                d.reply(f"Order {ids['order']} is cancelled. A shipping label was already created, so the {usd(order['shipping_fee'], grouped=False)} "
                        f"express shipping fee is not refundable; I refunded {usd(refund, grouped=False)} to your card.")
            d.mention("states_refund", must=[amount_pattern(money(refund))])
        elif branch == "already_cancelled":
            d.reply(f"Order {ids['order']} was already cancelled and its {usd(order['total'], grouped=False)} refund has been issued; the installation is cancelled as well.")
            d.mention("says_already_cancelled", must=[r"already"])
        else:
            d.reply(f"Order {ids['order']} is already {status}, so it can't be cancelled. Once you have it, you can return the {product} within the return window.")
            d.mention("refuses_cancellation", must=[r"can't be cancelled|cannot be cancelled"], must_not=[r"is cancelled"])
        d.open_ticket(ids["ticket_user"], f"Cancel order {ids['order']}", "order", "solved", ids["order"])
        self.open(d, rng, order=ids["order"], email=email, product=product)
        d.email_fact(email)
        d.order_fact(ids["order"])
        d.description = f"Cancellation with installation or label, branch '{branch}'."
        d.intent = "Cancel the order and get the money back."
        d.tags = ["order", branch]
        return d


class OrderChanges(CareFamily):
    code = "ST014"
    name = "address_and_speed_change"
    number = 14
    description = "Address and shipping-speed changes, possible only before a shipping label exists; express upgrades charged by tier."
    branches = ("address_change", "address_label_refuse", "address_shipped_refuse", "express_standard", "express_plus", "express_label_refuse")
    # the frozen test set: every action branch, the refusals the two-request family does not cover
    TEST_BRANCHES = ("address_change", "address_label_refuse", "express_standard", "express_plus")
    OPENINGS = openings.ST014
    SECTION = "policy#address-and-shipping-speed-changes"
    WHY = {"upgrade_fee": "kb/shipping_changes.md", "shipping_speed": "customer"}

    def draw(self, rng: random.Random, seed: int) -> RetailDraft:
        branch = self.branch(seed)
        tier = "plus" if branch == "express_plus" else "standard"
        d, ids, name, email = self.start(rng, seed, tier=tier)
        status = "shipped" if branch == "address_shipped_refuse" else "processing"
        placed = NOW - timedelta(hours=rng.randint(2, 40))
        products = [item(s) for s in rng.sample(list(CATALOG), rng.randint(1, 2)) if not s.startswith("SVC")]
        self.placed_order(d, rng, ids, status, placed, products, tier)
        label = branch.endswith("label_refuse")
        if label or status == "shipped":
            d.add("shipments", {"id": ids["shipment"], "order_id": ids["order"], "carrier": rng.choice(["Parcelway", "Northline Post"]),
                                "tracking_number": f"TRK{rng.randint(10**8, 10**9 - 1)}", "status": "label_created" if label else "in_transit",
                                "promised_date": iso(TODAY + timedelta(days=4)), "delivered_at": None})
            d.add("tracking_events", {"shipment_id": ids["shipment"], "seq": 1, "event_time": ts(placed + timedelta(hours=1)),
                                      "location": "Reno, NV", "description": "Shipping label created" if label else "Picked up by carrier"})
        city, state, zip_code = rng.choice(CITIES)
        new_address = f"{rng.randint(10, 999)} {rng.choice(STREETS)}, Apt {rng.randint(1, 40)}, {city}, {state} {zip_code}"
        d.identify(email)
        d.read("get_order", order_id=ids["order"])
        if label or status == "shipped":
            d.read("get_shipment", order_id=ids["order"])
        d.find_tickets(ids["ticket_user"])
        address_request = branch.startswith("address")
        d.email_fact(email)
        d.order_fact(ids["order"])
        if address_request:
            d.fact(f"The new address is {new_address}.", unlock=ADDRESS_WORDS)
            d.question("What is the complete new address, with the apartment number if there is one?")
            self.open(d, rng, order=ids["order"], email=email, request="change the delivery address")
        else:
            self.open(d, rng, order=ids["order"], email=email, request="switch the shipping to express")
            # an opening that only asks to "change my order" leaves the change unsaid (a two-request opening names it)
            if not self.in_combo and "express" not in d.opening.lower():
                d.fact("I'd like the order to ship express instead of standard.",
                       unlock=["what change", "which change", "what would you like", "what exactly", "shipping", "speed", "express"])
                d.question("What would you like to change on the order?")
        if branch == "address_change":
            d.act("update_shipping_address", idempotent="setting the same address again changes nothing", order_id=ids["order"],
                  shipping_address=new_address)
            d.reply(f"Done: order {ids['order']} will now be delivered to {new_address}.")
            d.mention("confirms_address", must=[amount_pattern(new_address.split(",")[0])])
        elif branch in ("express_standard", "express_plus"):
            fee = Decimal("7.99") if tier == "plus" else Decimal("14.99")
            d.act("change_shipping_speed", idempotent="an order that already ships express cannot be upgraded again",
                  order_id=ids["order"], shipping_speed="express", upgrade_fee=float(fee))
            d.reply(f"Order {ids['order']} now ships express; the upgrade fee of {usd(fee, grouped=False)} has been charged.")
            d.mention("states_fee", must=[amount_pattern(money(fee))])
            d.states("shipping.speed")
        else:
            why = "a shipping label has already been created" if label else "it has already shipped"
            change = "address" if address_request else "shipping speed"
            d.reply(f"I'm sorry, the {change} of order {ids['order']} can't be changed any more because {why}.")
            d.mention("refuses_change", must=[r"can't be changed"], must_not=[r"\bnow\b"])
        d.open_ticket(ids["ticket_user"], f"Change to order {ids['order']}", "order", "solved", ids["order"])
        d.description = f"Address or shipping-speed change, branch '{branch}'."
        d.intent = "Change the order's delivery."
        d.tags = ["order", branch]
        return d
