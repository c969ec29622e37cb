"""The scripted user: deterministic, offline, and hard to game.

It reads the agent's latest message as dialogue acts (``acts``), releases the facts
whose slots are asked about (at most a few per turn), corrects a wrong value offered
for confirmation, and answers proposals and choices from the spec's decisions
(``decisions``). A seeded persona changes how it talks, never what it knows.
"""

from __future__ import annotations

import logging
import random
import re
from dataclasses import dataclass, field
from typing import Any

from ..contracts.spec import DomainSpec, UserSpec
from .acts import MAX_SLOTS_PER_TURN, Reading, read_agent_message
from .decisions import Answer, answer_choice, answer_proposal, dates_in, derive_decisions
from .phrases import DONT_KNOW, SATISFIED
from .slots import Vocabulary, infer_slot, infer_value

log = logging.getLogger(__name__)

PERSONAS = ("plain", "terse", "verbose", "impatient", "misremembers", "changes")
NOTHING_ELSE = "No, that's everything, thanks."
TOO_MANY = "That's a lot at once. What do you need from me first?"
HURRY = "Could we speed this up, please? I'm short on time."
GOODBYE = "I don't have time for this. Goodbye."
LEFT = "(The customer has left the chat.)"
_NOT_FOUND = re.compile(
    r"\b(?:can(?:'t|not)|could(?:n't| not)|unable to|wasn't able to) (?:find|locate|see|match)\b|\b(?:doesn't|does not|didn't|did not) (?:exist|match|show up|come up)\b"
    r"|\bno (?:such )?(?:order|policy|record|account|match|booking|reservation|claim|ticket|employee|asset|request|invoice|device|user|engagement|number)\b|\bnot (?:found|valid|recogni[sz]ed|in our system|on file)\b|\binvalid\b|\bisn't (?:valid|right|in our system)\b",
    re.IGNORECASE,
)
_ACKNOWLEDGES_HURRY = re.compile(
    r"\b(?:sorry|apolog|quick(?:ly)?|right away|almost|nearly|won't take long|won't be long|thank you for your patience|thanks for your patience|as fast as|asap|one last|last thing)\b",
    re.IGNORECASE,
)
_MISREMEMBERED_SLOTS = ("order_id", "policy_number")
_PREFERENCE_SLOTS = {"autopay", "coverage", "resolution", "payment_method", "replacement", "preferred_date"}


@dataclass
class TypedFact:
    """A fact the scripted user can give, with the slot it answers, so it replies to what was asked."""
    slot: str
    text: str
    value: str | None


@dataclass
class Turn:
    """What the user understood and did on its last reply, for tests and traces."""

    reading: Reading
    released: list[str] = field(default_factory=list)
    answer: str | None = None


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9@]", "", text.lower())


def _same_shape(value: str, message: str) -> bool:
    if dates_in(value):
        return bool(dates_in(message))
    shape = re.sub(r"\d+", r"\\d+", re.escape(re.sub(r"\d", "0", value)))
    return re.search(r"(?<![\w-])" + shape.replace("0", r"\d") + r"(?![\w-])", message) is not None or (
        value.isdigit() and re.search(rf"\b\d{{{len(value)}}}\b", message) is not None)


def _first_lower(text: str) -> str:
    return text[:1].lower() + text[1:] if text[:1].isupper() and not text[:2].isupper() else text


class ScriptedUser:
    """Answers from typed facts and decisions; deterministic for a seed, whatever the persona."""

    deterministic = True

    def __init__(self, persona: str = "plain", *, hurry_after: int | None = None) -> None:
        if persona not in PERSONAS:
            raise ValueError(f"unknown persona {persona!r}; choose from {', '.join(PERSONAS)}")
        self.persona = persona
        self._hurry_after = hurry_after
        self.domain: DomainSpec | None = None
        self.spec: UserSpec | None = None
        self.last: Turn | None = None
        self.ended = False

    def describe(self) -> dict[str, Any]:
        return {"kind": "scripted", "persona": self.persona}

    def bind_domain(self, domain: DomainSpec) -> None:
        """Adds the domain's own slots to the engine's vocabulary."""
        self.domain = domain

    def reset(self, spec: UserSpec, seed: int | None) -> None:
        self.spec = spec
        self.vocabulary = Vocabulary(self.domain)
        self.facts: list[TypedFact] = []
        for fact in spec.facts:
            slot = infer_slot(fact)
            if slot.startswith("fact:"):
                self.vocabulary.add_fallback(slot, fact.unlock)
            self.facts.append(TypedFact(slot, fact.text, infer_value(fact, slot)))
        self.decisions = derive_decisions(spec, [(f.slot, f.text) for f in self.facts])
        self.rng = random.Random(f"{seed}:{self.persona}")
        self.turns = 0
        self.ended = False
        self.last = None
        self.hurry_after = self._hurry_after or self.rng.randint(3, 5)
        self.hurried_at: int | None = None
        self.wrong: dict[str, str] = {}  # slot -> the wrong text given first
        self.corrected: set[str] = set()
        for fact, typed in zip(spec.facts, self.facts):
            if fact.misremembered is not None:  # the task's own recovery: this value is given wrong first
                self.wrong[typed.slot] = fact.first_text()
        self.changed = False
        self.released: set[int] = set()
        if self.persona == "changes" and spec.change is None:
            log.info("persona 'changes' on a spec without a change: the user keeps its request")

    # ------------------------------------------------------------------ reply

    def reply(self, dialogue: list[dict[str, str]]) -> str:
        assert self.spec is not None, "reset() first"
        if self.ended:
            return LEFT
        last = next((m["content"] for m in reversed(dialogue) if m["role"] == "assistant"), "")
        self.turns += 1
        reading = read_agent_message(last, self.vocabulary)
        turn = Turn(reading)
        self.last = turn
        ignored = not (reading.has("proposal") or reading.has("closing") or _ACKNOWLEDGES_HURRY.search(last))
        if self.persona == "impatient" and self.hurried_at is not None and self.turns == self.hurried_at + 1 and ignored:
            self.ended = True
            turn.answer = "left"
            return GOODBYE
        parts = self._respond(last, reading, turn)
        text = " ".join(p for p in parts if p).strip()
        return self._persona_wrap(text, reading, turn)

    def _facts_for(self, slot: str) -> list[int]:
        return [i for i, f in enumerate(self.facts) if f.slot == slot]

    def _respond(self, message: str, reading: Reading, turn: Turn) -> list[str]:
        spec = self.spec
        assert spec is not None
        parts: list[str] = []
        # a misremembered identifier is corrected once the agent says it does not exist
        for slot, _wrong in list(self.wrong.items()):
            given = any(i in self.released for i in self._facts_for(slot))
            if given and slot not in self.corrected and _NOT_FOUND.search(message):
                self.corrected.add(slot)
                for i in self._facts_for(slot):
                    parts.append("Sorry, I misread it. " + self.facts[i].text)
                    turn.released.append(slot)
        for slot in reading.confirm_slots:
            parts.append(self._confirm(slot, message))
        asked = list(reading.slots)
        if reading.generic_date and not asked:
            dated = [f.slot for f in self.facts if f.slot.endswith("_date")]
            if len(set(dated)) == 1:
                asked = [dated[0]]
            elif not dated:
                asked = ["preferred_date"]
        released_texts: list[str] = []
        missing: list[str] = []
        for slot in asked:
            idx = self._facts_for(slot)
            if not idx:
                missing.append(slot)
                continue
            for i in idx:
                if len(turn.released) >= MAX_SLOTS_PER_TURN:
                    break
                released_texts.append(self._release(i))
                turn.released.append(slot)
        parts += released_texts
        for slot in missing:
            repeat = self._from_opening(slot)
            if repeat:
                parts.append(repeat)
        if reading.has("proposal"):
            answer = self._wrong_identifier(message) or answer_proposal(message, spec, self.decisions)
            preference = [i for _, _, slot in self.vocabulary.find(reading.proposal_text) if slot in _PREFERENCE_SLOTS
                          for i in self._facts_for(slot)]
            preference += [i for _, _, slot in self.vocabulary.find(message) if slot == "autopay" for i in self._facts_for(slot)]
            if answer.kind == "agree" and preference:
                for i in dict.fromkeys(preference):
                    parts.append(self._release(i))
                    turn.released.append(self.facts[i].slot)
            else:
                turn.answer = answer.kind
                parts.append(answer.text)
        elif reading.has("choice") and not released_texts:
            answer = self._choice(reading.options)
            turn.answer = answer.kind
            parts.append(answer.text)
        if parts:
            return parts
        if reading.too_many:
            return [TOO_MANY]
        if asked or reading.has("request"):
            return [DONT_KNOW]
        if reading.has("open") or reading.has("greeting"):
            return [self._goal()]
        if reading.has("anything_else"):
            return [NOTHING_ELSE]
        if reading.has("progress") and not reading.has("closing"):
            return ["Okay, thanks."]
        return [SATISFIED]

    def _goal(self) -> str:
        spec = self.spec
        assert spec is not None
        if self.changed and spec.change:
            return spec.change.to
        return spec.opening

    def _release(self, i: int) -> str:
        fact = self.facts[i]
        self.released.add(i)
        if self.persona == "misremembers" and fact.slot in _MISREMEMBERED_SLOTS and fact.slot not in self.wrong and fact.value:
            wrong_value = self._misremember(fact.value)
            self.wrong[fact.slot] = fact.text.replace(fact.value, wrong_value)
            return self.wrong[fact.slot]
        if fact.slot in self.wrong and fact.slot not in self.corrected:
            return self.wrong[fact.slot]
        return fact.text

    def _misremember(self, value: str) -> str:
        digits = [i for i, c in enumerate(value) if c.isdigit()]
        if len(digits) < 2:
            return value + "1"
        a, b = digits[-2], digits[-1]
        chars = list(value)
        if chars[a] != chars[b]:
            chars[a], chars[b] = chars[b], chars[a]
        else:
            chars[b] = str((int(chars[b]) + self.rng.randint(1, 9)) % 10)
        return "".join(chars)

    def _confirm(self, slot: str, message: str) -> str:
        said = _norm(message + " " + " ".join(d.isoformat() for d in dates_in(message)))
        if slot == "?":  # a value offered without naming it: the fact whose value has its shape
            idx = [i for i, f in enumerate(self.facts) if f.value and _same_shape(f.value, message)]
            idx.sort(key=lambda i: self.facts[i].slot == "date_of_birth")
        else:
            idx = self._facts_for(slot)
        if not idx:
            return "I'm not sure about that."
        fact = self.facts[idx[0]]
        if fact.value and _norm(fact.value) in said:
            return "Yes, that's right."
        if fact.value and fact.slot.endswith("_date") or fact.slot == "date_of_birth":
            mine = dates_in(fact.text) or dates_in(fact.value or "")
            if mine and mine[0].isoformat() in message + " " + " ".join(d.isoformat() for d in dates_in(message)):
                return "Yes, that's right."
        if not fact.value and _norm(fact.text) in said:
            return "Yes, that's right."
        return "No, that's not right. " + fact.text

    def _wrong_identifier(self, proposal: str) -> Answer | None:
        """A proposal naming an identifier of the customer's that is not theirs is corrected, not accepted."""
        for f in self.facts:
            if f.slot not in ("order_id", "policy_number", "email") or not f.value:
                continue
            prefix = re.match(r"[A-Za-z]+-", f.value)
            shape = re.escape(prefix.group(0)) + r"\d+" if prefix else r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}"
            stated = re.findall(r"(?<![\w-])" + shape + r"(?![\w-])", proposal)
            if stated and all(_norm(s) != _norm(f.value) for s in stated):
                return Answer("refuse", "No, that's not mine. " + f.text)
        return None

    def _choice(self, options: list[str]) -> Answer:
        answer = answer_choice(options, self.decisions)
        if answer.kind != "ask":
            return answer
        # a choice between values of a slot the customer knows ("liability or full coverage?")
        hits = self.vocabulary.find(" or ".join(options))
        for _, _, slot in hits:
            idx = self._facts_for(slot)
            if idx:
                return Answer("pick", self._release(idx[0]))
        return answer

    def _from_opening(self, slot: str) -> str | None:
        """A goal already stated in the opening is repeated when asked for."""
        spec = self.spec
        assert spec is not None
        opening = self._goal()
        sentences = re.split(r"(?<=[.!?])\s+", opening)
        if slot.endswith("_date") and slot != "date_of_birth":
            for s in sorted(sentences, key=lambda s: not s.rstrip().endswith("?")):
                if re.search(r"\b\d{4}-\d{2}-\d{2}\b|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]* \d{1,2}\b|\b(?:today|tomorrow|next \w+)\b", s, re.IGNORECASE):
                    return "As I said: " + s
        if slot == "amount":
            for s in sentences:
                if "$" in s:
                    return "As I said: " + s
        if slot == "reason" and spec.intent:
            return spec.intent
        return None

    # ------------------------------------------------------------------ personas

    def _persona_wrap(self, text: str, reading: Reading, turn: Turn) -> str:
        spec = self.spec
        assert spec is not None
        if self.persona == "terse":
            return self._terse(text, turn)
        if self.persona == "verbose" and turn.released:
            extra = [i for i, f in enumerate(self.facts) if i not in self.released and f.slot not in turn.released]
            if extra:
                i = extra[0] if len(extra) == 1 else self.rng.choice(extra[:2])
                self.released.add(i)
                text = f"{text} Also, in case it helps: {_first_lower(self.facts[i].text)}"
        if self.persona == "impatient" and self.hurried_at is None and self.turns >= self.hurry_after:
            self.hurried_at = self.turns
            text = f"{text} {HURRY}"
        if self.persona == "changes" and spec.change and not self.changed and self.turns >= spec.change.after_turns:
            self.changed = True
            text = f"{text} Actually, I've changed my mind: {spec.change.to}"
        return text

    def _terse(self, text: str, turn: Turn) -> str:
        if turn.answer == "agree":
            values = [self._value_of(s) for s in turn.released]
            return " ".join([v for v in values if v] + ["Yes."])
        if turn.released and turn.answer is None:
            values = [self._value_of(s) for s in turn.released]
            if all(values):
                return ", ".join(v for v in values if v) + "."
        if text == SATISFIED:
            return "Thanks."
        return text

    def _value_of(self, slot: str) -> str | None:
        idx = self._facts_for(slot)
        if not idx:
            return None
        fact = self.facts[idx[0]]
        if slot in self.wrong and slot not in self.corrected:
            return None
        return fact.value
