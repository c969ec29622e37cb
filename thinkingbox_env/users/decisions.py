"""Answering proposals and choices from what the customer has decided, not from keywords.

A task's user spec may list decisions (accept, refuse with a reason, prefer an
option, either is fine, a date no later than X, an amount no more than Y). Specs
written before decisions existed get theirs derived from their facts, so that a
customer who "can't pay anything today" refuses a charge and the golden path, which
never asks for one, still passes. Whatever the spec says, an irreversible action the
customer never asked for (cancelling, closing, removing) is refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from typing import Literal

from dateutil import parser as date_parser

from ..contracts.spec import Decision, UserSpec

_DATE_RX = re.compile(
    r"\b\d{4}-\d{2}-\d{2}\b|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.? \d{1,2}(?:st|nd|rd|th)?,? \d{4}\b",
    re.IGNORECASE,
)
_AMOUNT_RX = re.compile(r"\$\s?(\d[\d,]*(?:\.\d{1,2})?)")


def dates_in(text: str) -> list[date]:
    """Full dates stated in a message (ISO or 'June 4, 2026'); partial dates are ignored."""
    out = []
    for m in _DATE_RX.finditer(text):
        try:
            out.append(date_parser.parse(re.sub(r"(\d)(st|nd|rd|th)", r"\1", m.group(0))).date())
        except (ValueError, OverflowError):
            continue
    return out


def amounts_in(text: str) -> list[float]:
    """Money amounts mentioned in a message, so the scripted user can tell whether the agent quoted the price it must confirm."""
    return [float(m.group(1).replace(",", "")) for m in _AMOUNT_RX.finditer(text)]


@dataclass
class Answer:
    """The scripted user's decision on a question, with the words it replies with."""
    kind: Literal["agree", "refuse", "pick", "either", "ask"]
    text: str


_CHARGE_NOW = ["charge", "pay today", "pay now", "payment today", "payment now", "take a payment", "take the payment",
               "process a payment", "process the payment", "process payment", "pay the full", "pay the balance", "pay it now",
               "card on file", "bank account on file"]
_DESTRUCTIVE = {
    "cancel": r"\bcancel(?:l?ing|l?ed|lation)?\b",
    "close": r"\bclos(?:e|ing) (?:your|the) (?:account|policy|membership)\b",
    "remove": r"\bremov(?:e|ing) (?:you|your|the|him|her|them)\b",
    "delete": r"\bdelet(?:e|ing)\b",
    "terminate": r"\bterminat(?:e|ing)\b",
}

_GOAL_ENDS_SOMETHING = re.compile(
    r"\b(?:cancel|terminat|end (?:my|the|it)|close (?:my|the)|quit|remove|delete|don't need|do not need|no longer need|get rid|sold|take \w+ off)",
    re.IGNORECASE
)


def derive_decisions(spec: UserSpec, fact_slots: list[tuple[str, str]]) -> list[Decision]:
    """Decisions of a spec written before decisions existed, read from its facts (slot, text)."""
    if spec.decisions:
        return list(spec.decisions)
    out: list[Decision] = []
    for slot, text in fact_slots:
        low = text.lower()
        if slot == "payment_method" and re.search(r"\bcan(?:'t|not| not) pay\b|\bget paid\b", low):
            out.append(Decision(about=_CHARGE_NOW, answer="refuse", reason=text))
        elif slot == "coverage":
            prefer = ["liability"] if "liability" in low else ["full"] if "full" in low else []
            out.append(Decision(about=["coverage", "liability", "full", "comprehensive"], prefer=prefer))
        elif slot == "resolution" and "keep" in low:
            out.append(Decision(about=["keep", "install"], prefer=["keep", "myself"]))
    return out


def _mentions(text: str, phrase: str) -> bool:
    return re.search(r"(?<![\w-])" + re.escape(phrase.lower()) + r"(?![\w-])", text.lower()) is not None


def _unasked_destructive(proposal: str, spec: UserSpec) -> bool:
    goal = (spec.opening + " " + spec.intent + " " + (spec.change.to if spec.change else "")).lower()
    if _GOAL_ENDS_SOMETHING.search(goal):
        return False
    return any(re.search(pattern, proposal, re.IGNORECASE) and not re.search(pattern, goal) for pattern in _DESTRUCTIVE.values())


def answer_proposal(proposal: str, spec: UserSpec, decisions: list[Decision]) -> Answer:
    """Agree, refuse with the reason, or ask for a recommendation, from the decisions."""
    matched = [d for d in decisions if any(_mentions(proposal, p) for p in d.about)]
    for d in matched:
        if d.answer == "refuse":
            return Answer("refuse", _refusal(d.reason or "I don't want that."))
        if d.no_later_than and any(x > d.no_later_than for x in dates_in(proposal)):
            return Answer("refuse", _refusal(d.reason or f"That's too late for me; it has to be no later than {d.no_later_than.isoformat()}."))
        if d.no_earlier_than and any(x < d.no_earlier_than for x in dates_in(proposal)):
            return Answer("refuse", _refusal(d.reason or f"That's too early for me; not before {d.no_earlier_than.isoformat()}."))
        if d.max_amount is not None and any(a > d.max_amount for a in amounts_in(proposal)):
            return Answer("refuse", _refusal(d.reason or f"That's more than I can pay; ${d.max_amount:,.2f} at most."))
    if _unasked_destructive(proposal, spec):
        return Answer("refuse", "No, I don't want that. " + (f"I only want help with this: {spec.intent}" if spec.intent else "That's not what I asked for."))
    if matched or spec.otherwise == "accept":
        return Answer("agree", spec.confirm)
    return Answer("ask", "What would you recommend?")


def answer_choice(options: list[str], decisions: list[Decision]) -> Answer:
    """Pick the option the decisions prefer; either is fine if they say so; otherwise ask."""
    for d in decisions:
        for option in options:
            if any(_mentions(option, p) for p in d.prefer):
                return Answer("pick", f"I'd prefer {option.strip()}.")
    for d in decisions:
        if d.answer == "either" and any(_mentions(" ".join(options), p) for p in d.about):
            return Answer("either", "Either is fine with me.")
    for d in decisions:
        for option in options:
            if d.answer == "refuse" and any(_mentions(option, p) for p in d.about):
                others = [o for o in options if o is not option]
                if others:
                    return Answer("pick", f"I'd prefer {others[0].strip()}. {d.reason}".strip())
    return Answer("ask", "Which would you recommend?")


def _refusal(reason: str) -> str:
    reason = reason.strip()
    return reason if re.match(r"(?i)no\b", reason) else f"No, please don't. {reason}"
