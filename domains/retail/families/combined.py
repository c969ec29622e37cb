"""Two requests in one conversation: two branches of other families, for the same customer.

The first request draws the customer; the second is drawn by its own family with
that customer's identity (``RetailFamily.identity``), so both drafts carry
identical customer and ticketing-user rows and the kit's ``TaskDraft.then`` keeps
them once. Pairs are chosen so that the second request does not depend on
anything the first one changes: its customer's tier and score do not decide it,
it names no id the first request's writes mint, and each request is about its
own order, so each gets its own ticket (policy: tickets).
"""

from __future__ import annotations

import random
import re
from typing import Any, ClassVar

from thinkingbox_env.authoring.saying import cap_first

from . import openings
from ._base import CareFamily, RetailFamily
from ._draft import RetailDraft
from .accounts import DuplicateCharge, MembershipAccount, PromotionDispute, RefundFollowUp, TicketFollowUp
from .orders import CancelWithInstallation, InstallationService, OrderCancellation, OrderChanges
from .returns import CosmeticPartialRefund, Exchange, ReturnWithFees, WarrantyClaim
from .shipping import LateDelivery, MissingPackage, ReturnToSender

# branch -> (first family, its branch, what the customer calls that request), (the same for the second), and the
# two requests as the customer puts them in one message, in the order they are handled
Part = tuple[type[RetailFamily], str, str]
PAIRS: dict[str, tuple[Part, Part, str]] = {
    "cancel_and_address": ((OrderCancellation, "cancel_processing", "the cancellation"),
                           (OrderChanges, "address_change", "the address change"),
                           "I want to cancel an order I placed this week, and on a different order I need the delivery address changed."),
    "late_credit_and_promo": ((LateDelivery, "credit_due", "the late parcel"),
                              (PromotionDispute, "system_error", "the promo code"),
                              "one of my parcels is days late, and on another order my promo code didn't come off the price."),
    "duplicate_and_return": ((DuplicateCharge, "duplicate", "the double charge"),
                             (ReturnWithFees, "unopened_changed_mind", "the return"),
                             "I think I was charged twice for one order, and once that's sorted I'd like to return something from another order."),
    "missing_and_exchange": ((MissingPackage, "replace_in_stock", "the missing parcel"),
                             (Exchange, "exchange_in_stock", "the exchange"),
                             "a parcel shows as delivered but never came, and I'd also like to swap an item from another order for its other version."),
    "cancel_refused_and_cosmetic": ((OrderCancellation, "refuse_shipped", "the cancellation"),
                                    (CosmeticPartialRefund, "partial_standard", "the scratched item"),
                                    "I want to cancel an order, and an item from another order arrived with a scratch, though I'll keep it."),
    "warranty_and_refund_followup": ((WarrantyClaim, "defect_repair", "the faulty item"),
                                     (RefundFollowUp, "reuse_open_escalate", "the refund"),
                                     "something I bought last year has stopped working, and the refund for an order I cancelled still hasn't reached me."),
    "return_refused_and_install": ((ReturnWithFees, "outside_window", "the return"),
                                   (InstallationService, "reschedule", "the installation"),
                                   "I'd like to send back something I bought a while ago, and I need to move the installation booked for another order."),
    "promo_refused_and_late": ((PromotionDispute, "expired_refuse", "the discount code"),
                               (LateDelivery, "credit_due", "the late order"),
                               "my discount code didn't work on one order, and a different order of mine is running late."),
    "cancel_install_and_duplicate": ((CancelWithInstallation, "cancel_with_installation", "the cancellation"),
                                     (DuplicateCharge, "duplicate", "the double charge"),
                                     "I want to cancel an order that has an installation booked, and I see two charges for a different order."),
    "missing_investigation_and_speed": ((MissingPackage, "investigate_high_value", "the missing parcel"),
                                        (OrderChanges, "express_standard", "the express upgrade"),
                                        "an expensive parcel shows as delivered but isn't here, and I'd like express shipping on a newer order."),
    "credited_late_and_exchange": ((LateDelivery, "already_credited", "the late parcel"),
                                   (Exchange, "exchange_in_stock", "the exchange"),
                                   "my parcel is still late even after your credit, and I'd like to swap an item from another order for its other version."),
    "small_late_and_missing": ((LateDelivery, "small_order", "the late order"),
                               (MissingPackage, "replace_in_stock", "the missing parcel"),
                               "a small order of mine is late, and another parcel says delivered but never came."),
    "late_exchange_and_cosmetic": ((Exchange, "outside_window", "the exchange"),
                                   (CosmeticPartialRefund, "partial_standard", "the scratched item"),
                                   "I'd like to exchange something I bought a while back, and an item from another order arrived scratched, but I'll keep that one."),
    "late_cosmetic_and_return": ((CosmeticPartialRefund, "outside_window", "the scratched item"),
                                 (ReturnWithFees, "opened_restocking", "the return"),
                                 "an item I got a while ago has a scratch, and I want to return something from another order."),
    "already_cancelled_and_missing": ((CancelWithInstallation, "already_cancelled", "the cancellation"),
                                      (MissingPackage, "replace_in_stock", "the missing parcel"),
                                      "I want to make sure an order of mine is cancelled, and a different parcel shows as delivered but isn't here."),
    "shipped_address_and_duplicate": ((OrderChanges, "address_shipped_refuse", "the address change"),
                                      (DuplicateCharge, "duplicate", "the double charge"),
                                      "I need to change where an order is going, and I think I was charged twice for another one."),
    "points_pending_and_promo": ((MembershipAccount, "points_not_delivered", "the reward points"),
                                 (PromotionDispute, "system_error", "the promo code"),
                                 "I'm missing reward points for one order, and a promo code didn't apply on another."),
    "refund_wait_and_cancel": ((RefundFollowUp, "reuse_hold_wait", "the refund"),
                               (OrderCancellation, "cancel_processing", "the cancellation"),
                               "the refund from a cancelled order hasn't reached me, and now I want to cancel a newer order too."),
    "promo_minimum_and_install_cancel": ((PromotionDispute, "below_minimum_refuse", "the discount code"),
                                         (InstallationService, "cancel_refund", "the installation"),
                                         "my discount code didn't work on one order, and on another I want to cancel the installation but keep the product."),
    "revisit_late_and_return": ((InstallationService, "revisit_too_old", "the installation"),
                                (ReturnWithFees, "unopened_changed_mind", "the return"),
                                "there's a problem with an installation from a while ago, and I'd like to return something from another order."),
    "refunded_twice_and_missing": ((DuplicateCharge, "already_refunded", "the double charge"),
                                   (MissingPackage, "replace_in_stock", "the missing parcel"),
                                   "I think I was charged twice for one order, and another parcel says delivered but never came."),
    "delayed_ticket_and_cosmetic": ((TicketFollowUp, "still_delayed", "the late parcel"),
                                    (CosmeticPartialRefund, "partial_standard", "the scratched item"),
                                    "I'm following up on my ticket about a late parcel, and an item from another order arrived scratched, though I'll keep it."),
    "held_ticket_and_promo": ((TicketFollowUp, "already_on_hold", "the late parcel"),
                              (PromotionDispute, "system_error", "the promo code"),
                              "I'm chasing my ticket about a late parcel, and a promo code didn't apply on another order."),
    "delivered_cancel_and_reship": ((CancelWithInstallation, "delivered_refuse", "the cancellation"),
                                    (ReturnToSender, "carrier_error_free", "the returned parcel"),
                                    "I want to cancel an order with an installation, and a parcel from another order was sent back to you."),
    "label_speed_and_defect": ((OrderChanges, "express_label_refuse", "the express upgrade"),
                               (WarrantyClaim, "defect_in_window", "the faulty item"),
                               "I'd like express shipping on one order, and something from another order has stopped working."),
    "pending_refund_and_exchange": ((RefundFollowUp, "reuse_pending_wait", "the refund"),
                                    (Exchange, "exchange_in_stock", "the exchange"),
                                    "a refund from a cancelled order hasn't reached me, and I'd like to swap an item from another order for its other version."),
    "reopened_refund_and_return": ((RefundFollowUp, "reopen_recent_escalate", "the refund"),
                                   (ReturnWithFees, "multi_item", "the return"),
                                   "my refund still hasn't arrived after I asked last week, and I want to return things from another order."),
    "old_refund_and_revisit": ((RefundFollowUp, "new_after_old_solved", "the refund"),
                               (InstallationService, "revisit", "the installation"),
                               "a refund from a while ago never reached me, and the installer's work on another order has a problem."),
}


def _sub(cls: type[RetailFamily], branch: str, domain: str, identity: dict[str, Any] | None,
         earlier: tuple[str, ...] = ()) -> RetailFamily:
    """A private instance of another family (it draws in the split this task is built in)."""
    fam = cls()
    fam.domain = domain
    fam.identity = identity
    fam.in_combo = True
    fam.forced_branch = branch
    fam.earlier = earlier
    return fam


def _seed_for(fam: RetailFamily, branch: str, seed: int) -> int:
    """A seed of ``fam`` that draws ``branch`` (seeds walk the branches in order) and differs per task."""
    return fam.branches.index(branch) + 1 + len(fam.branches) * seed


def _name_orders(d: RetailDraft, topic: str, second: bool) -> None:
    """Each order fact names the request it belongs to, so that which order goes with which request is never a guess."""
    for fact in d.facts:
        if "order number" not in fact["unlock"]:
            continue
        fact["text"] = f"For {topic}, the order number is {fact['value']}."
        if second:  # a second order of the same customer, not a correction of the first
            fact["unlock"] = ["other order", "second order", "second request", "order number", "order"]
            fact["slot"] = "other_order"


def _spare(d: RetailDraft, other_reply: str) -> None:
    """What one request forbids the closing to say must not forbid what the other request's reply says."""
    for chk in d.checks.pop("dialogue", []):
        must_not = [p for p in chk.get("must_not", []) if not re.search(p, other_reply, re.IGNORECASE)]
        if chk.get("must") or must_not:
            d.mention(chk["name"], chk.get("must"), must_not)


class TwoRequests(CareFamily):
    code = "ST031"
    name = "two_requests"
    number = 31
    NEW_USERS = False
    description = "Two requests in one conversation, each handled by its own policy section and tracked in its own ticket."
    branches = tuple(PAIRS)
    held_out_branches: ClassVar[tuple[str, ...]] = ("warranty_and_refund_followup", "promo_refused_and_late", "late_cosmetic_and_return",
                                                    "refund_wait_and_cancel")
    test_count = len(PAIRS)
    TWO_ORDERS = True
    OPENINGS = openings.ST031
    SECTION = "policy#tickets"

    def draw(self, rng: random.Random, seed: int) -> RetailDraft:
        branch = self.branch(seed)
        (first_cls, first_branch, first_topic), (second_cls, second_branch, second_topic), together = PAIRS[branch]
        first = _sub(first_cls, first_branch, self.domain, None)
        s1 = _seed_for(first, first_branch, seed)
        one = first.draw(first.rng(s1), s1)
        customer = one.rows("customers")[0]
        ticket_user = next(iter(one.rows("ticket_users")), None)
        if ticket_user is None:
            raise ValueError(f"{first_cls.code}:{first_branch} starts without a ticketing user; it cannot open a two-request task")
        # the second request's values are sourced from everything the conversation has read by then
        second = _sub(second_cls, second_branch, self.domain, {"name": customer["name"], "email": customer["email"],
                                                               "customer": customer, "ticket_user": ticket_user},
                      earlier=tuple(c["name"] for c in one.golden))
        s2 = _seed_for(second, second_branch, seed)
        two = second.draw(second.rng(s2), s2)
        _name_orders(one, first_topic, second=False)
        _name_orders(two, second_topic, second=True)
        one.question(f"And the other order, for {second_topic}: what's its order number?")
        _spare(one, two.golden_reply)
        _spare(two, one.golden_reply)
        d = one.then(two)
        d.section, d.overrides, d.two_orders = self.SECTION, dict(self.WHY), self.TWO_ORDERS
        d.email = customer["email"]
        d.questions = [*one.questions, *two.questions]
        d.description = f"Two requests, branch '{branch}': {first_cls.code}:{first_branch} then {second_cls.code}:{second_branch}."
        self.open(d, rng, email=customer["email"], name=customer["name"].split()[0], requests=together,
                  Requests=cap_first(together))
        d.branches = [f"{self.code}:{branch}"]
        d.intent = f"{one.intent} Then: {two.intent}".strip()
        d.tags = ["two_requests", branch]
        return d
