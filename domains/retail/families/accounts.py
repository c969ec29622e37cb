"""Account families: membership upgrade and cancellation, duplicate charges, ticket follow-ups, promotion disputes, reward points, refund follow-ups."""

from __future__ import annotations

import random
import re
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from thinkingbox_env.authoring.saying import amount_pattern, iso, ts, usd

from ..rules import NOW, PROMOTIONS, TODAY, discount, money
from . import openings
from ._base import CareFamily, RetailFamily
from ._data import PRODUCTS, item, skus
from ._draft import USER_TWICE, RetailDraft

# --------------------------------------------------------------------------- ST030 membership


class MembershipUpgrade(RetailFamily):
    code = "ST030"
    name = "membership_upgrade"
    number = 30
    NEW_USERS = False
    description = "A customer asks to join Brightwell Plus."
    branches = ("upgrade", "upgrade_new_ticket_user", "already_active", "not_eligible", "rejoin_after_cancel")
    OPENINGS = openings.ST030
    SECTION = "policy#brightwell-plus-membership"
    WHY = {"create_ticket_user.name": "record:get_customer_profile", "create_ticket_user.email": "record:get_customer_profile",
           "update_membership.action": "customer",
           # the ticket this conversation opened a moment earlier (policy: tickets, a ticket can be created and then solved)
           "update_ticket.ticket_id": "policy#tickets"}

    def draw(self, rng: random.Random, seed: int) -> RetailDraft:
        branch = self.branch(seed)
        d = self.draft(seed)
        ids = self.ids(seed)
        name, email = self.person(rng)
        score = rng.randint(18, 39) if branch == "not_eligible" else rng.randint(45, 95)
        tier = "plus" if branch == "already_active" else "standard"
        d.add("customers", self.customer(ids, name, email, tier, score, rng))
        if branch != "upgrade_new_ticket_user":
            d.add("ticket_users", self.ticket_user(ids, name, email))
        if branch == "already_active":
            d.add("memberships", {"id": f"MEM-{ids['uid']}", "customer_id": ids["customer"], "plan": "plus", "status": "active",
                                  "start_date": "2025-09-14", "end_date": "2026-09-14", "annual_fee": "59.00", "auto_renew": True})
        elif branch == "rejoin_after_cancel":
            d.add("memberships", {"id": f"MEM-{ids['uid']}", "customer_id": ids["customer"], "plan": "plus", "status": "cancelled",
                                  "start_date": "2024-05-02", "end_date": "2025-01-10", "annual_fee": "59.00", "auto_renew": False})
        nxt = self.next_ids(d.patch)
        requester = nxt["ticket_users"] if branch == "upgrade_new_ticket_user" else ids["ticket_user"]
        d.identify(email)
        if branch == "upgrade_new_ticket_user":
            d.act("create_ticket_user", idempotent=USER_TWICE, name=name, email=email)
        d.read("get_membership", customer_id=ids["customer"])
        d.find_tickets(requester)
        if branch in ("upgrade", "upgrade_new_ticket_user", "rejoin_after_cancel"):
            d.act("create_ticket", requester_id=requester, subject="Upgrade to Brightwell Plus", category="membership", status="open")
            d.act("update_membership", idempotent="a second upgrade is refused while the new membership is active",
                  customer_id=ids["customer"], action="upgrade")
            d.act("update_ticket", idempotent="setting the same status again changes nothing",
                  ticket_id=nxt["tickets"], status="solved", note="Upgraded to Brightwell Plus.")
            d.reply("You are now a Brightwell Plus member: free standard shipping and reward points start today, and the membership runs until 2027-03-02.")
            d.mention("confirms_upgrade", must=[r"plus"], must_not=[r"not eligible"])
        elif branch == "already_active":
            d.act("create_ticket", requester_id=requester, subject="Brightwell Plus upgrade request", category="membership", status="solved")
            d.reply("Your Brightwell Plus membership is already active and runs until 2026-09-14, so no upgrade is needed.")
            d.mention("says_already_active", must=[r"already"])
        else:
            d.act("create_ticket", requester_id=requester, subject="Brightwell Plus upgrade request", category="membership", status="solved")
            d.reply("I'm sorry, your account is not eligible for a Brightwell Plus upgrade through chat at this time.")
            # the score itself is withheld by verdicts.yaml (confidential column, matched as a whole value, so a year or a
            # date in the reply never counts as the score); ST030 stays judge-free: it is the family examples and smoke runs use
            d.mention("no_score_disclosed", must=[r"not eligible"], must_not=[r"\bscore\b"])
        self.open(d, rng, email=email, name=name)
        d.email_fact(email)
        d.name_fact(name)
        d.description = f"Membership upgrade, branch '{branch}'."
        d.intent = "Join Brightwell Plus for free shipping and reward points."
        d.tags = ["membership", branch]
        return d


# --------------------------------------------------------------------------- ST002 duplicate charge


class DuplicateCharge(RetailFamily):
    code = "ST002"
    name = "duplicate_charge"
    number = 2
    description = "A customer reports being charged twice for one order."
    branches = ("duplicate", "no_duplicate", "already_refunded", "duplicate_late_second")
    # the frozen test set: every action branch, the refusals the two-request family does not cover
    TEST_BRANCHES = ("duplicate", "no_duplicate", "duplicate_late_second")
    OPENINGS = openings.ST002
    SECTION = "policy#duplicate-charges"
    WHY = {"issue_refund.amount": "record:get_payments", "issue_refund.payment_id": "record:get_payments"}

    def draw(self, rng: random.Random, seed: int) -> RetailDraft:
        branch = self.branch(seed)
        d = self.draft(seed)
        ids = self.ids(seed)
        name, email = self.person(rng)
        placed = NOW - timedelta(days=rng.randint(2, 6), hours=rng.randint(0, 6))
        order, items = self.order(rng, ids, "shipped", placed)
        payments = [self.payment(ids["payment"], ids, order["total"], placed)]
        if branch != "no_duplicate":
            gap = timedelta(hours=rng.randint(20, 23)) if branch == "duplicate_late_second" else timedelta(minutes=rng.randint(1, 30))
            payments.append(self.payment(ids["payment2"], ids, order["total"], placed + gap,
                                         status="refunded" if branch == "already_refunded" else "captured"))
        ship, events = self.shipment(rng, ids, "in_transit", placed, placed + timedelta(days=6))
        d.add("customers", self.customer(ids, name, email, rng=rng))
        self.ticketing(d, ids, name, email)
        d.add("orders", order)
        d.add("order_items", *items)
        d.add("payments", *payments)
        d.add("shipments", ship)
        d.add("tracking_events", *events)
        refunded_on = placed + timedelta(days=1)
        if branch == "already_refunded":
            d.add("refunds", {"id": f"RFD-{ids['uid']}", "payment_id": ids["payment2"], "order_id": ids["order"], "amount": order["total"],
                              "reason": "duplicate_charge", "created_at": ts(refunded_on)})
        d.identify(email)
        d.read("get_payments", order_id=ids["order"])
        d.find_tickets(ids["ticket_user"])
        if branch in ("duplicate", "duplicate_late_second"):
            d.act("issue_refund", idempotent="the duplicate payment is fully refunded by the first call",
                  payment_id=ids["payment2"], amount=float(order["total"]), reason="duplicate_charge")
            d.reply(f"You were charged twice for order {ids['order']}. I refunded the duplicate payment of {usd(order['total'], grouped=False)}; it will reach your card in 3 to 5 business days.")
            d.mention("mentions_refund", must=[r"refund"])
        elif branch == "already_refunded":
            d.reply(f"The second charge on order {ids['order']} was already refunded on {iso(refunded_on.date())}, so nothing more is due.")
            d.mention("says_already_refunded", must=[r"already"])
        else:
            d.reply(f"Order {ids['order']} has a single charge of {usd(order['total'], grouped=False)}; there is no duplicate to refund.")
            d.mention("no_refund_promised", must_not=[r"refunded the"])
        d.act("create_ticket", requester_id=ids["ticket_user"], subject=f"Possible double charge on {ids['order']}", category="payment",
              status="solved", order_id=ids["order"])
        self.open(d, rng, order=ids["order"], email=email)
        d.email_fact(email)
        d.order_fact(ids["order"])
        d.description = f"Duplicate charge, branch '{branch}'."
        d.intent = "Get a duplicate charge refunded."
        d.tags = ["payment", branch]
        return d


# --------------------------------------------------------------------------- ST004 ticket follow-up


class TicketFollowUp(RetailFamily):
    code = "ST004"
    name = "ticket_follow_up"
    number = 4
    NEW_USERS = False
    description = "A customer asks for news on an existing delivery ticket; the ticket is reused and its status set."
    branches = ("delivered_now", "still_delayed", "already_on_hold", "two_tickets")
    # the frozen test set: every action branch, the refusals the two-request family does not cover
    TEST_BRANCHES = ("delivered_now", "two_tickets")
    OPENINGS = openings.ST004
    SECTION = "policy#following-up-on-an-existing-ticket"

    def draw(self, rng: random.Random, seed: int) -> RetailDraft:
        branch = self.branch(seed)
        d = self.draft(seed)
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
        d.add("customers", self.customer(ids, name, email, rng=rng))
        self.ticketing(d, ids, name, email)
        d.add("orders", order)
        d.add("order_items", *items)
        d.add("payments", self.payment(ids["payment"], ids, order["total"], placed))
        d.add("shipments", ship)
        d.add("tracking_events", *events)
        d.add("tickets", *tickets)
        d.identify(email)
        d.read("search_tickets", table="tickets", filter=f"requester_id eq {ids['ticket_user']} and status ne 'solved'")
        d.read("get_shipment", order_id=ids["order"])
        last = events[-1]
        if delivered:
            d.act("update_ticket", idempotent="setting the same status again changes nothing", ticket_id=ticket_id, status="solved", note="Parcel delivered.")
            d.reply(f"Good news: order {ids['order']} was delivered on {last['event_time'][:10]}. I've closed out your ticket as solved.")
            d.mention("says_delivered", must=[r"delivered"])
        else:
            if branch == "still_delayed":
                d.act("update_ticket", idempotent="setting the same status again changes nothing", ticket_id=ticket_id, status="hold",
                      note="Waiting on carrier.")
            d.reply(f"Your parcel is still with the carrier; the latest update is '{last['description']}' in {last['location']}. Your ticket stays on hold until it is delivered.")
            d.mention("gives_latest_event", must=[last["location"].split(",")[0]])
        self.open(d, rng, order=ids["order"], email=email, ticket=ticket_id)
        d.email_fact(email)
        d.order_fact(ids["order"])
        d.ticket_fact(ticket_id)
        d.description = f"Ticket follow-up, branch '{branch}'."
        d.intent = "Get an update on the existing ticket about the late parcel."
        d.tags = ["ticket", branch]
        return d


class PromotionDispute(CareFamily):
    code = "ST015"
    name = "promotion_dispute"
    number = 15
    description = "A code that did not apply at checkout: adjust when it was a system error, explain when the terms or the stacking rule excluded it."
    branches = ("system_error", "stackable_added", "not_stackable_refuse", "expired_refuse", "below_minimum_refuse", "members_only_refuse")
    # the frozen test set: every action branch, the refusals the two-request family does not cover
    TEST_BRANCHES = ("system_error", "stackable_added", "not_stackable_refuse", "members_only_refuse")
    OPENINGS = openings.ST015
    SECTION = "policy#promotions-and-discount-disputes"
    WHY = {"apply_promotion_adjustment.amount": "record:get_promotion"}

    def draw(self, rng: random.Random, seed: int) -> RetailDraft:
        branch = self.branch(seed)
        d, ids, name, email = self.start(rng, seed)
        code, existing, low, high = {
            "system_error": ("SPRING15", None, 200, 10**6),
            "stackable_added": ("FREEHDMI", "EXTRA5", 300, 10**6),
            "not_stackable_refuse": ("SPRING15", "FREEHDMI", 300, 10**6),
            "expired_refuse": ("WINTER25", None, 250, 10**6),
            "below_minimum_refuse": ("SPRING15", None, 100, 200),
            "members_only_refuse": ("PLUSDAY20", None, 100, 10**6),
        }[branch]
        sku = rng.choice(skus(low, high))
        placed = NOW - timedelta(days=rng.randint(1, 9), hours=rng.randint(1, 8))
        order = self.placed_order(d, rng, ids, "shipped", placed, [item(sku)])
        subtotal = Decimal(order["subtotal"])
        if existing:
            taken = discount(existing, subtotal)
            d.add("discount_applications", {"id": f"DSC-{ids['uid']}", "order_id": ids["order"], "code": existing, "amount": money(taken),
                                            "source": "checkout", "created_at": ts(placed)})
            d.rows("payments")[0]["amount"] = money(Decimal(order["total"]) - taken)
        d.identify(email)
        d.read("get_order", order_id=ids["order"])
        d.read("get_promotion", code=code)
        d.read("get_order_discounts", order_id=ids["order"])
        d.find_tickets(ids["ticket_user"])
        if branch in ("system_error", "stackable_added"):
            amount = discount(code, subtotal)
            d.act("apply_promotion_adjustment", idempotent="a code already applied to the order is refused the second time",
                  order_id=ids["order"], code=code, amount=float(amount))
            d.reply(f"You're right, {code} should have applied. I've applied it now and refunded {usd(amount, grouped=False)} to your card.")
            d.mention("states_adjustment", must=[amount_pattern(money(amount))])
        else:
            why = {
                "not_stackable_refuse": f"{code} can't be combined with another discount, and your order already has {existing}",
                "expired_refuse": f"{code} ended on {PROMOTIONS[code]['valid_to']}, before your order was placed on {order['placed_at'][:10]}",
                "below_minimum_refuse": f"{code} needs a subtotal of at least {usd(PROMOTIONS[code]['min_subtotal'], grouped=False)} and your order's subtotal is {usd(subtotal, grouped=False)}",
                "members_only_refuse": f"{code} is for Brightwell Plus members only",
            }[branch]
            d.reply(f"The checkout was correct: {why}, so no discount is due.")
            d.mention("explains_refusal", must=[r"no discount"], must_not=[r"refunded"])
            condition = {"not_stackable_refuse": re.escape(str(existing)), "expired_refuse": str(PROMOTIONS[code]["valid_to"]),
                         "below_minimum_refuse": amount_pattern(money(PROMOTIONS[code]["min_subtotal"])), "members_only_refuse": r"members"}[branch]
            d.mention("names_failed_condition", must=[condition])
        d.open_ticket(ids["ticket_user"], f"Promotion {code} on {ids['order']}", "payment", "solved", ids["order"])
        d.email_fact(email)
        d.order_fact(ids["order"])
        d.fact(f"The code was {code}.", unlock=["code", "promo", "coupon", "which"])
        d.question("Which discount code did you use?")
        self.open(d, rng, order=ids["order"], email=email, code=code)
        d.description = f"Promotion dispute, branch '{branch}'."
        d.intent = "Get the promised discount."
        d.tags = ["payment", branch]
        return d


class MembershipAccount(CareFamily):
    code = "ST016"
    name = "membership_and_points"
    number = 16
    description = "Membership cancellation (fee refunded within 14 days) and reward-points questions (missing points credited once an order is delivered)."
    branches = ("cancel_full_refund", "cancel_no_refund", "cancel_not_member", "points_missing", "points_not_delivered", "points_balance")
    # the frozen test set: every action branch, the refusals the two-request family does not cover
    TEST_BRANCHES = ("cancel_full_refund", "cancel_no_refund", "cancel_not_member", "points_missing", "points_balance")
    OPENINGS = openings.ST016
    SECTION = "policy#membership-cancellation-and-reward-points"
    WHY = {"update_membership.action": "customer", "refund_membership_fee.amount": "record:get_membership"}

    def draw(self, rng: random.Random, seed: int) -> RetailDraft:
        branch = self.branch(seed)
        member = branch in ("cancel_full_refund", "cancel_no_refund") or (branch.startswith("points") and rng.random() < 0.5)
        tier = "plus" if member else "standard"
        d, ids, name, email = self.start(rng, seed, tier=tier)
        mid = f"MEM-{ids['uid']}"
        started = TODAY - timedelta(days=rng.randint(2, 13) if branch == "cancel_full_refund" else rng.randint(20, 200))
        if member:
            d.add("memberships", {"id": mid, "customer_id": ids["customer"], "plan": "plus", "status": "active", "start_date": iso(started),
                                  "end_date": iso(started.replace(year=started.year + 1)), "annual_fee": "59.00", "auto_renew": True})
        balance = rng.randint(200, 3000)
        d.add("reward_points", {"id": f"PTS-{ids['uid']}", "customer_id": ids["customer"], "points": balance, "reason": "purchase",
                                "order_id": None, "created_at": "2025-10-04 12:00:00"})
        d.identify(email)
        d.email_fact(email)
        if branch.startswith("cancel"):
            d.read("get_membership", customer_id=ids["customer"])
            d.find_tickets(ids["ticket_user"])
            request = "cancel my Brightwell Plus membership"
            category, subject = "membership", "Cancel Brightwell Plus"
            if branch == "cancel_not_member":
                d.reply("Your account has no active Brightwell Plus membership, so there is nothing to cancel.")
                d.mention("nothing_to_cancel", must=[r"no active"])
            else:
                d.act("update_membership", idempotent="a cancelled membership cannot be cancelled again", customer_id=ids["customer"], action="cancel")
                if branch == "cancel_full_refund":
                    d.act("refund_membership_fee", idempotent="the whole fee is refunded by the first call, so a second refund is refused",
                          membership_id=mid, amount=59.0)
                    d.reply(f"Your membership started on {iso(started)}, within 14 days, so it's cancelled and the full $59.00 fee is refunded.")
                    d.mention("states_fee_refund", must=[r"59\.00"])
                else:
                    d.reply(f"Your membership is cancelled. It started on {iso(started)}, more than 14 days ago, so the fee is not refundable.")
                    d.mention("no_fee_refund", must=[r"not refundable"], must_not=[r"59\.00 (fee )?(is )?refunded"])
        else:
            category, subject = "membership", "Reward points question"
            d.read("get_reward_points", customer_id=ids["customer"])
            if branch == "points_balance":
                d.find_tickets(ids["ticket_user"])
                d.reply(f"You have {balance} reward points.")
                d.mention("states_balance", must=[str(balance)])
                request = "know how many reward points I have"
            else:
                sku = rng.choice(skus(40))
                placed = NOW - timedelta(days=rng.randint(6, 20))
                if branch == "points_missing":
                    order, _ = self.delivered_order(d, rng, ids, [item(sku)], rng.randint(1, 4), tier)
                else:
                    order = self.placed_order(d, rng, ids, "shipped", placed, [item(sku)], tier)
                    ship, events = self.shipment(rng, ids, "in_transit", placed, NOW + timedelta(days=2))
                    d.add("shipments", ship)
                    d.add("tracking_events", *events)
                d.read("get_order", order_id=ids["order"])
                d.read("get_shipment", order_id=ids["order"])
                d.find_tickets(ids["ticket_user"])
                d.order_fact(ids["order"])
                request = "get the reward points I'm missing for a recent order"
                d.question("Which order are the points missing for?")
                points = int(Decimal(order["subtotal"])) * (2 if tier == "plus" else 1)
                if branch == "points_missing":
                    d.act("adjust_reward_points", customer_id=ids["customer"], points=points, order_id=ids["order"])
                    d.reply(f"Your order {ids['order']} was delivered but never credited; I've added {points} points, so your balance is now {balance + points}.")
                    d.mention("states_points", must=[str(points)])
                else:
                    d.reply(f"Order {ids['order']} hasn't been delivered yet; its {points} points will be credited on delivery.")
                    d.mention("explains_timing", must=[r"delivered|delivery"], must_not=[r"I've added"])
        # a points question about one order names the order on its ticket (policy: tickets)
        about_order = ids["order"] if branch in ("points_missing", "points_not_delivered") else None
        d.open_ticket(ids["ticket_user"], subject, category, "solved", about_order)
        self.open(d, rng, email=email, request=request)
        d.description = f"Membership and points, branch '{branch}'."
        d.intent = f"I want to {request}."
        d.tags = ["membership", branch]
        return d


class RefundFollowUp(CareFamily):
    code = "ST017"
    name = "refund_follow_up"
    number = 17
    NEW_USERS = False
    description = "A refund has not arrived: reuse an open ticket, reopen one solved within 7 days, or open a new one; wait or escalate by the refund's age."
    # every branch changes the ticket's status, priority or rows: a solved ticket reopened only to be solved again
    # would leave nothing to check but its timestamp, so the recent solved ticket is reopened for an escalation only
    branches = ("reuse_open_escalate", "reuse_pending_wait", "reopen_recent_escalate", "new_after_old_solved", "new_after_closed", "reuse_hold_wait")
    # the frozen test set: every action branch, the refusals the two-request family does not cover
    TEST_BRANCHES = ("reuse_open_escalate", "new_after_closed")
    OPENINGS = openings.ST017
    SECTION = "policy#reopening-and-follow-ups-on-solved-tickets"

    def draw(self, rng: random.Random, seed: int) -> RetailDraft:
        branch = self.branch(seed)
        d, ids, name, email = self.start(rng, seed)
        escalate = branch.endswith("escalate") or branch == "new_after_old_solved"
        refund_days = rng.randint(9, 15) if escalate else rng.randint(2, 6)
        refunded_at = NOW - timedelta(days=refund_days, hours=rng.randint(1, 6))
        placed = refunded_at - timedelta(days=1, hours=rng.randint(1, 9))
        sku = rng.choice(skus(40))
        order = self.placed_order(d, rng, ids, "cancelled", placed, [item(sku)])
        order["cancelled_at"] = ts(refunded_at)
        order["cancel_reason"] = "customer_request"
        d.add("refunds", {"id": f"RFD-{ids['uid']}", "payment_id": ids["payment"], "order_id": ids["order"], "amount": order["total"],
                          "reason": "order_cancelled", "created_at": ts(refunded_at)})
        ticket_status = {"reuse_open_escalate": "open", "reuse_hold_wait": "hold", "reuse_pending_wait": "pending",
                         "new_after_closed": "closed"}.get(branch, "solved")
        if branch == "new_after_old_solved":
            updated = refunded_at + timedelta(hours=1)
        elif branch == "reopen_recent_escalate":
            updated = NOW - timedelta(days=rng.randint(1, min(6, refund_days)), hours=rng.randint(1, 5))
            updated = max(updated, refunded_at + timedelta(hours=1))
        else:
            updated = refunded_at + timedelta(hours=1)
        if branch == "new_after_closed":
            updated = NOW - timedelta(days=rng.randint(1, 2))
        d.add("tickets", {"id": ids["uid"], "requester_id": ids["ticket_user"], "subject": f"Cancel {ids['order']}", "description": "Order cancelled and refunded.",
                          "category": "order", "priority": "normal", "status": ticket_status, "order_id": ids["order"],
                          "created_at": ts(refunded_at - timedelta(hours=1)), "updated_at": ts(updated)})
        d.identify(email)
        d.find_tickets(ids["ticket_user"])
        d.read("get_payments", order_id=ids["order"])
        if branch.startswith("new"):
            # an escalated refund carries the note the policy asks for, as the reused ticket's update does
            d.open_ticket(ids["ticket_user"], f"Refund not received {ids['order']}", "payment", "hold" if escalate else "solved", ids["order"],
                          "high" if escalate else "normal", note="Refund escalated to the payments team." if escalate else "")
        else:
            args: dict[str, Any] = {"ticket_id": ids["uid"], "status": "hold" if escalate else "solved",
                                    "note": "Refund escalated to the payments team." if escalate else "Refund explained; within the 7-day window."}
            if escalate:
                args["priority"] = "high"
            d.act("update_ticket", idempotent="setting the same status and priority again changes nothing", **args)
        amount = usd(order["total"], grouped=False)
        issued = iso(refunded_at.date())
        if escalate:
            d.reply(f"Your refund of {amount} was issued on {issued}, more than 7 days ago, so I've escalated it to our payments team "
                    "to trace it with your bank. Your ticket is on hold until they report back.")
            d.mention("escalates", must=[r"escalat", amount_pattern(money(order["total"]))])
        else:
            d.reply(f"Your refund of {amount} was issued on {issued}; card refunds take up to 7 days to appear, so it should reach you shortly.")
            d.mention("explains_timing", must=[r"7 days", amount_pattern(money(order["total"]))], must_not=[r"escalat"])
        self.open(d, rng, order=ids["order"], email=email)
        d.email_fact(email)
        d.order_fact(ids["order"])
        d.ticket_fact(ids["uid"])
        d.description = f"Refund follow-up, branch '{branch}'."
        d.intent = "Find out where the refund is."
        d.tags = ["ticket", branch]
        return d
