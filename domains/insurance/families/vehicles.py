"""Vehicle families: adding a vehicle, removing one or changing its coverage."""

from __future__ import annotations

import random
from datetime import date, timedelta
from typing import Any

from thinkingbox_env.authoring import Golden

from ..rules import TODAY, TOMORROW
from ._base import ANY_DATE, CATALOG, LENDERS, PARTIAL_DIALOGUE, InsuranceFamily, iso, partial_reply, say_date

# --------------------------------------------------------------------------- IN006 vehicle addition


class VehicleAddition(InsuranceFamily):
    code = "IN006"
    name = "vehicle_addition"
    number = 6
    description = "A customer adds or replaces a vehicle; the VIN check and the acquisition-date rule decide."
    branches = ("add_recent_purchase", "add_old_purchase", "add_future_purchase", "replace_vehicle", "invalid_vin", "partial_verification")

    def build(self, rng: random.Random, seed: int) -> dict[str, Any]:
        branch = self.branch(seed)
        ids = self.ids(seed)
        h, hd = self.household(rng, ids, n_vehicles=rng.randint(1, 2))
        factor = self.setup_identity(rng, hd, branch)
        pol, vehicles = hd["policy"], hd["vehicles"]
        wmi, make, model, kind = rng.choice([c for c in CATALOG if c[2] not in {v["model"] for v in vehicles}])
        if branch == "add_old_purchase":
            acq = TODAY - timedelta(days=rng.randint(15, 50))
        elif branch == "add_future_purchase":
            acq = TODAY + timedelta(days=rng.randint(1, 30))
        else:
            acq = TODAY - timedelta(days=rng.randint(0, 14))
        acq = max(acq, date.fromisoformat(pol["effective_date"]) + timedelta(days=1)) if acq < TODAY else acq
        eff = TOMORROW if branch == "add_old_purchase" else acq
        year = rng.randint(2019, 2026)
        vin = self.vin(rng, wmi, year)
        given_vin = self.bad_vin(rng, vin) if branch == "invalid_vin" else vin
        old = vehicles[0]
        if rng.random() < 0.4:
            coverage, cov_text = old["coverage"], f"The same coverage as my {old['make']} {old['model']}."
        else:
            coverage = rng.choice(["full", "liability"])
            cov_text = "Full coverage, please." if coverage == "full" else "Just liability coverage, please."
        nxt = self.next_ids(h.patch())
        requester = self.requester(hd, ids, nxt)
        g = Golden()
        self.identify(g, hd, factor, requester)
        subject = f"Vehicle change on {pol['id']}"
        desc = f"{year} {make} {model}"
        if factor is None:
            self.ticket(g, requester, hd, subject, "policy_change", "pending")
            reply, dialogue = partial_reply("adding a vehicle"), PARTIAL_DIALOGUE
        else:
            g.add("get_policy", policy_id=pol["id"])
            g.add("list_vehicles", policy_id=pol["id"])
            g.add("validate_vin", vin=given_vin)
            if branch == "invalid_vin":
                self.ticket(g, requester, hd, subject, "policy_change", "pending")
                reply = (f"The VIN {given_vin} doesn't pass the VIN check (the check digit doesn't match), so I can't add the {make} {model} yet. "
                         "Please read the VIN again from the registration or the driver-side door jamb and send it to us; your ticket stays pending.")
                dialogue = [{"name": "asks_for_corrected_vin", "must": [r"\bVIN\b"]}]
            else:
                g.add("add_vehicle", idempotent="adding the same VIN again is refused: it is already on the policy",
                      policy_id=pol["id"], vin=vin, model=model, coverage=coverage, effective_date=iso(eff))
                if branch == "replace_vehicle":
                    g.add("remove_vehicle", idempotent="removing a removed vehicle again is refused", vehicle_id=old["id"],
                          effective_date=iso(eff), reason="traded_in")
                self.ticket(g, requester, hd, subject, "policy_change", "solved")
                reply = f"Your {desc} (VIN {vin}) is on policy {pol['id']} with {coverage} coverage, effective {iso(eff)}."
                if branch == "replace_vehicle":
                    reply += f" The {old['year']} {old['make']} {old['model']} is removed on the same date."
                if branch == "add_old_purchase":
                    reply += (f" Because you bought it on {iso(acq)}, more than 14 days ago, coverage can only start tomorrow; it was not "
                              "insured with us before.")
                dialogue = [{"name": "states_effective_date", "must": [ANY_DATE]}]
        if branch == "replace_vehicle":
            opening = f"Hi, I traded in my {old['year']} {old['make']} {old['model']} for a {desc}. Can you switch my insurance over to the new car?"
        elif branch == "add_future_purchase":
            opening = f"Hello, I'm buying a {desc} soon and want it on my auto policy from the day I get it."
        else:
            opening = rng.choice([f"Hi, I bought a {desc} and need to add it to my auto policy.",
                                  f"I'd like to add my new {model} to my car insurance, please. It's a {desc}."])
        when_text = f"I'm picking it up on {say_date(acq)}." if acq > TODAY else f"I bought it on {say_date(acq)}."
        facts = self.identity_facts(hd, factor) + [
            {"text": f"The VIN is {given_vin}.", "unlock": ["vin", "vehicle identification", "identification number"]},
            {"text": when_text, "unlock": ["when", "purchase", "bought", "buy", "acquire", "pick", "date"]},
            {"text": cov_text, "unlock": ["coverage", "liability", "full", "comprehensive", "collision"]},
        ]
        return self.finish(
            rng, h, hd, branch, f"Vehicle addition, branch '{branch}' (acquired {iso(acq)}, effective {iso(eff)}).", opening, facts,
            "Get the new vehicle insured on the policy.", g, reply, dialogue, tags=["vehicles"],
        )


# --------------------------------------------------------------------------- IN007 vehicle removal and coverage


class VehicleRemovalCoverage(InsuranceFamily):
    code = "IN007"
    name = "vehicle_removal_coverage"
    number = 7
    description = "A customer removes a vehicle or drops its coverage; the last-vehicle rule, dates and lienholders decide."
    branches = ("remove_sold", "remove_future_sale", "remove_last_vehicle", "coverage_drop", "lienholder_refuse", "partial_verification")

    def build(self, rng: random.Random, seed: int) -> dict[str, Any]:
        branch = self.branch(seed)
        ids = self.ids(seed)
        n = 1 if branch == "remove_last_vehicle" else rng.randint(2, 3)
        h, hd = self.household(rng, ids, n_vehicles=n)
        factor = self.setup_identity(rng, hd, branch)
        pol, vehicles = hd["policy"], hd["vehicles"]
        target = rng.choice(vehicles)
        if branch in ("coverage_drop", "lienholder_refuse"):
            target.update(coverage="full", lienholder=rng.choice(LENDERS) if branch == "lienholder_refuse" else None)
        elif branch == "partial_verification" and rng.random() < 0.5:
            target.update(coverage="full", lienholder=None)
        sold = TODAY - timedelta(days=rng.randint(1, 30))
        sale = TODAY + timedelta(days=rng.randint(2, 25))
        nxt = self.next_ids(h.patch())
        requester = self.requester(hd, ids, nxt)
        g = Golden()
        self.identify(g, hd, factor, requester)
        subject = f"Vehicle change on {pol['id']}"
        desc = f"{target['year']} {target['make']} {target['model']}"
        coverage_request = branch in ("coverage_drop", "lienholder_refuse") or (branch == "partial_verification" and target["coverage"] == "full")
        if factor is None:
            self.ticket(g, requester, hd, subject, "policy_change", "pending")
            reply, dialogue = partial_reply("a vehicle or coverage change"), PARTIAL_DIALOGUE
        else:
            g.add("get_policy", policy_id=pol["id"])
            g.add("list_vehicles", policy_id=pol["id"])
            if branch == "remove_last_vehicle":
                self.ticket(g, requester, hd, subject, "policy_change", "solved")
                reply = (f"I'm sorry, I can't remove the {desc}: it is the only vehicle on policy {pol['id']}, and a policy must keep at least "
                         "one vehicle. If you no longer have a car to insure, you can cancel the policy instead.")
                dialogue = []
            elif branch == "lienholder_refuse":
                self.ticket(g, requester, hd, subject, "policy_change", "solved")
                reply = (f"I'm sorry, I can't drop the {desc} to liability only: it is financed through {target['lienholder']}, and a "
                         "financed vehicle must keep full coverage until the lien is released.")
                dialogue = []
            elif branch == "coverage_drop":
                g.add("update_vehicle_coverage", idempotent="setting the same coverage again is refused", vehicle_id=target["id"],
                      coverage="liability", effective_date=iso(TOMORROW))
                self.ticket(g, requester, hd, subject, "policy_change", "solved")
                reply = f"The {desc} will have liability-only coverage from {iso(TOMORROW)}; collision and comprehensive end then."
                dialogue = [{"name": "states_change_date", "must": [ANY_DATE]}]
            else:
                eff = sale if branch == "remove_future_sale" else TODAY
                g.add("remove_vehicle", idempotent="removing a removed vehicle again is refused", vehicle_id=target["id"],
                      effective_date=iso(eff), reason="sold")
                self.ticket(g, requester, hd, subject, "policy_change", "solved")
                reply = f"The {desc} is removed from policy {pol['id']} effective {iso(eff)}."
                if branch == "remove_sold":
                    reply += f" A removal can't be backdated to the sale date ({iso(sold)}), so it takes effect today."
                dialogue = [{"name": "states_removal_date", "must": [ANY_DATE]}]
        if coverage_request:
            opening = rng.choice([
                f"Hi, I'd like to drop collision and comprehensive on my {target['make']} {target['model']} and keep just liability.",
                f"My {target['make']} {target['model']} is getting old; please switch it to liability-only coverage to lower my premium.",
            ])
        elif branch in ("remove_future_sale",):
            opening = f"Hello, I'm selling my {target['make']} {target['model']} on {say_date(sale)}. Please take it off my policy from that day."
        else:
            opening = rng.choice([
                f"Hi, I sold my {target['make']} {target['model']} on {say_date(sold)}. Please remove it from my policy as of the sale date.",
                f"I no longer own my {target['make']} {target['model']}; I sold it on {say_date(sold)}. Can you take it off my insurance?",
            ])
        return self.finish(
            rng, h, hd, branch, f"Vehicle removal or coverage change, branch '{branch}'.", opening, self.identity_facts(hd, factor),
            "Remove the vehicle from the policy or reduce its coverage.", g, reply, dialogue, tags=["vehicles"],
        )
