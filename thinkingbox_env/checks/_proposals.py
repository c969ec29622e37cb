"""Whether the customer agreed to a proposal of a write: the agent messages the customer agreed to, read for that write.

A proposal licenses a write when it names the write's action (read with the claim reader), the
record it touches and every value it uses; an agreement to another record or other values is a
finding, and one the reader cannot read for the write is left undetermined (see ``process.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from ..contracts.events import ToolCallEvent, TraceEvent, is_message
from ..reading.claims import actions_for_tool, read_claims
from ..reading.phrases import normalise_phrase
from ..reading.values import extract_values, same_value
from ._write_terms import (
    ObjectFacts,
    Reading,
    amounts_said,
    argument_values,
    flags_set,
    money_arguments,
    object_finding,
    says,
    template_arguments,
)
from .agreement import agreed
from .verdict_rules import ProcessRule


def _verb(rule: ProcessRule, name: str) -> str:
    words = normalise_phrase(rule.writes[name])
    return words[0] if words else name

def proposal_finding(text: str, event: Mapping[str, Any], reading: Reading, template: str = "",
                     facts: list[ObjectFacts] | None = None) -> tuple[str, str]:
    """How an agreed message stands to this write: ("licensed" | "evidence" | "unread", why).

    Licensed: the message names the write's action (read with the claim reader, in any ordinary
    wording), the object it touches (its id or identifying attributes) and every value it uses (each
    date it sets, the exact amount it moves). Evidence: the message names another of the customer's
    records instead of the one the write touches, or amounts or dates that are not the write's, so
    the customer agreed to something else. Unread: no action of the write recognised, or no object
    or value named that the reader can parse; the reader cannot tell what was agreed to.
    """
    name = str(event.get("name"))
    actions = actions_for_tool(reading.domain_path, name) if reading.domain_path else set()
    claims = [c for c in read_claims(text, reading.domain_path, reading.clock, reading.id_patterns)
              if c.action in actions and c.outcome != "refused"] if actions else []
    amounts, dates, ids = argument_values(event.get("arguments"), reading, money_arguments(template), template_arguments(template))
    if not claims:
        quoted = amounts_said(text, reading) if amounts else []
        if quoted and not any(abs(a - q) < Decimal("0.005") for a in amounts for q in quoted):
            # the customer agreed to amounts (a new total), none of them the one this write moves: a total
            # licenses only what the domain declares it covers, and no domain declares one
            return "evidence", (f"the write uses {max(amounts):.2f}; the agreed message named only "
                                f"{', '.join(f'{q:.2f}' for q in quoted)}")
        return "unread", f"no proposal of the action of {name} recognised"
    said = extract_values(text, reading.clock, reading.id_patterns)
    if facts:
        found, why = object_finding(text, facts)
        if found == "other":
            return "evidence", f"the proposal {why}"
        if found == "unnamed":
            return "unread", f"the proposal {why}"
    elif not (any(same_value(i, v) or i.text.lower() in text.lower() for i in ids for v in [*said, i])
              or any(c.objects for c in claims)):
        return "unread", "the proposal does not say what the action acts on"
    if amounts:
        proposed = amounts_said(text, reading)
        if not proposed:
            return "unread", f"the write uses {max(amounts):.2f}; the proposal names no amount"
        missing = [a for a in amounts if not any(abs(a - p) < Decimal("0.005") for p in proposed)]
        if missing:
            return "evidence", (f"the write uses {missing[0]:.2f}; the proposal named "
                                f"{', '.join(f'{p:.2f}' for p in proposed)}")
    for flag in flags_set(event, template):
        if not says(text, flag):
            return "unread", f"the write turns on {flag}; the proposal does not name it"
    said_dates = [v for v in said if v.kind == "date"]
    for d in dates:
        if not any(same_value(d, v) for v in said_dates):
            if not said_dates:
                return "unread", f"the write sets {d.norm}; the proposal names no date"
            return "evidence", f"the write sets {d.norm}; the proposal named {', '.join(v.norm for v in said_dates)}"
    return "licensed", "proposed"


def proposal_licenses(text: str, event: Mapping[str, Any], reading: Reading, template: str = "",
                      facts: list[ObjectFacts] | None = None) -> tuple[bool, str]:
    """Whether an agent message proposed this write: its action, on its object, with the values it uses."""
    found, why = proposal_finding(text, event, reading, template, facts)
    return found == "licensed", why


def _proposal_like(text: str) -> bool:
    """Whether an agent message asks for agreement to something (not a question for a fact)."""
    from ..users.acts import _CHOICE_CUE, _PROPOSAL, _PROPOSAL_ACTION

    # a choice between options ("the card or the bank account?") is answered, not agreed to
    return bool(_PROPOSAL.search(text) or _PROPOSAL_ACTION.search(text)) and not _CHOICE_CUE.search(text)


def agreed_messages(before: list[TraceEvent]) -> list[str]:
    """Agent messages the customer agreed to in the turn right after them, before the write."""
    out = []
    for prev, reply in zip(before, before[1:]):
        if is_message(prev) and prev["role"] == "assistant" and is_message(reply) and reply["role"] == "user" \
                and agreed(reply["content"] or "") is True:
            out.append(prev["content"] or "")
    return out


def consent_finding(rule: ProcessRule, event: ToolCallEvent, before: list[TraceEvent], reading: Reading,
                    facts: list[ObjectFacts] | None = None) -> tuple[str, str]:
    """("agreed" | "evidence" | "unread" | "none", why) for the customer's agreement to this write before it.

    Agreed: the customer agreed to a message that proposed it. Evidence: the agreements there are
    name another record or other values. Unread: the customer agreed to a proposal the reader cannot
    read for this write. None: the customer agreed to no proposal at all.
    """
    name = event["name"]
    use_claims = bool(reading.domain_path) and bool(actions_for_tool(reading.domain_path, str(name)))
    template = rule.writes.get(name, "")
    unread: str | None = None
    evidence: str | None = None
    for text in agreed_messages(before):
        if not use_claims:  # a domain without a claim vocabulary: the rule's own verb
            if _verb(rule, name) in normalise_phrase(text):
                return "agreed", "agreed"
            continue
        found, why = proposal_finding(text, event, reading, template, facts)
        if found == "licensed":
            return "agreed", "agreed"
        if found == "evidence":
            evidence = evidence or why
        elif _proposal_like(text) or why != f"no proposal of the action of {name} recognised":
            unread = unread or why
    if evidence:
        return "evidence", f"the customer agreed to another proposal: {evidence}"
    if unread:
        return "unread", f"the customer agreed, but {unread[0].lower()}{unread[1:]}"
    proposed = use_claims and any(
        is_message(e) and e["role"] == "assistant"
        and proposal_finding(e["content"] or "", event, reading, template, facts)[0] == "licensed" for e in before)
    return "none", "the customer did not agree to the proposal" if proposed else "no agent message proposed it"
