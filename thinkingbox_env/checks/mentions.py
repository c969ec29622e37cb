"""``mentions``: what the customer must be told, read over every assistant message of the episode.

A value (money, date, duration, count, id) is matched as a whole value after
normalisation; an outcome term with its polarity and the domain's declared variants,
so that "could not be cancelled" does not report "is cancelled". The task's regex
``dialogue`` entries are translated into mentions at load time
(:func:`thinkingbox_env.checks.dialogue.translate_dialogue`).
"""

from __future__ import annotations

import re

from ..contracts.records import CheckResult
from ..contracts.spec import DialogueCheck
from ..reading.claims import read_claims, term_claims
from ..reading.phrases import expand_contractions, phrase_polarity
from ..reading.values import same_value
from ._reading import agent_texts, could_hold_a_value, reading_of
from .base import CheckKind, GradingContext
from .dialogue import DialogueContext, Mention, dialogue_context, typed_dialogue

# "I can cancel it. Shall I go ahead?" proposes the outcome; it does not report it
_PROPOSAL = re.compile(r"\b(shall i|should i|would you like( me)? to|do you want( me)? to|ok(ay)? to|go ahead\?|proceed\?)",
                       re.IGNORECASE)


def said(ctx: DialogueContext, m: Mention, domain_path: str = "") -> bool:
    """Whether any assistant message of the episode tells the customer ``m``.

    An outcome term is also said when a message states a claim of the same action with
    the same polarity in any words the domain's claim vocabulary reads ("called off" for
    "cancel"), so that the frozen phrase checks accept every ordinary wording.
    """
    if m.regex is not None:  # as written, or with its contractions written out ("isn't guaranteed" says "not guaranteed")
        return any(re.search(m.regex, text, re.IGNORECASE)
                   for msg in ctx.agent_messages for text in (msg, expand_contractions(msg)))
    if m.values:
        stated = [v for _, v in ctx.agent_values()]
        return any(same_value(want, got) for want in m.values for got in stated)
    for msg in ctx.agent_messages:
        if _PROPOSAL.search(msg):
            continue
        for term in m.terms:
            if m.affirmed in phrase_polarity(msg, term):
                return True
    if domain_path and m.terms:
        wanted = {(a, pol == m.affirmed) for t in m.terms for a, pol in term_claims(t, domain_path)}
        for msg in ctx.agent_messages:
            for c in read_claims(msg, domain_path, ctx.clock, ctx.id_patterns):
                if not c.statement:  # a proposal, an offer or a general rule reports nothing
                    continue
                if (c.action, c.affirmed) in wanted:
                    return True
    return False


def contradicted(ctx: DialogueContext, m: Mention, domain_path: str = "") -> bool:
    """Whether a message states the opposite of an outcome term ``m`` (a finding, not a wording the reader missed)."""
    if m.regex is not None or m.values or not m.terms:
        return False
    for msg in ctx.agent_messages:
        if _PROPOSAL.search(msg):
            continue
        if any((not m.affirmed) in phrase_polarity(msg, term) for term in m.terms):
            return True
    if domain_path:
        opposite = {(a, pol != m.affirmed) for t in m.terms for a, pol in term_claims(t, domain_path)}
        return any(c.statement and (c.action, c.affirmed) in opposite
                   for msg in ctx.agent_messages for c in read_claims(msg, domain_path, ctx.clock, ctx.id_patterns))
    return False


class MentionsCheck(CheckKind):
    """The values and outcomes the task says the customer must be told, said in some assistant message."""

    name = "mentions"
    group = "dialogue"
    order = 400
    follows_write = True
    reward_group = "dialogue"
    # the regex entries of the first task sets; ``withholds`` reads their must_not half
    spec_section = "dialogue"
    spec_item = DialogueCheck
    section_in_every_spec = True

    def evaluate(self, context: GradingContext) -> list[CheckResult]:
        if not context.task.checks.dialogue:
            return []
        ctx = dialogue_context(context)
        domain_path = str(context.domain.path)
        out = []
        for t in typed_dialogue(context):
            if not t.mentions:
                continue
            missing = [m.label if m.affirmed else f"not {m.label}" for m in t.mentions if not said(ctx, m, domain_path)]
            if missing:
                # not finding it is evidence only where every message was read, or none says anything of the case
                reading = reading_of(context, agent_texts(context))
                denied = any(contradicted(ctx, m, domain_path) for m in t.mentions if not said(ctx, m, domain_path))
                # a value nowhere in the text, and no unread word that could be part of one: its absence is a finding
                values_only = all(m.values for m in t.mentions if not said(ctx, m, domain_path))
                if values_only and not could_hold_a_value(reading):
                    denied = True
                if not reading.complete and reading.content and not denied:
                    out.append(CheckResult(name=f"mentions:{t.name}", kind="mentions", passed=None, undetermined=True,
                                           detail=f"not found: {missing}; {reading.why()}"))
                    continue
            out.append(CheckResult(name=f"mentions:{t.name}", kind="mentions", passed=not missing,
                                   detail="all stated" if not missing else f"not stated to the customer: {missing}"))
        return out
