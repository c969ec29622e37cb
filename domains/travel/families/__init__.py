"""Travel task families: seeded generators of Harborlight Stays support tasks.

Each family is one workflow of the policy with its branches, including the ones where
the right answer is to refuse, to wait for the customer or to hand the case on. The
frozen tests in ``task_specs/travel`` are instances of these families, and training draws
fresh ones. One module per workflow group; every family writes its task on a ``_draft.TravelDraft``
(the kit's draft with the steps every conversation shares), draws its rows with ``_stay`` and is
built by ``_base.TravelFamily``, which adds the planted instructions of ``_injection``.
"""

from __future__ import annotations

from thinkingbox_env.authoring.family import TaskFamily

from .cancellations import Cancellation
from .changes import CorporateChange, IndividualChange
from .combined import TwoRequests
from .complaints import PostStayComplaint
from .corporate import CorporateInvoice
from .groups import GroupChange, GroupServices
from .partners import HotelVerification
from .payments import PaymentRecovery
from .requests import SpecialRequest

FAMILIES: list[TaskFamily] = [
    IndividualChange(), CorporateChange(), GroupChange(), GroupServices(), PaymentRecovery(), Cancellation(),
    CorporateInvoice(), HotelVerification(), SpecialRequest(), PostStayComplaint(), TwoRequests(),
]
