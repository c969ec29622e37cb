"""The claim reader's own English reading (thinkingbox_env.reading.text) equals spaCy's blank English pipeline.

The engine reads closings without spaCy; the readings must stay the ones spaCy gave (a blank
English pipeline, the sentencizer, the lookup lemmatizer of spacy-lookups-data, the
``Matcher`` and ``filter_spans``). Compared here on a corpus taken from the repository: every
golden reply, dialogue turn, user opening and user fact of every frozen task (current and
archived sets), of training variants of every family, the closings the validity suite poses,
and hand-written hard cases. Tokens must be equal (text, offset, lemma, punctuation, space,
number, whitespace, sentence start), the phrase matches equal and in the same order, and the
claim reader's claims, subject terms and concepts equal with either reading underneath.

The package's emoticons, units and stop words are its own lists, not spaCy's: the corpus must
read the same all the same, while the random mixtures are drawn so that no face or unit on
which the two lists differ forms in them (tests/reading/test_text.py states those differences).
Skipped where spaCy is not installed (it is a development dependency only).
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache, lru_cache
from typing import Any

import pytest

spacy = pytest.importorskip("spacy")

import validity_suite  # noqa: E402

from thinkingbox_env.agents.baselines import OracleAgent, run_episode  # noqa: E402
from thinkingbox_env.envs.env import ThinkingboxEnv  # noqa: E402
from thinkingbox_env.reading import claims  # noqa: E402
from thinkingbox_env.reading.text import PhraseMatcher, is_punct, lemma, like_num, parse  # noqa: E402
from thinkingbox_env.reading.text.chars import UNITS  # noqa: E402
from thinkingbox_env.reading.text.lemmas import table  # noqa: E402
from thinkingbox_env.reading.text.special_cases import special_cases  # noqa: E402
from thinkingbox_env.tasks.domain import load_domain  # noqa: E402
from thinkingbox_env.tasks.lookup import list_tasks, load_task

DOMAINS = validity_suite.DOMAINS
VARIANT_SEEDS = (0, 1, 2)
EPISODE_TASKS_PER_DOMAIN = 10  # the validity suite's closings that need a golden episode (its claim cases)

HARD_CASES = [
    "Your refund of $1,234.50 for ORD-10023 is on its way; EMP-10011 approved it.",
    "Call us at 3:00pm or 15:00 on 2026-03-02 (that's a Monday), e.g. before 5 p.m. or after 9 a.m.",
    'She said "it\'s done" and I\'ll confirm... maybe—or not…',
    "- first item\n- second item\n\n• third item\n  * nested",
    "I don't know, I can't say, I won't do it, I'm sure, you're right, they've gone, he'd've known.",
    "The customer's order and the customers' orders; it's the company’s policy, isn't it?",
    "A well-known, check-in, x-ray, 3-day, 24/7 service at 50% off, the 1st, 2nd, 3rd and 21st.",
    "Write to support@example.com or visit https://www.example-shop.com/returns?id=42#top, or www.acme.co.uk.",
    "Mr. Smith, Dr. Jones and co. met at 10am, 12pm, 7a.m. and 9p.m.; the U.S. team said ok.",
    "Total: USD 1,000.00 (one thousand dollars) + $25 fee = $1,025; 10kg, 5km/h, 100mph, 30°c.",
    "Hi!! Really?! Thanks :) see you :-( bye ;) <3 ...",
    "Ha :p, hmm :/ oh :o, meh :| sad :'( and :’( </3 (: ): yay ^_^ :)) :(( :-/ :-p;)",
    "Moved to Sunday 7 June (2026-06-07): all 6 rooms; 2cm², 3m³, 10yd, 12ft, 3oz, 2lb, 500mg, 1tb, 20gb, 5g, 7in.",
    "Ticket #4521 [priority: high] {status: open} ~approx. 2-3 days & counting; a/b, and/or, w/o.",
    "Wait... what?? No!!! It's 11.5% of £300 or €45.99 or ¥1000; ratio 3:1, score 9/10.",
    "Policy POL-2024-000123 covers claim CLM-55 (filed 01/02/2026) — you're all set.",
    "\tIndented\ttext\r\nwith  double  spaces and trailing space ",
    "I've cancelled it.It was late.Thanks",
    "gonna, gotta, y'all, c'mon, o'clock, ma'am, 'cause, nothin', doin'",
    "“Smart quotes” and ‘single ones’ and «guillemets» and the apostrophe’s use.",
    "Emoji ✅ done 🎉 and ✓ checked, arrows → and ⇒, stars ★★★.",
    "Numbers: +44 20 7946 0958, -5, ±3, ~10, 1/2, 3.14159, 1e10, 0x1F, #1.",
    "i.e. the a. b. c. options; vs. the p.m. slot; e.g., this one.",
    "cannot, can not, shan't, needn't, mustn't've, oughtn't, ain't, y’all, i’m, won’t",
    "It's ORD-10023-A; SKU: AB-12-CD; ref#123; order no. 45; item(s) and (optional) notes.",
    "The amount is $0.99/month — billed monthly — until 12/31.",
    "Hello!How are you?Fine.Good",
]


# --------------------------------------------------------------------------- spaCy's reading, for comparison


@lru_cache(maxsize=1)
def _nlp() -> Any:
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("lemmatizer", config={"mode": "lookup"})
    nlp.initialize()
    return nlp


@cache  # each text is read by several tests; nothing changes a doc once read
def _spacy_parse(text: str) -> Any:
    """spaCy's doc of the text, each token's ``norm_`` its lemma as the claim reader takes it (as ``claims._parse`` does)."""
    doc = _nlp()(text)
    for t in doc:
        t.norm_ = claims._LEMMA_FIX.get(t.lemma_, t.lemma_)
    return doc


class _SpacyMatcher:
    """spaCy's ``Matcher`` behind the interface of :class:`thinkingbox_env.reading.text.PhraseMatcher`."""

    def __init__(self, gap: int) -> None:
        from spacy.matcher import Matcher

        self.gap = gap
        self._matcher = Matcher(_nlp().vocab)

    def add(self, label: str, phrases: list[tuple[str, ...]]) -> None:
        patterns = []
        for words in phrases:
            pattern: list[dict[str, Any]] = []
            for i, w in enumerate(words):
                if i:
                    pattern += [{"OP": "?", "IS_PUNCT": False}] * self.gap
                pattern.append({"NORM": w})
            patterns.append(pattern)
        self._matcher.add(label, patterns)

    def __call__(self, doc: Any) -> list[tuple[str, int, int]]:
        return [(_nlp().vocab.strings[m], s, e) for m, s, e in self._matcher(doc)]


@contextmanager
def _reading(with_spacy: bool) -> Iterator[None]:
    """The claim reader over spaCy's pipeline (``with_spacy``) or over its own; caches cleared on both sides."""
    saved = claims._parse, claims._new_matcher
    if with_spacy:
        claims._parse = _spacy_parse  # type: ignore[assignment]
        claims._new_matcher = lambda: _SpacyMatcher(claims._FREE_TOKENS)  # type: ignore[assignment]
    caches = (claims._lemmas, claims._reader, claims._read_claims, claims.subject_terms, saved[0])
    for fn in caches:
        fn.cache_clear()
    try:
        yield
    finally:
        claims._parse, claims._new_matcher = saved
        for fn in caches:
            fn.cache_clear()


def _row(t: Any) -> tuple[Any, ...]:
    fixed = claims._LEMMA_FIX.get(t.lemma_, t.lemma_)
    return (t.text, t.idx, fixed, t.is_punct, t.is_space, t.like_num, bool(t.is_sent_start), t.whitespace_)


# --------------------------------------------------------------------------- the corpus


def _spec_texts(spec: Any) -> list[str]:
    out = [spec.golden_reply, spec.user.opening, *(f.text for f in spec.user.facts), *(t.say for t in spec.dialogue)]
    return [t for t in out if t]


@lru_cache(maxsize=1)
def _frozen_tasks() -> tuple[Any, ...]:
    return tuple(load_task(tid) for d in DOMAINS for version in (None, 2) for tid in list_tasks(d, task_set_version=version))


@lru_cache(maxsize=1)
def _variant_specs() -> tuple[Any, ...]:
    return tuple(family.instance(seed, "train") for d in DOMAINS for family in load_domain(d).families.values()
                 for seed in VARIANT_SEEDS)


@lru_cache(maxsize=1)
def _closings() -> tuple[tuple[str, str], ...]:
    """(domain path, closing turn) for every closing the validity suite poses: its cases for every frozen task, its
    claim cases (which need the golden episode) for a sample."""
    out: list[tuple[str, str]] = []
    for spec in _frozen_tasks():
        domain = load_domain(spec.domain)
        out += [(str(domain.path), turn) for case in validity_suite.cases_for(spec, domain) for turn in case.turns]
    for tid in validity_suite.sample_tasks(EPISODE_TASKS_PER_DOMAIN):
        spec = load_task(tid)
        env = ThinkingboxEnv(spec, max_actions=200)
        info = run_episode(env, OracleAgent(), seed=0)
        domain = env.runtime.domain
        out += [(str(domain.path), turn) for case in validity_suite.claim_cases(spec, domain, info["trace"])
                for turn in case.turns]
        env.close()
    return tuple(dict.fromkeys(out))


@lru_cache(maxsize=1)
def _corpus() -> tuple[str, ...]:
    texts = [t for spec in _frozen_tasks() + _variant_specs() for t in _spec_texts(spec)]
    texts += [t for _, t in _closings()] + HARD_CASES
    return tuple(dict.fromkeys(t.lower() for t in texts))


def _first_difference(text: str) -> str | None:
    ours = [_row(t) for t in parse(text)]
    theirs = [_row(t) for t in _spacy_parse(text)]
    if ours == theirs:
        return None
    k = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs)))
    return (f"{text!r}\n  spaCy: {theirs[max(0, k - 2):k + 3]}\n  ours:  {ours[max(0, k - 2):k + 3]}")


# --------------------------------------------------------------------------- the comparisons


def test_tokens_lemmas_and_sentences_equal_spacys_on_the_corpus() -> None:
    corpus = _corpus()
    assert len(corpus) > 5000
    diffs = [d for d in map(_first_difference, corpus) if d]
    tokens = sum(len(parse(t)) for t in corpus)
    assert not diffs, f"{len(diffs)} of {len(corpus)} texts ({tokens} tokens) read differently:\n" + "\n".join(diffs[:10])


# pieces whose mixtures, run together or spaced, exercise every tokenizer rule at once
_PIECES = ["order", "ord-10023", "$", "1,234.50", "3", "15", "00", "pm", "am", "a", "i", "e", "g", "s", "t", "ve", "ll", "d",
           "re", "m", "don", "can", "won", "it", "you", "'", "\u2019", "\u2018", '"', "\u201c", "\u201d", ".", "..", "...",
           "\u2026", ",", ";", ":", "!", "?", "(", ")", "[", "]", "-", "--", "\u2014", "\u2013", "/", "@", "#", "%", "&", "*",
           "+", "=", "<", ">", "_", "~", "^", "|", "\\", "\u00b0", "c", "f", "km", "kg", "mb", "x", "www", "com", "acme",
           "co", "uk", "http", "https", "://", "emp", "2026", "-03", "\u2022", "\u2705", "\U0001f389", "\u2192", "\u00e9",
           "\u00fc", "caf\u00e9", "24", "7", "1st", "n't", "'s", "\u2019s", "\u20ac", "\u00a3", "\u00bd", "\u00b2",
           "\u2122", "\u00a7", "\n", " ", "  ", "\t", "u.s.", "e.g.", "i.e.", "etc", "vs", "no", "ok", "8", ":)", ":(", "<3",
           ";)", ":p", ":/", ":o", "</3", "^_^", ":'(", "cm", "ft", "oz", "lb", "gb", "in", "mph", "\u00b3", "x.com", "a.b",
           "ab.cd"]


# faces the package keeps whole and spaCy does not (":D", once lower-cased)
OWN_FACES = frozenset((":d", ":-d"))


def _spacy_special_cases() -> dict[str, tuple[str, ...]]:
    """spaCy's lower-case tokenizer exceptions for English: the string and its tokens."""
    from spacy.attrs import ORTH

    return {k: tuple(t.get(ORTH, t.get("ORTH")) for t in v) for k, v in _nlp().tokenizer.rules.items() if k == k.lower()}


@lru_cache(maxsize=1)
def _where_the_lists_differ() -> re.Pattern[str]:
    """Where a text holds a face kept whole by one tokenizer only, or a unit that one only splits off the digits before it."""
    from spacy.lang.char_classes import LIST_UNITS

    faces = sorted(special_cases().keys() ^ _spacy_special_cases().keys(), key=len, reverse=True)
    units = sorted(UNITS ^ set(LIST_UNITS), key=len, reverse=True)
    return re.compile("|".join(map(re.escape, faces)) + "|[0-9](?:" + "|".join(map(re.escape, units)) + r")(?![^\W_])")


def _mixtures(n: int, seed: int) -> list[str]:
    """``n`` random mixtures of the pieces, run together or spaced, in which no face or unit of only one list forms."""
    rng = random.Random(seed)
    differ = _where_the_lists_differ()
    out: list[str] = []
    while len(out) < n:
        text = "".join(rng.choice(_PIECES) + rng.choice(("", "", "", " ")) for _ in range(rng.randint(1, 7)))
        if not differ.search(text):
            out.append(text)
    return out


def test_random_mixtures_of_hard_pieces_read_as_spacy_reads_them() -> None:
    texts = _mixtures(5000, seed=20260302)
    diffs = [d for d in map(_first_difference, texts) if d]
    assert not diffs, "\n".join(diffs[:10])


@pytest.mark.parametrize("context", ["{}", "say {} now", "({})", "{}.", "{},", '"{}"', "x{}", "{}x", "1{}", "-{}-"])
def test_every_special_case_is_spacys(context: str) -> None:
    """Every special case the package shares with spaCy's English, alone and inside other text.

    The package keeps fewer faces whole than spaCy, and two that spaCy lacks (":D" and ":-D", lower-cased);
    everything else, contractions, times and abbreviations, is spaCy's rule for rule. Texts in which the
    context makes a face or unit of only one list (":)" in "(:))" makes spaCy's ":)))") are not compared.
    """
    from spacy.lang.tokenizer_exceptions import emoticons

    rules = _spacy_special_cases()
    ours = special_cases()
    assert set(ours) - set(rules) == OWN_FACES
    spacy_faces = emoticons | {e.replace("'", "\u2019") for e in emoticons} | {'\\")'}  # with either apostrophe
    assert set(rules) - set(ours) <= spacy_faces
    shared = sorted(set(ours) & set(rules))
    assert {k: ours[k] for k in shared} == {k: rules[k] for k in shared}
    texts = [t for t in (context.format(k) for k in shared) if not _where_the_lists_differ().search(t)]
    diffs = [d for d in map(_first_difference, texts) if d]
    assert not diffs, "\n".join(diffs[:10])


def test_lexical_attributes_are_spacys() -> None:
    vocab = _nlp().vocab
    words = [*table(), "zeroth", "1st", "22nd", "3rd", "4th", "1/2", "-5", "+3", "±3", "~10", "1,000.50", "%", "$", "...",
             "—", "•", "'s", "n't", "--", "a.m.", "e.g."]
    diffs = [w for w in words if (like_num(w), is_punct(w)) != (vocab[w].like_num, vocab[w].is_punct)]
    assert not diffs, diffs[:20]
    theirs = _nlp().get_pipe("lemmatizer").lookups.get_table("lemma_lookup")  # keyed by string hashes
    assert len(theirs) == len(table())
    assert all(theirs.get(w) == lemma(w) for w in table())


def test_phrase_matches_are_spacys_in_the_same_order() -> None:
    """Every domain's action phrases over the corpus: the same (action, start, end), in the same order."""
    with _reading(with_spacy=False):
        ours_by_domain = {d: claims._reader(str(load_domain(d).path)) for d in DOMAINS}
    with _reading(with_spacy=True):
        theirs_by_domain = {d: claims._reader(str(load_domain(d).path)) for d in DOMAINS}
    diffs = []
    for text in _corpus():
        doc, sdoc = parse(text), _spacy_parse(text)
        for t, s in zip(doc, sdoc):
            t.norm_ = s.norm_ = claims._LEMMA_FIX.get(t.lemma_, t.lemma_)
        for d in DOMAINS:
            ours, theirs = ours_by_domain[d], theirs_by_domain[d]
            if ours is None:
                continue
            assert isinstance(ours.matcher, PhraseMatcher) and theirs is not None
            if ours.matcher(doc) != theirs.matcher(sdoc):
                diffs.append((d, text, ours.matcher(doc), theirs.matcher(sdoc)))
    assert not diffs, diffs[:5]


def test_claims_subject_terms_and_concepts_are_those_read_with_spacy() -> None:
    """The claim reader's output over the validity suite's closings and every golden reply, with either reading.

    Both sides take the package's stop words (``subject_terms`` reads them from thinkingbox_env.reading.text):
    what is compared is the tokens underneath.
    """
    cases = list(_closings())
    for spec in _frozen_tasks():
        cases.append((str(load_domain(spec.domain).path), spec.golden_reply))
    clocks = {str(load_domain(d).path): (load_domain(d).spec.clock.date(), tuple(load_domain(d).spec.id_patterns))
              for d in DOMAINS}

    def read_all() -> list[Any]:
        out = []
        for path, text in cases:
            clock, ids = clocks[path]
            out.append((claims.read_claims(text, path, clock, ids), claims.subject_terms(text),
                        claims.concepts_said(text, path)))
        return out

    with _reading(with_spacy=False):
        ours = read_all()
    with _reading(with_spacy=True):
        theirs = read_all()
    diffs = [(c, a, b) for c, a, b in zip(cases, ours, theirs) if a != b]
    assert len(cases) > 5000
    assert not diffs, diffs[:3]
