"""Rule-based reading of lower-cased English: tokens, sentences, lemmas, stop words and phrase matching.

The claim reader and the phrase normaliser need a tokenizer, a sentence splitter, lemmas by
table lookup and a phrase matcher, nothing statistical. They are written here, in plain
Python over the lemma table of spacy-lookups-data, so that grading never imports spaCy (an
import that, with its pipeline, costs most of a second in every fresh process). Tokens,
lemmas, sentence starts and matches are those of spaCy's blank English pipeline on the texts
this project reads (tests/reading/test_text_equivalence.py compares them wherever spaCy is
installed); the emoticons kept whole, the units split off a number and the stop words are
lists of this package's own, written for customer-service messages.
"""

from __future__ import annotations

from .doc import Doc, Span, Token
from .lemmas import lemma
from .lexical import is_punct, like_num
from .matcher import PhraseMatcher, filter_spans
from .stop_words import STOP_WORDS

__all__ = ["STOP_WORDS", "Doc", "PhraseMatcher", "Span", "Token", "filter_spans", "is_punct", "lemma", "like_num", "parse"]


def parse(text: str) -> Doc:
    """The doc of ``text``, which should already be lower-cased (the rules are written for lower case)."""
    return Doc(text)
