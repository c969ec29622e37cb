"""The typed dialogue checks' reading of a task and an episode: mentions and withholds, and the episode's words.

Frozen task YAML still carries regular-expression ``dialogue`` entries; they are translated
here, at load time, into typed mentions and withholds where that is mechanical. The check kinds
themselves (``mentions``, ``withholds``, ``grounded_values``) gather the episode's words through
:func:`dialogue_context`, once per grading.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..contracts.events import TraceEvent, tool_calls
from ..contracts.spec import DialogueCheck, TaskSpec
from ..reading.phrases import _NEGATIONS, normalise_phrase, phrase_polarity
from ..reading.values import Value, extract_values, parse_value
from .verdict_rules import VerdictRules, load_verdict_rules

if TYPE_CHECKING:
    from .base import GradingContext



@dataclass
class Mention:
    """One thing the customer must be told: a typed value, or an outcome term with its polarity."""

    label: str
    values: list[Value] = field(default_factory=list)  # any one of them
    terms: list[str] = field(default_factory=list)  # any one of them (variants)
    affirmed: bool = True
    regex: str | None = None  # a pattern with no typed reading, kept as written


@dataclass
class Withhold:
    """One thing the customer must not be told: typed values, phrases, or a pattern kept as written."""

    label: str
    values: list[Value] = field(default_factory=list)
    terms: list[str] = field(default_factory=list)
    affirmed_only: bool = False  # forbids claiming the thing, not denying it
    regex: str | None = None


@dataclass
class TypedDialogue:
    """A task's dialogue entry read as typed mentions and withholds."""

    name: str
    mentions: list[Mention] = field(default_factory=list)
    withholds: list[Withhold] = field(default_factory=list)


@dataclass
class DialogueContext:
    """Everything the typed dialogue checks read, gathered once at the end of an episode."""

    agent_messages: list[str]
    user_messages: list[str]
    tool_results: list[Any]
    state_records: list[Any]
    reference_text: str
    clock: date
    id_patterns: tuple[str, ...]
    rules: VerdictRules
    write_results: list[Any] = field(default_factory=list)

    def agent_values(self) -> list[tuple[int, Value]]:
        return [(i, v) for i, m in enumerate(self.agent_messages) for v in extract_values(m, self.clock, self.id_patterns)]


_REGEX_META = re.compile(r"[\\()\[\]{}?*+|^$.]")


def _literal(pattern: str) -> str | None:
    r"""The plain text a simple pattern stands for (``12\\.00`` -> ``12.00``, ``\\bscore\\b`` -> ``score``)."""
    p = pattern.replace(r"\b", "")
    p = re.sub(r"\\(.)", r"\1", p)
    if re.search(r"[()\[\]{}?*+|^$]", p):
        return None
    return p


def _variants(term: str, rules: VerdictRules) -> list[str]:
    norm = normalise_phrase(term)
    for group in rules.outcome_terms:
        if any(normalise_phrase(g) == norm for g in group):
            return list(dict.fromkeys([term, *group]))
    return [term]


def translate_dialogue(chk: DialogueCheck, golden_reply: str, clock: date, id_patterns: tuple[str, ...],
                       rules: VerdictRules) -> TypedDialogue:
    """Today's must/must_not patterns read as typed mentions and withholds.

    A pattern that names a value becomes that value in any format. A pattern for a kind
    of value (any date, any amount) becomes the values of that kind the golden reply
    states. A word or phrase becomes an outcome term with the polarity the golden reply
    gives it. Anything else keeps its regular expression.
    """
    out = TypedDialogue(chk.name)
    golden_vals = extract_values(golden_reply, clock, id_patterns)
    for pattern in chk.must:
        lit = _literal(pattern)
        val = parse_value(lit, clock, id_patterns) if lit else None
        if val is None and lit and re.fullmatch(r"\d+(?:\.\d+)?", lit):
            val = Value("number", lit.rstrip("0").rstrip(".") if "." in lit else lit, lit)
        if val is not None:
            out.mentions.append(Mention(pattern, values=[val]))
            continue
        rx = re.compile(pattern, re.IGNORECASE)
        typed = [v for v in golden_vals if rx.fullmatch(v.text) or rx.search(v.text) and v.kind in ("date", "money")]
        typed = [v for v in typed if v.kind in ("date", "money", "duration", "id")]
        if typed:
            for v in typed:
                out.mentions.append(Mention(f"{pattern} ({v.text})", values=[v]))
            continue
        alternatives = [a for a in pattern.split("|")] if "(" not in pattern else []
        lits = [_literal(a) for a in alternatives]
        if lits and all(lits):
            terms = [t for lit_ in lits for t in _variants(lit_, rules)]  # type: ignore[arg-type]
            pols = [p for t in terms for p in phrase_polarity(golden_reply, t)]
            affirmed = pols[0] if pols else True
            out.mentions.append(Mention(pattern, terms=list(dict.fromkeys(terms)), affirmed=affirmed))
        else:
            out.mentions.append(Mention(pattern, regex=pattern))
    for pattern in chk.must_not:
        lit = _literal(pattern)
        val = parse_value(lit, clock, id_patterns) if lit else None
        if val is None and lit and re.fullmatch(r"\d+", lit):
            val = Value("number", lit, lit)
        if val is not None:
            out.withholds.append(Withhold(pattern, values=[val]))
            continue
        alternatives = pattern.split("|") if "(" not in pattern else []
        lits = [_literal(a) for a in alternatives]
        if lits and all(lits):
            terms = [t for lit_ in lits for t in _variants(lit_, rules)]  # type: ignore[arg-type]
            # forbidding a negative phrase ("not eligible") forbids saying it; forbidding an action word
            # ("refunded") forbids claiming the action, not denying it
            negative = any(set(normalise_phrase(t)) & _NEGATIONS for t in terms)
            out.withholds.append(Withhold(pattern, terms=list(dict.fromkeys(terms)), affirmed_only=not negative))
        else:
            out.withholds.append(Withhold(pattern, regex=pattern))
    return out


# --------------------------------------------------------------------------- context of an episode


def typed_dialogue_for(spec: TaskSpec, clock: date, id_patterns: tuple[str, ...], rules: VerdictRules) -> list[TypedDialogue]:
    """The task's ``dialogue`` entries read as typed mentions and withholds."""
    return [translate_dialogue(c, spec.golden_reply, clock, id_patterns, rules) for c in spec.checks.dialogue]


@lru_cache(maxsize=16)
def _reference_text(domain_path: str, policy: str) -> str:
    kb = Path(domain_path) / "kb"
    docs = [p.read_text(encoding="utf-8") for p in sorted(kb.glob("*.md"))] if kb.is_dir() else []
    return "\n".join([policy, *docs])


def episode_context(spec: TaskSpec, domain: Any, dialogue: list[dict[str, str]], trace: Sequence[TraceEvent],
                    diff: Any) -> DialogueContext:
    """Gather what the dialogue checks read from one finished (or running) episode."""
    return DialogueContext(
        agent_messages=[m["content"] for m in dialogue if m["role"] == "assistant"],
        user_messages=[m["content"] for m in dialogue if m["role"] == "user"],
        tool_results=[e.get("result") for e in tool_calls(trace)],
        state_records=[diff, spec.patch.model_dump(mode="json")],
        reference_text=_reference_text(str(domain.path), domain.policy),
        clock=domain.spec.clock.date(),
        id_patterns=tuple(domain.spec.id_patterns),
        rules=load_verdict_rules(str(domain.path)),
        write_results=[e.get("result") for e in tool_calls(trace) if e.get("writes")],
    )




def dialogue_context(context: GradingContext) -> DialogueContext:
    """The episode's words for the dialogue kinds, gathered once per grading (the kinds share it)."""
    cached = context.memo.get("dialogue_context")
    if cached is None:
        domain = context.domain  # the runtime's domain, without hashing the task again
        cached = episode_context(context.task, domain, context.dialogue, context.trace, context.outcome.diff)
        context.memo["dialogue_context"] = cached
    return cached


def typed_dialogue(context: GradingContext) -> list[TypedDialogue]:
    """The task's translated dialogue entries, computed once per grading."""
    cached = context.memo.get("typed_dialogue")
    if cached is None:
        ctx = dialogue_context(context)
        cached = typed_dialogue_for(context.task, ctx.clock, ctx.id_patterns, ctx.rules)
        context.memo["typed_dialogue"] = cached
    return cached
