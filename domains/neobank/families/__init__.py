"""Tidewell service-desk task families: seeded generators of internal IT support tasks.

Each family is one workflow of the IT policy with its branches, including the ones
where the right answer is to refuse, to wait for an approver or the employee, or to
escalate to another team. The frozen tests in ``task_specs/neobank`` are instances of
these families. One module per workflow group; every request is written with the
kit's ``TaskDraft`` (``_draft.DeskDraft`` adds the employee and the desk's common golden),
``_base`` is the families' base, ``_people`` the employees they draw, ``_sequences`` the
ids a golden run mints.
"""

from __future__ import annotations

from thinkingbox_env.authoring.family import TaskFamily

from .access import AccessRequest, AccessUpgrade, ContractorAccess
from .combined import TwoRequests
from .hardware import HardwareRequest, LaptopFault
from .questions import PolicyQuestion
from .security import AccountSecurity, IncidentAccess
from .software import SoftwareLicence

FAMILIES: list[TaskFamily] = [AccessRequest(), AccessUpgrade(), ContractorAccess(), AccountSecurity(), IncidentAccess(),
    LaptopFault(), HardwareRequest(), SoftwareLicence(), PolicyQuestion(),
    TwoRequests()]
