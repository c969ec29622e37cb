"""The v2 finishing pass every retail task goes through: rationale, golden dialogue, recovery, origin.

A family draws the business case (rows, golden calls, reply); this module adds
what the task set asks of every task in one place, so no family can forget it:

- ``why``: the source of every non-free-text argument of every golden write,
  from the argument's kind (an id is read from the record that returned it, a
  ticket field from the ticket rules, a reason or an amount from the family's
  policy section, a date or an address from the customer);
- ``dialogue``: the agent's own turns (ask for the facts the tools need,
  propose before every consent-guarded write as verdicts.yaml lists them,
  inform after a failed lookup);
- recovery on the correct path, drawn from the seed: the customer misremembers
  the order number or the email (the golden holds the failed lookup), or the
  payment service times out once (a documented transient error, retried).
"""

from __future__ import annotations

import random
import re
from functools import cache
from pathlib import Path
from typing import Any

import yaml

# the golden write tools of this domain (retail tools and the engine's ticket tools)
WRITE_TOOLS = frozenset({
    "create_ticket", "update_ticket", "create_ticket_user",
    "update_membership", "cancel_order", "issue_refund", "issue_store_credit", "update_shipping_address",
    "change_shipping_speed", "create_return", "create_exchange", "create_replacement_order",
    "open_carrier_investigation", "refund_order_amount", "file_warranty_claim", "reschedule_installation",
    "cancel_installation", "schedule_revisit", "apply_promotion_adjustment", "adjust_reward_points",
    "refund_membership_fee",
})
TICKET_TOOLS = frozenset({"create_ticket", "update_ticket", "create_ticket_user"})
# ticket text: the engine's ticket tools type these as plain strings, so they are given the source of their content,
# the customer's request (subject, description) or the outcome the family's policy section decides (note)
TICKET_TEXT = {"subject": "customer", "description": "customer"}
# where an id comes from: the read tools whose result carries it, in order of preference
ID_SOURCES: dict[str, tuple[str, ...]] = {
    "customer_id": ("get_customer_profile",),
    "order_id": ("get_order", "get_shipment", "get_payments", "list_customer_orders"),
    "payment_id": ("get_payments",),
    "membership_id": ("get_membership",),
    "installation_id": ("get_installations",),
    "contract_id": ("get_warranty",),
    "requester_id": ("search_tickets",),
    "ticket_id": ("search_tickets",),
    "line_no": ("get_order",),
    "line_nos": ("get_order",),
}
# arguments only the customer can give
CUSTOMER_ARGS = frozenset({"new_date", "visit_date", "shipping_address", "code", "new_sku", "name", "email"})
TICKET_FIELDS = frozenset({"category", "priority", "status"})
REFUND_TOOLS = ("issue_refund", "refund_order_amount", "refund_membership_fee")
TIMEOUT = "payment service timed out; nothing was changed, retry"


@cache
def consent_templates() -> dict[str, str]:
    """The consent-guarded writes of verdicts.yaml and how a proposal describes each."""
    data = yaml.safe_load((Path(__file__).resolve().parent.parent / "verdicts.yaml").read_text(encoding="utf-8"))
    out: dict[str, str] = {}
    for rule in data.get("process", []):
        if rule.get("kind") == "consent_before":
            out.update(rule.get("writes", {}))
    return out


def describe(call: dict[str, Any], two_orders: bool = False) -> str:
    """A guarded write in the words of its verdicts.yaml template (amounts formatted as money).

    With two orders in the conversation an order is named by its last digits ("the order ending in 0006"), as
    people tell two orders apart; the full number stays in the calls.
    """
    template = consent_templates()[call["name"]]
    args = {k: (float(v) if isinstance(v, int | float) and not isinstance(v, bool) else v) for k, v in call["arguments"].items()}
    text = template.format(**args)
    if two_orders:
        text = re.sub(r"\border (ORD-\d+)", lambda m: f"the order ending in {m.group(1)[-4:]}", text)
    return text


def _why(call: dict[str, Any], earlier: list[dict[str, Any]], section: str, overrides: dict[str, str]) -> dict[str, str]:
    reads = [c["name"] for c in earlier if c.get("expect_error") is None]
    why: dict[str, str] = {}
    for arg in call["arguments"]:
        key = f"{call['name']}.{arg}"
        if key in overrides:
            why[arg] = overrides[key]
        elif arg in overrides:
            why[arg] = overrides[arg]
        elif arg in TICKET_TEXT:
            why[arg] = TICKET_TEXT[arg]
        elif arg == "note":
            why[arg] = section
        elif call["name"] in TICKET_TOOLS and arg in TICKET_FIELDS:
            why[arg] = "policy#tickets"
        elif arg == "requester_id" and "create_ticket_user" in reads:
            # the id the user creation just minted: the policy's identification steps say to use it
            why[arg] = "policy#identifying-the-customer"
        elif arg in ID_SOURCES:
            source = next((t for t in ID_SOURCES[arg] if t in reads), None)
            if source is None and arg != "order_id":  # only an order number is something the customer knows by heart
                raise ValueError(f"{call['name']}.{arg}: the golden reads no record that shows it ({', '.join(ID_SOURCES[arg])})")
            why[arg] = f"record:{source}" if source else "customer"
        elif arg in CUSTOMER_ARGS:
            why[arg] = "customer"
        else:
            why[arg] = section
    return why


def _shift(body: dict[str, Any], at: int) -> None:
    """Make room for one golden call inserted at ``at``: later indices move up by one."""
    body["idempotent_writes"] = {(i + 1 if i >= at else i): v for i, v in body.get("idempotent_writes", {}).items()}
    for turn in body.get("dialogue") or []:
        if turn["before"] >= at:
            turn["before"] += 1


def misremember(body: dict[str, Any], key: str, value: str, wrong: str, error: str, inform: str) -> bool:
    """The customer first gives ``wrong`` for ``value``: a failed lookup, an inform turn, then the right lookup."""
    golden: list[dict[str, Any]] = body["golden"]
    at = next((i for i, c in enumerate(golden) if c["arguments"].get(key) == value), None)
    fact = next((f for f in body["user"]["facts"] if value in f["text"]), None)
    if at is None or fact is None:
        return False
    failing = {"name": golden[at]["name"], "arguments": {**golden[at]["arguments"], key: wrong}, "expect_error": error}
    _shift(body, at)
    golden.insert(at, failing)
    fact["value"] = value
    fact["misremembered"] = wrong
    body["user"]["opening"] = body["user"]["opening"].replace(value, wrong)
    body.setdefault("_informs", []).append((at + 1, inform))
    return True


def timeout_once(body: dict[str, Any]) -> bool:
    """The first refund call meets a documented payment-service timeout and is retried."""
    golden: list[dict[str, Any]] = body["golden"]
    at = next((i for i, c in enumerate(golden) if c["name"] in REFUND_TOOLS), None)
    if at is None:
        return False
    failing = {"name": golden[at]["name"], "arguments": dict(golden[at]["arguments"]), "expect_error": "payment service timed out"}
    _shift(body, at)
    golden.insert(at, failing)
    body.setdefault("faults", []).append({"tool": golden[at]["name"], "call": 1, "error": TIMEOUT})
    body.setdefault("_informs", []).append((at + 1, "The payment service timed out on my side; nothing went through, so I'm trying that refund again."))
    return True


def new_ticket_user(body: dict[str, Any], user_id: int) -> None:
    """The customer has no ticketing user yet: drop the row from the patch and create it in the golden, after the lookup."""
    users = body["patch"]["insert"].get("ticket_users", [])
    row = next(u for u in users if u["id"] == user_id)
    users.remove(row)
    if not users:
        del body["patch"]["insert"]["ticket_users"]
    golden: list[dict[str, Any]] = body["golden"]
    at = next(i for i, c in enumerate(golden) if c["name"] == "search_tickets" and c["arguments"].get("table") == "users") + 1
    _shift(body, at)
    golden.insert(at, {"name": "create_ticket_user", "arguments": {"name": row["name"], "email": row["email"]},
                       "why": {"name": "record:get_customer_profile", "email": "record:get_customer_profile"}})
    body.setdefault("idempotent_writes", {})[at] = "a second ticketing user with the same email is refused"


def wrong_order_id(order_id: str) -> str:
    """A plausible misremembering of an order number: the last two digits swapped, or the last one changed."""
    head, digits = order_id[:-2], order_id[-2:]
    if digits[0] != digits[1]:
        return head + digits[::-1]
    return order_id[:-1] + str((int(order_id[-1]) + 3) % 10)


def wrong_email(email: str) -> str:
    """The address of an old account: a different number or none before the @."""
    local, domain = email.split("@", 1)
    stripped = local.rstrip("0123456789")
    return f"{stripped}@{domain}" if stripped != local else f"{local}1@{domain}"


def add_recovery(body: dict[str, Any], code: str, seed: int, order_id: str | None, email: str | None) -> str | None:
    """Draw (from the seed alone) whether and how this task recovers on the correct path; returns the kind."""
    rng = random.Random(f"recovery/{code}/{seed}")
    roll = rng.random()
    if roll < 0.12 and order_id:
        wrong = wrong_order_id(order_id)
        if misremember(body, "order_id", order_id, wrong, "not found",
                       f"I can't find an order {wrong}. Could you check the order number?"):
            return "misremembered_order"
    elif roll < 0.2 and email:
        wrong = wrong_email(email)
        if misremember(body, "email", email, wrong, "no customer found",
                       f"I can't find an account with the email {wrong}. Could you check it, or give me another email you use with us?"):
            return "misremembered_email"
    elif roll < 0.35 and timeout_once(body):
        return "payment_timeout"
    return None


# a phrase check's pattern that is a value (an amount, a date, a count, a street address, a place name), not wording
_VALUE = re.compile(r"^\$?\d[\d,]*(\.\d\d)?$|^\d{4}-\d{2}-\d{2}$|^\d+ [A-Z][a-z]+( [A-Z][a-z]+)*$|^[A-Z][a-z]+$")


@cache
def action_words() -> frozenset[str]:
    """The words of claims.yaml's action phrases ("replacement", "refund", "exchange"): a closing may say them in any
    form, since the mentions check reads an outcome term through the claim reader as well."""
    data = yaml.safe_load((Path(__file__).resolve().parent.parent / "claims.yaml").read_text(encoding="utf-8"))
    return frozenset(w for action in data.get("actions", {}).values() for phrase in action.get("phrases", []) for w in phrase.split())


@cache
def claim_roles() -> dict[str, dict[str, Any]]:
    """The roles of claims.yaml (refund.amount, new_date, ...): the tools that hold each one's value and its kind."""
    data = yaml.safe_load((Path(__file__).resolve().parent.parent / "claims.yaml").read_text(encoding="utf-8"))
    return data.get("roles", {})


def _role_values(golden: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(role, value) for every argument of a golden write that holds a claims role's value ("529.00", "2026-03-16").

    A fee or charge argument ("restocking_fee", "late_cancellation_charge") holds a fee; any other amount holds
    what the role of its tool pays out (a refund, a credit).
    """
    out = []
    for role, spec in claim_roles().items():
        for call in golden:
            if call["name"] not in spec.get("tools", []) or call.get("expect_error"):
                continue
            for key, arg in call["arguments"].items():
                if spec.get("kind") == "money" and isinstance(arg, int | float) and not isinstance(arg, bool):
                    if key.endswith(("fee", "charge")) == (role == "fee.amount") and arg:
                        out.append((role, f"{arg:.2f}"))
                elif spec.get("kind") == "date" and isinstance(arg, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", arg):
                    out.append((role, arg))
    return out


def _said(value: str, text: str) -> bool:
    """Whether ``text`` states ``value`` (an amount with or without thousands separators, or an ISO date)."""
    if "-" in value:
        return value in text
    whole, cents = value.split(".")
    return bool(re.search(rf"\$(?:{whole}|{int(whole):,})\.{cents}(?!\d)", text))


def claims_form(body: dict[str, Any]) -> None:
    """Rewrite the family's phrase checks as what a paraphrase cannot miss.

    A value the closing must state becomes the stated role that holds it (``states: [refund.amount]``) where a
    golden write holds it, and stays a value mention (matched after normalising money and dates) where none does.
    A single outcome word of the claim vocabulary ("replacement", "refund") stays: the mentions check reads it
    through the claim reader, in any words. Other wording ("no discount", "can't be changed") and forbidden phrases
    ("is cancelled", a bare "now" or "12.00") are dropped: the domain's claims checks read every closing for its outcome in any words
    (``claims:states_outcome``, ``claims:agrees``), ``withholds`` reads the confidential score by meaning, and the
    explanation a refusal owes is a rubric question.
    """
    checks = body.setdefault("checks", {})
    held = _role_values(body["golden"])
    states: list[str] = list(checks.get("states", []))
    for role, value in held:  # every value of a role the golden closing states, the closing must state too
        if role not in states and _said(value, body.get("golden_reply", "")):
            states.append(role)
    kept = []
    for chk in checks.get("dialogue", []):
        values = []
        for pattern in chk.get("must", []):
            literal = pattern.replace("\\", "")
            if pattern in action_words():  # an outcome term, read in any words the claim reader knows
                values.append(pattern)
                continue
            if not _VALUE.match(literal) or re.search(r"[|()\[\]*+?]", literal):
                continue
            if not any(value == literal.lstrip("$").replace(",", "") and role in states for role, value in held):
                values.append(pattern)
        if values:
            kept.append({"name": chk["name"], "must": values})
    checks["dialogue"] = kept
    if states:
        checks["states"] = states


def finish(body: dict[str, Any], *, section: str, why: dict[str, str], asks: list[tuple[str, str | None]], needs_order: bool,
           two_orders: bool = False) -> dict[str, Any]:
    """Fill ``why`` on every golden write and build the golden dialogue (unless the family wrote one)."""
    golden: list[dict[str, Any]] = body["golden"]
    claims_form(body)
    for i, call in enumerate(golden):
        own = call.pop("_section", section)  # a two-request task keeps each request's own section and rules
        rules = call.pop("_why", why)
        if call["name"] in WRITE_TOOLS and "why" not in call:
            call["why"] = _why(call, golden[:i], own, rules)
    informs: list[tuple[int, str]] = body.pop("_informs", [])
    if body.get("dialogue"):
        body["dialogue"].extend({"before": b, "act": "inform", "say": s} for b, s in informs)
        body["dialogue"].sort(key=lambda t: t["before"])
        return body
    opening = body["user"]["opening"]
    facts = body["user"]["facts"]
    email_fact = next((f for f in facts if "email" in f["unlock"]), None)
    order_fact = next((f for f in facts if "order number" in f["unlock"]), None)
    wanted = []
    if email_fact and "@" not in opening:
        wanted.append("the email address on your Brightwell account")
    if needs_order and order_fact and "ORD-" not in opening:
        wanted.append("the order number")
    turns: list[dict[str, Any]] = []
    if wanted:
        turns.append({"before": 0, "act": "ask", "say": f"I can help with that. Could you give me {' and '.join(wanted)}?"})
    first_write = next((i for i, c in enumerate(golden) if c["name"] in WRITE_TOOLS and c["name"] not in TICKET_TOOLS), len(golden))
    lookups_done = min(2 + sum(1 for c in golden[:3] if c.get("expect_error")), first_write)
    for say, tool_name in asks:
        at = next((i for i, c in enumerate(golden) if c["name"] == tool_name), lookups_done) if tool_name else lookups_done
        turns.append({"before": at, "act": "ask", "say": say})
    guarded = consent_templates()
    i = 0
    while i < len(golden):
        if golden[i]["name"] in guarded:
            group = []
            j = i
            while j < len(golden) and (golden[j]["name"] in guarded or golden[j]["name"] not in WRITE_TOOLS):
                if golden[j]["name"] in guarded and not golden[j].get("expect_error") and describe(golden[j], two_orders) not in group:
                    group.append(describe(golden[j], two_orders))
                j += 1
            turns.append({"before": i, "act": "propose", "say": f"Here is what I can do: {'; '.join(group)}. Shall I go ahead?"})
            i = j
        else:
            i += 1
    turns.extend({"before": b, "act": "inform", "say": s} for b, s in informs)
    if not any(t["act"] == "ask" for t in turns):
        # the opening already named everything the lookups need: the agent still checks what the customer wants
        turns.append({"before": 0, "act": "ask", "say": "Thanks, I have your details. Is there anything else about the request I should know before I look into it?"})
    turns.sort(key=lambda t: t["before"])
    body["dialogue"] = turns
    return body
