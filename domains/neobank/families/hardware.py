"""Hardware families: laptop faults (troubleshooting, repair or retirement, replacement) and peripheral or purchase requests."""

from __future__ import annotations

import random
from datetime import date, timedelta
from decimal import Decimal
from typing import Any

from thinkingbox_env.authoring import Openings
from thinkingbox_env.authoring.dimensions import carries
from thinkingbox_env.authoring.saying import cap_first, cents, iso, usd
from thinkingbox_env.authoring.saying import policy_ref as P

from ..rules import EMPLOYEES, LAPTOP_RETIRE_YEARS, MODELS, TODAY, TROUBLESHOOTING, finance_approver, procurement_tier
from ._base import Desk
from ._dimensions import ASSET_TAG_RECOVERY
from ._draft import DeskDraft
from ._people import Person

STEP_WORDS = {
    "power_reset": "held the power button for 30 seconds with the charger plugged in",
    "charger_swap": "tried a different charger",
    "battery_diagnostic": "ran the battery test at start-up",
    "external_display_test": "plugged in an external monitor",
    "external_keyboard_test": "plugged in a USB keyboard",
    "fan_diagnostic": "ran the fan check",
    "os_update": "installed the pending updates and restarted",
}
STEP_ASK = {
    "power_reset": "hold the power button for 30 seconds with the charger connected", "charger_swap": "try another charger",
    "battery_diagnostic": "run the battery test at start-up", "external_display_test": "connect an external monitor",
    "external_keyboard_test": "connect a USB keyboard", "fan_diagnostic": "run the fan check", "os_update": "install pending updates and restart",
}
SYMPTOMS = {
    "no_power": "my laptop won't turn on", "battery": "my laptop battery dies within an hour", "display": "my laptop screen keeps flickering and going black",
    "keyboard": "half the keys on my laptop keyboard don't work", "overheating": "my laptop gets really hot and the fan is screaming",
}
DAMAGE = ["I knocked a cup of coffee over it", "I dropped it and the screen is cracked", "the hinge snapped when I opened it"]


def laptop_model(p: Person) -> str:
    return "MDL-LAP16" if p.department in ("DEP-ENG", "DEP-DAT") else "MDL-LAP14"


def asset_row(aid: str, model: str, status: str, holder: str | None, bought: date, serial: int) -> dict[str, Any]:
    return {"id": aid, "model_id": model, "serial": f"TW{serial}", "status": status, "assigned_to": holder,
            "assigned_at": f"{iso(bought)} 10:00:00" if holder else None, "purchased_on": iso(bought),
            "warranty_end": iso(bought.replace(year=bought.year + 3))}


def stock_rows(rng: random.Random, p: Person, model: str, count: int, first: int = 5) -> list[dict[str, Any]]:
    days = sorted(rng.sample(range(20, 300), count), reverse=True)
    return [asset_row(f"AST-{p.uid}{first + k}", model, "in_stock", None, TODAY - timedelta(days=d), rng.randint(10**7, 10**8 - 1))
            for k, d in enumerate(days)]


class HardwareFamily(Desk):
    """Assets of the person, stock, and the purchase request with its tier."""

    @staticmethod
    def procure(d: DeskDraft, item: str, price: str, quantity: int = 1, source_item: str = "record:search_hardware_catalog",
                quantity_why: str | None = None) -> tuple[str, str, Decimal]:
        """A purchase request at the tier its total falls in, to that tier's approver; returns (tier, approver, total)."""
        p = d.employee
        total = cents(Decimal(price) * quantity)
        tier = procurement_tier(total)
        if tier == "manager":
            approver, src = p.manager, "record:get_employee"
        elif tier == "director":
            approver, src = p.head, "record:get_department"
            d.read("get_department", department_id=p.department)
        else:
            approver, src = finance_approver(), "record:get_department"
            d.read("get_department", department_id="DEP-FIN")
        d.write("create_procurement_request", {"employee_id": "record:find_employee", "item": source_item, "quantity": quantity_why or "customer",
                                               "approval_tier": P("Procurement thresholds"), "approver_id": src},
                free_text=frozenset({"justification"}), employee_id=p.id, item=item, quantity=quantity, approval_tier=tier,
                approver_id=approver, justification=f"Requested through the service desk: {MODELS[item]['name'] if item in MODELS else item}.")
        return tier, approver, total


# --------------------------------------------------------------------------- NB006 laptop fault


class LaptopFault(HardwareFamily):
    code = "NB006"
    name = "laptop_fault"
    number = 6
    description = "An employee reports a faulty laptop."
    branches = ("replace_in_repair", "replace_retired", "step_fixes", "steps_missing", "no_stock", "physical_damage", "two_laptops",
                "not_theirs", "data_escalation")
    openings = Openings("NB006", {
        "plain": "Hi, {symptom}. Can you help?",
        "upfront_tag": "Laptop {tag}: {symptom}.",
        "upset": "This is the worst timing, {symptom} and I have a board pack due tomorrow!",
        "prefers": "{symptom_cap}. Honestly I'd just like a replacement.",
        "vague": "My laptop is playing up.",
        "where": "{where} and {symptom}. What are my options?",
        "short_b": "{symptom}. pls help",
        "formal_b": "Good afternoon. I'd like to report a fault: {symptom}.",
        "deadline_b": "Hi, {symptom}, which is a problem with month-end coming. Can you take a look?",
    }, held_out=("short_b", "formal_b", "deadline_b"))

    def make(self, rng: random.Random, seed: int, branch: str, person: Person | None) -> DeskDraft:
        p = person or self.person(rng, seed)
        model = laptop_model(p)
        old = branch == "replace_retired" or (branch in ("no_stock", "physical_damage") and rng.random() < 0.4)
        bought = TODAY - timedelta(days=rng.randint(3 * 365 + 40, LAPTOP_RETIRE_YEARS * 365 + 200) if old else rng.randint(60, 900))
        tag = f"AST-{p.uid}1"
        laptop = asset_row(tag, model, "in_use", p.id, bought, rng.randint(10**7, 10**8 - 1))
        assets = [laptop]
        if branch == "two_laptops":
            spare = "MDL-LAP14" if model == "MDL-LAP16" else "MDL-LAP16"
            assets.append(asset_row(f"AST-{p.uid}2", spare, "in_use", p.id, TODAY - timedelta(days=rng.randint(400, 800)), rng.randint(10**7, 10**8 - 1)))
        if branch == "not_theirs":
            holder = rng.choice(["EMP-10021", "EMP-10022", "EMP-10024", "EMP-10025"])
            assets.append(asset_row(f"AST-{p.uid}2", model, "in_use", holder, TODAY - timedelta(days=rng.randint(200, 600)),
                                    rng.randint(10**7, 10**8 - 1)))
        other = "MDL-LAP14" if model == "MDL-LAP16" else "MDL-LAP16"
        stock = [] if branch == "no_stock" else stock_rows(rng, p, model, rng.randint(2, 3))
        stock += stock_rows(rng, p, other, 1, first=8)
        d = self.draft(branch, p, {"assets": assets + stock})
        symptom = rng.choice(sorted(TROUBLESHOOTING))
        steps = TROUBLESHOOTING[symptom]
        if branch == "steps_missing" and len(steps) < 2:
            symptom = rng.choice(["no_power", "overheating"])
            steps = TROUBLESHOOTING[symptom]
        damage = rng.choice(DAMAGE) if branch == "physical_damage" else None
        said = damage and f"my laptop is broken: {damage}" or SYMPTOMS[symptom]
        if branch == "not_theirs":
            tag = assets[-1]["id"]  # a colleague's laptop the employee is using
        misremember = carries(ASSET_TAG_RECOVERY, code=self.code, seed=seed) and branch not in ("two_laptops", "not_theirs")
        wrong = f"AST-{p.uid}3"
        # where the employee works comes from their HR record; a tag in the opening is the one they read out first
        where = "I work remotely" if p.row["location"] == "Remote" else f"I'm based at the {p.row['location']}"
        d.opening, d.origin = self.openings.pick(rng, self.split, symptom=said, symptom_cap=cap_first(said),
                                                 tag=wrong if misremember else tag, where=where)
        self.request_clause = said
        d.identify()
        d.fact(f"The asset tag on the laptop is {tag}.", "asset_tag", ["asset tag", "tag", "which laptop"], value=tag,
               misremembered=wrong if misremember else None)
        d.ask("Could you read me the asset tag on the sticker underneath the laptop?")
        if misremember:
            d.failing("get_asset", "not found", asset_id=wrong)
            d.inform(f"I can't find asset {wrong}. Could you check the tag again?")
        d.read("get_asset", asset_id=tag)
        if branch == "not_theirs":
            d.ticket("Fault reported on a colleague's laptop", "hardware", "solved")
            d.reply(f"Laptop {tag} isn't assigned to you, so I can't log or replace anything on it; its holder needs to report the fault. "
                    "If your own laptop has a problem, I'm happy to help with that.")
            d.mention("refuses_other_device", ["not assigned to you"])
            d.intent = "Get this laptop fixed or replaced."
            return d
        logged: list[tuple[str, str]] = []
        if damage is None:
            if branch == "step_fixes":
                logged = [(s, "not_resolved") for s in steps[:-1]] + [(steps[-1], "resolved")]
                text = "; ".join(f"I {STEP_WORDS[s]}, no change" for s in steps[:-1])
                text = (text + ". " if text else "") + f"I've just {STEP_WORDS[steps[-1]]} and now it works again!"
            elif branch == "steps_missing":
                logged = [(steps[0], "not_resolved")]
                text = f"I {STEP_WORDS[steps[0]]} and it didn't help. I haven't {STEP_WORDS[steps[1]]}; I can't do that right now."
            else:
                logged = [(s, "not_resolved") for s in steps]
                text = "I already " + " and ".join(STEP_WORDS[s] for s in steps) + "; nothing helped."
            d.fact(text, "troubleshooting", ["tried", "troubleshoot", "steps", "already", "restart", "charger", "test", "monitor", "keyboard",
                                             "update"], value=text)
            d.ask("What have you tried so far? For this fault the standard checks are: " + ", then ".join(STEP_ASK[s] for s in steps) + ".")
        else:
            d.fact(f"It's physical damage: {damage}.", "troubleshooting", ["what happened", "damage", "tried"], value=damage)
        for step, outcome in logged:
            d.write("log_troubleshooting", {"asset_id": "record:get_asset", "step": "kb/laptop_troubleshooting.md", "outcome": "customer"},
                    asset_id=tag, step=step, outcome=outcome)
        name = MODELS[model]["name"]
        if branch == "data_escalation":
            d.fact("There's work on it that isn't backed up anywhere else.", "backup", ["backed up", "backup", "data", "files"],
                   value="not backed up")
            d.ask("Is everything on the laptop backed up, or is there work on it you'd lose?", before=d.next - len(logged))
            d.ticket("Laptop fault: data to recover before repair", "hardware", "open", team="end_user_computing")
            d.reply(f"I've logged the steps you tried on {tag}. Because it holds work that isn't backed up, I haven't sent it for repair: "
                    f"ticket {d.ids['tickets']} is with the end-user computing team, who will recover your data first and then arrange "
                    "the repair.")
            d.mention("escalates_for_data", [str(d.ids["tickets"])])
        elif branch == "step_fixes":
            d.ticket("Laptop fault fixed by troubleshooting", "hardware", "solved")
            d.reply(f"Great, that fixed it. I've logged the steps on {tag} and closed the ticket; no replacement is needed.")
            d.mention("no_replacement", ["no replacement"])
        elif branch == "steps_missing":
            d.ticket("Laptop fault: troubleshooting to finish", "hardware", "pending")
            d.reply(f"I've logged what you tried on {tag}. Before a replacement, the remaining check is needed: please "
                    f"{STEP_ASK[steps[1]]} when you can, and reply on ticket {d.ids['tickets']} with the result; I've left it pending.")
            d.mention("asks_for_remaining_step", [str(d.ids["tickets"])])
        else:
            expired = date.fromisoformat(laptop["warranty_end"]) < TODAY or (TODAY - bought).days >= LAPTOP_RETIRE_YEARS * 365
            status = "retired" if expired else "in_repair"
            d.write("update_asset_status", {"asset_id": "record:get_asset", "status": P("Laptop replacement")},
                    idempotent="an asset already in that status is refused", asset_id=tag, status=status)
            d.read("list_stock", model_id=model)
            fate = "retired (its warranty has ended)" if expired else "sent for repair under warranty"
            if branch == "no_stock":
                tier, approver, total = self.procure(d, model, MODELS[model]["unit_price"], source_item="record:get_asset",
                                                     quantity_why=P("Laptop replacement"))
                d.ticket("Laptop replacement on order", "hardware", "pending")
                d.reply(f"Your laptop {tag} is {fate}. There is no {name} in stock, so I've raised purchase request "
                        f"{d.ids['procurement_requests']} for one ({usd(total)}), which goes to {EMPLOYEES[approver]['name']} for approval; "
                        "your ticket stays pending until it arrives.")
                d.mention("states_purchase", [str(d.ids["procurement_requests"])])
            else:
                new = min((r for r in stock if r["model_id"] == model), key=lambda r: (r["purchased_on"], r["id"]))["id"]
                d.write("assign_asset", {"asset_id": "record:list_stock", "employee_id": "record:find_employee"},
                        idempotent="an asset no longer in stock cannot be assigned again", asset_id=new, employee_id=p.id)
                d.ticket("Laptop replaced", "hardware", "solved")
                d.reply(f"Your laptop {tag} is {fate}, and I've assigned you a replacement {name}, asset {new}, ready to collect from the "
                        "service desk.")
                d.mention("states_replacement", [new])
        d.intent = "Get my faulty laptop fixed or replaced."
        return d


# --------------------------------------------------------------------------- NB007 peripherals and purchases

STANDARD_PERIPHERALS = ["MDL-MON27", "MDL-DOCK", "MDL-HSET", "MDL-KEYB", "MDL-MOUS"]
NON_STANDARD = {"non_standard_manager": "MDL-ERGO", "non_standard_director": "MDL-MON34", "finance_tier": "MDL-LAPX"}
OFF_CATALOGUE = [("standing desk converter", "I've been told to stand for part of the day"),
                 ("drawing tablet", "I sketch customer journeys and a mouse is hopeless for it"),
                 ("vertical mouse", "my wrist aches by the afternoon"),
                 ("portable monitor", "I travel between the offices a lot")]
WHY = {"MDL-ERGO": "I get wrist pain and the physio recommended a split keyboard",
       "MDL-MON34": "I work across several wide spreadsheets and dashboards at once",
       "MDL-LAPX": "I render large data visualisations and the standard laptop can't cope"}


class HardwareRequest(HardwareFamily):
    code = "NB007"
    name = "hardware_request"
    number = 7
    description = "An employee asks for a peripheral or a piece of non-standard hardware."
    branches = ("stock_peripheral", "second_monitor", "duplicate_refused", "out_of_stock", "non_standard_manager", "non_standard_director",
                "finance_tier", "off_catalogue")
    openings = Openings("NB007", {
        "plain": "Hi, could I get {want}?",
        "upfront_email": "Hello, {email} here - I'd like to request {want}.",
        "reason": "Could I have {want}? {why}.",
        "urgent": "I need {want} this week if at all possible.",
        "vague": "I need some new kit for my desk.",
        "manager_ok": "My manager is fine with it: can you order me {want}?",
        "short_b": "{item} request",
        "story_b": "Hiya, I've set up at a new desk and would like {want} there. Can you help?",
        "kit_b": "Hi, small kit request: {want}, please. {why}.",
    }, held_out=("short_b", "story_b", "kit_b"))

    def make(self, rng: random.Random, seed: int, branch: str, person: Person | None) -> DeskDraft:
        p = person or self.person(rng, seed)
        laptop = asset_row(f"AST-{p.uid}1", laptop_model(p), "in_use", p.id, TODAY - timedelta(days=rng.randint(60, 700)), rng.randint(10**7, 10**8 - 1))
        held = [laptop]
        if branch == "off_catalogue":
            model = "MDL-MOUS"  # stands in for the kind only; the item itself is not in the catalogue
        elif branch == "second_monitor":
            model = "MDL-MON27"
        elif branch in NON_STANDARD:
            model = NON_STANDARD[branch]
        else:
            model = rng.choice(STANDARD_PERIPHERALS)
        kind = MODELS[model]["kind"]
        if branch in ("second_monitor", "duplicate_refused"):
            count = 2 if branch == "duplicate_refused" and kind == "monitor" else 1
            for k in range(count):
                held.append(asset_row(f"AST-{p.uid}{2 + k}", model, "in_use", p.id, TODAY - timedelta(days=rng.randint(100, 600)),
                                      rng.randint(10**7, 10**8 - 1)))
        stock = [] if branch in ("out_of_stock", "off_catalogue") or branch in NON_STANDARD else stock_rows(rng, p, model, rng.randint(2, 3))
        d = self.draft(branch, p, {"assets": held + stock})
        item = MODELS[model]["name"]
        why_text = WHY.get(model, "my current setup slows me down")
        if branch == "off_catalogue":
            item, why_text = rng.choice(OFF_CATALOGUE)
        # the employee holds one already in these branches: they ask for another, never for one they are "missing"
        want = f"another {item}" if branch in ("second_monitor", "duplicate_refused") else f"a {item}"
        d.opening, d.origin = self.openings.pick(rng, self.split, item=item, want=want, email=p.given_email,
                                                 why=cap_first(why_text))
        self.request_clause = f"I'd like {want}"
        d.identify()
        d.fact(f"I'd like {want}: {why_text}.", "item", ["what do you need", "which item", "what item", "why", "reason"], value=item)
        if d.origin.endswith("/vague"):
            d.ask("What item do you need, and what is it for?")
        d.read("list_assets", employee_id=p.id)
        d.read("search_hardware_catalog", kind=None if branch == "off_catalogue" else kind)
        if branch == "off_catalogue":
            d.ticket(f"Off-catalogue request: {item}", "procurement", "open", team="procurement")
            d.reply(f"A {item} isn't in our hardware catalogue, so I can't order it from the service desk. I've passed ticket "
                    f"{d.ids['tickets']} to the procurement team, who will look at suppliers and get back to you.")
            d.mention("escalates_to_procurement", [str(d.ids["tickets"])])
        elif branch == "duplicate_refused":
            limit = "two monitors" if kind == "monitor" else f"one {kind}"
            d.ticket(f"Second {kind} request refused", "hardware", "solved")
            d.reply(f"You already have {limit} assigned, which is the limit per person, so I can't issue another. If the one you have is "
                    "faulty, tell me and we'll troubleshoot and replace it.")
            d.mention("refuses_duplicate", ["already"])
        elif model in STANDARD_PERIPHERALS and stock:
            d.read("list_stock", model_id=model)
            new = min(stock, key=lambda r: (r["purchased_on"], r["id"]))["id"]
            d.write("assign_asset", {"asset_id": "record:list_stock", "employee_id": "record:find_employee"},
                    idempotent="an asset no longer in stock cannot be assigned again", asset_id=new, employee_id=p.id)
            d.ticket(f"{item} issued", "hardware", "solved")
            d.reply(f"I've assigned you a {item} from stock, asset {new}; you can collect it from the service desk.")
            d.mention("states_asset", [new])
        else:
            if model in STANDARD_PERIPHERALS:
                d.read("list_stock", model_id=model)
            tier, approver, total = self.procure(d, model, MODELS[model]["unit_price"], source_item="record:search_hardware_catalog")
            d.ticket(f"Purchase request: {item}", "procurement", "pending")
            lead = f"There is no {item} in stock, so " if model in STANDARD_PERIPHERALS else f"The {item} is a non-standard item, so "
            d.reply(f"{lead}I've raised purchase request {d.ids['procurement_requests']} for {usd(total)}; as a {tier}-tier purchase it "
                    f"goes to {EMPLOYEES[approver]['name']} for approval. I've left your ticket pending.")
            d.mention("states_purchase", [str(d.ids["procurement_requests"])])
            d.states("procurement.tier")
        d.intent = f"Get a {item}."
        return d
