"""Billing families: due-date extensions and installment plans."""

from __future__ import annotations

import random
from datetime import date, timedelta
from decimal import Decimal
from typing import Any

from thinkingbox_env.authoring import Golden

from ..rules import (
    ARRANGEMENT_LIMITS,
    EXTENSION_MAX_BUSINESS_DAYS,
    TODAY,
    add_business_days,
    installment_quote,
    is_business_day,
    next_business_day,
)
from ._base import (
    AMOUNT,
    ANY_DATE,
    PARTIAL_DIALOGUE,
    InsuranceFamily,
    arrangement_limit_sql,
    arrangement_rows,
    iso,
    partial_reply,
    say_date,
    usd,
)

# --------------------------------------------------------------------------- IN001 billing extension


class BillingExtension(InsuranceFamily):
    code = "IN001"
    name = "billing_extension"
    number = 1
    description = "A customer asks to move a payment due date; tier limits, business-day maxima and policy status decide."
    branches = ("within_limit", "beyond_max", "limit_reached", "old_arrangement", "weekend_request", "lapsed_policy", "fraud_flag",
                "partial_verification")

    def build(self, rng: random.Random, seed: int) -> dict[str, Any]:
        branch = self.branch(seed)
        ids = self.ids(seed)
        h, hd = self.household(rng, ids, plan=rng.choice(["monthly", "quarterly"]), fraud=branch == "fraud_flag")
        factor = self.setup_identity(rng, hd, branch)
        tier, pol, bill = hd["tier"], hd["policy"], hd["billing"]
        limit, nmax = ARRANGEMENT_LIMITS[tier], EXTENSION_MAX_BUSINESS_DAYS[tier]
        amount = Decimal(bill["amount_due"])
        lapse = None
        if branch == "lapsed_policy":
            lapse = TODAY - timedelta(days=rng.randint(3, 25))
            due = lapse - timedelta(days=16)
            pol.update(status="lapsed", lapse_date=iso(lapse), grace_period_end=iso(lapse - timedelta(days=1)))
            bill.update(status="lapsed", past_due_amount=str(amount))
            state = "was due"
        elif rng.random() < 0.45:
            due = TODAY - timedelta(days=rng.randint(2, 5))
            while not is_business_day(due):
                due -= timedelta(days=1)
            pol.update(status="grace_period", grace_period_end=iso(due + timedelta(days=15)))
            bill.update(status="past_due", past_due_amount=str(amount))
            state = "was due"
        else:
            due = next_business_day(TODAY + timedelta(days=rng.randint(1, 8)))
            state = "is due"
        bill["due_date"] = iso(due)
        maxd = add_business_days(due, nmax)
        if branch == "limit_reached":
            recent, old = limit, rng.randint(0, 1)
        elif branch == "old_arrangement":
            recent, old = limit - 1, rng.randint(1, 2)
        else:
            recent, old = rng.randint(0, limit - 1), 0
        for row in arrangement_rows(ids, rng, recent, old):
            h.put("payment_arrangements", row)
        lo = max(TODAY, due)
        span = [lo + timedelta(days=i) for i in range(1, 45)]
        within = [d for d in span if d <= maxd and is_business_day(d)]
        off_days = [d for d in span if d <= maxd and not is_business_day(d) and next_business_day(d) <= maxd]
        new = None
        if branch == "beyond_max":
            req = maxd + timedelta(days=rng.randint(3, 21))
            new = maxd
        elif branch == "weekend_request" and off_days:
            req = rng.choice(off_days)
            new = next_business_day(req)
        elif branch == "lapsed_policy":
            req = next_business_day(TODAY + timedelta(days=rng.randint(5, 15)))
        else:
            req = rng.choice(within)
            if branch in ("within_limit", "old_arrangement", "weekend_request"):
                new = req
        nxt = self.next_ids(h.patch())
        requester = self.requester(hd, ids, nxt)
        g = Golden()
        self.identify(g, hd, factor, requester)
        subject = f"Payment extension request on {pol['id']}"
        dialogue: list[dict[str, Any]]
        if factor is None:
            self.ticket(g, requester, hd, subject, "billing", "pending")
            reply, dialogue = partial_reply("a payment extension"), PARTIAL_DIALOGUE
        else:
            g.add("get_policy", policy_id=pol["id"])
            g.add("get_billing_account", policy_id=pol["id"])
            g.add("get_arrangement_history", billing_account_id=ids["billing"])
            if branch == "fraud_flag":
                self.ticket(g, requester, hd, subject, "billing", "open", "high", "special_investigations")
                reply = ("Your request needs a review by another team before any payment arrangement can be made, so I can't move the due "
                         "date today. I've passed it on with high priority and they will contact you.")
                dialogue = [{"name": "does_not_disclose_fraud_flag", "must_not": [r"fraud"]}]
            elif branch == "lapsed_policy":
                self.ticket(g, requester, hd, subject, "billing", "solved")
                reply = (f"I'm sorry, I can't extend the due date: policy {pol['id']} lapsed on {iso(lapse)} (the payment of {usd(amount)} "
                         f"was due on {iso(due)}). You can still reinstate it, within 30 days of the lapse, by paying the past-due amount "
                         "plus the reinstatement fee.")
                dialogue = []
            elif branch == "limit_reached":
                self.ticket(g, requester, hd, subject, "billing", "solved")
                reply = (f"I'm sorry, I can't grant another extension: your billing account already has {recent} payment arrangement"
                         f"{'s' if recent != 1 else ''} in the last 12 months, which is the limit for the {tier} tier. Your payment of "
                         f"{usd(amount)} remains due on {iso(due)}.")
                dialogue = []
            else:
                assert new is not None
                g.add("grant_extension", idempotent="a second extension to the same date is refused: it is no longer after the due date",
                      billing_account_id=ids["billing"], new_due_date=iso(new))
                self.ticket(g, requester, hd, subject, "billing", "solved")
                reply = f"Done: the due date of your {usd(amount)} payment on policy {pol['id']} is now {iso(new)} ({new.strftime('%A')})."
                if branch == "beyond_max":
                    reply += (f" {iso(req)} is past the latest date your {tier} tier allows ({nmax} business days after the current due date "
                              f"{iso(due)}), so I moved it to that latest date, as you agreed.")
                elif new != req:
                    reply += f" {iso(req)} is not a business day, so the new due date is the next business day."
                dialogue = [{"name": "states_new_due_date", "must": [ANY_DATE]}]
        opening = rng.choice([
            f"Hi, my car insurance payment of {usd(amount)} {state} {say_date(due)}. Could you move the due date to {say_date(req)}?",
            f"Hello. I'm short on money this month; can I get an extension on my auto insurance payment until {say_date(req)}? It {state} {say_date(due)}.",
            f"I need more time to pay my premium. It {state} {say_date(due)} and I'd like to push it to {say_date(req)}.",
        ])
        return self.finish(
            rng, h, hd, branch, f"Billing extension, branch '{branch}' ({tier}, due {iso(due)}, max {iso(maxd)}, requested {iso(req)}).",
            opening, self.identity_facts(hd, factor), "Get more time to pay the auto insurance premium.", g, reply, dialogue,
            sql=[arrangement_limit_sql(ids, limit)], tags=["billing"],
        )


# --------------------------------------------------------------------------- IN002 installment plan


class InstallmentPlan(InsuranceFamily):
    code = "IN002"
    name = "installment_plan"
    number = 2
    description = "A customer asks to change the pay plan; good standing, the arrangement limit and the autopay rule decide."
    branches = ("switch_plan", "switch_monthly_autopay", "past_due", "limit_reached", "already_on_plan", "partial_verification")

    def build(self, rng: random.Random, seed: int) -> dict[str, Any]:
        branch = self.branch(seed)
        ids = self.ids(seed)
        if branch == "switch_monthly_autopay":
            cur, target = rng.choice(["quarterly", "semiannual"]), "monthly"
        elif branch == "already_on_plan":
            cur = rng.choice(["monthly", "quarterly", "semiannual"])
            target = cur
        else:
            cur = rng.choice(["monthly", "quarterly", "semiannual"])
            target = rng.choice([p for p in ("quarterly", "semiannual") if p != cur])
        h, hd = self.household(rng, ids, plan=cur)
        factor = self.setup_identity(rng, hd, branch)
        tier, pol, bill = hd["tier"], hd["policy"], hd["billing"]
        limit = ARRANGEMENT_LIMITS[tier]
        if branch == "switch_monthly_autopay":
            bill["autopay"] = False
        due = date.fromisoformat(bill["due_date"])
        amount = Decimal(bill["amount_due"])
        if branch == "past_due":
            due = TODAY - timedelta(days=rng.randint(2, 8))
            bill.update(due_date=iso(due), status="past_due", past_due_amount=str(amount))
            pol.update(status="grace_period", grace_period_end=iso(due + timedelta(days=15)))
        recent = limit if branch == "limit_reached" else rng.randint(0, limit - 1)
        for row in arrangement_rows(ids, rng, recent, rng.randint(0, 1)):
            h.put("payment_arrangements", row)
        nxt = self.next_ids(h.patch())
        requester = self.requester(hd, ids, nxt)
        g = Golden()
        self.identify(g, hd, factor, requester)
        subject = f"Pay plan change on {pol['id']}"
        if factor is None:
            self.ticket(g, requester, hd, subject, "billing", "pending")
            reply, dialogue = partial_reply("a change of pay plan"), PARTIAL_DIALOGUE
        else:
            g.add("get_billing_account", policy_id=pol["id"])
            g.add("get_arrangement_history", billing_account_id=ids["billing"])
            if branch == "past_due":
                self.ticket(g, requester, hd, subject, "billing", "solved")
                reply = (f"I'm sorry, I can't change your pay plan while {usd(amount)} is past due (it was due on {iso(due)}). Once the "
                         "account is current again, a plan change is possible.")
                dialogue = []
            elif branch == "limit_reached":
                self.ticket(g, requester, hd, subject, "billing", "solved")
                reply = (f"I'm sorry, I can't change your pay plan: a plan change is a payment arrangement, and your account already has "
                         f"{recent} in the last 12 months, the limit for the {tier} tier.")
                dialogue = []
            elif branch == "already_on_plan":
                self.ticket(g, requester, hd, subject, "billing", "solved")
                reply = f"Your billing account {ids['billing']} is already on the {cur} plan, so nothing needed to change."
                dialogue = [{"name": "says_already_on_plan", "must": [r"already"]}]
            else:
                q = installment_quote(hd["premium"], bill["paid_to_date"], due, hd["exp"], target)
                args: dict[str, Any] = {"billing_account_id": ids["billing"], "plan": target}
                if target == "monthly":
                    args["autopay"] = True
                g.add("set_installment_plan", idempotent="a second change to the same plan is refused: the account is already on it", **args)
                self.ticket(g, requester, hd, subject, "billing", "solved")
                reply = (f"Your billing account {ids['billing']} is now on the {target} plan"
                         f"{' with autopay from your account on file' if target == 'monthly' else ''}: {q['installments']} installment"
                         f"{'s' if q['installments'] != 1 else ''} of {usd(q['amount_due'])} (including a {usd(q['installment_fee'])} fee), "
                         f"the first on {iso(due)}.")
                dialogue = [{"name": "states_installment_amount", "must": [AMOUNT]}]
        opening = rng.choice([
            f"Hi, I pay my car insurance {cur if branch != 'already_on_plan' else 'on one plan'} and would like to switch to the {target} plan.",
            f"Can I change how I pay my auto policy? I'd like {target} payments instead.",
            f"Hello, I want to move my auto insurance billing to a {target} plan, please.",
        ])
        facts = self.identity_facts(hd, factor)
        if target == "monthly":
            facts.append({"text": "Yes, automatic payments from my bank account on file are fine with me.",
                          "unlock": ["autopay", "auto-pay", "auto pay", "automatic"]})
        return self.finish(
            rng, h, hd, branch, f"Installment plan change, branch '{branch}' ({tier}, {cur} -> {target}).", opening, facts,
            f"Switch the auto insurance pay plan to {target}.", g, reply, dialogue, sql=[arrangement_limit_sql(ids, limit)], tags=["billing"],
        )
