"""The claim reader's English reading (thinkingbox_env.reading.text) on cases written out by hand.

These hold without spaCy installed; tests/reading/test_text_equivalence.py compares the same
reading with spaCy's over the whole repository where spaCy is installed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from thinkingbox_env.contracts.spec import load_yaml
from thinkingbox_env.reading.claims import subject_terms
from thinkingbox_env.reading.text import STOP_WORDS, PhraseMatcher, filter_spans, lemma, parse
from thinkingbox_env.reading.text import lemmas as lemma_table

DOMAINS_DIR = Path(__file__).resolve().parents[2] / "domains"


def _texts(text: str) -> list[str]:
    return [t.text for t in parse(text)]


@pytest.mark.parametrize(("text", "tokens"), [
    ("i don't know, can't you?", ["i", "do", "n't", "know", ",", "ca", "n't", "you", "?"]),
    ("i'm sure it won't.", ["i", "'m", "sure", "it", "wo", "n't", "."]),
    ("the customer's order", ["the", "customer", "'s", "order"]),
    ("refund of $1,234.50 for ord-10023.", ["refund", "of", "$", "1,234.50", "for", "ord-10023", "."]),
    ("on 2026-03-02 at 3:00pm or 15:00", ["on", "2026", "-", "03", "-", "02", "at", "3:00pm", "or", "15:00"]),
    ("e.g. at 9 a.m., 3pm", ["e.g.", "at", "9", "a.m.", ",", "3", "pm"]),
    ("a well-known 24/7 service, 50% off the 1st", ["a", "well", "-", "known", "24/7", "service", ",", "50", "%", "off",
                                                   "the", "1st"]),
    ("mail support@acme.com or see www.acme-shop.com/returns.", ["mail", "support@acme.com", "or", "see",
                                                                  "www.acme-shop.com/returns", "."]),
    ('"done" (really)...', ['"', "done", '"', "(", "really", ")", "..."]),
    ("- one\n- two", ["-", "one", "\n", "-", "two"]),
    ("great :) thanks", ["great", ":)", "thanks"]),
    ("plan a. plan-a.", ["plan", "a.", "plan", "-", "a."]),
])
def test_tokens(text: str, tokens: list[str]) -> None:
    assert _texts(text) == tokens


def test_offsets_whitespace_and_sentences() -> None:
    doc = parse("it is done.  thanks!\nbye")
    assert [(t.text, t.idx, t.whitespace_) for t in doc] == [
        ("it", 0, " "), ("is", 3, " "), ("done", 6, ""), (".", 10, " "), (" ", 12, ""), ("thanks", 13, ""), ("!", 19, ""),
        ("\n", 20, ""), ("bye", 21, "")]
    assert [s.text for s in doc.sents] == ["it is done.", " thanks!", "\nbye"]  # a second space starts the next one
    assert [t.is_space for t in doc] == [False, False, False, False, True, False, False, True, False]


def test_lexical_attributes() -> None:
    doc = parse("orders was cancelled: 3 of 1,000 (one-third) $")
    assert [t.lemma_ for t in doc][:3] == ["order", "be", "cancel"]
    assert [t.text for t in doc if t.like_num] == ["3", "1,000", "one", "third"]
    assert [t.text for t in doc if t.is_punct] == [":", "(", "-", ")"]
    assert lemma("notes") == "note" and lemma("zzzq") == "zzzq"


def test_phrases_match_with_free_tokens_but_not_across_punctuation() -> None:
    m = PhraseMatcher(gap=4)
    m.add("remove", [("take", "off")])
    m.add("cancel", [("cancel",)])
    doc = parse("please take the old vehicle off and cancel it")
    for t in doc:
        t.norm_ = t.lemma_
    assert m(doc) == [("remove", 1, 6), ("cancel", 7, 8)]
    doc = parse("take it, then off")
    for t in doc:
        t.norm_ = t.lemma_
    assert m(doc) == []
    spans = [doc[0:3], doc[1:2], doc[2:5], doc[4:5]]
    assert [(s.start, s.end) for s in filter_spans(spans)] == [(0, 3), (4, 5)]


def test_where_the_reading_differs_from_spacys_on_purpose() -> None:
    """The stop words, faces and units are lists written for customer-service messages, not spaCy's."""
    # nouns, verbs and adjectives of what was done are subject words here (spaCy's list drops them)
    assert subject_terms("The full amount was refunded back to the name on the card.") == {
        "full", "amount", "refund", "back", "name", "card"}
    assert {"call", "move", "show", "done", "first", "last", "next", "due", "front", "side", "part", "bill", "system",
            "detail"}.isdisjoint(STOP_WORDS)
    # light verbs carry a phrase's action but name no subject: a closing that only thanks has none
    assert {"get", "give", "take", "make", "keep", "put", "go"} <= STOP_WORDS
    assert subject_terms("Thanks for getting in touch, have a good day.") == frozenset()
    # ":D" lower-cased is a laugh, kept whole; faces outside the list are read as punctuation and letters
    assert _texts("great :d :-d") == ["great", ":d", ":-d"]
    assert _texts("=) :x") == ["=", ")", ":", "x"]
    # only this domain's units split off a number: pounds and miles do, tonnes and metres per second do not
    assert _texts("5lbs 3mi 2t 4m/s") == ["5", "lbs", "3", "mi", "2t", "4m", "/", "s"]
    assert _texts("10км") == ["10км"]


# the grammar inside the domains' phrases: articles, pronouns, prepositions and particles, auxiliaries
_PHRASE_GRAMMAR = frozenset((
    "a", "another", "the", "all", "one", "it", "you", "your", "our", "as", "at", "for", "in", "into", "of", "off", "on",
    "onto", "out", "over", "through", "to", "up", "with", "against", "from", "until", "be", "have", "now",
    "get", "give", "go", "make", "take", "keep", "put", "see", "say", "let",  # light verbs, whose phrases name the action
))


def test_stop_words_are_function_words_and_none_names_an_action() -> None:
    """Every article, pronoun and clitic is a stop word; no word of a domain's vocabulary that is not grammar is one."""
    assert {"a", "an", "the", "i", "me", "my", "mine", "myself", "we", "us", "our", "ours", "ourselves", "you", "your",
            "yours", "yourself", "yourselves", "he", "him", "his", "himself", "she", "her", "hers", "herself", "it",
            "its", "itself", "they", "them", "their", "theirs", "themselves"} <= STOP_WORDS
    for text in ("don't", "i'm", "you'll", "we've", "they'd", "it's", "you\u2019re", "won't", "can't", "dont"):
        assert all(t.text in STOP_WORDS for t in parse(text)), text
    files = sorted(DOMAINS_DIR.glob("*/claims.yaml"))
    assert len(files) == 5
    for path in files:
        vocab = load_yaml(path)
        words: set[str] = set()
        for action in vocab["actions"].values():
            assert not set(" ".join(action.get("objects", [])).split()) & STOP_WORDS, path
            words.update(" ".join(action["phrases"]).split())
        words.update(" ".join(vocab.get("generic", [])).split())
        for role in vocab.get("roles", {}).values():
            words.update(" ".join(role["cues"]).split())
        for concept in vocab.get("concepts", {}).values():
            words.update(" ".join(w for sense in concept["senses"] for w in sense).split())
        assert words & STOP_WORDS <= _PHRASE_GRAMMAR, (path, sorted(words & STOP_WORDS - _PHRASE_GRAMMAR))


def _fresh_lookup() -> object:
    lemma_table._lookup.cache_clear()
    lemma_table.lemma.cache_clear()
    return lemma_table._lookup()


def test_the_lemma_table_is_cached_and_read_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THINKINGBOX_CACHE_DIR", str(tmp_path))
    whole = lemma_table.table()
    try:
        assert isinstance(_fresh_lookup(), dict)  # the first process reads the table itself and writes the cache
        written = list(tmp_path.glob("en_lemma_lookup.*"))
        assert len(written) == 1
        cached = _fresh_lookup()
        assert isinstance(cached, lemma_table._SortedTable)
        assert all(cached.get(w, w) == v for w, v in whole.items())
        assert [cached.get(w, w) for w in ("", "a", "zzzq", "\u00e9t\u00e9", "orders")] == ["", "a", "zzzq", "\u00e9t\u00e9", "order"]
        written[0].write_bytes(b"another table's key\n" + written[0].read_bytes().partition(b"\n")[2])
        assert isinstance(_fresh_lookup(), dict)  # not this table's copy: read afresh (and cached again)
        assert len(list(tmp_path.glob("en_lemma_lookup.*"))) == 1
    finally:
        lemma_table._lookup.cache_clear()
        lemma_table.lemma.cache_clear()


def test_an_unwritable_cache_directory_reads_the_table_itself(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("THINKINGBOX_CACHE_DIR", str(blocker / "cache"))  # below a file: cannot be created
    try:
        assert isinstance(_fresh_lookup(), dict)
        assert lemma_table.lemma("was") == "be"
    finally:
        lemma_table._lookup.cache_clear()
        lemma_table.lemma.cache_clear()
