"""Phrases read as the dialogue and process checks compare them: contractions written out, words lemmatised, polarity per clause."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

_CONTRACTIONS = [
    (r"\bcan'?t\b", "cannot"), (r"\bcan not\b", "cannot"), (r"\bwon'?t\b", "will not"), (r"\b(\w+)n't\b", r"\1 not"),
    (r"\b(unable|not able) to\b", "cannot"), (r"\bi'm\b", "i am"), (r"\bi've\b", "i have"), (r"\bit's\b", "it is"),
    (r"\byou're\b", "you are"), (r"\bthat's\b", "that is"),
]
_NEGATIONS = {"not", "no", "cannot", "never", "unable", "nothing", "without", "neither", "nor", "ineligible"}


def _lemma(word: str) -> str:
    """The word's lemma from the lookup table the claim reader uses (spacy-lookups-data's): "notes" is "note", never "not"."""
    from .claims import word_lemma

    return word_lemma(word)


@lru_cache(maxsize=16_384)  # every regex mention of a task reads the same messages
def expand_contractions(text: str) -> str:
    """Lower-cased with contractions written out ("isn't" is "is not", "can't" is "cannot"), words kept as they are."""
    t = text.lower().replace("\u2019", "'").replace("\u2018", "'")
    for pat, rep in _CONTRACTIONS:
        t = re.sub(pat, rep, t)
    return t


def normalise_phrase(text: str) -> list[str]:
    """Lower-cased, contractions expanded, "unable to" read as "cannot", words lemmatised."""
    return list(_normalise_phrase(text))


@lru_cache(maxsize=16_384)  # grading normalises the same replies and phrases for every episode of a task
def _normalise_phrase(text: str) -> tuple[str, ...]:
    t = text.lower().replace("’", "'").replace("‘", "'")
    for pat, rep in _CONTRACTIONS:
        t = re.sub(pat, rep, t)
    words = re.findall(r"[a-z0-9$.]+(?:'[a-z]+)?", t)
    # "cannot be cancelled" says the same as "cannot cancel"
    out: list[str] = []
    for w in words:
        w = w.strip(".")
        if not w:
            continue
        if w in ("be", "been", "being") and out and out[-1] in ("cannot", "not"):
            continue
        out.append(_lemma(w))
    return tuple(out)


def _clauses(text: str) -> list[str]:
    return [c for c in re.split(r"[.;!?\n]+|,\s+(?:but|and|so|however)\b|\bbut\b|\bhowever\b", text) if c.strip()]


def _find_phrase(tokens: Sequence[str], phrase: Sequence[str]) -> int:
    n = len(phrase)
    for i in range(len(tokens) - n + 1):
        # a prefix stands for its word family ("escalat"), but a short word only for itself ("not" is not "note")
        if all(tokens[i + k] == phrase[k] or (len(phrase[k]) >= 5 and tokens[i + k].startswith(phrase[k]))
               for k in range(n)):
            return i
    return -1


def phrase_polarity(text: str, phrase: str) -> list[bool]:
    """For every clause of ``text`` that says ``phrase``: True when affirmed, False when negated.

    A phrase that itself negates ("not eligible") is affirmed when said as written.
    """
    return list(_phrase_polarity(text, phrase))


@lru_cache(maxsize=16_384)
def _phrase_polarity(text: str, phrase: str) -> tuple[bool, ...]:
    want = _normalise_phrase(phrase)
    if not want:
        return ()
    out = []
    for clause in _clauses(text):
        toks = _normalise_phrase(clause)
        i = _find_phrase(toks, want)
        if i < 0:
            continue
        negated = any(t in _NEGATIONS for t in toks[max(0, i - 6) : i])
        out.append(not negated)
    return tuple(out)


# --------------------------------------------------------------------------- check specs
