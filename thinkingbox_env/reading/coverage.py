"""Which sentences of the agent's text the rule reader accounts for, word by word.

A dialogue check may fail only on evidence, and may pass only where nothing unread could
hold evidence against it. The rule reader (:mod:`thinkingbox_env.reading.claims`) finds claims in
the words its vocabulary names; a sentence in other words says something it did not read:
"I've also waived the fee", "I'll call you on Friday", "your internal assessment came
back high". So each sentence is *read* only when every word of it is accounted for by a
closed list: function words, courtesy, the domain's nouns (its schema's tables and
columns, less the confidential ones), the words of a claim the reader matched, a value
(an amount, a date, an id), or a word of the episode's own short records (a name, a
product, a city). Open language has no end, so the lists never try to cover it: what they
do not cover is *unread*, and a check that needed it is undetermined, never passed on
silence and never failed on a wording.

Two shapes are unread even when their words are known, because they state an act or a
promise the reader has not matched to a claim: a first-person clause with a verb in the
past ("I've sent", "we waived") that is not a lookup ("I checked", "I found"), and a
first-person future ("I'll", "we're going to", "let me") that is not courtesy alone
("I'll be glad to help").
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from functools import lru_cache
from pathlib import Path
from typing import Any

from .text import stop_words as _stop

# closed-class words: the stop words less the light verbs and number words, which carry acts and amounts
FUNCTION_WORDS = frozenset(
    {*_stop._DETERMINERS, *_stop._PERSONAL, *_stop._POSSESSIVE, *_stop._REFLEXIVE, *_stop._INDEFINITE,
     *_stop._DEMONSTRATIVES, *_stop._WH_WORDS, *_stop._PREPOSITIONS, *_stop._CONJUNCTIONS, *_stop._AUXILIARIES,
     *_stop._NEGATED_STEMS, *_stop._NEGATIONS, *_stop._DEGREE, *_stop._CLITICS, *_stop._BARE_CLITICS,
     "wo", "ca", "'ll", "'ve", "'m", "'re", "'d", "n't", "'s", "no", "yes", "not", "please", "re", "regarding"}
)
# courtesy and the conversation itself: words that state no act and no fact of the case
COURTESY = frozenset((
    "thank", "thanks", "welcome", "glad", "happy", "pleasure", "great", "wonderful", "nice", "good", "lovely", "day",
    "evening", "morning", "afternoon", "weekend", "rest", "today", "help", "assist", "assistance", "question", "sorry",
    "apologize", "apologise", "apology", "inconvenience", "patience", "understanding", "hope", "best", "regard",
    "cheers", "bye", "goodbye", "care", "hesitate", "feel", "free", "further", "sure", "certainly", "absolutely",
    "course", "okay", "ok", "alright", "hi", "hello", "hey", "dear", "kind", "kindly", "appreciate", "wish",
    "understand", "hear", "glad", "delighted", "pleased", "fine", "perfect", "excellent", "wait", "waiting",
    "unfortunately", "afraid", "able", "unable", "need", "want", "like", "know", "let", "mind", "concern",
    "frustrating", "frustration", "trouble", "certain", "really", "indeed", "definitely", "quick", "quickly",
    "matter", "issue", "request", "everything", "set", "all", "done", "successfully", "thing",
))
# when things happen: days, months, spans; they date a fact, they state none
TIME_WORDS = frozenset((
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "january", "february", "march",
    "april", "may", "june", "july", "august", "september", "october", "november", "december", "jan", "feb", "mar",
    "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "today", "tomorrow", "tonight", "yesterday",
    "week", "month", "year", "day", "hour", "minute", "business", "working", "calendar", "am", "pm", "noon", "ago",
    "shortly", "soon", "twice", "usual", "usually", "latest", "next", "last", "previous", "current", "currently",
    "existing", "below", "above", "following", "meantime", "within", "time", "date", "period", "end",
))
# the nouns of any service desk: where and how a case is kept; they name things, never an act
DESK_NOUNS = frozenset((
    "address", "number", "reference", "email", "phone", "name", "detail", "details", "record", "account", "card",
    "digit", "digits", "information", "info", "team", "department", "office", "desk", "portal", "company", "directory",
    "system", "line", "manager", "stock", "availability", "bank", "visa", "mastercard", "amex", "work", "case",
    "customer", "service", "support", "agent", "colleague", "specialist", "policy", "rule", "step", "option", "answer",
))
# verbs of looking things up: a first-person past of these reports reading, not an act on the customer's records
LOOKUP_VERBS = frozenset(("check", "look", "verify", "confirm", "find", "review", "see", "pull", "search", "locate",
                          "read", "go", "double", "take", "note", "notice", "understand", "hear", "receive", "get"))
# verbs of asking the customer: known in a clause addressed to the customer, never in a first-person one
REQUEST_VERBS = frozenset(("provide", "share", "give", "send", "tell", "confirm", "verify", "reply", "let", "choose",
                           "pick", "select", "prefer", "proceed", "go", "ahead", "agree", "keep", "try", "call",
                           "contact", "reach", "check", "make", "note", "use", "visit", "log", "review"))
_FIRST_PERSON = frozenset(("i", "we"))
_FUTURE = frozenset(("will", "'ll", "shall", "gonna"))
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_RECORD_TEXT_LENGTH = 80


@dataclass(frozen=True)
class SentenceReading:
    """One sentence: the words no list accounted for, and whether its shape alone leaves it unread."""

    text: str
    unknown: frozenset[str]  # lower-cased words still to account for (a record's word may)
    unread_shape: str = ""  # why the sentence is unread whatever its words: "an act" / "a promise" the reader did not match
    content: bool = False  # a claim, a value, or a noun of the domain: the sentence says something about the case


@dataclass(frozen=True)
class Reading:
    """What the rule reader made of a text: the sentences it could not account for."""

    sentences: tuple[SentenceReading, ...]
    unread: tuple[str, ...]
    content: bool

    @property
    def complete(self) -> bool:
        return not self.unread


_NOUNS: dict[tuple[str, tuple[str, ...]], frozenset[str]] = {}
_NOUNS_LOCK = threading.Lock()


def domain_nouns(domain: Any, confidential_columns: tuple[str, ...] = ()) -> frozenset[str]:
    """The lemmas of the domain's tables and columns (``schema.sql``) and its claim objects, less the confidential ones.

    ``domain``: the loaded domain (a ``tasks.domain.Domain``: its folder, spec and ticketing kit), read once per folder.
    A column the domain keeps internal names what the customer is never told ("customer_score"):
    its words stay unread, so a sentence about it is never read as harmless.
    """
    key = (str(domain.path), tuple(confidential_columns))
    with _NOUNS_LOCK:
        found = _NOUNS.get(key)
    if found is None:
        found = _domain_nouns(domain, key[1])
        with _NOUNS_LOCK:
            found = _NOUNS.setdefault(key, found)
    return found


def _domain_nouns(domain: Any, confidential_columns: tuple[str, ...]) -> frozenset[str]:
    from .claims import load_vocabulary, word_lemma

    domain_path = str(domain.path)
    path = Path(domain_path) / "schema.sql"
    words: set[str] = set()
    hidden: set[str] = set()
    for col in confidential_columns:
        table, _, name = col.rpartition(".")
        table_words = {word_lemma(w) for w in table.split("_")}
        hidden |= {word_lemma(w) for w in name.split("_")} - table_words
    if path.is_file():
        sql = path.read_text(encoding="utf-8")
        ticketing = domain.ticketing
        if ticketing is not None:  # the ticketing tables the domain's tools declare
            sql = ticketing.schema_sql() + "\n" + sql
        for m in re.finditer(r"CREATE TABLE\s+(\w+)\s*\((.*?)\n\);", sql, re.S | re.I):
            words.update(m.group(1).split("_"))
            for line in m.group(2).splitlines():
                column = re.match(r"\s*([a-z_][a-z0-9_]*)\s+[A-Z]", line)
                if column and column.group(1).upper() not in ("PRIMARY", "FOREIGN", "UNIQUE", "CHECK", "CONSTRAINT"):
                    words.update(column.group(1).split("_"))
    vocab = load_vocabulary(domain_path)
    if vocab is not None:
        for spec in vocab.actions.values():
            for o in spec.objects:
                words.update(o.split())
        for role in vocab.roles.values():
            for cue in role.cues:
                words.update(cue.split())
    about = domain.spec
    words.update(w.lower() for w in _WORD.findall(f"{about.title} {about.agent_role}") if w[:1].isupper())  # the company
    lemmas = {word_lemma(w) for w in words if len(w) > 1 and w.isalpha()} | {w for w in words if w.isalpha()}
    return frozenset(lemmas - hidden - _NOT_NOUNS)


# words of column names that state acts or judgements, not things: never taken as the domain's nouns
_NOT_NOUNS = frozenset(("is", "has", "at", "by", "id", "to", "of", "on", "waive", "waived", "approve", "approved",
                        "flag", "flagged", "score", "risk", "internal", "fraud", "reason", "note", "notes"))


@lru_cache(maxsize=8192)
def _static(text: str, domain_path: str, clock: date | None, ids: tuple[str, ...],
            nouns: frozenset[str]) -> tuple[SentenceReading, ...]:
    from .claims import _LIGHT_VERBS, _parse, _reader, _verb_form, read_claims
    from .values import extract_values

    if not text.strip():
        return ()
    doc = _parse(text.lower())
    r = _reader(domain_path)
    spans = [(s, e) for _, s, e in r.matcher(doc)] if r is not None else []
    values = extract_values(text, clock, ids)
    # the clauses where a matched phrase became a claim with an outcome (not a noun, a rule or an earlier record)
    placed = {c.clause.strip().lower() for c in read_claims(text, domain_path, clock, ids) if c.outcome != "stated"}
    out = []
    for sent in doc.sents:
        claim_in: dict[tuple[int, int], bool] = {}
        clauses = _clause_spans(sent)
        unknown: set[str] = set()
        strict: set[str] = set()
        content = False
        shape = ""
        for a, b in clauses:
            has_claim = any(a <= s and e <= b for s, e in spans)
            claim_in[(a, b)] = has_claim
            content = content or has_claim
            words = [doc[i] for i in range(a, b)]
            lowers = {t.lower_ for t in words}
            first = bool(lowers & _FIRST_PERSON)
            second = "you" in lowers and not first
            clause_unknown: set[str] = set()
            acts: list[str] = []
            for t in words:
                i = t.i
                if t.is_space or t.is_punct or not _WORD.search(t.text):
                    continue
                if any(v.start <= t.idx < v.end for v in values):
                    content = True
                    continue
                if any(s <= i < e for s, e in spans):
                    continue
                lemma = t.norm_
                if lemma in _LIGHT_VERBS and has_claim:
                    continue  # the verb that carries a claim's noun ("I've processed a refund")
                if t.lower_ in FUNCTION_WORDS or lemma in FUNCTION_WORDS:
                    continue
                if first and _verb_form(t, lemma) == "past" and lemma not in LOOKUP_VERBS and lemma not in nouns:
                    acts.append(t.lower_)
                if lemma in COURTESY and not (first and lemma in REQUEST_VERBS):
                    continue
                if second and lemma in REQUEST_VERBS:
                    continue
                if first and lemma in LOOKUP_VERBS:
                    continue
                if lemma in nouns or t.lower_ in nouns:
                    content = True
                    continue
                if lemma in TIME_WORDS or t.lower_ in TIME_WORDS or lemma in DESK_NOUNS:
                    continue
                parts = _WORD.findall(t.lower_)
                if len(parts) > 1 and all(p.isdigit() or p in FUNCTION_WORDS or p in nouns or p in TIME_WORDS for p in parts):
                    continue  # "65-inch", "e-signature" read by their parts
                if not _name_like(text, doc, t, sent.start):
                    # a record's status word ("waived", "approved") read back in lower case states a fact of the
                    # case, not a name: only a name, a product or a reference may be accounted for by the records
                    strict.add(t.lower_)
                    continue
                if len(parts) > 1:
                    clause_unknown.update(p for p in parts if not p.isdigit())  # "F-150": a record may name the parts
                    continue
                clause_unknown.add(t.lower_)
            clause_text = text[doc[a].idx: doc[b - 1].idx + len(doc[b - 1].text)].strip().lower() if b > a else ""
            if first and has_claim and clause_text not in placed and not any(p in clause_text for p in placed if p):
                # "I've also put $10 of store credit on your account": an act's words the reader could not place
                shape = shape or "an act the reader matched but could not place"
            if first and not has_claim:
                future = bool(lowers & _FUTURE) or "going" in lowers or _let_me(words)
                if acts:
                    shape = shape or f"an act the reader did not match ({', '.join(acts)})"
                elif future and (clause_unknown or any(w.norm_ in nouns for w in words)):
                    shape = shape or "a promise the reader did not match"
            unknown |= clause_unknown
        if strict:
            shape = shape or f"words the reader does not know: {', '.join(sorted(strict)[:4])}"
        out.append(SentenceReading(text[sent.start_char:sent.end_char].strip(), frozenset(unknown | strict), shape,
                                   content))
    return tuple(out)


def _name_like(text: str, doc: Any, t: Any, sentence_start: int) -> bool:
    """Whether a word is written as a name or a reference: with a digit, or capitalised inside its sentence."""
    written = text[t.idx: t.idx + len(t.text)]
    if any(ch.isdigit() for ch in written):
        return True
    if not written[:1].isupper():
        return False
    if t.i != sentence_start:
        return True
    nxt = t.i + 1  # a sentence that opens with a name: the name goes on ("Brightwater Lodge is ...")
    return nxt < len(doc) and text[doc[nxt].idx: doc[nxt].idx + 1].isupper()


def _let_me(words: Sequence[Any]) -> bool:
    """"let me (verb)" promises an act, "let me know" asks the customer."""
    lows = [t.lower_ for t in words]
    return any(lows[i] == "let" and lows[i + 1] in ("me", "us") and lows[i + 2] != "know"
               for i in range(len(lows) - 2))


def _clause_spans(sent: Any) -> list[tuple[int, int]]:
    from .claims import _clauses

    return _clauses(sent)


def record_words(trace: Iterable[Any], hidden_keys: frozenset[str] = frozenset()) -> frozenset[str]:
    """Lower-cased words of the short text values of the episode's tool calls: the names it may read back.

    A customer's name, a product, a hotel, a city: the agent may say them, and they state no act.
    Long texts (a policy passage a search returned) are left out, as are the columns kept internal.
    """
    from ..contracts.events import is_tool_call
    from .values import keyed_leaves

    words: set[str] = set()
    for e in trace:
        if not is_tool_call(e):
            continue
        for key, leaf in keyed_leaves([e.get("arguments"), e.get("result")]):
            if isinstance(leaf, str) and key not in hidden_keys and len(leaf) <= _RECORD_TEXT_LENGTH:
                words.update(w.lower() for w in _WORD.findall(leaf))
    return frozenset(words)


def read_text(texts: Sequence[str], domain: Any, known: frozenset[str] = frozenset(),
              confidential: tuple[str, ...] = ()) -> Reading:
    """The sentences of ``texts`` the rule reader accounts for, given the episode's record words ``known``.

    ``domain``: the loaded domain the texts are read in (a ``tasks.domain.Domain``), handed in by the caller.
    """
    domain_path, clock, ids = str(domain.path), domain.spec.clock.date(), tuple(domain.spec.id_patterns)
    nouns = domain_nouns(domain, tuple(confidential))
    sentences: list[SentenceReading] = []
    for text in texts:
        sentences += _static(text, domain_path, clock, ids, nouns)
    unread = tuple(s.text for s in sentences if s.unread_shape or not s.unknown <= known)
    content = any(s.content or (s.unknown & known) for s in sentences)
    return Reading(tuple(sentences), unread, content)


def why_unread(reading: Reading, known: frozenset[str] = frozenset(), limit: int = 2) -> str:
    """A short account of the unread sentences, for a check's detail."""
    parts = []
    for s in reading.sentences:
        if s.text not in reading.unread:
            continue
        why = s.unread_shape or f"words the reader does not know: {', '.join(sorted(s.unknown - known)[:4])}"
        parts.append(f"'{s.text[:120]}' ({why})")
        if len(parts) >= limit:
            break
    more = len(reading.unread) - len(parts)
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")
