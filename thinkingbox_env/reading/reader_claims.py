"""From a checked reading to the rule reader's ``Claim`` objects, so the same verification code decides on both.

Every value and clause is located in the sentence it is said to be in and parsed from the words
written there (``thinkingbox_env.reading.values``); the outcome of a claim follows the rule
reader's precedence. A reading that points at words not written is a ``ReadingError``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import Any

from .claims import Claim, ClaimsVocabulary, Modality, Outcome, RoleValue, word_lemma
from .reader_prompt import NO_ROLE
from .reader_reply import ReadingError
from .values import Value, extract_values, id_norm, money_norm, number_norm, parse_value, same_value


@dataclass(frozen=True)
class ClaimDetail:
    """What the model said about a claim beyond the :class:`Claim` fields: the object in its words and the id it names."""

    sentence_index: int  # 0-based, into ModelReading.sentences
    object_text: str
    object_id: str | None
    waits_for_customer: bool


@dataclass(frozen=True)
class ModelReading:
    """A model's reading of the sentences of one closing: claims as the rule reader builds them, and confidential concepts.

    ``details[i]`` belongs to ``claims[i]``. ``concepts`` are names from the domain's
    ``concepts`` (sorted, as :func:`thinkingbox_env.reading.claims.concepts_said` returns them).
    """

    sentences: tuple[str, ...]
    claims: tuple[Claim, ...]
    concepts: tuple[str, ...]
    details: tuple[ClaimDetail, ...]
    model: str
    cached: bool = False
    unparsed: tuple[str, ...] = ()  # value words the model named that are no value (kept out of every claim)


_FOLD = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-", "\u2014": "-", "\u00a0": " "})


def _folded(text: str) -> tuple[str, list[int]]:
    """``text`` case-folded with quotes and dashes unified and white space collapsed, and each kept character's index."""
    out: list[str] = []
    where: list[int] = []
    space = False
    for i, ch in enumerate(text.translate(_FOLD)):
        if ch.isspace():
            if not space and out:
                out.append(" ")
                where.append(i)
            space = True
            continue
        space = False
        for c in ch.casefold():
            out.append(c)
            where.append(i)
    return "".join(out).rstrip(), where


def locate(quote: str, sentence: str) -> tuple[int, int] | None:
    """Where ``quote`` is written in ``sentence`` (start, end), ignoring case, quote style and spacing; None if it is not."""
    q, _ = _folded(quote.strip())
    s, where = _folded(sentence)
    if not q:
        return None
    i = s.find(q)
    if i < 0:
        return None
    return where[i], where[i + len(q) - 1] + 1


_DURATION_NORM_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(business day|working day|day|week|month|year|hour)s?\s*$", re.IGNORECASE)


def _from_normalized(kind: str, norm: str, clock: date | None, id_patterns: tuple[str, ...]) -> str | None:
    """The canonical form :mod:`thinkingbox_env.reading.values` gives a value of ``kind``, from the model's normalised text."""
    norm = norm.strip()
    try:
        if kind == "money":
            return money_norm(Decimal(re.sub(r"[^0-9.\-]", "", norm)))
        if kind == "number":
            return number_norm(Decimal(norm.replace(",", "")))
        if kind == "date":
            return date.fromisoformat(norm[:10]).isoformat()
        if kind == "duration":
            m = _DURATION_NORM_RE.match(norm)
            if not m:
                return None
            n, unit = Decimal(m.group(1)), m.group(2).lower().replace("working", "business")
            if unit == "week":
                n, unit = n * 7, "day"
            return f"{number_norm(n)} {unit}"
        if kind == "id":
            return id_norm(norm) or None
    except (InvalidOperation, ValueError):
        return None
    return None


def _compatible(want_kind: str, got_kind: str) -> bool:
    return want_kind == got_kind or {want_kind, got_kind} in ({"number", "money"}, {"number", "id"}, {"number", "duration"})


def to_value(quote: str, kind: str, normalized: str, sentence: str, clock: date | None,
             id_patterns: tuple[str, ...]) -> Value | None:
    """The value the model points at, parsed from the words written in the sentence; None where nothing parses.

    The words are parsed as the rule reader parses them; where they do not parse as one
    value of the kind the model names, its normalised form is taken instead (words the
    value parser does not know, like "the fifth of March"). Words that are no value in
    either form ("April", "Friday") are None: the rule reader finds no value there either,
    so nothing compares. Words not written in the sentence at all are a ReadingError: a
    reading that points at text that is not there is not a reading. The value's
    ``start``/``end`` are offsets in the sentence.
    """
    span = locate(quote, sentence)
    if span is None:
        raise ReadingError(f"the value {quote!r} is not written in the sentence {sentence!r}")
    start, end = span
    words = sentence[start:end]
    found = parse_value(words, clock, id_patterns)
    if found is None:
        inside = extract_values(words, clock, id_patterns)
        found = inside[0] if len(inside) == 1 else None
    if found is not None and _compatible(kind, found.kind):
        return Value(found.kind, found.norm, words, start, end)
    norm = _from_normalized(kind, normalized, clock, id_patterns)
    if norm is not None:
        return Value(kind, norm, words, start, end)  # type: ignore[arg-type]
    if found is not None:
        return Value(found.kind, found.norm, words, start, end)
    return None


def _lemma_words(text: str) -> list[str]:
    return [word_lemma(w) for w in re.findall(r"[a-z0-9]+", text.lower())]


def _has_seq(words: list[str], seq: list[str]) -> bool:
    n = len(seq)
    return n > 0 and any(words[i:i + n] == seq for i in range(len(words) - n + 1))


def outcome_of(action: str, affirmed: bool, modality: Modality, waits: bool, vocab: ClaimsVocabulary) -> Outcome:
    """The outcome of a claim from its modality, polarity and action, by the rule reader's own order of precedence.

    A proposal, a possibility and a statement are their own outcomes; a negated act is a
    refusal (or still waiting, where it waits on the customer: "not yet, until you confirm");
    an escalation (the domain's, or one off the system) is escalated; an act that waits on
    the customer is waiting; a future act is pending; the rest is done.
    """
    if modality in ("proposed", "possible", "stated"):
        return modality
    spec = vocab.actions.get(action)
    if not affirmed:
        return "waiting" if waits else "refused"
    if (spec is not None and spec.escalation) or action == "escalate_offline":
        return "escalated"
    if waits:
        return "waiting"
    return "pending" if modality == "future" else "done"


def to_reading(payload: dict[str, Any], sentences: Sequence[str], vocab: ClaimsVocabulary, clock: date | None,
               id_patterns: tuple[str, ...], model: str, cached: bool = False) -> ModelReading:
    """The claims of a checked payload, built as the rule reader builds them; ReadingError where it points at unwritten words."""
    role_kind = {name: r.kind for name, r in vocab.roles.items()}
    objects = {name: [(o, _lemma_words(o)) for o in a.objects] for name, a in vocab.actions.items()}
    claims: list[tuple[int, Claim, ClaimDetail]] = []
    unparsed: list[str] = []
    for c in payload["claims"]:
        i = c["sentence"] - 1
        sentence = sentences[i]
        clause_at = locate(c["clause"], sentence) if c["clause"].strip() else None
        clause = sentence[clause_at[0]:clause_at[1]] if clause_at else sentence.strip()
        phrase_at = locate(c["phrase"], sentence) if c["phrase"].strip() else None
        phrase = sentence[phrase_at[0]:phrase_at[1]].lower() if phrase_at else c["action"]
        values: list[RoleValue] = []
        for v in c["values"]:
            value = to_value(v["text"], v["kind"], v["normalized"], sentence, clock, id_patterns)
            if value is None:
                unparsed.append(v["text"])
                continue
            role = None if v["role"] == NO_ROLE else v["role"]
            # a role holds one kind of value; a bare number may stand for an amount or a count of days
            if role is not None and not (role_kind[role] == value.kind or value.kind == "number"):
                role = None
            values.append(RoleValue(value, role, (role,) if role else ()))
        object_id = c["object"]["id"].strip() or None
        if object_id is not None:
            value = to_value(object_id, "id", object_id, sentence, clock, id_patterns)
            if value is not None and not any(same_value(value, rv.value) or same_value(rv.value, value) for rv in values):
                values.append(RoleValue(value, None, ()))
        values.sort(key=lambda rv: rv.value.start)
        seen = _lemma_words(c["object"]["text"] + " " + clause)
        objs = tuple(sorted(o for o, words in objects.get(c["action"], []) if _has_seq(seen, words)))
        affirmed = c["polarity"] == "affirmed"
        modality: Modality = c["modality"]
        if not affirmed and modality == "possible":
            modality = "done"  # "it can't be cancelled" denies the act, as the rule reader reads it: a refusal
        outcome = outcome_of(c["action"], affirmed, modality, c["waits_for_customer"], vocab)
        claim = Claim(sentence=sentence.strip(), clause=clause.strip(), action=c["action"], phrase=phrase, affirmed=affirmed,
                      modality=modality, outcome=outcome, objects=objs, values=tuple(values), reported=c["reported"])
        claims.append((i, claim, ClaimDetail(i, c["object"]["text"], object_id, c["waits_for_customer"])))
    claims.sort(key=lambda t: t[0])  # in the order of the sentences, as the rule reader reads them
    concepts = tuple(sorted({k["concept"] for k in payload["concepts"] if k["concept"] in vocab.concepts}))
    return ModelReading(tuple(sentences), tuple(c for _, c, _ in claims), concepts, tuple(d for _, _, d in claims), model,
                        cached, tuple(unparsed))
