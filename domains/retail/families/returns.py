"""Returns families: returns with fees, exchanges, warranty claims, partial refunds for cosmetic defects."""

from __future__ import annotations

import random
from datetime import timedelta
from decimal import Decimal

from thinkingbox_env.authoring.saying import amount_pattern, iso, ts, usd

from ..rules import CATALOG, INSTALL_SKU, NOW, TODAY, cents, money, price, return_fees, years_after
from . import openings
from ._base import CareFamily
from ._data import item, skus
from ._draft import RetailDraft


class ReturnWithFees(CareFamily):
    code = "ST008"
    name = "return_with_fees"
    number = 8
    description = "A return of delivered items with restocking, return shipping and removal fees, first-order courtesy, tier exemptions and the return window."
    branches = ("unopened_changed_mind", "opened_restocking", "multi_item", "first_order_courtesy", "plus_member",
                "defective_no_fees", "outside_window", "installed_removal")
    OPENINGS = openings.ST008
    SECTION = "policy#returns"
    WHY = {"restocking_fee": "kb/returns_and_fees.md", "return_shipping_fee": "kb/returns_and_fees.md", "removal_fee": "kb/returns_and_fees.md",
           "opened_line_nos": "customer", "line_nos": "customer", "reason": "customer"}

    def draw(self, rng: random.Random, seed: int) -> RetailDraft:
        branch = self.branch(seed)
        tier = "plus" if branch == "plus_member" else "standard"
        d, ids, name, email = self.start(rng, seed, tier=tier)
        first_order = branch == "first_order_courtesy"
        if not first_order:
            self.prior_order(d, rng, ids)
        big = skus(categories=("tv", "computer", "major_appliance"))
        small = skus(categories=("audio", "small_appliance", "networking", "accessory"))
        reason = "defective" if branch == "defective_no_fees" else "changed_mind"
        installed: set[int] = set()
        if branch == "unopened_changed_mind":
            products, returned, opened = [rng.choice(small)], [1], set()
        elif branch == "multi_item":
            a, b, c = rng.choice(big), *rng.sample(small, 2)
            products, returned, opened = [a, b, c], [1, 3], {1}
        elif branch == "installed_removal":
            products, returned, opened = [rng.choice(["BW-DW45", "BW-WM-8"])], [1], {1}
            installed = {1}
        else:
            products, returned, opened = [rng.choice(big)], [1], {1}
        days = rng.randint(36, 50) if branch == "outside_window" else rng.randint(35, 55) if tier == "plus" else rng.randint(3, 25)
        lines = [item(s) for s in products]
        if installed:
            lines.append(INSTALL_SKU)
        order, delivered = self.delivered_order(d, rng, ids, lines, days, tier)
        if installed:
            d.add("installations", {"id": f"INS-{ids['uid']}", "order_id": ids["order"], "line_no": 1, "kind": "install", "status": "completed",
                                    "scheduled_date": iso((delivered + timedelta(days=1)).date()),
                                    "completed_at": ts(delivered + timedelta(days=1, hours=3)), "fee": "99.00"})
        returned_lines = [(n, products[n - 1], n in opened, n in installed) for n in returned]
        restocking, shipping, removal = return_fees(returned_lines, reason, tier, first_order)
        item_total = sum((price(products[n - 1]) for n in returned), Decimal("0"))
        refund = item_total - restocking - shipping - removal
        names = [CATALOG[products[n - 1]][0] for n in returned]
        d.identify(email)
        d.read("list_customer_orders", customer_id=ids["customer"])
        d.read("get_order", order_id=ids["order"])
        d.read("get_shipment", order_id=ids["order"])
        for n in returned:
            d.read("get_product", sku=products[n - 1])
        if installed:
            d.read("get_installations", order_id=ids["order"])
        d.read("search_policy", query="return fees restocking return shipping removal")
        d.find_tickets(ids["ticket_user"])
        if branch == "outside_window":
            d.open_ticket(ids["ticket_user"], f"Return request {ids['order']}", "order", "solved", ids["order"])
            d.reply(f"Your order was delivered on {iso(delivered.date())}, {days} days ago, which is past the 30-day return window, "
                    "so I can't accept a return for it.")
            d.mention("refuses_return", must=[r"30.day", iso(delivered.date())], must_not=[r"refund of \$"])
        else:
            opened_lines = {"opened_line_nos": sorted(opened)} if opened else {}
            fee_args = {key: float(value) for key, value in (("restocking_fee", restocking), ("return_shipping_fee", shipping),
                                                            ("removal_fee", removal)) if value}
            d.act("create_return", idempotent="a second return of the same lines is refused",
                  order_id=ids["order"], line_nos=returned, reason=reason, **opened_lines, **fee_args)
            d.open_ticket(ids["ticket_user"], f"Return request {ids['order']}", "order", "solved", ids["order"])
            fees = [(label, v) for label, v in (("restocking fee", restocking), ("return shipping", shipping), ("removal fee", removal)) if v]
            fee_text = ", ".join(f"{label} {usd(v, grouped=False)}" for label, v in fees)
            # the closing states the fees and the refund, and the task checks each: a wrong figure fails
            d.reply(f"I've opened the return for {' and '.join(names)}. "
                    + (f"Fees: {fee_text}. " if fee_text else "No fees apply. ")
                    + f"Your refund of {usd(refund, grouped=False)} goes back to your card.")
            d.mention("states_refund_amount", must=[amount_pattern(money(refund))])
            if fees:
                d.mention("states_fees", must=list(dict.fromkeys(amount_pattern(money(v)) for _, v in fees)))
        reason_text = "It stopped working properly, it's faulty." if reason == "defective" else "I simply changed my mind."
        opened_names = [CATALOG[products[n - 1]][0] for n in returned if n in opened]
        sealed = [CATALOG[products[n - 1]][0] for n in returned if n not in opened]
        condition = " ".join(filter(None, [
            f"I opened and used the {' and the '.join(opened_names)}." if opened_names else "",
            f"The {' and the '.join(sealed)} {'is' if len(sealed) == 1 else 'are'} still sealed in the box." if sealed else "",
        ]))
        if installed:
            condition += " Your installers put it in."
        d.email_fact(email)
        d.order_fact(ids["order"])
        d.fact(f"I want to return the {' and the '.join(names)}.", unlock=["which", "item", "product"])
        d.fact(condition, unlock=["open", "used", "sealed", "condition", "install"])
        d.fact(reason_text, unlock=["reason", "why"])
        d.question("Which items would you like to return, have you opened or used them, and what is the reason for the return?")
        self.open(d, rng, order=ids["order"], email=email)
        d.description = f"Return with fees, branch '{branch}'."
        d.intent = "Return the items and get the refund the policy allows."
        d.tags = ["returns", branch]
        return d


EXCHANGE_PAIRS = [("BW-HP-NC7", "BW-HP-NC7-SV"), ("BW-SB200", "BW-SB200-W"), ("BW-VAC-X2", "BW-VAC-X2-R"), ("BW-KT-17", "BW-KT-17-W")]
UPGRADE_PAIRS = [("BW-TV55-Q", "BW-TV65-Q"), ("BW-LAP-14", "BW-LAP-14-32")]


class Exchange(CareFamily):
    code = "ST009"
    name = "exchange"
    number = 9
    description = "An exchange for another variant at the same price, inside the return window and while in stock."
    branches = ("exchange_in_stock", "variant_out_of_stock", "price_differs", "outside_window", "plus_late_exchange")
    # the frozen test set: every action branch, the refusals the two-request family does not cover
    TEST_BRANCHES = ("exchange_in_stock", "variant_out_of_stock", "price_differs", "plus_late_exchange")
    OPENINGS = openings.ST009
    SECTION = "policy#exchanges"

    def draw(self, rng: random.Random, seed: int) -> RetailDraft:
        branch = self.branch(seed)
        tier = "plus" if branch == "plus_late_exchange" else "standard"
        d, ids, name, email = self.start(rng, seed, tier=tier)
        old, new = rng.choice(UPGRADE_PAIRS if branch == "price_differs" else EXCHANGE_PAIRS)
        if rng.random() < 0.5 and branch != "price_differs":
            old, new = new, old
        days = rng.randint(35, 55) if tier == "plus" else rng.randint(36, 50) if branch == "outside_window" else rng.randint(2, 25)
        order, delivered = self.delivered_order(d, rng, ids, [item(old)], days, tier)
        restock = TODAY + timedelta(days=rng.randint(5, 20))
        if branch == "variant_out_of_stock":
            self.out_of_stock(d, new, restock)
        d.identify(email)
        d.read("get_order", order_id=ids["order"])
        d.read("get_shipment", order_id=ids["order"])
        d.read("get_product", sku=old)
        d.find_tickets(ids["ticket_user"])
        new_name = CATALOG[new][0]
        if branch in ("exchange_in_stock", "plus_late_exchange"):
            d.act("create_exchange", idempotent="a line that was already exchanged cannot be exchanged again", order_id=ids["order"], line_no=1,
                  new_sku=new)
            d.reply(f"Done: I've set up the exchange and the {new_name} ships to you free of charge.")
            # the refusals of this family, not any "can't": an earlier turn may say "I can't find an account ..."
            d.mention("confirms_exchange", must=[r"exchange"],
                      must_not=[r"can't exchange|cannot exchange|can't be exchanged|cannot be exchanged|no longer be exchanged"
                                r"|can't be an exchange|cannot be an exchange"])
        elif branch == "variant_out_of_stock":
            d.reply(f"The {new_name} is out of stock until {iso(restock)}, so I can't exchange it today; nothing has been changed on your order.")
            d.mention("gives_restock_date", must=[iso(restock)])
        elif branch == "price_differs":
            # not an exchange; the customer takes the return the policy offers (their only order: no fees)
            d.write("create_return", {"order_id": "record:get_order", "line_nos": "record:get_order", "reason": "customer", "opened_line_nos": "customer"},
                    idempotent="a second return of the same line is refused",
                    order_id=ids["order"], line_nos=[1], reason="changed_mind", opened_line_nos=[1])
            d.question(f"The {new_name} is priced differently, so it can't be an exchange; I can open a return for yours and you can order "
                       "the other model. Would you like the return, and have you opened or used the item?", before="create_return")
            old_price = usd(CATALOG[old][2], grouped=False)
            d.reply(f"The {new_name} costs {usd(CATALOG[new][2], grouped=False)}, not {old_price}, so it can't be an exchange. I've opened a "
                    f"return for your {CATALOG[old][0]} instead; as it's your first order with us there are no fees, and {old_price} "
                    "goes back to your card, so you can order the other model.")
            d.mention("explains_price_difference", must=[r"return", amount_pattern(money(CATALOG[old][2]))], must_not=[r"exchange is (set|done)"])
        else:
            d.reply(f"Your order was delivered {days} days ago, past the 30-day window, so it can no longer be exchanged.")
            d.mention("refuses_exchange", must=[r"30.day"])
        d.open_ticket(ids["ticket_user"], f"Exchange request {ids['order']}", "order", "solved", ids["order"])
        d.email_fact(email)
        d.order_fact(ids["order"])
        d.fact(f"I'd like the {new_name} instead.", unlock=["which", "colour", "color", "variant", "model", "instead"])
        if branch == "price_differs":
            d.fact("I've unpacked it and used it a little. A return is fine if a swap isn't possible.",
                   unlock=["opened", "used", "return", "unpacked"])
        d.question("Which version would you like instead?")
        self.open(d, rng, order=ids["order"], email=email, product=CATALOG[old][0])
        d.description = f"Exchange, branch '{branch}'."
        d.intent = "Exchange the item for the other variant."
        d.tags = ["returns", branch]
        return d


class WarrantyClaim(CareFamily):
    code = "ST010"
    name = "warranty_claim"
    number = 10
    description = "A faulty or damaged item: a return inside the window, a manufacturer-warranty claim after it, accidental damage only under a protection plan."
    branches = ("defect_in_window", "defect_repair", "defect_replace", "accidental_plan", "accidental_no_plan", "expired")
    OPENINGS = openings.ST010
    SECTION = "policy#defects-damage-and-warranty"
    WHY = {"create_return.reason": "policy#defects-damage-and-warranty", "create_return.line_nos": "record:get_order",
           "opened_line_nos": "customer", "issue": "customer", "resolution": "policy#defects-damage-and-warranty"}

    def draw(self, rng: random.Random, seed: int) -> RetailDraft:
        branch = self.branch(seed)
        d, ids, name, email = self.start(rng, seed)
        self.prior_order(d, rng, ids)
        if branch == "defect_replace":
            sku = rng.choice(skus(75, 150))
        elif branch in ("accidental_plan", "accidental_no_plan"):
            sku = rng.choice(skus(150, 10**6, ("tv", "computer")))
        else:
            sku = rng.choice(skus(150))
        days = {"defect_in_window": rng.randint(3, 25), "expired": rng.randint(380, 500)}.get(branch, rng.randint(60, 300))
        order, delivered = self.delivered_order(d, rng, ids, [item(sku)], days)
        start = delivered.date()
        manufacturer = f"WRN-{ids['uid']}1"
        plan = f"WRN-{ids['uid']}2"
        d.add("warranty_contracts", {"id": manufacturer, "order_id": ids["order"], "line_no": 1, "plan": "manufacturer", "covers_accidental": False,
                                     "start_date": iso(start), "end_date": iso(years_after(start, 1))})
        if branch == "accidental_plan":
            d.add("warranty_contracts", {"id": plan, "order_id": ids["order"], "line_no": 1, "plan": "protection_plan", "covers_accidental": True,
                                         "start_date": iso(start), "end_date": iso(years_after(start, 3))})
        accidental = branch.startswith("accidental")
        d.identify(email)
        d.read("get_order", order_id=ids["order"])
        d.read("get_shipment", order_id=ids["order"])
        d.read("get_warranty", order_id=ids["order"])
        d.find_tickets(ids["ticket_user"])
        product = CATALOG[sku][0]
        subject = f"Faulty {product} {ids['order']}"
        if branch == "defect_in_window":
            d.act("create_return", idempotent="a second return of the same line is refused", order_id=ids["order"], line_nos=[1],
                  reason="defective", opened_line_nos=[1])
            d.open_ticket(ids["ticket_user"], subject, "order", "solved", ids["order"])
            d.reply(f"Your {product} is still inside the return window, so I've opened a return for the defect: no fees, and a full refund of {usd(price(sku), grouped=False)}.")
            d.mention("full_refund", must=[amount_pattern(money(price(sku)))])
        elif branch in ("defect_repair", "defect_replace", "accidental_plan"):
            resolution = "replace" if branch == "defect_replace" else "repair"
            d.act("file_warranty_claim", idempotent="a contract takes one open claim at a time", contract_id=plan if accidental else manufacturer,
                  issue="accidental_damage" if accidental else "defect", resolution=resolution)
            d.open_ticket(ids["ticket_user"], subject, "order", "hold", ids["order"])
            cover = "your protection plan" if accidental else "the manufacturer warranty"
            d.reply(f"I've filed a claim under {cover}; the repair centre will {resolution} your {product}. Your ticket is on hold until they report back.")
            d.states("warranty.resolution")
        elif branch == "accidental_no_plan":
            d.open_ticket(ids["ticket_user"], subject, "order", "solved", ids["order"])
            d.reply(f"I'm sorry: accidental damage is covered only by a protection plan, and your {product} has the manufacturer warranty only, so no claim can be filed.")
            d.mention("refuses_claim", must=[r"protection plan"], must_not=[r"filed a claim"])
        else:
            d.open_ticket(ids["ticket_user"], subject, "order", "solved", ids["order"])
            d.reply(f"The manufacturer warranty on your {product} ended on {iso(years_after(start, 1))}, so I can't file a claim.")
            d.mention("warranty_ended", must=[r"ended|expired", iso(years_after(start, 1))], must_not=[r"filed a claim"])
        what = rng.choice(["I dropped it and the screen cracked.", "I knocked it off the table and now the screen is cracked."]) if accidental else \
            rng.choice(["It stopped powering on, I didn't drop it or anything.", "It keeps switching itself off; nothing happened to it."])
        # opened_line_nos is part of the return record: the customer says it, so the value is theirs, not a guess
        what += " I unpacked it and have been using it since it arrived."
        d.email_fact(email)
        d.order_fact(ids["order"])
        d.fact(what, unlock=["what happened", "happen", "issue", "problem", "wrong", "describe", "using", "used", "opened"])
        d.question("What happened to it, and have you been using it?")
        self.open(d, rng, order=ids["order"], email=email, product=product)
        d.description = f"Warranty claim, branch '{branch}'."
        d.intent = "Get the broken item fixed, replaced or refunded."
        d.tags = ["warranty", branch]
        return d


class CosmeticPartialRefund(CareFamily):
    code = "ST011"
    name = "cosmetic_partial_refund"
    number = 11
    description = "A customer keeps an item with a cosmetic defect: a capped partial refund by tier, once per order, inside the return window."
    branches = ("partial_standard", "partial_plus", "partial_capped", "already_partial", "outside_window")
    # the frozen test set: every action branch, the refusals the two-request family does not cover
    TEST_BRANCHES = ("partial_standard", "partial_plus", "partial_capped", "already_partial")
    OPENINGS = openings.ST011
    SECTION = "policy#minor-cosmetic-defects"
    WHY = {"refund_order_amount.amount": "kb/cosmetic_defects.md"}

    def draw(self, rng: random.Random, seed: int) -> RetailDraft:
        branch = self.branch(seed)
        tier = "plus" if branch == "partial_plus" else "standard"
        d, ids, name, email = self.start(rng, seed, tier=tier)
        if branch == "partial_capped":
            sku = rng.choice(["BW-WM-8", "BW-LAP-14", "BW-TV65-Q"])
        elif branch == "partial_plus":
            sku = rng.choice(skus(100, 500))
        else:
            sku = rng.choice(skus(100, 660))
        days = rng.randint(36, 50) if branch == "outside_window" else rng.randint(2, 25)
        order, delivered = self.delivered_order(d, rng, ids, [item(sku)], days, tier)
        share = Decimal("0.20") if tier == "plus" else Decimal("0.15")
        amount = min(cents(price(sku) * share), Decimal("100.00"))
        if branch == "already_partial":
            d.add("refunds", {"id": f"RFD-{ids['uid']}", "payment_id": ids["payment"], "order_id": ids["order"], "amount": money(amount),
                              "reason": "damaged_item", "created_at": ts(NOW - timedelta(days=1))})
            d.rows("payments")[0]["status"] = "partially_refunded"
        d.identify(email)
        d.read("get_order", order_id=ids["order"])
        d.read("get_shipment", order_id=ids["order"])
        d.read("get_payments", order_id=ids["order"])
        d.find_tickets(ids["ticket_user"])
        product = CATALOG[sku][0]
        if branch in ("partial_standard", "partial_plus", "partial_capped"):
            d.act("refund_order_amount", order_id=ids["order"], amount=float(amount), reason="damaged_item")
            d.reply(f"Sorry about the mark on your {product}. Since you're keeping it, I've refunded {usd(amount, grouped=False)} to your card.")
            d.mention("states_partial_refund", must=[amount_pattern(money(amount))])
        elif branch == "already_partial":
            d.reply(f"This order already received a partial refund of {usd(amount, grouped=False)} for a cosmetic defect, and only one is possible per order.")
            d.mention("refuses_second_refund", must=[r"already", amount_pattern(money(amount))], must_not=[r"I've refunded"])
        else:
            d.reply(f"Your {product} was delivered {days} days ago, past the 30-day return window, so a partial refund is no longer possible.")
            d.mention("refuses_late_claim", must=[r"30.day"], must_not=[r"I've refunded"])
        d.open_ticket(ids["ticket_user"], f"Cosmetic defect {ids['order']}", "order", "solved", ids["order"])
        mark = rng.choice(["a long scratch on the side", "a small dent on the top", "a scuffed corner"])
        d.email_fact(email)
        d.order_fact(ids["order"])
        d.fact(f"There's {mark} of the {product}, but it works fine and I'd like to keep it.",
               unlock=["what", "describe", "damage", "defect", "issue", "problem", "keep"])
        d.question("Could you describe the flaw, and would you like to keep the item?")
        self.open(d, rng, order=ids["order"], email=email, product=product)
        d.description = f"Cosmetic partial refund, branch '{branch}'."
        d.intent = "Get something back for the flaw while keeping the item."
        d.tags = ["returns", branch]
        return d
