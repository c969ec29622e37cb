"""Claim families: first notice of loss."""

from __future__ import annotations

import random
import re
from datetime import date, timedelta
from typing import Any

from thinkingbox_env.authoring import Golden

from ..rules import TODAY
from ._base import RELATION_WORDS, InsuranceFamily, add_months, iso, say_date

# --------------------------------------------------------------------------- IN008 first notice of loss

SCENARIOS = {
    "collision_minor": [
        ("Someone backed into my car in a grocery store parking lot and dented the rear bumper.", "collision", True, False),
        ("I rear-ended another car at a stoplight at low speed; my front bumper is cracked.", "collision", True, False),
        ("I scraped a concrete pillar in a parking garage and damaged the passenger door.", "collision", True, False),
    ],
    "injury_major": [
        ("I was hit by a car that ran a red light at an intersection.", "collision", None, True),
        ("Another driver sideswiped us on the freeway and we spun into the guardrail.", "collision", None, True),
    ],
    "animal_comprehensive": [
        ("I hit a deer on the highway at night.", "comprehensive", None, False),
        ("An elk ran out in front of me on a mountain road and I couldn't stop in time.", "comprehensive", None, False),
    ],
    "glass_only": [
        ("A rock from a gravel truck cracked my windshield on the interstate.", "glass", True, False),
        ("Hail cracked the rear window, nothing else was damaged.", "glass", True, False),
    ],
}


class FirstNoticeOfLoss(InsuranceFamily):
    code = "IN008"
    name = "first_notice_of_loss"
    number = 8
    description = "A customer reports a loss; the right vehicle and driver, coverage on the date of loss, loss type and severity decide."
    branches = ("collision_minor", "injury_major", "animal_comprehensive", "glass_only", "outside_coverage", "excluded_driver",
                "duplicate_claim", "partial_verification_proceeds")

    def build(self, rng: random.Random, seed: int) -> dict[str, Any]:
        branch = self.branch(seed)
        ids = self.ids(seed)
        h, hd = self.household(rng, ids, n_vehicles=rng.randint(2, 3))
        factor = self.setup_identity(rng, hd, branch)
        pol, vehicles, state = hd["policy"], hd["vehicles"], hd["state"]
        other_rel = rng.choice(["spouse", "child"])
        other = self.add_driver_row(h, ids, 2, rng, other_rel, last=hd["p"]["last"], state=state,
                                    age=(17, 22) if other_rel == "child" else (25, 60), effective=date.fromisoformat(pol["effective_date"]))
        gender = rng.randint(0, 1)
        excluded = None
        if branch == "excluded_driver":
            excluded = self.add_driver_row(h, ids, 3, rng, "sibling", status="excluded", last=hd["p"]["last"], state=state,
                                           effective=date.fromisoformat(pol["effective_date"]))
        eff = date.fromisoformat(pol["effective_date"])
        lapse = reinstated = None
        if branch == "outside_coverage":
            reinstated = TODAY - timedelta(days=rng.randint(4, 12))
            lapse = reinstated - timedelta(days=rng.randint(5, 20))
            if eff > lapse - timedelta(days=30):
                eff = lapse - timedelta(days=rng.randint(40, 120))
                eff = eff.replace(day=min(eff.day, 28))
                pol.update(effective_date=iso(eff), expiration_date=iso(add_months(eff, 12)))
                for row in h.rows["drivers"] + h.rows["vehicles"]:
                    row["effective_date"] = iso(eff)
            pol["lapse_date"] = iso(lapse)
            h.put("reinstatements", {"id": ids["reinstatement"](1), "policy_id": pol["id"], "effective_date": iso(reinstated),
                                     "lapse_days": (reinstated - lapse).days, "created_at": f"{iso(reinstated)} 10:05:00"})
            dol = lapse + timedelta(days=rng.randint(0, (reinstated - lapse).days - 1))
        else:
            dol = TODAY - timedelta(days=rng.randint(1, min(15, (TODAY - eff).days)))
        vehicle = rng.choice(vehicles)
        if branch == "excluded_driver":
            driver, drv_text = excluded, f"My {RELATION_WORDS['sibling'][gender]} {excluded['full_name']} was driving."  # type: ignore[index]
        elif rng.random() < 0.5:
            driver, drv_text = hd["self_driver"], "I was driving."
        else:
            driver = other
            drv_text = f"My {RELATION_WORDS[other_rel][gender]} {other['full_name']} was driving."
        kind = branch if branch in SCENARIOS else "collision_minor"
        text, loss_type, drivable, injuries = rng.choice(SCENARIOS[kind])
        if drivable is None:
            drivable = rng.random() < 0.4
        major = injuries or not drivable
        if branch == "duplicate_claim":
            h.put("claims", {"id": ids["claim"](1), "policy_id": pol["id"], "vehicle_id": vehicle["id"], "driver_id": driver["id"],  # type: ignore[index]
                             "date_of_loss": iso(dol), "loss_type": loss_type, "severity": "major" if major else "minor",
                             "injuries": injuries, "drivable": drivable, "status": "open", "description": text,
                             "reported_at": f"{iso(dol + timedelta(days=1))} 08:40:00"})
        nxt = self.next_ids(h.patch())
        requester = self.requester(hd, ids, nxt)
        g = Golden()
        self.identify(g, hd, factor, requester)
        g.add("get_policy", policy_id=pol["id"])
        g.add("list_vehicles", policy_id=pol["id"])
        g.add("list_drivers", policy_id=pol["id"])
        g.add("get_claims_by_vehicle", vehicle_id=vehicle["id"])
        subject = f"New loss report on {pol['id']}"
        desc = self.describe(vehicle)
        if branch == "outside_coverage":
            self.ticket(g, requester, hd, subject, "claims", "open", "high", "claims")
            reply = (f"Policy {pol['id']} was not in force on {iso(dol)}: it lapsed on {iso(lapse)} and was reinstated on {iso(reinstated)}, "  # type: ignore[arg-type]
                     "so I can't open a claim. I've sent the loss to our claims team for a coverage review; they will contact you.")
            dialogue = []
        elif branch == "excluded_driver":
            self.ticket(g, requester, hd, subject, "claims", "open", "high", "claims")
            reply = (f"{excluded['full_name']} is an excluded driver on policy {pol['id']}, so I can't open a claim for this loss. "  # type: ignore[index]
                     "I've sent it to our claims team for a coverage review; they will contact you.")
            dialogue = []
        elif branch == "duplicate_claim":
            self.ticket(g, requester, hd, subject, "claims", "solved")
            reply = (f"This loss is already reported as claim {ids['claim'](1)} for your {desc}, dated {iso(dol)}, and that claim is open, "
                     "so I didn't open a second one. The adjuster on that claim will keep you updated.")
            dialogue = [{"name": "gives_existing_claim", "must": [re.escape(ids["claim"](1))]}]
        else:
            claim_id = nxt["claims"]
            args: dict[str, Any] = {"policy_id": pol["id"], "vehicle_id": vehicle["id"], "date_of_loss": iso(dol), "loss_type": loss_type,
                                    "severity": "major" if major else "minor", "injuries": injuries, "drivable": drivable, "description": text,
                                    "driver_id": driver["id"]}  # type: ignore[index]
            g.add("file_claim", **args)
            if major:
                self.ticket(g, requester, hd, subject, "claims", "open", "urgent" if injuries else "high", "claims")
                why = "someone was injured" if injuries else "the car can't be driven"
                reply = (f"I've opened claim {claim_id} for your {desc} ({loss_type}, loss on {iso(dol)}). Because {why}, it is a major "
                         "claim: a claims adjuster will contact you with priority.")
            else:
                self.ticket(g, requester, hd, subject, "claims", "solved")
                reply = f"I've opened claim {claim_id} for your {desc} ({loss_type}, loss on {iso(dol)}). An adjuster will contact you about repairs."
            dialogue = [{"name": "gives_claim_number", "must": [re.escape(claim_id)]}]
        injury_text = rng.choice(["My passenger hurt her neck and went to urgent care.", "I hurt my wrist and had it checked at the ER."]) \
            if injuries else "Nobody was hurt."
        drive_text = "The car still drives fine." if drivable else "The car can't be driven; it had to be towed."
        facts = self.identity_facts(hd, factor) + [
            {"text": f"It happened on {say_date(dol)}.", "unlock": ["when", "date of", "what day", "which day", "what date", "happen"]},
            {"text": f"It was my {desc}.", "unlock": ["vehicle", "car", "which", "truck", "suv", "make", "model"]},
            {"text": drv_text, "unlock": ["driving", "driver", "who was", "behind the wheel"]},
            {"text": injury_text, "unlock": ["injur", "hurt", "anyone", "medical"]},
            {"text": drive_text, "unlock": ["drivable", "driveable", "drive it", "be driven", "tow", "still drive"]},
        ]
        opening = rng.choice([f"Hi, I need to report an accident. {text}", f"Hello, I want to file a claim. {text}"])
        return self.finish(
            rng, h, hd, branch, f"First notice of loss, branch '{branch}' ({loss_type}, {'major' if major else 'minor'}).", opening, facts,
            "Report the loss and get a claim opened.", g, reply, dialogue, tags=["claims"],
        )
