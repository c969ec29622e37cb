"""Document families: proof of insurance (ID cards, declarations pages)."""

from __future__ import annotations

import random
import re
from datetime import timedelta
from typing import Any

from thinkingbox_env.authoring import Golden

from ..rules import DOCS_BASE_URL, NOW_TS, TODAY
from ._base import CATALOG, COLORS, PARTIAL_DIALOGUE, InsuranceFamily, iso, partial_reply, seq_id

# --------------------------------------------------------------------------- IN003 proof of insurance


class ProofOfInsurance(InsuranceFamily):
    code = "IN003"
    name = "proof_of_insurance"
    number = 3
    description = "A customer asks for an ID card or declarations page; full verification and an in-force policy are required."
    branches = ("id_card_single", "id_card_all", "declarations", "grace_period_allowed", "lapsed_policy", "removed_vehicle",
                "partial_verification")

    def build(self, rng: random.Random, seed: int) -> dict[str, Any]:
        branch = self.branch(seed)
        ids = self.ids(seed)
        n = {"id_card_single": rng.randint(2, 3), "id_card_all": 2, "removed_vehicle": 2}.get(branch, rng.randint(1, 2))
        h, hd = self.household(rng, ids, n_vehicles=n)
        factor = self.setup_identity(rng, hd, branch)
        pol, vehicles = hd["policy"], hd["vehicles"]
        if branch == "id_card_all" and rng.random() < 0.5:
            (wmi, make, model, _kind) = rng.choice([c for c in CATALOG if c[2] not in {v["model"] for v in vehicles}])
            year = rng.randint(2010, 2018)
            gone = TODAY - timedelta(days=rng.randint(10, 60))
            h.put("vehicles", {"id": ids["vehicle"](9), "policy_id": pol["id"], "vin": self.vin(rng, wmi, year), "year": year, "make": make,
                               "model": model, "color": rng.choice(COLORS), "coverage": "liability", "lienholder": None, "status": "removed",
                               "effective_date": pol["effective_date"], "end_date": iso(gone)})
        if branch == "removed_vehicle":
            gone = TODAY - timedelta(days=rng.randint(5, 60))
            vehicles[1].update(status="removed", end_date=iso(gone))
        lapse = None
        if branch == "grace_period_allowed":
            due = TODAY - timedelta(days=rng.randint(2, 10))
            pol.update(status="grace_period", grace_period_end=iso(due + timedelta(days=15)))
            hd["billing"].update(status="past_due", due_date=iso(due), past_due_amount=hd["billing"]["amount_due"])
        elif branch == "lapsed_policy":
            lapse = TODAY - timedelta(days=rng.randint(2, 40))
            pol.update(status="lapsed", lapse_date=iso(lapse), grace_period_end=iso(lapse - timedelta(days=1)))
            hd["billing"].update(status="lapsed", due_date=iso(lapse - timedelta(days=16)), past_due_amount=hd["billing"]["amount_due"])
        target = vehicles[1] if branch == "removed_vehicle" else rng.choice(vehicles)
        named = branch in ("id_card_single", "removed_vehicle") or (branch in ("grace_period_allowed", "partial_verification") and len(vehicles) > 1)
        if branch == "declarations":
            opening = rng.choice([
                "My lender is asking for the declarations page of my auto policy. Can you send it to me?",
                "Hi, I need a copy of my policy's declarations page for my landlord's paperwork.",
            ])
        elif named:
            desc = f"{target['year']} {target['make']} {target['model']}"
            opening = rng.choice([
                f"Hi, I need a copy of my insurance ID card for my {desc}.",
                f"Can you send me the proof-of-insurance card for the {desc}? I got pulled over and couldn't find it.",
            ])
        else:
            opening = rng.choice([
                "Hi, I need copies of my insurance ID cards, please.",
                "Can you email me my auto insurance cards? I can't find them anywhere.",
            ])
        nxt = self.next_ids(h.patch())
        requester = self.requester(hd, ids, nxt)
        g = Golden()
        self.identify(g, hd, factor, requester)
        subject = f"Proof of insurance for {pol['id']}"
        sql = [{
            "name": "documents_only_with_full_verification",
            "query": f"SELECT count(*) = 0 FROM documents WHERE policy_id = '{pol['id']}' AND issued_at = TIMESTAMP '{NOW_TS}' "
                     f"AND NOT EXISTS (SELECT 1 FROM identity_verifications WHERE customer_id = '{ids['customer']}' AND level = 'full')",
        }]
        if factor is None:
            self.ticket(g, requester, hd, subject, "documents", "pending")
            reply, dialogue = partial_reply("releasing an insurance document"), PARTIAL_DIALOGUE
        else:
            g.add("get_policy", policy_id=pol["id"])
            g.add("list_vehicles", policy_id=pol["id"])
            if branch == "lapsed_policy":
                self.ticket(g, requester, hd, subject, "documents", "solved")
                reply = (f"I'm sorry, I can't issue proof of insurance: policy {pol['id']} lapsed on {iso(lapse)} and is not in force. "
                         "If the lapse was less than 30 days ago you can reinstate it by paying the past-due amount and the reinstatement fee.")
                dialogue = []
            elif branch == "removed_vehicle":
                self.ticket(g, requester, hd, subject, "documents", "solved")
                reply = (f"I'm sorry, I can't issue an ID card for the {target['year']} {target['make']} {target['model']}: it was removed from "
                         f"policy {pol['id']} on {target['end_date']} and is no longer insured with us.")
                dialogue = []
            else:
                if branch == "declarations":
                    wanted: list[dict[str, Any] | None] = [None]
                elif named:
                    wanted = [target]
                else:
                    wanted = [v for v in vehicles if v["status"] == "active"]
                links = []
                for i, v in enumerate(wanted):
                    doc_id = seq_id(nxt["documents"], i)
                    if v is None:
                        g.add("issue_document", policy_id=pol["id"], doc_type="declarations_page")
                        links.append((f"the declarations page of {pol['id']}", doc_id))
                    else:
                        g.add("issue_document", policy_id=pol["id"], doc_type="id_card", vehicle_id=v["id"])
                        links.append((f"the ID card for your {v['year']} {v['make']} {v['model']}", doc_id))
                self.ticket(g, requester, hd, subject, "documents", "solved")
                reply = "Here " + ("it is" if len(links) == 1 else "they are") + ": " + "; ".join(
                    f"{what}: {DOCS_BASE_URL}/{pol['id']}/{doc}.pdf" for what, doc in links) + "."
                dialogue = [{"name": "gives_every_link", "must": [re.escape(doc) for _, doc in links]}]
        return self.finish(
            rng, h, hd, branch, f"Proof of insurance, branch '{branch}'.", opening, self.identity_facts(hd, factor),
            "Get proof-of-insurance documents for the auto policy.", g, reply, dialogue, sql=sql, tags=["documents"],
        )
