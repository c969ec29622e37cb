"""Order families: cancellations, installation jobs, cancellations with installation or a label, address and speed changes."""

from __future__ import annotations

import random
from datetime import timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from ..rules import CATALOG, INSTALL_FEE, INSTALL_SKU, INSTALLABLE, LATE_CANCEL_CHARGE, NOW, TODAY, day_after, money
from . import openings
from ._base import ADDRESS_WORDS, CITIES, STREETS, CareFamily, RetailFamily, dollars, item, rx, ts

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

    def draw(self, rng: random.Random, seed: int) -> dict[str, Any]:
        branch = self.branch(seed)
        ids = self.ids(seed)
        name, email = self.person(rng)
        placed = NOW - timedelta(days=rng.randint(1, 3), hours=rng.randint(1, 8))
        status = {"refuse_shipped": "shipped", "delivered_return_instead": "delivered"}.get(branch, "processing")
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
        rubric: list[dict[str, str]] = []
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
        elif status == "delivered":
            # too late to cancel; the customer takes the return the policy offers instead (their only order: no fees)
            lines = [i["line_no"] for i in items]
            golden.append({"name": "get_shipment", "arguments": {"order_id": ids["order"]}})
            golden.append({"name": "create_return", "arguments": {"order_id": ids["order"], "line_nos": lines, "reason": "changed_mind"},
                           "why": {"order_id": "record:get_order", "line_nos": "customer", "reason": "customer"}})
            idempotent[len(golden) - 1] = "a second return of the same lines is refused"
            golden.append({"name": "create_ticket", "arguments": {"requester_id": requester, "subject": f"Cancellation request for {ids['order']}", "category": "order", "status": "solved", "order_id": ids["order"]}})
            refund = order["subtotal"]
            reply = (f"Order {ids['order']} was already delivered, so it can't be cancelled. I've opened a return for it instead; as it's your "
                     f"first order with us there are no return fees, and ${refund} goes back to your card.")
            dialogue = [{"name": "states_refund", "must": [rx(refund)], "must_not": [r"is cancelled"]}]
            self.ask("It has already been delivered, so it can't be cancelled, but I can open a return instead. Would you like that, "
                     "and is everything still unopened?", before="create_return")
        else:
            golden.append({"name": "create_ticket", "arguments": {"requester_id": requester, "subject": f"Cancellation request for {ids['order']}", "category": "order", "status": "solved", "order_id": ids["order"]}})
            reply = f"Order {ids['order']} has already been {status}, so it can no longer be cancelled. You can return the items after delivery for a refund."
            dialogue = [{"name": "offers_return", "must": [r"return"]}]
            rubric = [{"name": "explains_return_route", "question": "Does the agent explain that the order can no longer be cancelled because it has "
                       f"already been {status}, and that the customer can instead return the items once delivered, without claiming the order was cancelled?"}]
        return {
            "description": f"Order cancellation, branch '{branch}' (order {status}).",
            "user": {
                "opening": self.open(rng, order=ids["order"], email=email, product=items[0]["product_name"]),
                "facts": [self.email_fact(email), self.order_fact(ids["order"]), self.name_fact(name)] + ([
                    {"text": "Everything is still sealed in the box.", "unlock": ["sealed", "opened", "unopened", "condition", "used"]},
                    {"text": "Yes, a return is fine, as long as I get my money back.", "unlock": ["return", "send it back", "instead"]},
                ] if status == "delivered" else []),
                "intent": "Cancel the order and get the money back.",
            },
            "patch": patch,
            "golden": golden,
            "golden_reply": reply,
            "checks": {"dialogue": dialogue, "rubric": rubric},
            "idempotent_writes": idempotent,
            "tags": ["order", branch],
        }




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

    def draw(self, rng: random.Random, seed: int) -> dict[str, Any]:
        branch = self.branch(seed)
        ids, name, email, patch = self.start(rng, seed)
        sku = rng.choice(INSTALLABLE)
        completed_days = rng.randint(3, 25) if branch == "revisit" else rng.randint(35, 60)
        scheduled = branch not in ("revisit", "revisit_too_old")
        order, delivered = self.delivered_order(rng, ids, patch, [item(sku), INSTALL_SKU], rng.randint(1, 6) if scheduled else completed_days + 1)
        if scheduled:
            day = day_after(1) if branch in ("reschedule_too_late", "cancel_late_charge") else day_after(rng.randint(3, 10))
            job = _installation(ids, "scheduled", day.isoformat())
        else:
            done = NOW - timedelta(days=completed_days, hours=rng.randint(1, 5))
            day = done.date()
            job = _installation(ids, "completed", day.isoformat(), ts(done))
        self.add(patch, "installations", job)
        wanted = day_after(rng.randint(3, 15))
        while wanted == day:
            wanted = day_after((wanted - TODAY).days + 1)
        golden = self.identify(email) + [
            {"name": "get_order", "arguments": {"order_id": ids["order"]}},
            {"name": "get_installations", "arguments": {"order_id": ids["order"]}},
            self.find_tickets(ids),
        ]
        idempotent: dict[int, str] = {}
        product = CATALOG[sku][0]
        status = "solved"
        facts = [self.email_fact(email), self.order_fact(ids["order"])]
        date_fact = {"text": f"{wanted.strftime('%A')} {wanted.isoformat()} would suit me.", "unlock": ["date", "day", "when"]}
        if branch == "reschedule":
            golden.append({"name": "reschedule_installation", "arguments": {"installation_id": job["id"], "new_date": wanted.isoformat()}})
            idempotent[len(golden) - 1] = "moving the appointment to the same day again is refused"
            reply = f"Your installation is moved to {wanted.isoformat()}, free of charge."
            dialogue = [{"name": "states_new_date", "must": [wanted.isoformat()]}]
            facts.append(date_fact)
            request = "move the installation appointment"
        elif branch == "reschedule_too_late":
            reply = f"Your installation on {day.isoformat()} is less than 2 days away and already routed, so I can't move it; it stays as booked."
            dialogue = [{"name": "keeps_appointment", "must": [day.isoformat()], "must_not": [r"moved to"]}]
            facts.append(date_fact)
            request = "change the date of my installation"
        elif branch == "revisit":
            golden.append({"name": "schedule_revisit", "arguments": {"installation_id": job["id"], "visit_date": wanted.isoformat()}})
            status = "hold"
            reply = f"I've booked a free revisit on {wanted.isoformat()} to fix the installation of your {product}; your ticket stays on hold until then."
            dialogue = [{"name": "states_revisit_date", "must": [wanted.isoformat()]}]
            facts.append(date_fact)
            facts.append({"text": "Since the installation there's a leak at the connection the installer fitted.", "unlock": ["what", "problem", "issue", "describe", "wrong"]})
            request = "get someone to fix what the installer did"
        elif branch == "revisit_too_old":
            reply = f"Your {product} was installed on {day.isoformat()}, more than 30 days ago, so a free revisit isn't possible; the manufacturer warranty covers faults from here."
            dialogue = [{"name": "refuses_revisit", "must": [r"30 days"], "must_not": [r"booked"]}]
            facts.append({"text": "Since the installation there's a leak at the connection the installer fitted.", "unlock": ["what", "problem", "issue", "describe", "wrong"]})
            request = "get someone to fix what the installer did"
        else:
            late = branch == "cancel_late_charge"
            cancel_args: dict[str, Any] = {"installation_id": job["id"]}
            if late:
                cancel_args["late_cancellation_charge"] = float(LATE_CANCEL_CHARGE)
            golden.append({"name": "cancel_installation", "arguments": cancel_args})
            idempotent[len(golden) - 1] = "a cancelled installation cannot be cancelled again"
            refund = INSTALL_FEE - (LATE_CANCEL_CHARGE if late else 0)
            golden.append({"name": "refund_order_amount", "arguments": {"order_id": ids["order"], "amount": float(refund), "reason": "installation_cancelled"}})
            if late:
                reply = (f"The ${money(LATE_CANCEL_CHARGE)} late-cancellation charge applies because the appointment was less than 2 days away, "
                         f"so I've cancelled the installation and refunded {dollars(refund)} of the installation fee.")
                dialogue = [{"name": "states_refund", "must": [rx(money(refund)), rx(money(LATE_CANCEL_CHARGE))]}]
            else:
                reply = f"I've cancelled the installation and refunded {dollars(refund)} of the installation fee."
                dialogue = [{"name": "states_refund", "must": [rx(money(refund))]}]
            facts.append({"text": "I'll install it myself and keep the product.", "unlock": ["keep", "product", "return"]})
            request = "cancel the installation but keep the product"
        golden.append(self.ticket(ids, f"Installation {ids['order']}", "order", status, ids["order"]))
        if any(f["text"] == date_fact["text"] for f in facts):
            self.ask("Which day would suit you for the visit? Installers come Monday to Saturday.")
        if branch.startswith("revisit"):
            self.ask("What is the problem with the installation?")
        rubric = []
        if branch in ("reschedule_too_late", "revisit_too_old"):
            rubric = [{"name": "explains_refusal", "question": "Does the agent explain the specific timing rule that prevents the request "
                       "(less than 2 days' notice for a reschedule, or more than 30 days since the installation for a free revisit) "
                       "and avoid promising that the appointment was moved or a revisit booked?"}]
        opening = self.open(rng, order=ids["order"], email=email, product=product, request=request)
        return self.body(f"Installation service, branch '{branch}'.", opening, facts, f"{request[0].upper()}{request[1:]}.",
                         patch, golden, reply, dialogue, idempotent, ["installation", branch], rubric)


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

    def draw(self, rng: random.Random, seed: int) -> dict[str, Any]:
        branch = self.branch(seed)
        ids, name, email, patch = self.start(rng, seed)
        sku = rng.choice(INSTALLABLE)
        with_install = branch != "cancel_label_keep_shipping"
        products = [item(sku), INSTALL_SKU] if with_install else [item(rng.choice(["BW-SB200", "BW-VAC-X2", "BW-HP-NC7", "BW-RTR-6", "BW-MW-25"]))]
        status = {"shipped_refuse": "shipped", "delivered_refuse": "delivered", "already_cancelled": "cancelled"}.get(branch, "processing")
        placed = NOW - timedelta(days=rng.randint(1, 4), hours=rng.randint(1, 8))
        order = self.placed_order(rng, ids, patch, status, placed, products)
        if branch == "cancel_label_keep_shipping":
            order["shipping_speed"] = "express"
            order["shipping_fee"] = "19.99"
            order["total"] = money(Decimal(order["subtotal"]) + Decimal("19.99"))
            patch["insert"]["payments"][0]["amount"] = order["total"]
            self.add(patch, "shipments", {"id": ids["shipment"], "order_id": ids["order"], "carrier": rng.choice(["Parcelway", "SwiftFreight"]),
                                          "tracking_number": f"TRK{rng.randint(10**8, 10**9 - 1)}", "status": "label_created",
                                          "promised_date": (TODAY + timedelta(days=2)).isoformat(), "delivered_at": None})
            self.add(patch, "tracking_events", {"shipment_id": ids["shipment"], "seq": 1, "event_time": ts(NOW - timedelta(hours=rng.randint(2, 9))),
                                                "location": "Reno, NV", "description": "Shipping label created"})
        elif status in ("shipped", "delivered"):
            ship, events = self.shipment(rng, ids, "in_transit" if status == "shipped" else "delivered", placed, placed + timedelta(days=5),
                                         delivered=NOW - timedelta(hours=rng.randint(5, 20)) if status == "delivered" else None)
            self.add(patch, "shipments", ship)
            self.add(patch, "tracking_events", *events)
        if branch == "already_cancelled":
            order["cancelled_at"] = ts(NOW - timedelta(hours=rng.randint(3, 20)))
            order["cancel_reason"] = "customer_request"
            self.add(patch, "refunds", {"id": f"RFD-{ids['uid']}", "payment_id": ids["payment"], "order_id": ids["order"], "amount": order["total"],
                                        "reason": "order_cancelled", "created_at": order["cancelled_at"]})
        if with_install:
            install_status = "cancelled" if branch == "already_cancelled" else "scheduled"
            self.add(patch, "installations", _installation(ids, install_status, day_after(rng.randint(4, 12)).isoformat()))
        golden = self.identify(email) + [{"name": "get_order", "arguments": {"order_id": ids["order"]}}]
        if with_install:
            golden.append({"name": "get_installations", "arguments": {"order_id": ids["order"]}})
        if status != "processing" or branch == "cancel_label_keep_shipping":
            golden.append({"name": "get_shipment", "arguments": {"order_id": ids["order"]}} if status != "cancelled" else
                          {"name": "get_payments", "arguments": {"order_id": ids["order"]}})
        golden.append(self.find_tickets(ids))
        idempotent: dict[int, str] = {}
        product = CATALOG[products[0][0]][0]
        if status == "processing":
            golden.append({"name": "get_payments", "arguments": {"order_id": ids["order"]}})
            golden.append({"name": "cancel_order", "arguments": {"order_id": ids["order"], "reason": "customer_request"}})
            idempotent[len(golden) - 1] = "a cancelled order cannot be cancelled again"
            if with_install:
                golden.append({"name": "cancel_installation", "arguments": {"installation_id": f"INS-{ids['uid']}"}})
                idempotent[len(golden) - 1] = "a cancelled installation cannot be cancelled again"
                refund = Decimal(order["total"])
            else:
                refund = Decimal(order["subtotal"])
            golden.append({"name": "issue_refund", "arguments": {"payment_id": ids["payment"], "amount": float(refund), "reason": "order_cancelled"}})
            idempotent[len(golden) - 1] = "what is left on the payment is less than the refund, so a second one is refused"
            if with_install:
                reply = f"Order {ids['order']} is cancelled, the installation is cancelled too, and {dollars(refund)} is refunded to your card."
            else:
                reply = (f"Order {ids['order']} is cancelled. A shipping label was already created, so the {dollars(order['shipping_fee'])} express shipping fee "
                         f"is not refundable; I refunded {dollars(refund)} to your card.")
            dialogue = [{"name": "states_refund", "must": [rx(money(refund))]}]
        elif branch == "already_cancelled":
            reply = f"Order {ids['order']} was already cancelled and its {dollars(order['total'])} refund has been issued; the installation is cancelled as well."
            dialogue = [{"name": "says_already_cancelled", "must": [r"already"]}]
        else:
            reply = (f"Order {ids['order']} is already {status}, so it can't be cancelled. Once you have it, you can return the {product} within the return window.")
            dialogue = [{"name": "refuses_cancellation", "must": [r"can't be cancelled|cannot be cancelled"], "must_not": [r"is cancelled"]}]
        golden.append(self.ticket(ids, f"Cancel order {ids['order']}", "order", "solved", ids["order"]))
        opening = self.open(rng, order=ids["order"], email=email, product=product)
        return self.body(f"Cancellation with installation or label, branch '{branch}'.", opening, [self.email_fact(email), self.order_fact(ids["order"])],
                         "Cancel the order and get the money back.", patch, golden, reply, dialogue, idempotent, ["order", branch])


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

    def draw(self, rng: random.Random, seed: int) -> dict[str, Any]:
        branch = self.branch(seed)
        tier = "plus" if branch == "express_plus" else "standard"
        ids, name, email, patch = self.start(rng, seed, tier=tier)
        status = "shipped" if branch == "address_shipped_refuse" else "processing"
        placed = NOW - timedelta(hours=rng.randint(2, 40))
        products = [item(s) for s in rng.sample(list(CATALOG), rng.randint(1, 2)) if not s.startswith("SVC")]
        self.placed_order(rng, ids, patch, status, placed, products, tier)
        label = branch.endswith("label_refuse")
        if label or status == "shipped":
            self.add(patch, "shipments", {"id": ids["shipment"], "order_id": ids["order"], "carrier": rng.choice(["Parcelway", "Northline Post"]),
                                          "tracking_number": f"TRK{rng.randint(10**8, 10**9 - 1)}", "status": "label_created" if label else "in_transit",
                                          "promised_date": (TODAY + timedelta(days=4)).isoformat(), "delivered_at": None})
            self.add(patch, "tracking_events", {"shipment_id": ids["shipment"], "seq": 1, "event_time": ts(placed + timedelta(hours=1)),
                                                "location": "Reno, NV", "description": "Shipping label created" if label else "Picked up by carrier"})
        city, state, zip_code = rng.choice(CITIES)
        new_address = f"{rng.randint(10, 999)} {rng.choice(STREETS)}, Apt {rng.randint(1, 40)}, {city}, {state} {zip_code}"
        golden = self.identify(email) + [{"name": "get_order", "arguments": {"order_id": ids["order"]}}]
        if label or status == "shipped":
            golden.append({"name": "get_shipment", "arguments": {"order_id": ids["order"]}})
        golden.append(self.find_tickets(ids))
        idempotent: dict[int, str] = {}
        address_request = branch.startswith("address")
        facts = [self.email_fact(email), self.order_fact(ids["order"])]
        if address_request:
            facts.append({"text": f"The new address is {new_address}.", "unlock": ADDRESS_WORDS})
            self.ask("What is the complete new address, with the apartment number if there is one?")
            opening = self.open(rng, order=ids["order"], email=email, request="change the delivery address")
        else:
            opening = self.open(rng, order=ids["order"], email=email, request="switch the shipping to express")
        if branch == "address_change":
            golden.append({"name": "update_shipping_address", "arguments": {"order_id": ids["order"], "shipping_address": new_address}})
            idempotent[len(golden) - 1] = "setting the same address again changes nothing"
            reply = f"Done: order {ids['order']} will now be delivered to {new_address}."
            dialogue = [{"name": "confirms_address", "must": [rx(new_address.split(",")[0])]}]
        elif branch in ("express_standard", "express_plus"):
            fee = Decimal("7.99") if tier == "plus" else Decimal("14.99")
            golden.append({"name": "change_shipping_speed", "arguments": {"order_id": ids["order"], "shipping_speed": "express", "upgrade_fee": float(fee)}})
            idempotent[len(golden) - 1] = "an order that already ships express cannot be upgraded again"
            reply = f"Order {ids['order']} now ships express; the upgrade fee of {dollars(fee)} has been charged."
            dialogue = [{"name": "states_fee", "must": [rx(money(fee))]}]
        else:
            why = "a shipping label has already been created" if label else "it has already shipped"
            change = "address" if address_request else "shipping speed"
            reply = f"I'm sorry, the {change} of order {ids['order']} can't be changed any more because {why}."
            dialogue = [{"name": "refuses_change", "must": [r"can't be changed"], "must_not": [r"\bnow\b"]}]
        golden.append(self.ticket(ids, f"Change to order {ids['order']}", "order", "solved", ids["order"]))
        return self.body(f"Address or shipping-speed change, branch '{branch}'.", opening, facts, "Change the order's delivery.",
                         patch, golden, reply, dialogue, idempotent, ["order", branch])


