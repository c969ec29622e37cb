"""Two requests in one conversation: the same employee asks for two unrelated things, each with its own ticket."""

from __future__ import annotations

import random
from typing import ClassVar

from thinkingbox_env.authoring import Openings, TaskDraft
from thinkingbox_env.authoring.saying import cap_first

from ._base import Desk
from ._people import Person
from .access import AccessRequest
from .hardware import HardwareRequest, LaptopFault
from .security import AccountSecurity
from .software import SoftwareLicence

PAIRS: dict[str, tuple[tuple[type[Desk], str], tuple[type[Desk], str]]] = {
    "password+licence": ((AccountSecurity, "password_sms"), (SoftwareLicence, "pool_seat")),
    "unlock+peripheral": ((AccountSecurity, "unlock"), (HardwareRequest, "stock_peripheral")),
    "laptop+software": ((LaptopFault, "replace_in_repair"), (SoftwareLicence, "free")),
    "access+peripheral": ((AccessRequest, "elevated"), (HardwareRequest, "stock_peripheral")),
    "peripheral+software": ((HardwareRequest, "stock_peripheral"), (SoftwareLicence, "free")),
    "default_access+paid_software": ((AccessRequest, "role_default"), (SoftwareLicence, "paid_seat")),
    "mfa+access": ((AccountSecurity, "mfa_reset"), (AccessRequest, "elevated")),
    "laptop_fixed+password": ((LaptopFault, "step_fixes"), (AccountSecurity, "password_manager")),
}


class TwoRequests(Desk):
    code = "NB010"
    name = "two_requests"
    number = 10
    description = "An employee brings two unrelated requests to one conversation."
    branches = tuple(PAIRS)
    held_out_branches: ClassVar[tuple[str, ...]] = ("mfa+access", "laptop_fixed+password")
    test_count: ClassVar[int | None] = 14
    # one message from one person: the two requests are clauses of it (each family's ``request_clause``, built from the
    # task's facts), never two openings glued together
    openings = Openings("NB010", {
        "two_things": "Hi, two things if that's all right: {a}, and {b}.",
        "while_sorted": "Morning! {a_cap}, and while that gets sorted, {b}. Can you help with both?",
        "on_top": "{a_cap}. On top of that, {b}, so I'm hoping you can help with both.",
        "couple": "Hoping you can help with a couple of bits: {a}, and {b}.",
        "sorry": "Sorry to bring you two at once: {a}, and {b}.",
        "then": "{a_cap}, and once that's done, {b}. Is that possible today?",
        "busy_b": "Busy morning here. {a_cap}, and {b} as well.",
        "desk_b": "Hi desk, {a}; {b} too, if you can manage it.",
        "pair_b": "Could you help me with two bits of IT? {a_cap}, and {b}.",
    }, held_out=("busy_b", "desk_b", "pair_b"))

    def make(self, rng: random.Random, seed: int, branch: str, person: Person | None) -> TaskDraft:
        """Each request drafted by its own family for one person, joined into one conversation opened in one message.

        The second family is told of the first request, so the ids its golden names start after those the first minted.
        """
        (fa, ba), (fb, bb) = PAIRS[branch]
        first_fam, second_fam = self.sibling(fa), self.sibling(fb)
        p = person or first_fam.person(rng, seed + 70_000, ticket_user=rng.random() < 0.5)
        first = first_fam.make(rng, seed, ba, p)
        second_fam.earlier = first
        second = second_fam.make(rng, seed, bb, p)
        a, b = first_fam.request_clause, second_fam.request_clause
        opening, origin = self.openings.pick(rng, self.split, a=a, b=b, a_cap=cap_first(a))
        d = first.then(second, opening)
        d.origin, d.branches = origin, [f"{self.code}:{branch}"]
        d.description = f"{self.description} {d.description}"
        return d

    def sibling(self, cls: type[Desk]) -> Desk:
        fam = cls()
        fam.domain = self.domain
        return fam
