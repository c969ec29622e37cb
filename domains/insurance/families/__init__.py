"""Auto-insurance task families: seeded generators of Ashgrove Mutual customer-service tasks.

The frozen tests in ``task_specs/insurance`` are instances of these families, and
training draws fresh ones. One module per workflow group, each writing its requests
with the authoring kit's draft (``_draft.InsuranceDraft``); ``_base`` holds the steps every
family shares (the household and identity set-up, the opening, the one ticket),
``_household`` and ``_people`` draw the household from the policy's dates outward and
its members as one person each, ``_identity`` verifies to the level the request needs.
``combined`` puts two requests of the driver and vehicle families in one conversation.
"""

from __future__ import annotations

from thinkingbox_env.authoring.family import TaskFamily

from .billing import BillingExtension, InstallmentPlan
from .claims import FirstNoticeOfLoss
from .combined import TwoRequests
from .documents import ProofOfInsurance
from .drivers import AddDriver, DriverRemoval
from .lifecycle import PolicyCancellation, Reinstatement
from .vehicles import VehicleAddition, VehicleRemovalCoverage

FAMILIES: list[TaskFamily] = [
    BillingExtension(), InstallmentPlan(), ProofOfInsurance(), AddDriver(), DriverRemoval(),
    VehicleAddition(), VehicleRemovalCoverage(), FirstNoticeOfLoss(), Reinstatement(), PolicyCancellation(), TwoRequests(),
]
