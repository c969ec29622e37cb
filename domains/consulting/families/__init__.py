"""Consulting task families: seeded generators of Halcrow & Vine service-desk tasks.

Each family is one workflow of the policy with its branches, including the ones
where the right answer is to refuse, to wait for someone else, or to escalate. The
frozen tests in ``task_specs/consulting`` are instances of these families.
"""

from __future__ import annotations

from thinkingbox_env.authoring.family import TaskFamily

from .access import ClientSystemAccess, FolderAccess
from .combined import TwoRequests
from .equipment import HardwareRequest, SoftwareProvisioning
from .people import Onboarding, StaffingRequest, TrainingEnrolment
from .spending import ExpenseSubmission, TravelRequest

FAMILIES: list[TaskFamily] = [
    ClientSystemAccess(), FolderAccess(), SoftwareProvisioning(), HardwareRequest(),
    ExpenseSubmission(), Onboarding(), TrainingEnrolment(), TravelRequest(), StaffingRequest(),
    TwoRequests(),
]
