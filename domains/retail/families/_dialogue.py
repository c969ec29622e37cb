"""The golden agent's own turns, placed by the domain's rules once a task is complete.

The agent asks for the facts the lookups need (the account email, the order number) unless
the opening gave them, asks each family's questions once the customer is identified,
proposes every consent-guarded write of ``verdicts.yaml`` (and the refunds it describes beside them) before it
with its amount and id,
and tells the customer when a lookup found nothing or a call has to be retried.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from ._draft import RetailDraft
from ._sources import TICKET_TOOLS, WRITE_TOOLS

# writes the golden agent also describes when it proposes, though the policy asks no agreement for them (only a
# cancellation needs the customer's confirmation): saying what will be refunded before doing it is good practice,
# and the consent check of verdicts.yaml demands agreement only where the policy asks for it
DESCRIBED = {
    "issue_refund": "refund ${amount:.2f} to payment {payment_id}",
    "refund_order_amount": "refund ${amount:.2f} on order {order_id}",
    "refund_membership_fee": "refund ${amount:.2f} of the membership fee",
    "cancel_installation": "cancel installation {installation_id}",
}


@cache
def consent_templates() -> dict[str, str]:
    """The writes the golden agent proposes before making them, and how a proposal describes each.

    The consent-guarded writes of verdicts.yaml, and the refunds the agent describes beside them.
    """
    data = yaml.safe_load((Path(__file__).resolve().parent.parent / "verdicts.yaml").read_text(encoding="utf-8"))
    out: dict[str, str] = {}
    for rule in data.get("process", []):
        if rule.get("kind") == "consent_before":
            out.update(rule.get("writes", {}))
    return {**out, **{k: v for k, v in DESCRIBED.items() if k not in out}}


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


def _opening_ask(d: RetailDraft) -> list[tuple[int, str, str]]:
    """Ask for the email and the order number where the lookups need them and the opening did not give them."""
    email_fact = next((f for f in d.facts if "email" in f["unlock"]), None)
    order_fact = next((f for f in d.facts if "order number" in f["unlock"]), None)
    needs_order = any("order_id" in c["arguments"] for c in d.golden)
    wanted = []
    if email_fact and "@" not in d.opening:
        wanted.append("the email address on your Brightwell account")
    if needs_order and order_fact and "ORD-" not in d.opening:
        wanted.append("the order number")
    if not wanted:
        return []
    return [(0, "ask", f"I can help with that. Could you give me {' and '.join(wanted)}?")]


def _questions(d: RetailDraft) -> list[tuple[int, str, str]]:
    """The family's questions, once the customer is identified or just before the call they are for."""
    golden = d.golden
    first_write = next((i for i, c in enumerate(golden) if c["name"] in WRITE_TOOLS and c["name"] not in TICKET_TOOLS), len(golden))
    lookups_done = min(2 + sum(1 for c in golden[:3] if c.get("expect_error")), first_write)
    out = []
    for text, tool in d.questions:
        at = next((i for i, c in enumerate(golden) if c["name"] == tool), lookups_done) if tool else lookups_done
        out.append((at, "ask", text))
    return out


def _proposals(d: RetailDraft) -> list[tuple[int, str, str]]:
    """One proposal before each run of consent-guarded writes (reads between them belong to the run)."""
    golden, guarded = d.golden, consent_templates()
    out = []
    i = 0
    while i < len(golden):
        if golden[i]["name"] not in guarded:
            i += 1
            continue
        group: list[str] = []
        j = i
        while j < len(golden) and (golden[j]["name"] in guarded or golden[j]["name"] not in WRITE_TOOLS):
            if golden[j]["name"] in guarded and not golden[j].get("expect_error"):
                text = describe(golden[j], d.two_orders)
                if text not in group:
                    group.append(text)
            j += 1
        out.append((i, "propose", f"Here is what I can do: {'; '.join(group)}. Shall I go ahead?"))
        i = j
    return out


def place_turns(d: RetailDraft) -> None:
    """Write the golden dialogue: asks, proposals and informs in golden order (at one point, in that order)."""
    turns = _opening_ask(d) + _questions(d) + _proposals(d) + [(before, "inform", text) for before, text in d.informs]
    if not any(act == "ask" for _, act, _ in turns):
        # the opening already named everything the lookups need: the agent still checks what the customer wants
        turns.append((0, "ask", "Thanks, I have your details. Is there anything else about the request I should know before I look into it?"))
    for before, act, text in sorted(turns, key=lambda t: t[0]):
        d.say(act, text, before)
