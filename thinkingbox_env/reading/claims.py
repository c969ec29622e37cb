"""Claims: what an assistant message tells the customer, read into typed statements.

Keyword rules over whole messages cannot tell "your order is cancelled" from "your order
could not be cancelled" once both carry the same words, nor a refund amount from a fee that
happens to sit in the same sentence. This module reads each clause of a message into
:class:`Claim` objects: the action the clause speaks of (from the domain's vocabulary in
``domains/<d>/claims.yaml``), its polarity (affirmed or negated), its modality (done,
future, proposed, possible) and hence its outcome (done, refused, pending, escalated,
waiting for the customer, proposed), the object it names, and the values it states with
the role each plays (the refund amount, the new date).

Sentence splitting, tokenising and lemmatising are rule-based (:mod:`thinkingbox_env.reading.text`:
spaCy's readings of English without importing spaCy, the lemmas from the lookup table of
spacy-lookups-data; no statistical model); phrase matching is over lemmas, with a few free
tokens allowed inside a phrase so that "take the vehicle off the policy" reads as "take
off". Only the domain vocabulary is written by hand.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import date
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..contracts.spec import load_yaml
from .values import Value, extract_values

if TYPE_CHECKING:
    from .text import Doc, PhraseMatcher

Modality = Literal["done", "future", "proposed", "possible", "stated"]
Outcome = Literal["done", "refused", "pending", "escalated", "waiting", "proposed", "possible", "stated"]

# --------------------------------------------------------------------------- the domain's vocabulary


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ActionSpec(_Strict):
    """One kind of action the agent can report: the words for it, the writes that do it, what it acts on."""

    phrases: list[str] = Field(description="words that state the action, as lemmas (multi-word phrases may be split)")
    tools: list[str] = Field(default_factory=list, description="the write tools that perform it")
    objects: list[str] = Field(default_factory=list, description="nouns that name what it acts on")
    escalation: bool = Field(False, description="stating it is handing the case on, not resolving it")


class RoleSpec(_Strict):
    """A role a value can play in a claim, and where the episode holds that role's value."""

    cues: list[str] = Field(description="lemmas that, next to a value, give it this role")
    kind: Literal["money", "date", "id", "duration", "number", "term"]
    tools: list[str] = Field(description="tool calls whose arguments and results hold the role's value")
    keys: list[str] = Field(default_factory=list, description="argument or field names holding it (all when empty)")
    # a "term" role holds one word of a closed set (a travel class, a claim's severity): no number reads it,
    # so each value the tools write names the phrases that state it in a message
    terms: dict[str, list[str]] = Field(default_factory=dict, description="for kind term: each value and the phrases stating it")
    every: bool = Field(False, description="the closing states each value the episode holds (every approver of a request), not one")


# words that, shortly before a term, deny it ("not a replacement", "rather than business class")
_TERM_DENIED = re.compile(r"(?:\bnot|\bno|n't|\bnever|\bnor|\bwithout|\brather than|\binstead of|\bother than)(?:\W+\w+){0,2}\W*$", re.I)


def term_values(spec: RoleSpec, text: str) -> list[Value]:
    """The values of a term role a text states: a phrase of the value, not denied by a 'not' or 'rather than' just before it.

    A denied term is not stated: "a repair, not a replacement" states repair only, so a closing that names
    both the outcome and the option the policy ruled out states the outcome.
    """
    out: list[Value] = []
    for value, phrases in spec.terms.items():
        for phrase in phrases:
            for m in re.finditer(rf"(?<![\w-]){re.escape(phrase)}(?![\w-])", text, re.I):
                clause_start = max(text.rfind(c, 0, m.start()) for c in ".;:!?\n") + 1
                if _TERM_DENIED.search(text[clause_start:m.start()][-40:]):
                    continue
                out.append(Value("term", value, m.group(0), m.start(), m.end()))
    # one stretch of text states one value: the phrase that starts first, the longest of those, wins
    # ("late check-out" inside "guaranteed late check-out"; "will repair" and "repair your" over one "repair")
    kept: list[Value] = []
    for v in sorted(out, key=lambda v: (v.start, v.start - v.end)):
        if not any(v.start < k.end and k.start < v.end for k in kept):
            kept.append(v)
    return kept


class ConceptSpec(_Strict):
    """A confidential concept, by its meaning: any one of ``senses`` (lemma sets, all in one sentence) says it."""

    meaning: str
    senses: list[list[str]]


class ClaimsVocabulary(_Strict):
    """The contents of ``domains/<d>/claims.yaml``."""

    actions: dict[str, ActionSpec]
    # words that state an outcome about everything at once ("nothing was changed", "that went through")
    generic: list[str] = Field(default_factory=list)
    # writes that only record the conversation (tickets): "nothing was changed" stays true after them
    bookkeeping: list[str] = Field(default_factory=list)
    roles: dict[str, RoleSpec] = Field(default_factory=dict)
    concepts: dict[str, ConceptSpec] = Field(default_factory=dict)


GENERIC = "any"


@lru_cache(maxsize=16)
def load_vocabulary(domain_path: str) -> ClaimsVocabulary | None:
    """A domain's ``claims.yaml``, read once; ``None`` where the domain declares none."""
    path = Path(domain_path) / "claims.yaml"
    if not path.is_file():
        return None
    try:
        return ClaimsVocabulary.model_validate(load_yaml(path) or {})
    except Exception as exc:  # noqa: BLE001 - name the file
        raise ValueError(f"{path}: {exc}") from exc


# --------------------------------------------------------------------------- the pipeline


@lru_cache(maxsize=2048)  # one grading reads a message in several checks (claims, confidential concepts, subjects)
def _parse(text: str) -> Doc:
    """The tokens, lemmas and sentences of lower-cased ``text``, each token's ``norm_`` its lemma as the reader takes it.

    Shared by every reader of the text: none may change it. (The text package is imported here:
    reading is needed only when grading.)
    """
    from .text import parse

    doc = parse(text)
    for t in doc:
        t.norm_ = _LEMMA_FIX.get(t.lemma_, t.lemma_)
    return doc


def _new_matcher() -> PhraseMatcher:
    """A matcher of phrases by their words' lemmas, with up to ``_FREE_TOKENS`` other words between them."""
    from .text import PhraseMatcher

    return PhraseMatcher(gap=_FREE_TOKENS)


# contraction halves the lookup table leaves as written
_LEMMA_FIX = {"wo": "will", "ca": "can", "'ll": "will", "'d": "would", "'m": "be", "'re": "be", "n't": "not",
              "enrol": "enroll", "cancelation": "cancellation", "canceled": "cancel"}
_NEGATIONS = {"not", "no", "never", "nothing", "unable", "cannot", "neither", "nor", "none", "non", "ineligible"}
_BE = {"be", "is", "was", "were", "are", "been", "being"}
_HAVE = {"have", "has", "had", "'ve"}
_DONE_CUES = {"now", "just", "done", "successfully", "being"}
_UNDER_WAY = [("on", "its", "way"), ("on", "the", "way"), ("under", "way"), ("in", "progress")]
_CONDITIONAL = {"once", "when", "if", "until", "unless", "after", "before", "whenever"}
_ADVERBS = {"just", "now", "also", "already", "successfully", "since"}
_VERB_AFTER = {"be", "have", "go", "take", "make", ".", ";", ","}
_FUTURE = {"will", "shall", "going", "'ll"}
_PROPOSAL_CUES = [("shall", "i"), ("should", "i"), ("would", "you", "like"), ("do", "you", "want"), ("can", "i"),
                  ("may", "i"), ("if", "you", "agree"), ("if", "you", "confirm"), ("if", "you", "would", "like"),
                  ("let", "me", "know", "if"), ("be", "it", "ok"), ("be", "it", "okay"), ("be", "that", "ok"),
                  ("be", "that", "okay"), ("ok", "to"), ("okay", "to"), ("want", "me", "to"), ("like", "me", "to"),
                  ("would", "you", "prefer"), ("go", "ahead", "?"), ("please", "confirm"), ("to", "confirm"),
                  ("once", "you", "confirm"), ("with", "your", "ok"), ("with", "your", "agreement"),
                  ("do", "i", "have", "your"), ("happy", "for", "me")]
_POSSIBLE = {"can", "could", "may", "might"}
_WAITING = [("once", "you"), ("when", "you"), ("wait", "for", "you"), ("need", "you", "to"), ("you", "need", "to"),
            ("as", "soon", "as", "you"), ("after", "you")]
# words that end one claim and begin the next inside a sentence
_CLAUSE_BREAK = {";", ":", "but", "so", "because", "although", "though", "however", "while", "until", "since",
                 "whereas", "unless", "which", "and", "then", "as", "once", "after", "before", "(", ")", "—", "–"}
# words (as written) that make a clause a report of what the agent did or what now holds
_REPORTED = {"i", "we", "'ve", "i've", "we've", "is", "are", "am", "'re", "has", "have", "now", "done", "will",
             "'ll", "being", "been", "successfully"}
_FREE_TOKENS = 4  # words allowed between the words of a phrase ("take [the vehicle] off")
# verbs that carry the act when the action is named by a noun: "I've processed a refund", "no charge was made",
# "the cancellation didn't go through", "a replacement has been arranged"
_LIGHT_VERBS = {"issue", "process", "make", "arrange", "put", "set", "go", "complete", "send", "place", "book", "raise",
                "submit", "open", "file", "log", "lodge", "initiate", "organise", "organize", "action"}
_DETERMINERS = {"a", "an", "the", "no", "your", "my", "this", "that", "its", "their", "his", "her", "full", "partial"}


@dataclass(frozen=True)
class RoleValue:
    """A value stated in a claim, with the role the words next to it give it (None where no cue is near)."""

    value: Value
    role: str | None
    candidates: tuple[str, ...] = ()  # every role whose cue is near, nearest first


@dataclass(frozen=True)
class Claim:
    """One statement about an action: what, how (outcome, polarity), on what, with which values."""

    sentence: str
    clause: str
    action: str  # a vocabulary action, or GENERIC for "nothing was changed"
    phrase: str  # the words that matched
    affirmed: bool
    modality: Modality
    outcome: Outcome
    objects: tuple[str, ...] = ()
    values: tuple[RoleValue, ...] = ()
    # the clause says the agent did it, or that it now holds ("I've", "is now", "will be"), not a past event
    reported: bool = True

    @property
    def statement(self) -> bool:
        """Whether the claim reports an outcome (not a proposal, an offer or a general rule)."""
        return self.outcome in ("done", "refused", "pending", "escalated", "waiting")

    def describe(self) -> str:
        vals = ", ".join(f"{rv.value.text}{f' as {rv.role}' if rv.role else ''}" for rv in self.values)
        return (f"{self.outcome} {self.action} ('{self.phrase}'{', not' if not self.affirmed else ''})"
                + (f" on {'/'.join(self.objects)}" if self.objects else "") + (f" with {vals}" if vals else ""))


@dataclass
class _Reader:
    vocab: ClaimsVocabulary
    matcher: PhraseMatcher  # doc -> [(action, start, end)]
    role_cues: dict[str, str] = field(default_factory=dict)
    objects: dict[str, set[str]] = field(default_factory=dict)


@lru_cache(maxsize=16_384)  # the vocabulary's words are looked up again for every sentence read
def _lemmas(text: str) -> tuple[str, ...]:
    return tuple(_LEMMA_FIX.get(t.lemma_, t.lemma_) for t in _parse(text.lower()) if not t.is_space)


@lru_cache(maxsize=65_536)
def word_lemma(word: str) -> str:
    """One lower-cased word's lemma from the lookup table (for callers that match word lists, not claims)."""
    from .text import lemma as table_lemma

    lemma = table_lemma(word.lower())
    return _LEMMA_FIX.get(lemma, lemma)


@lru_cache(maxsize=16)
def _reader(domain_path: str) -> _Reader | None:
    vocab = load_vocabulary(domain_path)
    if vocab is None:
        return None
    r = _Reader(vocab, _new_matcher())
    for name, spec in [*vocab.actions.items(), (GENERIC, ActionSpec(phrases=vocab.generic, escalation=False))]:
        phrases = [words for p in spec.phrases if (words := _lemmas(p))]
        if phrases:
            r.matcher.add(name, phrases)
        r.objects[name] = {" ".join(_lemmas(o)) for o in spec.objects}
    for role, rs in vocab.roles.items():
        for cue in rs.cues:
            r.role_cues[" ".join(_lemmas(cue))] = role
    return r


def _has_seq(words: list[str], seq: tuple[str, ...]) -> int:
    n = len(seq)
    for i in range(len(words) - n + 1):
        if tuple(words[i:i + n]) == seq:
            return i
    return -1


def _clauses(sent: Any) -> list[tuple[int, int]]:
    """Token spans of the clauses of a sentence (split at ';', 'but', 'so', ...)."""
    spans, start = [], sent.start
    for t in sent:
        if t.lower_ in _CLAUSE_BREAK and t.i > start:
            spans.append((start, t.i))
            start = t.i + (1 if t.is_punct else 0)
        elif t.lower_ == "," and t.i + 1 < sent.end and t.doc[t.i + 1].lower_ in _CLAUSE_BREAK:
            spans.append((start, t.i))
            start = t.i + 1
    spans.append((start, sent.end))
    return [(a, b) for a, b in spans if b > a]


def _verb_form(tok: Any, norm: str) -> str:
    text = tok.lower_
    if text.endswith("ing"):
        return "ing"
    if text != norm and not (text in (norm + "s", norm + "es") or (text.endswith("ies") and norm.endswith("y"))):
        return "past"
    return "base"


def read_claims(text: str, domain_path: str, clock: date | None = None, id_patterns: tuple[str, ...] = ()) -> list[Claim]:
    """Every claim of one message, in order; [] where the domain declares no vocabulary."""
    return list(_read_claims(text, domain_path, clock, tuple(id_patterns)))


@lru_cache(maxsize=8192)  # grading reads the same closings for every episode of a task
def _read_claims(text: str, domain_path: str, clock: date | None, id_patterns: tuple[str, ...]) -> tuple[Claim, ...]:
    r = _reader(domain_path)
    if r is None or not text.strip():
        return ()
    from .text import filter_spans

    doc = _parse(text.lower())
    values = extract_values(text, clock, id_patterns)
    matches = r.matcher(doc)
    # "I've opened access": "have" is the auxiliary of "opened" there, not the "have" of "have access"
    candidates = [doc[s:e] for _, s, e in matches]
    candidates = [sp for sp in candidates if not (len(sp) > 2 and sp[0].norm_ in ("have", "be")
                                                  and any(_verb_form(t, t.norm_) == "past" for t in sp[1:-1]))]
    # "I've issued a temporary password": a light verb that matched an action of its own only carries the
    # action named by the phrase right after it
    sentence_of = {i: k for k, sent in enumerate(doc.sents) for i in range(sent.start, sent.end)}
    # (or right before it: "a temporary password has been issued")
    candidates = [sp for sp in candidates if not (len(sp) == 1 and sp[0].norm_ in _LIGHT_VERBS and any(
        (0 <= o.start - sp.end <= 4 or 0 <= sp.start - o.end <= 4) and not (len(o) == 1 and o[0].norm_ in _LIGHT_VERBS)
        and sentence_of.get(o.start) == sentence_of.get(sp.start) for o in candidates))]
    spans = filter_spans(candidates)
    label = {(s, e): name for name, s, e in matches}  # where two actions match the same words, the later one
    out: list[Claim] = []
    soft: set[int] = set()  # denials of "anything" that stand for everything only if nothing else is reported
    for sent in doc.sents:
        sent_norms = [t.norm_ for t in sent]
        sent_question = sent.text.rstrip().endswith("?")
        sent_rule = bool({"when", "whenever", "if", "unless"} & set(sent_norms))
        sent_proposal = sent_question or any(_has_seq(sent_norms, c) >= 0 for c in _PROPOSAL_CUES)
        prev_words: set[str] = set()
        for a, b in _clauses(sent):
            # "that's been approved and completed": a clause joined by "and" shares the subject and auxiliary before it
            carried = prev_words if a > sent.start and "and" in (doc[a].lower_, doc[a - 1].lower_) else set()
            prev_words = {doc[i].lower_ for i in range(a, b)}
            in_clause = [sp for sp in spans if a <= sp.start and sp.end <= b]
            if not in_clause:
                continue
            norms = [doc[i].norm_ for i in range(a, b)]
            conditional = doc[a].lower_ in _CONDITIONAL  # "once it's assigned to you": not yet an act
            clause_text = text[doc[a].idx: doc[b - 1].idx + len(doc[b - 1].text)]
            cvals = [v for v in values if doc[a].idx <= v.start < doc[b - 1].idx + len(doc[b - 1].text)]
            for sp in in_clause:
                action = label[(sp.start, sp.end)]
                before = [doc[i].norm_ for i in range(max(a, sp.start - 6), sp.start)]
                inside = [t.norm_ for t in sp]
                negated = bool(set(before) & _NEGATIONS) or ("long" in before and "no" in before) or (
                    "too" in before and "late" in before) or bool(set(inside[1:-1]) & _NEGATIONS)
                form = _verb_form(sp[0], sp[0].norm_)
                if form == "base" and sp[0].norm_ in ("have", "be") and any(_verb_form(t, t.norm_) == "past" for t in sp[1:]):
                    form = "past"  # "I have provisioned ... access" matched as "have access"
                near = before[-4:]
                have_aux = bool(before[-1:]) and before[-1] in _HAVE or (
                    len(before) >= 2 and before[-2] in _HAVE and before[-1] in _ADVERBS)
                after = doc[sp.end].norm_ if sp.end < b else "."
                modality: Modality
                if sent_proposal and not negated:
                    modality = "proposed"
                elif set(near) & _FUTURE or any(_has_seq(norms, w) >= 0 for w in _UNDER_WAY):
                    modality = "future"  # "will be refunded", "a refund is on its way"
                elif set(near) & _POSSIBLE and not negated:
                    modality = "possible"
                elif form == "past" or set(near) & _DONE_CUES or have_aux or (set(near) & _BE and form != "base") \
                        or "now" in inside or bool(set(inside[1:-1]) & _BE) or (sp[0].norm_ == "have" and not negated):
                    # "you have access until ...": the result holds (a state found before is read as "already")
                    modality = "done"
                else:
                    modality = "stated"
                if modality == "stated" and action != GENERIC and not sent_proposal:
                    light = _light_verb_reading(doc, a, b, sp)
                    if light is not None:
                        modality, negated = light
                if action == GENERIC and negated:
                    # only a denial of everything ("nothing went through", "no changes were made") is global;
                    # "the speed can't be changed" speaks of one thing, "no change fee" is a noun
                    everything = bool(set(before) & {"nothing", "none"}) or (before[-1:] == ["no"] and after in _VERB_AFTER)
                    # "could not change anything", "unable to make any changes": a denial of everything only where
                    # the closing reports nothing else ("I haven't changed anything; I've sent it on" is scoped)
                    of_any = not everything and (
                        (after in ("anything", "any") and not (sp.end + 1 < b and doc[sp.end + 1].lower_ == "more"))
                        or ("any" in before[-2:] and "more" not in before[-1:]))
                    if of_any:
                        soft.add(len(out))
                    negated, modality = (True, "done") if everything or of_any else (False, "stated")
                elif action == GENERIC and form == "base" and "now" not in inside:
                    modality = "stated"  # "while the bank's process runs": a noun
                if conditional and modality in ("done", "future"):
                    modality = "stated"
                if sent_rule and not ({"i", "we"} & {doc[i].lower_ for i in range(a, b)}):
                    modality = "stated"  # "when a licence is full, a seat is reclaimed": a rule, not an act
                past = {doc[i].lower_ for i in range(a, b)} & {"was", "were"}
                if past and clock is not None and any(v.kind == "date" and v.norm < clock.isoformat() for v in cvals):
                    modality = "stated"  # "was cancelled on 2026-04-25": an event before this conversation
                if sp.start > 0 and doc[sp.start - 1].lower_ in ("a", "an", "the") and form == "past":
                    modality = "stated"  # "an excluded driver": an adjective, not an act
                if "already" in sent_norms or "as" in [doc[i].lower_ for i in range(max(0, sp.start - 2), sp.start)]:
                    modality = "stated"  # "you already have access", "shows it as cancelled": a state found, not an act
                # "nothing has been granted yet", "I haven't added him yet": still to come, not refused
                not_yet = negated and "yet" in norms[sp.end - a:] + before
                if negated and modality in ("stated", "possible") and set(near) & (_POSSIBLE | _BE | {"will", "do"}):
                    modality = "done"  # "cannot be cancelled", "is not refundable": a refusal
                spec = r.vocab.actions.get(action)
                if modality == "proposed":
                    outcome: Outcome = "proposed"
                elif modality == "possible":
                    outcome = "possible"
                elif modality == "stated":
                    outcome = "stated"
                elif negated:
                    outcome = "refused"
                elif spec is not None and spec.escalation:
                    outcome = "escalated"
                elif any(_has_seq(norms, c) >= 0 for c in _WAITING):
                    outcome = "waiting"
                else:
                    outcome = "pending" if modality == "future" else "done"
                if not_yet and outcome == "refused":
                    outcome = "waiting"
                words = {doc[i].lower_ for i in range(a, b)}
                # "I'll grant it once you ..." promises, "it will be refunded" reports a write already made
                reported = (form == "past" or "will" not in near) and (
                    bool(words & _REPORTED) or (not (words & {"was", "were"}) and form == "past"))
                if action == GENERIC and not negated:  # "you completed the course" is not a change made here
                    reported = reported and bool((words | carried) & {"i", "we", "i've", "we've", "been", "now"})
                objs = tuple(sorted(o for o in r.objects.get(action, set()) if o and _has_seq(norms, tuple(o.split())) >= 0))
                out.append(Claim(sentence=text[sent.start_char:sent.end_char].strip(), clause=clause_text.strip(), action=action,
                                 phrase=sp.text, affirmed=not negated, modality=modality, outcome=outcome,
                                 objects=objs, values=tuple(_with_roles(r, doc, a, b, cvals)), reported=reported))
    if soft and any(c.affirmed and c.outcome in ("done", "pending", "escalated", "waiting")
                    for i, c in enumerate(out) if i not in soft):
        out = [replace(c, affirmed=True, modality="stated", outcome="stated") if i in soft else c for i, c in enumerate(out)]
    return tuple(out)


def _light_verb_reading(doc: Any, a: int, b: int, sp: Any) -> tuple[Modality, bool] | None:
    """The modality and negation of an action named by a noun, read from the verb that carries it.

    "No refund has been issued" and "the refund didn't go through" deny the refund; "I've
    processed a refund" and "a replacement has been arranged" report it; "a refund will be
    issued" promises it. Only a noun reading counts: the action word right after a
    determiner ("a", "the", "no", "your", "a full"), and a carrying verb in the same clause.
    """
    if sp.start <= a or doc[sp.start - 1].lower_ not in _DETERMINERS:
        return None
    verbs = [i for i in range(a, b) if not sp.start <= i < sp.end and doc[i].norm_ in _LIGHT_VERBS]
    if not verbs:
        return None
    j = min(verbs, key=lambda i: abs(i - sp.start))
    before = [doc[i].norm_ for i in range(max(a, j - 4), j) if not sp.start <= i < sp.end]
    form = _verb_form(doc[j], doc[j].norm_)
    negated = bool(set(before) & _NEGATIONS) or doc[sp.start - 1].lower_ == "no" or (
        sp.start - 2 >= a and doc[sp.start - 2].lower_ == "no")
    if set(before) & _FUTURE:
        return "future", negated
    if form == "past" or set(before) & _HAVE or (set(before) & _BE and form != "base"):
        return "done", negated
    if negated and set(before) & (_POSSIBLE | {"do", "will", "able"}):
        return "done", True  # "couldn't process the refund", "the refund didn't go through": a refusal
    return None


def _with_roles(r: _Reader, doc: Any, a: int, b: int, vals: list[Value]) -> list[RoleValue]:
    """Each value of a clause with the role of the nearest cue word of the same clause (within 6 words)."""
    cues: list[tuple[int, str, str]] = []  # (token index, role, kind)
    for i in range(a, b):
        for cue, role in r.role_cues.items():
            words = cue.split()
            if [doc[j].norm_ for j in range(i, min(b, i + len(words)))] == words:
                cues.append((i, role, r.vocab.roles[role].kind))
    out = []
    for v in vals:
        tok = next((t.i for t in doc[a:b] if t.idx <= v.start < t.idx + max(1, len(t.text))), None)
        if tok is None:
            tok = next((t.i for t in doc[a:b] if t.idx >= v.start), b - 1)
        near = sorted((abs(i - tok), role) for i, role, kind in cues if kind == v.kind and abs(i - tok) <= 6)
        roles = tuple(dict.fromkeys(role for _, role in near))
        out.append(RoleValue(v, roles[0] if roles else None, roles))
    return out


def concepts_said(text: str, domain_path: str) -> list[str]:
    """The confidential concepts of the domain a message states, by meaning: every lemma of one sense in one sentence."""
    r = _reader(domain_path)
    if r is None or not r.vocab.concepts:
        return []
    doc = _parse(text.lower())
    found = []
    for sent in doc.sents:
        lemmas = {_LEMMA_FIX.get(t.lemma_, t.lemma_) for t in sent} | {t.lower_ for t in sent}
        for name, c in r.vocab.concepts.items():
            if any(all(all(w in lemmas for w in _lemmas(word)) for word in sense) for sense in c.senses):
                found.append(name)
    return sorted(set(found))


# words that carry no subject: courtesy, hedges, the conversation itself
_NO_SUBJECT = frozenset((
    "sorry", "thank", "thanks", "patience", "help", "today", "anything", "else", "glad", "happy", "welcome", "great", "day",
    "please", "let", "know", "need", "want", "look", "check", "just", "able", "sure", "kind", "regard", "hello", "hi", "hey",
    "good", "afternoon", "morning", "evening", "now", "also", "still", "really", "unfortunately", "course", "question",
    "problem", "issue", "request", "customer", "touch",
))


@lru_cache(maxsize=16_384)  # the task's closing is read again for every episode graded
def subject_terms(text: str) -> frozenset[str]:
    """The lemmas of a message that carry its subject: what remains once stop words, courtesy and punctuation are gone.

    Where a task's closing states nothing the claims vocabulary names (an answer, a refusal worded
    outside it), the subject it speaks of is what a closing of the same task must share with it: a
    closing of thanks alone shares none.
    """
    from .text import STOP_WORDS

    doc = _parse(text.lower())
    out = set()
    for t in doc:
        if t.is_space or t.is_punct or t.like_num and len(t.text) < 2:
            continue
        lemma = _LEMMA_FIX.get(t.lemma_, t.lemma_)
        if lemma in STOP_WORDS or t.lower_ in STOP_WORDS or lemma in _NO_SUBJECT or len(lemma) < 2:
            continue
        out.add(lemma)
    return frozenset(out)


def actions_for_tool(domain_path: str, tool: str) -> set[str]:
    """The vocabulary actions a write tool performs (a cancellation that keeps a fee also charges); empty where none."""
    vocab = load_vocabulary(domain_path)
    if vocab is None:
        return set()
    return {name for name, a in vocab.actions.items() if tool in a.tools}


def term_claims(term: str, domain_path: str) -> list[tuple[str, bool]]:
    """(action, affirmed) for each action a short phrase of a task's check names ("refund", "cannot be cancelled")."""
    return [(c.action, c.affirmed) for c in read_claims(term, domain_path) if c.action != GENERIC]
