"""Driver families: adding a driver, removing or excluding one."""

from __future__ import annotations

import random
from datetime import date, timedelta
from typing import Any

from thinkingbox_env.authoring import Golden

from ..rules import TODAY, TOMORROW
from ._base import (
    ANY_DATE,
    HOUSEHOLD_FIRST,
    LAST_NAMES,
    PARTIAL_DIALOGUE,
    RELATION_WORDS,
    STATES,
    InsuranceFamily,
    iso,
    partial_reply,
    say_date,
)

# --------------------------------------------------------------------------- IN004 add driver



class AddDriver(InsuranceFamily):
    code = "IN004"
    name = "add_driver"
    number = 4
    description = "A customer asks to list a household member as a driver; the MVR, exclusions and the effective-date rule decide."
    branches = ("add_tomorrow", "add_future_date", "excluded_relist", "suspended_license", "violations_review", "partial_verification")

    def build(self, rng: random.Random, seed: int) -> dict[str, Any]:
        branch = self.branch(seed)
        ids = self.ids(seed)
        h, hd = self.household(rng, ids, n_vehicles=rng.randint(1, 2))
        factor = self.setup_identity(rng, hd, branch)
        pol, state, last = hd["policy"], hd["state"], hd["p"]["last"]
        relationship = rng.choice(["child", "child", "spouse", "sibling", "parent", "other_household"])
        gender = rng.randint(0, 1)
        word = RELATION_WORDS[relationship][gender]
        first = rng.choice(HOUSEHOLD_FIRST)
        surname = rng.choice(LAST_NAMES) if relationship == "other_household" else last
        full = f"{first} {surname}"
        age = (16, 19) if relationship == "child" else (30, 75) if relationship == "parent" else (21, 60)
        dob = date(TODAY.year - rng.randint(*age), rng.randint(1, 12), rng.randint(1, 28))
        lic_state = state if rng.random() < 0.8 else rng.choice([s for s in STATES if s != state])
        lic = self.license_number(rng, lic_state)
        status, violations, accidents = "valid", rng.randint(0, 2), rng.randint(0, 1)
        if branch == "suspended_license":
            status = rng.choice(["suspended", "revoked", "expired"])
        elif branch == "violations_review":
            violations, accidents = rng.choice([(rng.randint(3, 5), rng.randint(0, 1)), (rng.randint(0, 2), rng.randint(2, 3))])
        h.put("driver_records", {"license_number": lic, "license_state": lic_state, "full_name": full, "license_status": status,
                                 "violations_3yr": violations, "at_fault_accidents_3yr": accidents, "report_date": iso(TODAY - timedelta(days=rng.randint(1, 20)))})
        if branch == "excluded_relist":
            h.put("drivers", {"id": ids["driver"](3), "policy_id": pol["id"], "full_name": full, "date_of_birth": iso(dob),
                              "license_number": lic, "license_state": lic_state, "relationship": relationship, "status": "excluded",
                              "effective_date": iso(TODAY - timedelta(days=rng.randint(40, 150))), "end_date": None})
        eff = TOMORROW
        if branch == "add_future_date":
            eff = TODAY + timedelta(days=rng.randint(3, 28))
            when = f"starting {say_date(eff)}"
        else:
            when = rng.choice(["starting today", "right away, today if possible", "as of today"])
        nxt = self.next_ids(h.patch())
        requester = self.requester(hd, ids, nxt)
        g = Golden()
        self.identify(g, hd, factor, requester)
        subject = f"Add driver to {pol['id']}"
        if factor is None:
            self.ticket(g, requester, hd, subject, "policy_change", "pending")
            reply, dialogue = partial_reply("adding a driver"), PARTIAL_DIALOGUE
        else:
            g.add("get_policy", policy_id=pol["id"])
            g.add("list_drivers", policy_id=pol["id"])
            g.add("check_driver_record", license_number=lic, license_state=lic_state)
            if branch == "excluded_relist":
                self.ticket(g, requester, hd, subject, "policy_change", "open", "high", "underwriting")
                reply = (f"{full} is on policy {pol['id']} as an excluded driver. Listing an excluded driver again needs an underwriting "
                         "review, so I haven't changed anything; I've sent the request to our underwriting team, who will contact you.")
                dialogue = []
            elif branch == "suspended_license":
                self.ticket(g, requester, hd, subject, "policy_change", "solved")
                reply = (f"I'm sorry, I can't add {full}: the motor-vehicle record shows the licence as {status}. A driver can be added once "
                         "they hold a valid licence.")
                dialogue = []
            elif branch == "violations_review":
                self.ticket(g, requester, hd, subject, "policy_change", "open", "high", "underwriting")
                reply = (f"{full}'s driving record needs an underwriting review before they can be listed, so I haven't added them yet. "
                         "I've sent the request to our underwriting team, who will contact you.")
                dialogue = []
            else:
                g.add("add_driver", idempotent="adding the same licence again is refused: it is already on the policy",
                      policy_id=pol["id"], full_name=full, date_of_birth=iso(dob), license_number=lic, license_state=lic_state,
                      relationship=relationship, effective_date=iso(eff))
                self.ticket(g, requester, hd, subject, "policy_change", "solved")
                reply = f"{full} is now a listed driver on policy {pol['id']}, effective {iso(eff)}."
                if branch == "add_tomorrow":
                    reply += " A new driver's coverage can start tomorrow at the earliest, not today."
                dialogue = [{"name": "states_effective_date", "must": [ANY_DATE]}]
        pronoun = ["her", "his"][gender] if relationship != "other_household" else "their"
        opening = rng.choice([
            f"Hi, I'd like to add my {word} {first} as a driver on my car insurance, {when}.",
            f"Hello, my {word} needs to be able to drive our car. Can you put {first} on my policy {when}?",
        ])
        facts = self.identity_facts(hd, factor) + [{
            "text": f"My {word}'s full name is {full}, {pronoun} date of birth is {iso(dob)}, and {pronoun} {STATES[lic_state][0]} driver's licence "
                    f"number is {lic}.",
            "unlock": ["licen", "full name", "driver's", "their", "her", "his", "details"],
        }]
        return self.finish(
            rng, h, hd, branch, f"Add a driver, branch '{branch}' ({relationship}, effective {iso(eff)}).", opening, facts,
            f"Add the {word} as a listed driver.", g, reply, dialogue, tags=["drivers"],
        )


# --------------------------------------------------------------------------- IN005 driver removal or exclusion


class DriverRemoval(InsuranceFamily):
    code = "IN005"
    name = "driver_removal"
    number = 5
    description = "A customer asks to remove or exclude a driver; the named insured, state rules and open major claims decide."
    branches = ("remove_moved_out", "exclude_driver", "exclusion_not_permitted", "named_insured_refuse", "open_claim_escalate",
                "partial_verification")

    def build(self, rng: random.Random, seed: int) -> dict[str, Any]:
        branch = self.branch(seed)
        ids = self.ids(seed)
        if branch == "exclusion_not_permitted":
            h, hd = self.household(rng, ids, n_vehicles=rng.randint(1, 2), state=rng.choice(["WA", "AZ"]))
        elif branch == "exclude_driver":
            h, hd = self.household(rng, ids, n_vehicles=rng.randint(1, 2), exclude_states=("WA", "AZ"))
        else:
            h, hd = self.household(rng, ids, n_vehicles=rng.randint(1, 2))
        factor = self.setup_identity(rng, hd, branch)
        pol, last, state = hd["policy"], hd["p"]["last"], hd["state"]
        excluding = branch in ("exclude_driver", "exclusion_not_permitted")
        relationship = rng.choice(["sibling", "other_household", "child"]) if excluding else rng.choice(["child", "spouse", "sibling"])
        if branch == "named_insured_refuse":
            relationship = "spouse"
        gender = rng.randint(0, 1)
        word = RELATION_WORDS[relationship][gender]
        first = rng.choice(HOUSEHOLD_FIRST)
        surname = rng.choice(LAST_NAMES) if relationship == "other_household" else last
        drv = self.add_driver_row(h, ids, 2, rng, relationship, first=first, last=surname, state=state,
                                  age=(17, 22) if relationship == "child" else (22, 60))
        if branch == "open_claim_escalate":
            v = hd["vehicles"][0]
            h.put("claims", {"id": ids["claim"](1), "policy_id": pol["id"], "vehicle_id": v["id"], "driver_id": drv["id"],
                             "date_of_loss": iso(TODAY - timedelta(days=rng.randint(6, 40))), "loss_type": "collision", "severity": "major",
                             "injuries": rng.random() < 0.5, "drivable": False, "status": "open",
                             "description": "Intersection collision; vehicle towed.", "reported_at": "2026-04-02 09:30:00"})
        moved = TODAY - timedelta(days=rng.randint(3, 40))
        nxt = self.next_ids(h.patch())
        requester = self.requester(hd, ids, nxt)
        g = Golden()
        self.identify(g, hd, factor, requester)
        subject = f"Driver change on {pol['id']}"
        full = drv["full_name"]
        if factor is None:
            self.ticket(g, requester, hd, subject, "policy_change", "pending")
            reply, dialogue = partial_reply("a driver change"), PARTIAL_DIALOGUE
        else:
            g.add("get_policy", policy_id=pol["id"])
            g.add("list_drivers", policy_id=pol["id"])
            if branch == "named_insured_refuse":
                self.ticket(g, requester, hd, subject, "policy_change", "solved")
                reply = (f"I'm sorry, I can't remove you: you are the named insured on policy {pol['id']}, and the named insured cannot be "
                         "removed or excluded. If you no longer want the policy in your name, it would have to be cancelled and a new one written.")
                dialogue = []
            else:
                g.add("get_claims_by_driver", driver_id=drv["id"])
                if branch == "open_claim_escalate":
                    self.ticket(g, requester, hd, subject, "policy_change", "open", "high", "underwriting")
                    reply = (f"{full} was the driver in an open major claim ({ids['claim'](1)}), so they can't be removed until the claim is "
                             "closed. I've sent your request to our underwriting team, who will contact you.")
                    dialogue = []
                elif branch == "exclusion_not_permitted":
                    self.ticket(g, requester, hd, subject, "policy_change", "solved")
                    reply = (f"I'm sorry, driver exclusions are not permitted on policies written in {STATES[state][0]}, so I can't exclude "
                             f"{full}. If they move out of your household, they can be removed from the policy instead.")
                    dialogue = []
                elif branch == "exclude_driver":
                    g.add("update_driver_status", idempotent="excluding an excluded driver again is refused", driver_id=drv["id"],
                          status="excluded", effective_date=iso(TOMORROW))
                    self.ticket(g, requester, hd, subject, "policy_change", "solved")
                    reply = (f"{full} is now an excluded driver on policy {pol['id']}, effective {iso(TOMORROW)}: there is no coverage when "
                             "they drive your vehicles.")
                    dialogue = [{"name": "states_exclusion_date", "must": [ANY_DATE, r"exclu"]}]
                else:
                    g.add("remove_driver", idempotent="removing a removed driver again is refused", driver_id=drv["id"],
                          effective_date=iso(TODAY), reason="left_household")
                    self.ticket(g, requester, hd, subject, "policy_change", "solved")
                    reply = (f"{full} is removed from policy {pol['id']} effective today, {iso(TODAY)}. Removals can't be backdated to "
                             f"{iso(moved)}.")
                    dialogue = [{"name": "states_removal_date", "must": [ANY_DATE]}]
        if branch == "named_insured_refuse":
            opening = f"Hi, please take me off my car insurance policy. My {word} {first} will be the only one driving from now on."
        elif excluding:
            opening = rng.choice([
                f"My {word} {first} lives with us but has a bad driving record and won't drive our cars. Can you exclude them from my policy?",
                f"I'd like {first}, my {word}, excluded from my auto policy so our premium isn't affected. They never drive our cars.",
            ])
        else:
            opening = rng.choice([
                f"Hi, my {word} {first} moved out on {say_date(moved)} and has their own insurance now. Please take them off my policy as of that date.",
                f"Please remove my {word} {first} from my car insurance; they moved out on {say_date(moved)}.",
            ])
        return self.finish(
            rng, h, hd, branch, f"Driver removal or exclusion, branch '{branch}' ({state}, {relationship}).", opening,
            self.identity_facts(hd, factor), "Take the household member off the policy, or exclude them.", g, reply, dialogue, tags=["drivers"],
        )
