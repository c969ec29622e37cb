"""Policy lifecycle families: reinstatement after a lapse, cancellation."""

from __future__ import annotations

import random
from datetime import date, timedelta
from decimal import Decimal
from typing import Any

from thinkingbox_env.authoring import Golden

from ..rules import REINSTATEMENT_FEE, TODAY, cancellation_refund, money
from ._base import AMOUNT, ANY_DATE, PARTIAL_DIALOGUE, InsuranceFamily, iso, partial_reply, say_date, usd

# --------------------------------------------------------------------------- IN009 reinstatement


class Reinstatement(InsuranceFamily):
    code = "IN009"
    name = "reinstatement"
    number = 9
    description = "A customer whose policy lapsed asks to reinstate it; the 30-day window, payment and the fee rule decide."
    branches = ("reinstate", "elite_fee_waived", "lapsed_too_long", "cancelled_not_lapsed", "cannot_pay_now", "partial_verification")

    def build(self, rng: random.Random, seed: int) -> dict[str, Any]:
        branch = self.branch(seed)
        ids = self.ids(seed)
        if branch == "elite_fee_waived":
            tier = "elite"
        elif branch == "reinstate":
            tier = rng.choice(["standard", "preferred"])
        else:
            tier = None
        days = rng.choice([rng.randint(1, 29), 30]) if branch != "lapsed_too_long" else rng.randint(31, 80)
        lapse = TODAY - timedelta(days=days)
        due = lapse - timedelta(days=16)
        eff = due - timedelta(days=rng.randint(30, 150))
        eff = eff.replace(day=min(eff.day, 28))
        h, hd = self.household(rng, ids, tier=tier, plan=rng.choice(["monthly", "quarterly"]), eff=eff)
        factor = self.setup_identity(rng, hd, branch)
        pol, bill = hd["policy"], hd["billing"]
        past_due = money(Decimal(bill["amount_due"]) * rng.choice([1, 1, 2])) if Decimal(bill["amount_due"]) > 0 else money(150)
        if branch == "cancelled_not_lapsed":
            cdate = TODAY - timedelta(days=rng.randint(3, 25))
            pol.update(status="cancelled", cancellation_date=iso(cdate), cancel_reason="switched_insurer")
            bill.update(status="closed", amount_due="0.00")
            h.put("cancellations", {"id": ids["cancellation"](1), "policy_id": pol["id"], "effective_date": iso(cdate), "reason": "switched_insurer",
                                    "refund_amount": "0.00", "status": "completed", "requested_at": f"{iso(cdate - timedelta(days=6))} 16:10:00"})
        else:
            pol.update(status="lapsed", lapse_date=iso(lapse), grace_period_end=iso(lapse - timedelta(days=1)))
            bill.update(status="lapsed", due_date=iso(due), past_due_amount=str(past_due))
        fee = Decimal("0.00") if hd["tier"] == "elite" else REINSTATEMENT_FEE
        total = money(past_due + fee)
        method = rng.choice(["card_on_file", "bank_account_on_file"])
        nxt = self.next_ids(h.patch())
        requester = self.requester(hd, ids, nxt)
        g = Golden()
        self.identify(g, hd, factor, requester)
        subject = f"Reinstatement of {pol['id']}"
        if factor is None:
            self.ticket(g, requester, hd, subject, "reinstatement", "pending")
            reply, dialogue = partial_reply("reinstating a policy"), PARTIAL_DIALOGUE
        else:
            g.add("get_policy", policy_id=pol["id"])
            g.add("get_billing_account", policy_id=pol["id"])
            if branch == "cancelled_not_lapsed":
                self.ticket(g, requester, hd, subject, "reinstatement", "solved")
                reply = (f"I'm sorry, policy {pol['id']} was cancelled on {pol['cancellation_date']} at your request, and a cancelled policy "
                         "can't be reinstated; only a lapsed one can. You're welcome to apply for a new policy.")
                dialogue = []
            elif branch == "lapsed_too_long":
                self.ticket(g, requester, hd, subject, "reinstatement", "solved")
                reply = (f"I'm sorry, policy {pol['id']} lapsed on {iso(lapse)}, {days} days ago. Reinstatement is only possible within 30 days "
                         "of the lapse, so it can't be reinstated; you can apply for a new policy.")
                dialogue = []
            elif branch == "cannot_pay_now":
                self.ticket(g, requester, hd, subject, "reinstatement", "pending")
                reply = (f"To reinstate policy {pol['id']} the full {usd(total)} ({usd(past_due)} past due plus the {usd(fee)} reinstatement fee) "
                         "must be paid now, so I can't reinstate it today. Your ticket stays pending: contact us when you can pay, within 30 "
                         f"days of the lapse ({iso(lapse + timedelta(days=30))} at the latest).")
                dialogue = []
            else:
                g.add("record_payment", billing_account_id=ids["billing"], amount=float(total), method=method, purpose="reinstatement")
                g.add("reinstate_policy", idempotent="reinstating an active policy again is refused", policy_id=pol["id"], effective_date=iso(TODAY))
                g.add("reset_billing_status", idempotent="resetting again recomputes the same status", billing_account_id=ids["billing"])
                self.ticket(g, requester, hd, subject, "reinstatement", "solved")
                fee_text = f"{usd(past_due)} past due plus the {usd(fee)} reinstatement fee" if fee else f"{usd(past_due)} past due; the reinstatement fee is waived for elite customers"
                reply = (f"Policy {pol['id']} is reinstated effective today, {iso(TODAY)}. I charged {usd(total)} ({fee_text}) to your "
                         f"{method.replace('_', ' ')}. The days from {iso(lapse)} to {iso(TODAY - timedelta(days=1))} remain without coverage.")
                dialogue = [{"name": "states_amount_and_date", "must": [AMOUNT, ANY_DATE]}]
        opening = rng.choice([
            "Hi, I missed a couple of payments and my car insurance lapsed. Can I get it reinstated?",
            "My auto policy isn't active anymore because I didn't pay in time. I'd like to get my coverage back.",
        ]) if branch != "cancelled_not_lapsed" else "Hi, I cancelled my car insurance a little while ago but I'd like to get that policy back."
        pay_text = {"card_on_file": "Please use the card on file.", "bank_account_on_file": "Please use the bank account on file."}[method]
        if branch == "cannot_pay_now":
            pay_text = "I can't pay anything today; I get paid next week."
        facts = self.identity_facts(hd, factor) + [{"text": pay_text, "unlock": ["card", "bank", "payment method", "pay", "method", "charge"]}]
        return self.finish(
            rng, h, hd, branch, f"Reinstatement, branch '{branch}' ({hd['tier']}, {days} days since the lapse).", opening, facts,
            "Get the lapsed auto policy reinstated.", g, reply, dialogue, tags=["reinstatement"],
        )


# --------------------------------------------------------------------------- IN010 policy cancellation


class PolicyCancellation(InsuranceFamily):
    code = "IN010"
    name = "policy_cancellation"
    number = 10
    description = "A customer asks to cancel (or keep) a policy; effective-date limits, open claims and the refund decide."
    branches = ("future_dated", "backdated_request", "too_far_ahead", "open_claim_escalate", "withdraw_pending", "partial_verification")

    def build(self, rng: random.Random, seed: int) -> dict[str, Any]:
        branch = self.branch(seed)
        ids = self.ids(seed)
        n = 1 if branch == "backdated_request" else rng.randint(1, 2)
        h, hd = self.household(rng, ids, n_vehicles=n, plan=rng.choice(["full", "full", "semiannual", "quarterly"]))
        factor = self.setup_identity(rng, hd, branch)
        pol, bill = hd["policy"], hd["billing"]
        reason = rng.choice(["switched_insurer", "moving_out_of_state"])
        if branch == "backdated_request":
            reason = "sold_vehicle"
            asked = TODAY - timedelta(days=rng.randint(3, 40))
            asked = max(asked, date.fromisoformat(pol["effective_date"]) + timedelta(days=1))
            cancel_on = TODAY
        elif branch == "too_far_ahead":
            asked = TODAY + timedelta(days=rng.randint(61, 120))
            cancel_on = None
        else:
            asked = TODAY + timedelta(days=rng.randint(1, 60))
            cancel_on = asked
        if branch == "open_claim_escalate":
            v = hd["vehicles"][0]
            h.put("claims", {"id": ids["claim"](1), "policy_id": pol["id"], "vehicle_id": v["id"], "driver_id": hd["self_driver"]["id"],
                             "date_of_loss": iso(TODAY - timedelta(days=rng.randint(5, 30))), "loss_type": rng.choice(["collision", "glass"]),
                             "severity": "minor", "injuries": False, "drivable": True, "status": "open", "description": "Minor damage, repair pending.",
                             "reported_at": "2026-05-01 12:00:00"})
        if branch == "withdraw_pending":
            requested = TODAY - timedelta(days=rng.randint(2, 10))
            refund = cancellation_refund(hd["premium"], bill["paid_to_date"], bill["past_due_amount"], hd["eff"], hd["exp"], asked)
            h.put("cancellations", {"id": ids["cancellation"](1), "policy_id": pol["id"], "effective_date": iso(asked), "reason": reason,
                                    "refund_amount": str(refund), "status": "scheduled", "requested_at": f"{iso(requested)} 11:45:00"})
            pol.update(status="pending_cancellation", cancellation_date=iso(asked), cancel_reason=reason)
        nxt = self.next_ids(h.patch())
        requester = self.requester(hd, ids, nxt)
        g = Golden()
        self.identify(g, hd, factor, requester)
        subject = f"Cancellation request for {pol['id']}"
        if factor is None:
            self.ticket(g, requester, hd, subject, "cancellation", "pending")
            reply, dialogue = partial_reply("a cancellation"), PARTIAL_DIALOGUE
        else:
            g.add("get_policy", policy_id=pol["id"])
            g.add("get_claims_by_policy", policy_id=pol["id"], status="open")
            g.add("get_cancellations", policy_id=pol["id"])
            if branch == "withdraw_pending":
                g.add("withdraw_cancellation", idempotent="withdrawing a withdrawn cancellation again is refused", cancellation_id=ids["cancellation"](1))
                self.ticket(g, requester, hd, subject, "cancellation", "solved")
                reply = (f"Done: the cancellation scheduled for {iso(asked)} is withdrawn and policy {pol['id']} stays active. No refund will be "
                         "issued, and your billing continues as before.")
                dialogue = [{"name": "confirms_withdrawal", "must": [r"withdr|stays active|remain(s)? active|keep"]}]
            elif branch == "open_claim_escalate":
                self.ticket(g, requester, hd, subject, "cancellation", "open", "high", "claims")
                reply = (f"Policy {pol['id']} has an open claim ({ids['claim'](1)}), so it can't be cancelled in chat. I've sent your request "
                         "to our claims team for review; they will contact you about the claim and the cancellation.")
                dialogue = []
            elif branch == "too_far_ahead":
                self.ticket(g, requester, hd, subject, "cancellation", "solved")
                reply = (f"I'm sorry, {iso(asked)} is more than 60 days away, so I can't schedule the cancellation yet. Please contact us again "
                         f"on or after {iso(asked - timedelta(days=60))} and we'll set it up.")
                dialogue = []
            else:
                assert cancel_on is not None
                refund = cancellation_refund(hd["premium"], bill["paid_to_date"], bill["past_due_amount"], hd["eff"], hd["exp"], cancel_on)
                g.add("get_billing_account", policy_id=pol["id"])
                g.add("quote_cancellation", policy_id=pol["id"], effective_date=iso(cancel_on))
                g.add("schedule_cancellation", idempotent="a second cancellation is refused while one is scheduled",
                      policy_id=pol["id"], effective_date=iso(cancel_on), reason=reason)
                self.ticket(g, requester, hd, subject, "cancellation", "solved")
                reply = f"Policy {pol['id']} is scheduled to cancel on {iso(cancel_on)}. Your refund is {usd(refund)}"
                reply += ", sent to your payment method on file within 10 business days after that date." if refund > 0 else "."
                if branch == "backdated_request":
                    reply += f" A cancellation can't be backdated to {iso(asked)}, so it takes effect today."
                dialogue = [{"name": "states_date_and_refund", "must": [ANY_DATE, AMOUNT]}]
        if branch == "withdraw_pending":
            opening = "Hi, I asked to cancel my car insurance last week, but I've changed my mind. I'd like to keep my policy."
            facts = self.identity_facts(hd, factor)
        elif branch == "backdated_request":
            opening = "Hello, I sold my only car and don't need my auto insurance anymore. Please cancel it as of the day I sold it."
            facts = self.identity_facts(hd, factor) + [
                {"text": f"I sold it on {say_date(asked)}.", "unlock": ["when", "date", "sold", "sale"]}]
        else:
            why = ("I found a cheaper policy with another company" if reason == "switched_insurer"
                   else f"I'm moving to {rng.choice(['Texas', 'Florida', 'Ohio', 'Georgia'])}, where you don't offer policies")
            opening = rng.choice([f"Hi, I'd like to cancel my auto policy. {why}.", f"Please cancel my car insurance; {why}."])
            start = "my new policy starts" if reason == "switched_insurer" else "I move"
            facts = self.identity_facts(hd, factor) + [
                {"text": f"I'd like it cancelled on {say_date(asked)}, the day {start}.", "unlock": ["when", "date", "effective", "start", "move"]}]
        return self.finish(
            rng, h, hd, branch, f"Policy cancellation, branch '{branch}' (asked {iso(asked)}).", opening, facts,
            "Cancel the auto policy (or keep it, after all).", g, reply, dialogue, tags=["cancellation"],
        )
