"""Retail task families: seeded generators of Brightwell Electronics support tasks.

Each family is one workflow of the policy with its branches, including the ones
where the right answer is to refuse or to wait. The frozen tests in
``task_specs/retail`` are instances of these families, and training draws fresh
ones. One module per workflow group; ``_base`` holds the shared building blocks.
"""

from __future__ import annotations

from thinkingbox_env.authoring.family import TaskFamily

from .accounts import DuplicateCharge, MembershipAccount, MembershipUpgrade, PromotionDispute, RefundFollowUp, TicketFollowUp
from .combined import TwoRequests
from .orders import CancelWithInstallation, InstallationService, OrderCancellation, OrderChanges
from .returns import CosmeticPartialRefund, Exchange, ReturnWithFees, WarrantyClaim
from .shipping import DeliveryException, LateDelivery, MissingPackage, ReturnToSender

FAMILIES: list[TaskFamily] = [
    OrderCancellation(), DuplicateCharge(), LateDelivery(), TicketFollowUp(), MembershipUpgrade(),
    DeliveryException(), MissingPackage(), ReturnToSender(),
    ReturnWithFees(), Exchange(), WarrantyClaim(), CosmeticPartialRefund(),
    InstallationService(), CancelWithInstallation(), OrderChanges(),
    PromotionDispute(), MembershipAccount(), RefundFollowUp(), TwoRequests(),
]
