"""Two requests in one conversation: two branches of other families, for the same customer.

The first request draws the customer; the second is drawn by its own family with
that customer's identity (``RetailFamily.identity``), so both bodies carry
identical customer and ticketing-user rows and :func:`authoring.combine` keeps
them once. Pairs are chosen so that the second request does not depend on
anything the first one changes: its customer's tier and score do not decide it,
it names no id the first request's writes mint, and each request is about its
own order, so each gets its own ticket (policy: tickets).
"""

from __future__ import annotations

import random
import re
from typing import Any, ClassVar

from thinkingbox_env.authoring import TaskBody, combine

from . import openings
from ._base import CareFamily, RetailFamily
from .accounts import DuplicateCharge, MembershipAccount, PromotionDispute, RefundFollowUp, TicketFollowUp
from .orders import CancelWithInstallation, InstallationService, OrderCancellation, OrderChanges
from .returns import CosmeticPartialRefund, Exchange, ReturnWithFees, WarrantyClaim
from .shipping import LateDelivery, MissingPackage, ReturnToSender

# branch -> (first family, its branch, how the customer puts it), (second family, its branch, how the customer puts it)
Part = tuple[type[RetailFamily], str, str]
PAIRS: dict[str, tuple[Part, Part]] = {
    "cancel_and_address": ((OrderCancellation, "cancel_processing", "I want to cancel an order I placed this week."),
                           (OrderChanges, "address_change", "I need the delivery address changed on another order.")),
    "late_credit_and_promo": ((LateDelivery, "credit_due", "one of my parcels is days late."),
                              (PromotionDispute, "system_error", "a promo code didn't apply on a different order.")),
    "duplicate_and_return": ((DuplicateCharge, "duplicate", "I think I was charged twice for an order."),
                             (ReturnWithFees, "unopened_changed_mind", "I'd like to return something from another order.")),
    "missing_and_exchange": ((MissingPackage, "replace_in_stock", "a parcel says delivered but never came."),
                             (Exchange, "exchange_in_stock", "I'd like to swap an item from another order for the other colour.")),
    "cancel_refused_and_cosmetic": ((OrderCancellation, "refuse_shipped", "I want to cancel an order."),
                                    (CosmeticPartialRefund, "partial_standard", "another item arrived with a scratch, though I'll keep it.")),
    "warranty_and_refund_followup": ((WarrantyClaim, "defect_repair", "something I bought last year has stopped working."),
                                     (RefundFollowUp, "reuse_open_escalate", "a refund for a cancelled order still hasn't reached me.")),
    "return_refused_and_install": ((ReturnWithFees, "outside_window", "I'd like to send back something I bought a while ago."),
                                   (InstallationService, "reschedule", "I need to move an installation appointment.")),
    "promo_refused_and_late": ((PromotionDispute, "expired_refuse", "my discount code didn't work on an order."),
                               (LateDelivery, "credit_due", "another order of mine is running late.")),
    "cancel_install_and_duplicate": ((CancelWithInstallation, "cancel_with_installation", "I want to cancel an order that has an installation booked."),
                                     (DuplicateCharge, "duplicate", "I also see two charges for a different order.")),
    "missing_investigation_and_speed": ((MissingPackage, "investigate_high_value", "an expensive parcel shows as delivered but isn't here."),
                                        (OrderChanges, "express_standard", "I'd like express shipping on a new order.")),
    "credited_late_and_exchange": ((LateDelivery, "already_credited", "my parcel is still late even after your credit."),
                                   (Exchange, "exchange_in_stock", "I'd like to swap an item from another order for the other colour.")),
    "small_late_and_missing": ((LateDelivery, "small_order", "a small order of mine is late."),
                               (MissingPackage, "replace_in_stock", "another parcel says delivered but never came.")),
    "late_exchange_and_cosmetic": ((Exchange, "outside_window", "I'd like to exchange something I bought a while back."),
                                   (CosmeticPartialRefund, "partial_standard", "another item arrived scratched, but I'll keep it.")),
    "late_cosmetic_and_return": ((CosmeticPartialRefund, "outside_window", "an item I got a while ago has a scratch."),
                                 (ReturnWithFees, "opened_restocking", "I want to return something from another order.")),
    "already_cancelled_and_missing": ((CancelWithInstallation, "already_cancelled", "I want to make sure an order is cancelled."),
                                      (MissingPackage, "replace_in_stock", "a different parcel shows as delivered but isn't here.")),
    "shipped_address_and_duplicate": ((OrderChanges, "address_shipped_refuse", "I need to change where an order is going."),
                                      (DuplicateCharge, "duplicate", "I think I was charged twice for another order.")),
    "points_pending_and_promo": ((MembershipAccount, "points_not_delivered", "I'm missing reward points for an order."),
                                 (PromotionDispute, "system_error", "a promo code didn't apply on another order.")),
    "refund_wait_and_cancel": ((RefundFollowUp, "reuse_hold_wait", "a refund from a cancelled order hasn't reached me."),
                               (OrderCancellation, "cancel_processing", "I also want to cancel a newer order.")),
    "promo_minimum_and_install_cancel": ((PromotionDispute, "below_minimum_refuse", "my discount code didn't work on an order."),
                                         (InstallationService, "cancel_refund", "I want to cancel an installation but keep the product.")),
    "revisit_late_and_return": ((InstallationService, "revisit_too_old", "there's a problem with an installation from a while ago."),
                                (ReturnWithFees, "unopened_changed_mind", "I'd like to return something from another order.")),
    "refunded_twice_and_missing": ((DuplicateCharge, "already_refunded", "I think I was charged twice for an order."),
                                   (MissingPackage, "replace_in_stock", "another parcel says delivered but never came.")),
    "delayed_ticket_and_cosmetic": ((TicketFollowUp, "still_delayed", "I'm following up on my ticket about a late parcel."),
                                    (CosmeticPartialRefund, "partial_standard", "another item arrived scratched, but I'll keep it.")),
    "held_ticket_and_promo": ((TicketFollowUp, "already_on_hold", "I'm chasing my ticket about a late parcel."),
                              (PromotionDispute, "system_error", "a promo code didn't apply on another order.")),
    "delivered_cancel_and_reship": ((CancelWithInstallation, "delivered_refuse", "I want to cancel an order with an installation."),
                                    (ReturnToSender, "carrier_error_free", "another parcel was sent back to you.")),
    "label_speed_and_defect": ((OrderChanges, "express_label_refuse", "I'd like express shipping on an order."),
                               (WarrantyClaim, "defect_in_window", "something from another order has stopped working.")),
    "pending_refund_and_exchange": ((RefundFollowUp, "reuse_pending_wait", "a refund from a cancelled order hasn't reached me."),
                                    (Exchange, "exchange_in_stock", "I'd like to swap an item from another order for the other colour.")),
    "reopened_refund_and_return": ((RefundFollowUp, "reopen_recent_escalate", "my refund still hasn't arrived after I asked last week."),
                                   (ReturnWithFees, "multi_item", "I want to return things from another order.")),
    "old_refund_and_revisit": ((RefundFollowUp, "new_after_old_solved", "a refund from a while ago never reached me."),
                               (InstallationService, "revisit", "the installer's work on another order has a problem.")),
}


def _sub(cls: type[RetailFamily], branch: str, domain: str, identity: dict[str, Any] | None) -> RetailFamily:
    """A private instance of another family (it draws in the split this task is built in)."""
    fam = cls()
    fam.domain = domain
    fam.identity = identity
    fam.in_combo = True
    fam.forced_branch = branch
    return fam


def _seed_for(fam: RetailFamily, branch: str, seed: int) -> int:
    """A seed of ``fam`` that draws ``branch`` (seeds walk the branches in order) and differs per task."""
    return fam.branches.index(branch) + 1 + len(fam.branches) * seed


def _task_body(body: dict[str, Any]) -> TaskBody:
    user = body["user"]
    return TaskBody(description=body["description"], opening=user["opening"], golden_reply=body["golden_reply"], facts=user["facts"],
                    intent=user.get("intent", ""), patch=body["patch"], golden=body["golden"], checks=body.get("checks", {}),
                    idempotent_writes=body.get("idempotent_writes", {}), tags=body.get("tags", []))


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

    def draw(self, rng: random.Random, seed: int) -> dict[str, Any]:
        branch = self.branch(seed)
        (first_cls, first_branch, first_says), (second_cls, second_branch, second_says) = PAIRS[branch]
        first = _sub(first_cls, first_branch, self.domain, None)
        s1 = _seed_for(first, first_branch, seed)
        body1 = first.raw(first.rng(s1), s1)
        customer = body1["patch"]["insert"]["customers"][0]
        ticket_user = next(iter(body1["patch"]["insert"].get("ticket_users", [])), None)
        if ticket_user is None:
            raise ValueError(f"{first_cls.code}:{first_branch} starts without a ticketing user; it cannot open a two-request task")
        second = _sub(second_cls, second_branch, self.domain, {"name": customer["name"], "email": customer["email"],
                                                       "customer": customer, "ticket_user": ticket_user})
        s2 = _seed_for(second, second_branch, seed)
        body2 = second.raw(second.rng(s2), s2)
        for fact in body2["user"]["facts"]:
            if "order number" in fact["unlock"]:  # two orders in one conversation: the customer says which is which
                fact["text"] = f"For the second request, the order number is {fact['value']}."
                fact["unlock"] = ["other order", "second order", "second request", "order number", "order"]
                fact["slot"] = "other_order"  # a second order of the same customer, not a correction of the first
        asks = body1.pop("_asks", []) + [("And for the second request, which order is it about?", None)] + body2.pop("_asks", [])
        body1.pop("_origin", None)
        body2.pop("_origin", None)
        for fam, body in ((first, body1), (second, body2)):
            for call in body["golden"]:
                call.setdefault("_section", fam.SECTION)
                call.setdefault("_why", fam.WHY)
        # what one request forbids the closing to say must not forbid what the other request's reply says
        for body, other in ((body1, body2), (body2, body1)):
            kept = []
            for chk in body["checks"].get("dialogue", []):
                must_not = [p for p in chk.get("must_not", []) if not re.search(p, other["golden_reply"], re.IGNORECASE)]
                chk = {**chk, "must_not": must_not} if must_not else {k: v for k, v in chk.items() if k != "must_not"}
                if chk.get("must") or chk.get("must_not"):
                    kept.append(chk)
            body["checks"]["dialogue"] = kept
        merged = combine(_task_body(body1), _task_body(body2))
        self._email = customer["email"]
        self._asks = asks
        self._why: dict[str, str] = {}
        data = merged.to_dict()
        data["description"] = f"Two requests, branch '{branch}': {first_cls.code}:{first_branch} then {second_cls.code}:{second_branch}."
        data["user"]["opening"] = self.open(rng, email=customer["email"], first=first_says[0].upper() + first_says[1:],
                                            second=second_says)
        data["user"]["intent"] = f"{body1['user'].get('intent', '')} Then: {body2['user'].get('intent', '')}".strip()
        data["tags"] = ["two_requests", branch]
        return data
