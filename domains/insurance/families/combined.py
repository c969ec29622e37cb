"""Two requests in one conversation: a vehicle change and a driver change for the same customer.

Both requests are policy changes, so the conversation still records exactly one
ticket (policy section 3): category policy_change, open with the team when one of
the two requests is escalated, solved otherwise. The customer is identified once;
the second request reuses the first one's household, verification and ticketing
user. Two of the combinations are test-only (``held_out_branches``): no training
variant ever pairs those requests.

The customer writes both requests in one message, from the pair's own templates (three of
them drawn only for the test split), never as one family's opening with a second request
glued on. The parts build their requests without an opening of their own (``paired``).
Nothing in the conversation depends on which request is handled first: each part's
changes are independent rows, and the one ticket takes its status from the parts
(``ticket_for``), not from their order.
"""

from __future__ import annotations

import random
from typing import ClassVar

from thinkingbox_env.authoring import Openings, TaskBody

from ._base import InsuranceFamily
from ._draft import InsuranceDraft, Ticket
from .drivers import AddDriver, DriverRemoval
from .vehicles import VehicleAddition, VehicleRemovalCoverage


def _paired(family: InsuranceFamily) -> InsuranceFamily:
    """A part family that leaves the opening to the pair (its own templates open one request only)."""
    family.paired = True
    return family


PARTS: dict[str, InsuranceFamily] = {f.code: _paired(f) for f in (AddDriver(), DriverRemoval(), VehicleAddition(), VehicleRemovalCoverage())}
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
# {first} and {second} are the parts' requests as verb phrases ("add my son Hugo as a driver ...")
TWO_OPENINGS = Openings("IN011", {
    "plain": "Hi, I have two changes for my car insurance. I'd like to {first}, and I also need to {second}.",
    "upfront_id": "Policy {policy}: please {first}. While you're in there, I need to {second} as well.",
    "busy": "Lots is changing in our household at once, so bear with me: could you {first}, and {second}?",
    "one_go": "I'd like to sort out two things in one go if I can: {first}, and {second}.",
    "upset": "I've put this off for too long and now both need doing. Please {first}, and {second} too.",
    "listed": "Two policy changes, please. One: {first}. Two: {second}.",
    "upset_b": "I'm fed up and want these sorted today. I need you to {first}, and on top of that I need to {second}.",
    "upfront_b": "Hi, it's about policy {policy}, and there are two things I need done: {first}, and {second}.",
    "story_b": "We're reorganising who drives what at home. Could you {first}? And I need to {second}, please.",
}, held_out=("upset_b", "upfront_b", "story_b"))


class TwoRequests(InsuranceFamily):
    code = "IN011"
    name = "two_policy_changes"
    number = 11
    description = "A customer asks for a vehicle change and a driver change in one conversation; each follows its own rules, one ticket."
    branches = tuple(COMBOS)
    held_out_branches: ClassVar[tuple[str, ...]] = ("coverage+add_driver", "driver_change+vehicle_change")
    test_count: ClassVar[int | None] = 14
    OPENINGS = TWO_OPENINGS

    def subject(self, draft: InsuranceDraft) -> str:
        return f"Policy changes on {draft.hd['policy']['id']}"

    def build(self, rng: random.Random, seed: int) -> TaskBody:
        combo = self.branch(seed)
        first_code, second_code = COMBOS[combo]
        first_fam, second_fam = PARTS[first_code], PARTS[second_code]
        first_branch = rng.choice(FIRST[first_code])
        # the parts number their rows from an id range of their own (seed + 500000), so no IN011 customer shares an
        # id with a task of the part's family
        a = first_fam.make(rng, 500_000 + seed % 500_000, first_branch)
        b = second_fam.make(rng, a.seed, self.second_branch(rng, second_code, a), base=a)
        b.ticket = self.ticket_for(a, b)
        first_fam.finish(a, ticket=False)
        self.ticket_call(b)
        opening, opening_id = self.pick_opening(a, first=a.request_text, second=b.request_text,
                                                policy=a.hd.get("wrong_policy", a.hd["policy"]["id"]))
        both = a.then(b, opening)
        both.description = f"Two policy changes, '{combo}': {a.description} {b.description}"
        both.tags = [self.name, combo, f"{first_code}:{first_branch}", f"{second_code}:{b.branch}", "combined",
                     *(["injection"] if a.planted is not None else [])]
        both.origin = opening_id
        both.branches = [f"{self.code}:{combo}", f"{first_code}:{first_branch}", f"{second_code}:{b.branch}"]
        return both.body()

    @staticmethod
    def ticket_for(a: InsuranceDraft, b: InsuranceDraft) -> Ticket:
        """The one ticket: open with the team when a part is escalated, else solved; the same whichever part came first.

        Both escalations a pair can draw go to underwriting with high priority, so two escalated parts agree.
        """
        esc = [c.ticket for c in (a, b) if c.ticket is not None and c.ticket.status == "open"]
        if len({(t.team, t.priority) for t in esc}) > 1:
            raise ValueError(f"the two requests escalate to different teams: {esc}; one ticket cannot hold both")
        return esc[0] if esc else Ticket("policy_change", "solved")

    @staticmethod
    def second_branch(rng: random.Random, code: str, first: InsuranceDraft) -> str:
        """A branch for the second request that the first one's household can hold."""
        if code == "IN005":
            excl = "exclusion_not_permitted" if first.hd["state"] in ("WA", "AZ") else "exclude_driver"
            return rng.choice(["remove_moved_out", excl, "open_claim_escalate", "named_insured_refuse"])
        if code == "IN007":
            active = [v for v in first.hd["vehicles"] if v["status"] == "active"]
            options = ["remove_sold", "remove_future_sale", "coverage_drop", "lienholder_refuse"] if len(active) > 1 \
                else ["remove_last_vehicle", "coverage_drop", "lienholder_refuse"]
            if first.ticket is not None and first.ticket.status == "open":
                options = [o for o in options if o != "lienholder_refuse"] or options
            return rng.choice(options)
        return rng.choice(FIRST[code])
