"""A tokenized text: tokens with their offsets, lemmas and sentence starts, and spans over them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import overload

from .chars import SENTENCE_ENDS
from .lemmas import lemma
from .lexical import is_punct, like_num
from .tokenizer import tokenize


class Token:
    """One token: its text, where it starts in the text (``idx``) and in the doc (``i``), and what it is."""

    __slots__ = ("doc", "i", "text", "idx", "whitespace_", "lemma_", "norm_", "is_punct", "is_space", "is_sent_start")

    def __init__(self, doc: Doc, i: int, text: str, idx: int, space: bool) -> None:
        self.doc = doc
        self.i = i
        self.text = text
        self.idx = idx
        self.whitespace_ = " " if space else ""
        self.lemma_ = lemma(text)
        self.norm_ = self.lemma_  # a reader may set its own normal form
        self.is_punct = is_punct(text)
        self.is_space = text.isspace()
        self.is_sent_start = False

    @property
    def lower_(self) -> str:
        return self.text.lower()

    @property
    def like_num(self) -> bool:
        return like_num(self.text)

    @property
    def text_with_ws(self) -> str:
        return self.text + self.whitespace_

    def __len__(self) -> int:
        return len(self.text)

    def __repr__(self) -> str:
        return self.text


class Span:
    """Tokens ``start`` to ``end`` (exclusive) of a doc."""

    __slots__ = ("doc", "start", "end")

    def __init__(self, doc: Doc, start: int, end: int) -> None:
        self.doc = doc
        self.start = start
        self.end = end

    def __len__(self) -> int:
        return self.end - self.start

    def __iter__(self) -> Iterator[Token]:
        return iter(self.doc.tokens[self.start:self.end])

    @overload
    def __getitem__(self, i: int) -> Token: ...

    @overload
    def __getitem__(self, i: slice) -> Span: ...

    def __getitem__(self, i: int | slice) -> Token | Span:
        if isinstance(i, slice):
            start, end, _ = i.indices(len(self))
            return Span(self.doc, self.start + start, self.start + max(start, end))
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        return self.doc.tokens[self.start + i]

    @property
    def start_char(self) -> int:
        return self.doc.tokens[self.start].idx if len(self) else 0

    @property
    def end_char(self) -> int:
        if not len(self):
            return 0
        last = self.doc.tokens[self.end - 1]
        return last.idx + len(last.text)

    @property
    def text(self) -> str:
        return self.doc.text[self.start_char:self.end_char]

    def __repr__(self) -> str:
        return self.text


class Doc:
    """A lower-cased text split into tokens, with the sentence each token starts."""

    __slots__ = ("text", "tokens", "_sents")

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens: list[Token] = []
        idx = 0
        for i, (t, space) in enumerate(tokenize(text)):
            self.tokens.append(Token(self, i, t, idx, space))
            idx += len(t) + space
        self._sents = _sentence_starts(self.tokens)
        for s in self._sents:
            self.tokens[s].is_sent_start = True

    def __len__(self) -> int:
        return len(self.tokens)

    def __iter__(self) -> Iterator[Token]:
        return iter(self.tokens)

    @overload
    def __getitem__(self, i: int) -> Token: ...

    @overload
    def __getitem__(self, i: slice) -> Span: ...

    def __getitem__(self, i: int | slice) -> Token | Span:
        if isinstance(i, int):
            return self.tokens[i]
        start, end, _ = i.indices(len(self.tokens))
        return Span(self, start, max(start, end))

    @property
    def sents(self) -> Iterator[Span]:
        """The sentences, in order."""
        bounds = [*self._sents, len(self.tokens)]
        for a, b in zip(bounds, bounds[1:]):
            yield Span(self, a, b)


def _sentence_starts(tokens: list[Token]) -> list[int]:
    """Where sentences start: the first token, and the first token after a stop ("." "?" "!") that is neither punctuation nor a stop.

    Closing punctuation after the stop (a quote, a bracket) stays with the sentence it closes.
    """
    if not tokens:
        return []
    starts = [0]
    after_stop = False
    for t in tokens:
        is_stop = t.text in SENTENCE_ENDS
        if after_stop and not t.is_punct and not is_stop:
            starts.append(t.i)
            after_stop = False
        elif is_stop:
            after_stop = True
    return starts
