"""Two requests in one conversation: a vehicle change and a driver change for the same customer.

Both requests are policy changes, so the conversation still records exactly one
ticket (policy section 3): category policy_change, open with the team when one of
the two requests is escalated, solved otherwise. The customer is identified once;
the second request reuses the first one's household, verification and ticketing
user. Two of the combinations are test-only (``held_out_branches``): no training
variant ever pairs those requests.
"""

from __future__ import annotations

import random
from typing import ClassVar

from thinkingbox_env.authoring import TaskBody, combine

from ._base import Ctx, InsuranceFamily
from .drivers import AddDriver, DriverRemoval
from .vehicles import VehicleAddition, VehicleRemovalCoverage

PARTS: dict[str, InsuranceFamily] = {f.code: f for f in (AddDriver(), DriverRemoval(), VehicleAddition(), VehicleRemovalCoverage())}
COMBOS: dict[str, tuple[str, str]] = {
    "add_vehicle+add_driver": ("IN006", "IN004"),
    "add_driver+vehicle_change": ("IN004", "IN007"),
    "driver_change+add_vehicle": ("IN005", "IN006"),
    "add_vehicle+driver_change": ("IN006", "IN005"),
    "coverage+add_driver": ("IN007", "IN004"),
    "driver_change+vehicle_change": ("IN005", "IN007"),
}
# the branches a part may take in a combination: no partial verification (the customer is verified once for both) and
# no pending outcome (one ticket cannot both wait on the customer and sit with a team)
FIRST = {
    "IN004": ("add_tomorrow", "add_future_date", "excluded_relist", "suspended_license", "violations_review"),
    "IN005": ("remove_moved_out", "exclude_driver", "exclusion_not_permitted", "open_claim_escalate", "named_insured_refuse"),
    "IN006": ("add_recent_purchase", "add_old_purchase", "add_future_purchase", "replace_vehicle"),
    "IN007": ("coverage_drop", "lienholder_refuse"),
}
ALSO = ["Also, I'd like to {request}.", "And while I have you, I need to {request}.", "One more thing: could you {request}?",
        "Oh, and please {request}."]


class TwoRequests(InsuranceFamily):
    code = "IN011"
    name = "two_policy_changes"
    number = 11
    description = "A customer asks for a vehicle change and a driver change in one conversation; each follows its own rules, one ticket."
    branches = tuple(COMBOS)
    held_out_branches: ClassVar[tuple[str, ...]] = ("coverage+add_driver", "driver_change+vehicle_change")
    test_count: ClassVar[int | None] = 14

    def subject(self, ctx: Ctx) -> str:
        return f"Policy changes on {ctx.hd['policy']['id']}"

    def build(self, rng: random.Random, seed: int) -> TaskBody:
        combo = self.branch(seed)
        first_code, second_code = COMBOS[combo]
        first_fam, second_fam = PARTS[first_code], PARTS[second_code]
        first_branch = rng.choice(FIRST[first_code])
        # the parts number their rows from an id range of their own (seed + 500000), so no IN011 customer shares an
        # id with a task of the part's family
        a = first_fam.make(rng, 500_000 + seed % 500_000, first_branch)
        b = second_fam.make(rng, a.seed, self.second_branch(rng, second_code, a), base=a)
        # one ticket for the conversation: open with the team of an escalated request, else solved
        esc = [c.ticket for c in (a, b) if c.ticket["status"] == "open"]
        b.ticket = esc[0] if esc else {"category": "policy_change", "status": "solved", "priority": "normal", "team": None,
                                       "team_source": None}
        body_a = first_fam.body(a, ticket=False)
        self.ticket_call(b)
        body_b = TaskBody(description=b.description, opening=b.opening or a.opening, golden_reply=b.reply, facts=b.facts, intent=b.intent,
                          patch=a.h.patch(), golden=b.g.calls, checks=b.checks, idempotent_writes=b.g.idempotent,
                          tags=[second_fam.name, b.branch, *b.tags], dialogue=b.turns, faults=b.faults,
                          origin={"opening": a.opening_id, "branches": []})
        body_a.patch = a.h.patch()
        merged = combine(body_a, body_b, opening=f"{a.opening} {rng.choice(ALSO).format(request=b.request_text)}")
        merged.description = f"Two policy changes, '{combo}': {a.description} {b.description}"
        merged.intent = f"{a.intent} {b.intent}"
        merged.tags = [self.name, combo, f"{first_code}:{first_branch}", f"{second_code}:{b.branch}", "combined"]
        merged.origin = {"opening": a.opening_id,
                         "branches": [f"{self.code}:{combo}", f"{first_code}:{first_branch}", f"{second_code}:{b.branch}"]}
        return merged

    @staticmethod
    def second_branch(rng: random.Random, code: str, first: Ctx) -> str:
        """A branch for the second request that the first one's household can hold."""
        if code == "IN005":
            excl = "exclusion_not_permitted" if first.hd["state"] in ("WA", "AZ") else "exclude_driver"
            return rng.choice(["remove_moved_out", excl, "open_claim_escalate", "named_insured_refuse"])
        if code == "IN007":
            active = [v for v in first.hd["vehicles"] if v["status"] == "active"]
            options = ["remove_sold", "remove_future_sale", "coverage_drop", "lienholder_refuse"] if len(active) > 1 \
                else ["remove_last_vehicle", "coverage_drop", "lienholder_refuse"]
            if first.ticket["status"] == "open":
                options = [o for o in options if o != "lienholder_refuse"] or options
            return rng.choice(options)
        return rng.choice(FIRST[code])
