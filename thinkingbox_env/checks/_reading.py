"""The episode's text as the dialogue checks read it: the rule reader's coverage, and a model reader where configured.

Every dialogue check asks the same two questions of a text: which sentences did the rule
reader account for, and what did a model reader (when the run has one) read in the others.
The answer is computed once per grading and text and kept in the context's memo.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..reading.claims import Claim
from ..reading.coverage import Reading, read_text, record_words, why_unread
from .base import GradingContext


@dataclass
class TextReading:
    """A text's reading for the checks: complete when every sentence was read, by rule or by the model."""

    rule: Reading
    known: frozenset[str]
    model_claims: list[Claim] = field(default_factory=list)
    model_concepts: list[str] = field(default_factory=list)  # confidential concepts the model read in the unread sentences
    model_read: bool = False  # the model read every sentence the rules could not
    model_error: str = ""

    @property
    def complete(self) -> bool:
        return self.rule.complete or self.model_read

    @property
    def content(self) -> bool:
        return self.rule.content or bool(self.model_claims)

    def why(self) -> str:
        """Why the text is not fully read, for a check's detail."""
        what = why_unread(self.rule, self.known)
        return f"the reader could not read {what}" + (f" (model reader: {self.model_error})" if self.model_error else "")


def _domain(context: GradingContext) -> tuple[str, Any, tuple[str, ...], tuple[str, ...]]:
    from .verdict_rules import load_verdict_rules

    domain = context.domain
    confidential = tuple(load_verdict_rules(str(domain.path)).confidential.columns)
    return str(domain.path), domain.spec.clock.date(), tuple(domain.spec.id_patterns), confidential


def reading_of(context: GradingContext, texts: list[str]) -> TextReading:
    """The reading of ``texts`` (the closing, or every agent message), once per grading."""
    key = "reading\x00" + "\x00".join(texts)
    found = context.memo.get(key)
    if found is not None:
        return found
    path, clock, ids, confidential = _domain(context)
    hidden = frozenset(c.split(".")[-1] for c in confidential)
    known = context.memo.get("record_words")
    if known is None:
        known = context.memo["record_words"] = record_words(context.trace, hidden)
    rule = read_text(texts, context.domain, known, confidential)
    out = TextReading(rule, known)
    reader = context.reader
    if reader is not None and not rule.complete:
        reading = reader.read(list(rule.unread), path, clock, ids)
        if reading is None:
            out.model_error = str(getattr(reader, "last_error", "") or "no reading")
        else:
            out.model_claims = list(getattr(reading, "claims", reading))
            out.model_concepts = list(getattr(reading, "concepts", ()))
            out.model_read = True
    context.memo[key] = out
    return out


def agent_texts(context: GradingContext) -> list[str]:
    """Every customer-facing assistant message of the episode (what a leak can be in)."""
    if not context.dialogue:
        return [context.final_message] if context.final_message else []
    return [m["content"] for m in context.dialogue if m.get("role") == "assistant" and m.get("content")]


def claims_in(context: GradingContext, texts: list[str]) -> list[Claim]:
    """The rule reader's claims of ``texts`` in the graded task's domain."""
    from ..reading.claims import read_claims

    domain = context.domain
    clock, ids = domain.spec.clock.date(), tuple(domain.spec.id_patterns)
    return [c for t in texts for c in read_claims(t, str(domain.path), clock, ids)]


# words that may be part of an amount, a date or a count the value reader did not parse
NUMBER_WORDS = frozenset((
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
    "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty", "thirty", "forty",
    "fifty", "sixty", "seventy", "eighty", "ninety", "hundred", "thousand", "million", "half", "quarter", "dollar",
    "dollars", "cent", "cents", "buck", "bucks", "usd", "eur", "gbp", "first", "second", "third", "fourth", "fifth",
    "sixth", "seventh", "eighth", "ninth", "tenth", "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth",
    "sixteenth", "seventeenth", "eighteenth", "nineteenth", "twentieth", "thirtieth", "january", "february", "march",
    "april", "june", "july", "august", "september", "october", "november", "december", "noon", "midnight",
))


def could_hold_a_value(reading: TextReading) -> bool:
    """Whether an unread sentence holds a digit, a number word, an ordinal or a month (not "may", a verb as often).

    Any of them may be part of a value written in a form the value reader does not put together
    ("ninety seven point three five", "the nineteenth of May"), so the value's absence is no finding there.
    """
    unread = set(reading.rule.unread)
    return any(any(ch.isdigit() for ch in sent.text) or any(w in NUMBER_WORDS for w in re.findall(r"[a-z]+", sent.text.lower()))
               for sent in reading.rule.sentences if sent.text in unread)
