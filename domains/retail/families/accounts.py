"""Account families: membership upgrade and cancellation, duplicate charges, ticket follow-ups, promotion disputes, reward points, refund follow-ups."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from ..rules import NOW, PROMOTIONS, TODAY, discount, money
from . import openings
from ._base import PRODUCTS, CareFamily, RetailFamily, dollars, item, rx, skus, ts

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

    def draw(self, rng: random.Random, seed: int) -> dict[str, Any]:
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
        rubric: list[dict[str, str]] = []
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
            # the score itself is withheld by verdicts.yaml (confidential column, matched as a whole value, so a year or a
            # date in the reply never counts as the score); ST030 stays judge-free: it is the family examples and smoke runs use
            dialogue.append({"name": "no_score_disclosed", "must": [r"not eligible"], "must_not": [r"\bscore\b"]})
        opening = self.open(rng, email=email, name=name)
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
            "checks": {"dialogue": dialogue, "rubric": rubric},
            "idempotent_writes": idempotent,
            "tags": ["membership", branch],
        }


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

    def draw(self, rng: random.Random, seed: int) -> dict[str, Any]:
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
                "opening": self.open(rng, order=ids["order"], email=email),
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

    def draw(self, rng: random.Random, seed: int) -> dict[str, Any]:
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
                "opening": self.open(rng, order=ids["order"], email=email, ticket=ticket_id),
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

    def draw(self, rng: random.Random, seed: int) -> dict[str, Any]:
        branch = self.branch(seed)
        ids, name, email, patch = self.start(rng, seed)
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
        order = self.placed_order(rng, ids, patch, "shipped", placed, [item(sku)])
        subtotal = Decimal(order["subtotal"])
        if existing:
            taken = discount(existing, subtotal)
            self.add(patch, "discount_applications", {"id": f"DSC-{ids['uid']}", "order_id": ids["order"], "code": existing, "amount": money(taken),
                                                      "source": "checkout", "created_at": ts(placed)})
            patch["insert"]["payments"][0]["amount"] = money(Decimal(order["total"]) - taken)
        golden = self.identify(email) + [
            {"name": "get_order", "arguments": {"order_id": ids["order"]}},
            {"name": "get_promotion", "arguments": {"code": code}},
            {"name": "get_order_discounts", "arguments": {"order_id": ids["order"]}},
            self.find_tickets(ids),
        ]
        idempotent: dict[int, str] = {}
        if branch in ("system_error", "stackable_added"):
            amount = discount(code, subtotal)
            golden.append({"name": "apply_promotion_adjustment", "arguments": {"order_id": ids["order"], "code": code, "amount": float(amount)}})
            idempotent[len(golden) - 1] = "a code already applied to the order is refused the second time"
            reply = f"You're right, {code} should have applied. I've applied it now and refunded {dollars(amount)} to your card."
            dialogue = [{"name": "states_adjustment", "must": [rx(money(amount))]}]
        else:
            why = {
                "not_stackable_refuse": f"{code} can't be combined with another discount, and your order already has {existing}",
                "expired_refuse": f"{code} ended on {PROMOTIONS[code]['valid_to']}, before your order was placed on {order['placed_at'][:10]}",
                "below_minimum_refuse": f"{code} needs a subtotal of at least ${PROMOTIONS[code]['min_subtotal']} and your order's subtotal is {dollars(subtotal)}",
                "members_only_refuse": f"{code} is for Brightwell Plus members only",
            }[branch]
            reply = f"The checkout was correct: {why}, so no discount is due."
            dialogue = [{"name": "explains_refusal", "must": [r"no discount"], "must_not": [r"refunded"]}]
        golden.append(self.ticket(ids, f"Promotion {code} on {ids['order']}", "payment", "solved", ids["order"]))
        facts = [self.email_fact(email), self.order_fact(ids["order"]), {"text": f"The code was {code}.", "unlock": ["code", "promo", "coupon", "which"]}]
        self.ask("Which discount code did you use?")
        opening = self.open(rng, order=ids["order"], email=email, code=code)
        rubric = []
        if not branch.startswith(("system", "stackable")):
            rubric = [{"name": "names_failed_condition", "question": "Does the agent name the specific condition of the promotion that the order does "
                       "not meet (stacking rule, validity dates, minimum subtotal or members-only) rather than a vague refusal?"}]
        return self.body(f"Promotion dispute, branch '{branch}'.", opening, facts, "Get the promised discount.",
                         patch, golden, reply, dialogue, idempotent, ["payment", branch], rubric)


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

    def draw(self, rng: random.Random, seed: int) -> dict[str, Any]:
        branch = self.branch(seed)
        member = branch in ("cancel_full_refund", "cancel_no_refund") or (branch.startswith("points") and rng.random() < 0.5)
        tier = "plus" if member else "standard"
        ids, name, email, patch = self.start(rng, seed, tier=tier)
        mid = f"MEM-{ids['uid']}"
        started = TODAY - timedelta(days=rng.randint(2, 13) if branch == "cancel_full_refund" else rng.randint(20, 200))
        if member:
            self.add(patch, "memberships", {"id": mid, "customer_id": ids["customer"], "plan": "plus", "status": "active", "start_date": started.isoformat(),
                                            "end_date": started.replace(year=started.year + 1).isoformat(), "annual_fee": "59.00", "auto_renew": True})
        earlier = rng.randint(200, 3000)
        self.add(patch, "reward_points", {"id": f"PTS-{ids['uid']}", "customer_id": ids["customer"], "points": earlier, "reason": "purchase",
                                          "order_id": None, "created_at": "2025-10-04 12:00:00"})
        golden = self.identify(email)
        idempotent: dict[int, str] = {}
        facts = [self.email_fact(email)]
        if branch.startswith("cancel"):
            golden.append({"name": "get_membership", "arguments": {"customer_id": ids["customer"]}})
            golden.append(self.find_tickets(ids))
            request = "cancel my Brightwell Plus membership"
            category, subject = "membership", "Cancel Brightwell Plus"
            if branch == "cancel_not_member":
                reply = "Your account has no active Brightwell Plus membership, so there is nothing to cancel."
                dialogue = [{"name": "nothing_to_cancel", "must": [r"no active"]}]
            else:
                golden.append({"name": "update_membership", "arguments": {"customer_id": ids["customer"], "action": "cancel"}})
                idempotent[len(golden) - 1] = "a cancelled membership cannot be cancelled again"
                if branch == "cancel_full_refund":
                    golden.append({"name": "refund_membership_fee", "arguments": {"membership_id": mid, "amount": 59.0}})
                    idempotent[len(golden) - 1] = "the whole fee is refunded by the first call, so a second refund is refused"
                    reply = f"Your membership started on {started.isoformat()}, within 14 days, so it's cancelled and the full $59.00 fee is refunded."
                    dialogue = [{"name": "states_fee_refund", "must": [r"59\.00"]}]
                else:
                    reply = f"Your membership is cancelled. It started on {started.isoformat()}, more than 14 days ago, so the fee is not refundable."
                    dialogue = [{"name": "no_fee_refund", "must": [r"not refundable"], "must_not": [r"59\.00 (fee )?(is )?refunded"]}]
        else:
            category, subject = "membership", "Reward points question"
            golden.append({"name": "get_reward_points", "arguments": {"customer_id": ids["customer"]}})
            if branch == "points_balance":
                golden.append(self.find_tickets(ids))
                reply = f"You have {earlier} reward points."
                dialogue = [{"name": "states_balance", "must": [str(earlier)]}]
                request = "know how many reward points I have"
            else:
                sku = rng.choice(skus(40))
                placed = NOW - timedelta(days=rng.randint(6, 20))
                if branch == "points_missing":
                    order, _ = self.delivered_order(rng, ids, patch, [item(sku)], rng.randint(1, 4), tier)
                else:
                    order = self.placed_order(rng, ids, patch, "shipped", placed, [item(sku)], tier)
                    ship, events = self.shipment(rng, ids, "in_transit", placed, NOW + timedelta(days=2))
                    self.add(patch, "shipments", ship)
                    self.add(patch, "tracking_events", *events)
                golden += [{"name": "get_order", "arguments": {"order_id": ids["order"]}}, {"name": "get_shipment", "arguments": {"order_id": ids["order"]}}, self.find_tickets(ids)]
                facts.append(self.order_fact(ids["order"]))
                request = "get the reward points I'm missing for a recent order"
                self.ask("Which order are the points missing for?")
                points = int(Decimal(order["subtotal"])) * (2 if tier == "plus" else 1)
                if branch == "points_missing":
                    golden.append({"name": "adjust_reward_points", "arguments": {"customer_id": ids["customer"], "points": points, "order_id": ids["order"]}})
                    reply = f"Your order {ids['order']} was delivered but never credited; I've added {points} points, so your balance is now {earlier + points}."
                    dialogue = [{"name": "states_points", "must": [str(points)]}]
                else:
                    reply = f"Order {ids['order']} hasn't been delivered yet; its {points} points will be credited on delivery."
                    dialogue = [{"name": "explains_timing", "must": [r"delivered|delivery"], "must_not": [r"I've added"]}]
        # a points question about one order names the order on its ticket (policy: tickets)
        about_order = ids["order"] if branch in ("points_missing", "points_not_delivered") else None
        golden.append(self.ticket(ids, subject, category, "solved", about_order))
        opening = self.open(rng, email=email, request=request)
        return self.body(f"Membership and points, branch '{branch}'.", opening, facts, f"I want to {request}.",
                         patch, golden, reply, dialogue, idempotent, ["membership", branch])


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

    def draw(self, rng: random.Random, seed: int) -> dict[str, Any]:
        branch = self.branch(seed)
        ids, name, email, patch = self.start(rng, seed)
        escalate = branch.endswith("escalate") or branch == "new_after_old_solved"
        refund_days = rng.randint(9, 15) if escalate else rng.randint(2, 6)
        refunded_at = NOW - timedelta(days=refund_days, hours=rng.randint(1, 6))
        placed = refunded_at - timedelta(days=1, hours=rng.randint(1, 9))
        sku = rng.choice(skus(40))
        order = self.placed_order(rng, ids, patch, "cancelled", placed, [item(sku)])
        order["cancelled_at"] = ts(refunded_at)
        order["cancel_reason"] = "customer_request"
        self.add(patch, "refunds", {"id": f"RFD-{ids['uid']}", "payment_id": ids["payment"], "order_id": ids["order"], "amount": order["total"],
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
        ticket = {"id": ids["uid"], "requester_id": ids["ticket_user"], "subject": f"Cancel {ids['order']}", "description": "Order cancelled and refunded.",
                  "category": "order", "priority": "normal", "status": ticket_status, "order_id": ids["order"],
                  "created_at": ts(refunded_at - timedelta(hours=1)), "updated_at": ts(updated)}
        self.add(patch, "tickets", ticket)
        golden = self.identify(email) + [self.find_tickets(ids), {"name": "get_payments", "arguments": {"order_id": ids["order"]}}]
        idempotent: dict[int, str] = {}
        new_ticket = branch.startswith("new")
        if new_ticket:
            golden.append(self.ticket(ids, f"Refund not received {ids['order']}", "payment", "hold" if escalate else "solved", ids["order"],
                                      "high" if escalate else "normal"))
        else:
            args: dict[str, Any] = {"ticket_id": ids["uid"], "status": "hold" if escalate else "solved",
                                    "note": "Refund escalated to the payments team." if escalate else "Refund explained; within the 7-day window."}
            if escalate:
                args["priority"] = "high"
            golden.append({"name": "update_ticket", "arguments": args})
            idempotent[len(golden) - 1] = "setting the same status and priority again changes nothing"
        amount = dollars(order["total"])
        if escalate:
            reply = (f"Your refund of {amount} was issued on {ts(refunded_at)[:10]}, more than 7 days ago, so I've escalated it to our payments team "
                     "to trace it with your bank. Your ticket is on hold until they report back.")
            dialogue = [{"name": "escalates", "must": [r"escalat", rx(money(order["total"]))]}]
        else:
            reply = f"Your refund of {amount} was issued on {ts(refunded_at)[:10]}; card refunds take up to 7 days to appear, so it should reach you shortly."
            dialogue = [{"name": "explains_timing", "must": [r"7 days", rx(money(order["total"]))], "must_not": [r"escalat"]}]
        opening = self.open(rng, order=ids["order"], email=email)
        facts = [self.email_fact(email), self.order_fact(ids["order"]),
                 {"text": f"The ticket number is {ids['uid']}.", "unlock": ["ticket number", "ticket id", "ticket"]}]
        return self.body(f"Refund follow-up, branch '{branch}'.", opening, facts, "Find out where the refund is.",
                         patch, golden, reply, dialogue, idempotent, ["ticket", branch])

