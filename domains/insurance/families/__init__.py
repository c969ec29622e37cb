"""Auto-insurance task families: seeded generators of Ashgrove Mutual customer-service tasks.

The frozen tests in ``task_specs/insurance`` are instances of these families, and
training draws fresh ones. One module per workflow group; ``_base`` holds the
shared building blocks (a household, identity facts, the identification golden).
"""

from __future__ import annotations

from thinkingbox_env.family import TaskFamily

from .billing import BillingExtension, InstallmentPlan
from .claims import FirstNoticeOfLoss
from .documents import ProofOfInsurance
from .drivers import AddDriver, DriverRemoval
from .lifecycle import PolicyCancellation, Reinstatement
from .vehicles import VehicleAddition, VehicleRemovalCoverage

FAMILIES: list[TaskFamily] = [
    BillingExtension(), InstallmentPlan(), ProofOfInsurance(), AddDriver(), DriverRemoval(),
    VehicleAddition(), VehicleRemovalCoverage(), FirstNoticeOfLoss(), Reinstatement(), PolicyCancellation(),
]
