"""The ``consent_before`` rule on one guarded write: exempt, agreed, violated or undetermined, and why.

Whether the policy asks agreement for the write at all (its condition, and for ``not_as_asked``
whether the write is what the customer asked for in those terms, read on the customer's own
messages), and, where it does, what the agreement read by ``_proposals.py`` makes of it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date
from decimal import Decimal
from typing import Any

from ..contracts.events import ToolCallEvent, TraceEvent, is_message, is_tool_call
from ..reading.claims import GENERIC, actions_for_tool, read_claims
from ..reading.values import extract_values, same_value
from ._proposals import agreed_messages, consent_finding
from ._write_terms import (
    ObjectFacts,
    Reading,
    Rows,
    amounts_said,
    argument_values,
    flags_set,
    money_arguments,
    no_rows,
    object_facts,
    says,
    template_arguments,
)
from .verdict_rules import ProcessRule


def as_asked(event: ToolCallEvent, before: list[TraceEvent], reading: Reading, template: str,
             facts: list[ObjectFacts], others_dates: frozenset[str] = frozenset()) -> tuple[str, str, Any]:
    """("asked" | "other" | "unknown", why, term): whether the write is what the customer asked for, in those terms.

    Read on the customer's own messages before the write: money the write moves that the customer
    never named, another record than the one the write touches (and never this one), or dates asked
    for in the sentence of the request none of which the write sets, are a change the customer did
    not ask for ("other"; ``term`` is what differs: the amount, the date, the flag's word). A request of
    the write's action with none of these is "asked"; no request the reader recognises is "unknown".
    """
    texts = [e["content"] or "" for e in before if is_message(e) and e["role"] == "user"]
    name = str(event.get("name"))
    amounts, dates, _ = argument_values(event.get("arguments"), reading, money_arguments(template), template_arguments(template))
    said_amounts = [a for t in texts for a in amounts_said(t, reading)]
    for a in amounts:
        if not any(abs(a - s) < Decimal("0.005") for s in said_amounts):
            return "other", f"the write moves {a:.2f}, an amount the customer never named", a
    whole = "\n".join(texts)
    for flag in flags_set(event, template):
        if not says(whole, flag):
            return "other", f"the write turns on {flag}, which the customer never asked for", flag
    actions = actions_for_tool(reading.domain_path, name) if reading.domain_path else set()
    requests = [c for t in texts for c in read_claims(t, reading.domain_path, reading.clock, reading.id_patterns)
                if c.action in actions and c.outcome != "refused" and c.affirmed] if actions else []
    # another record asked for: in the sentences that request the action, or where none is recognised, in what
    # the customer said beyond introducing themself (a customer giving their name, a driver on the policy, asks
    # nothing about that driver)
    said = "\n".join(sent for t in texts for sent in re.split(r"(?<=[.!?])\s+", t)
                     if not re.match(r"\s*(?:my (?:full )?name is|i am|i'm|this is)\b", sent, re.IGNORECASE))
    asked_text = "\n".join(dict.fromkeys(c.sentence for c in requests))
    for f in facts:
        if any(says(whole, n) for n in f.names):
            continue
        # the request names no record of the kind ("I'd like to sign up for a course"): the record is in the answers
        named_in_request = any(says(asked_text, n) for _, apart in f.others for n in apart)
        asked_text = asked_text if named_in_request else said
        other = next((o for o, apart in f.others if any(says(asked_text, n) for n in apart)), None)
        if other is not None:
            return "other", f"the customer asked about {other}, not {f.value} that the write touches", None
    asked_dates = [v for seg in _request_segments(requests, texts, reading, event, facts)
                   for v in extract_values(seg, reading.clock, reading.id_patterns) if v.kind == "date"]
    if not asked_dates and reading.clock is not None:
        # no date in the request itself: the calendar dates of the customer's affairs they gave ("I sold it on
        # 12 April"), within a year of today (a date of birth is no date asked for)
        # , leaving out those asked for another change ("add my father today, and switch my car to liability")
        others = [c for t in texts for c in read_claims(t, reading.domain_path, reading.clock, reading.id_patterns)
                  if c.action not in actions and c.action != GENERIC]
        elsewhere = {v.norm for seg in _request_segments(others, texts, reading, {}, []) if others
                     for v in extract_values(seg, reading.clock, reading.id_patterns) if v.kind == "date"}
        asked_dates = [v for t in texts for v in extract_values(t, reading.clock, reading.id_patterns)
                       if v.kind == "date" and re.search(r"\d", v.text)  # a calendar date, not "tomorrow" said in passing
                       and abs((date.fromisoformat(v.norm) - reading.clock).days) <= 366 and v.norm not in elsewhere
                       and v.norm not in others_dates]  # a date another write of the episode set is that write's term
    for d in dates:
        if asked_dates and not any(same_value(d, v) for v in asked_dates):
            return "other", (f"the customer named {', '.join(dict.fromkeys(v.norm for v in asked_dates))}; "
                             f"the write sets {d.norm}"), d
    if requests or facts:
        # the customer asked for the write's action, or named every record it touches (a course, asked for by
        # its title): with nothing asked otherwise, the write is what they asked for
        return "asked", "as the customer asked", None
    return "unknown", f"no request of the action of {name} recognised in the customer's words", None


def _request_segments(requests: list[Any], texts: list[str], reading: Reading, event: Mapping[str, Any],
                      facts: list[ObjectFacts]) -> list[str]:
    """The words of each request of the write's action: from its clause to the next request of the same sentence.

    Where the write has words of its own (its record, or a word of a text argument: the vehicle's
    model, the driver's name), only the segments that name them are the request for this write, so
    that a date asked for another change of the same sentence is not read as this one's.
    """
    all_claims = [c for t in texts for c in read_claims(t, reading.domain_path, reading.clock, reading.id_patterns)]
    segments: list[str] = []
    for c in requests:
        start = c.sentence.find(c.clause) if c.clause else 0
        start = max(start, 0)
        later = [c.sentence.find(o.clause, start + 1) for o in all_claims
                 if o.sentence == c.sentence and o.clause and o.clause != c.clause]
        end = min([p for p in later if p > start], default=len(c.sentence))
        segments.append(c.sentence[start:end])
    raw = event.get("arguments")
    args: dict[str, Any] = raw if isinstance(raw, dict) else {}
    words = {w.lower() for v in args.values() if isinstance(v, str) and not re.search(r"\d", v)
             for w in re.findall(r"[A-Za-z]{4,}", v) if "_" not in v} | {n for f in facts for n in f.names}
    about = [seg for seg in segments if any(says(seg, w) for w in words)]
    # requests that name none of what this write is about are requests for another record of the same action
    return about if words else segments


def other_writes_dates(events: list[TraceEvent], at: int, reading: Reading | None) -> frozenset[str]:
    """The dates the episode's other successful writes set (another record's effective date)."""
    if reading is None:
        return frozenset()
    mine = events[at].get("arguments") if is_tool_call(events[at]) else None
    out: set[str] = set()
    for k, e in enumerate(events):
        if k == at or not is_tool_call(e) or not e.get("writes") or e.get("arguments") == mine:
            continue
        _, dates, _ = argument_values(e.get("arguments"), reading, set())
        out.update(d.norm for d in dates)
    return frozenset(out)


def _names_term(text: str, term: Any, reading: Reading) -> bool:
    """Whether a message names the term a write differs from the request by: a date, an amount or a flag's word."""
    if isinstance(term, str):
        return says(text, term)
    if isinstance(term, Decimal):
        return any(abs(term - a) < Decimal("0.005") for a in amounts_said(text, reading))
    return any(same_value(term, v) for v in extract_values(text, reading.clock, reading.id_patterns))


def _required(rule: ProcessRule, event: ToolCallEvent) -> bool:
    """False where the rule's condition exempts this write from agreement on its result (a free request, not a paid extra)."""
    cond = rule.condition(str(event["name"]))
    m = re.fullmatch(r"result\.(\w+) > 0", cond)
    if not m:
        return True
    result = event.get("result")
    value = result.get(m.group(1)) if isinstance(result, dict) else None
    try:
        return value is None or Decimal(str(value)) > 0
    except ArithmeticError:
        return True


def consent_applies(rule: ProcessRule, event: ToolCallEvent, before: list[TraceEvent], reading: Reading,
                    rows: Rows = no_rows, others_dates: frozenset[str] = frozenset()) -> bool:
    """Whether the rule asks agreement for this write at all, whatever the dialogue held (not exempt as asked for)."""
    if not _required(rule, event):
        return False
    if rule.condition(str(event["name"])) != "not_as_asked":
        return True
    facts = object_facts(rule, event, rows)
    return as_asked(event, before, reading, rule.writes.get(event["name"], ""), facts, others_dates)[0] != "asked"


def consent_result(rule: ProcessRule, event: ToolCallEvent, before: list[TraceEvent], reading: Reading,
                   rows: Rows = no_rows, others_dates: frozenset[str] = frozenset()) -> tuple[bool | None, str]:
    """(True: respected, False: violated, None: undetermined, why) for one guarded write under a consent rule.

    It fails only on a finding: no agreement at all where the policy asks for one, or agreement to
    another record or other values. Where the customer agreed to words the reader cannot read, or
    (for a write that needs agreement only when it is not what the customer asked) the customer's
    request cannot be read, it is undetermined.
    """
    if not _required(rule, event):
        return True, "not required: the write records nothing to pay"
    facts = object_facts(rule, event, rows)
    found, why = consent_finding(rule, event, before, reading, facts)
    if found == "agreed":
        return True, why
    if rule.condition(str(event["name"])) != "not_as_asked":
        return (None if found == "unread" else False), why
    asked, asked_why, term = as_asked(event, before, reading, rule.writes.get(event["name"], ""), facts, others_dates)
    if asked == "asked":
        return True, f"not required: {asked_why}"
    if asked == "other":
        if found == "unread" and term is not None and any(_names_term(t, term, reading) for t in agreed_messages(before)):
            # the confirmation the policy asks for is of what differs from the request: agreed to that term
            return True, f"agreed to what differs from the request ({asked_why})"
        return (None if found == "unread" else False), f"{asked_why}, so the policy asks for agreement; {why}"
    return (False if found == "evidence" else None), f"{asked_why}; {why}"
