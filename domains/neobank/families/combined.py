"""Two requests in one conversation: the same employee asks for two unrelated things, each with its own ticket."""

from __future__ import annotations

import random
import re
from typing import Any, ClassVar

from thinkingbox_env.authoring import Openings

from ._base import Desk, Person, combine
from .access import AccessRequest
from .hardware import HardwareRequest, LaptopFault
from .security import AccountSecurity
from .software import SoftwareLicence

# what each id sequence a golden write mints: a second request's predicted ids move past the first's
MINTS = {"create_ticket": "tickets", "create_ticket_user": "ticket_users", "create_access_request": "access_requests",
         "request_approval": "approvals", "provision_access": "access_grants", "grant_emergency_access": "access_grants",
         "reset_password": "security_actions", "unlock_account": "security_actions", "reset_mfa": "security_actions",
         "log_troubleshooting": "troubleshooting_steps", "create_procurement_request": "procurement_requests",
         "assign_licence": "licence_assignments"}
_NUMBER = re.compile(r"^(.*?)(\d+)$")


def _shift(value: Any, by: int) -> Any:
    if by == 0:
        return value
    if isinstance(value, int):
        return value + by
    m = _NUMBER.match(str(value))
    assert m is not None, value
    return f"{m.group(1)}{int(m.group(2)) + by:0{len(m.group(2))}d}"


class _After:
    """A family whose predicted ids start after what an earlier request of the conversation created."""

    def __init__(self, family: Desk, first: dict[str, Any]) -> None:
        self.family, self.first = family, first
        self.minted: dict[str, int] = {}
        for call in first["golden"]:
            if call.get("expect_error") is None and call["name"] in MINTS:
                table = MINTS[call["name"]]
                self.minted[table] = self.minted.get(table, 0) + 1

    def __enter__(self) -> None:
        fam, first, minted = self.family, self.first, self.minted
        base = type(fam).next_ids

        def next_ids(patch: Any) -> dict[str, Any]:
            merged: dict[str, Any] = {"insert": {t: list(rows) for t, rows in first["patch"].get("insert", {}).items()}}
            for t, rows in (patch.get("insert") or {}).items():
                merged["insert"].setdefault(t, []).extend(r for r in rows if r not in merged["insert"].get(t, []))
            merged["update"] = list(first["patch"].get("update", [])) + list(patch.get("update", []))
            return {t: _shift(v, minted.get(t, 0)) for t, v in base(fam, merged).items()}

        fam.next_ids = next_ids  # type: ignore[method-assign]

    def __exit__(self, *exc: object) -> None:
        del self.family.next_ids


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

    def make(self, rng: random.Random, seed: int, branch: str, person: Person | None) -> dict[str, Any]:
        (fa, ba), (fb, bb) = PAIRS[branch]
        first_fam, second_fam = self.sibling(fa), self.sibling(fb)
        p = person or first_fam.person(rng, seed + 70_000, ticket_user=rng.random() < 0.5)
        first = first_fam.make(rng, seed, ba, p)
        with _After(second_fam, first):
            second = second_fam.make(rng, seed, bb, p)
        a, b = first_fam.request_clause, second_fam.request_clause
        opening = self.openings.pick(rng, self.split, a=a, b=b, a_cap=a[0].upper() + a[1:])
        body = combine(first, second, opening, f"{self.code}:{branch}")
        body["description"] = f"{self.description} {body['description']}"
        return body

    def sibling(self, cls: type[Desk]) -> Desk:
        fam = cls()
        fam.domain = self.domain
        return fam
