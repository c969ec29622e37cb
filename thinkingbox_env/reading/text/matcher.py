"""Finding phrases in a doc by their words' normal forms, with a few free tokens allowed between the words.

"take off" is found in "take the vehicle off" (two free tokens); a free token is any token
that is not punctuation, so a phrase never reaches across a comma or a stop. Every way a
phrase can be read is found, as (label, start, end) once each; :func:`filter_spans` then
keeps the longest of overlapping matches.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from .doc import Doc


class _Pattern(NamedTuple):
    label: str
    steps: tuple[str | None, ...]  # a word's normal form, or None for an optional free token


class PhraseMatcher:
    """Labelled phrases, each a list of normal forms, with up to ``gap`` free tokens between consecutive words.

    Matches come in the order in which a left-to-right reading completes them; where two
    labels match the same tokens, the one added later comes later.
    """

    def __init__(self, gap: int = 4) -> None:
        self.gap = gap
        self._patterns: list[_Pattern] = []
        self._by_first: dict[str, list[int]] = {}

    def add(self, label: str, phrases: Sequence[Sequence[str]]) -> None:
        for words in phrases:
            if not words:
                continue
            steps: list[str | None] = []
            for k, w in enumerate(words):
                if k:
                    steps += [None] * self.gap
                steps.append(w)
            self._by_first.setdefault(words[0], []).append(len(self._patterns))
            self._patterns.append(_Pattern(label, tuple(steps)))

    def __len__(self) -> int:
        return len(self._patterns)

    def __call__(self, doc: Doc) -> list[tuple[str, int, int]]:
        """Every (label, start, end) of the doc's tokens (by ``norm_``) that a phrase matches, each once."""
        norms = [t.norm_ for t in doc]
        free = [not t.is_punct for t in doc]
        return self.match(norms, free)

    def match(self, norms: Sequence[str], free: Sequence[bool]) -> list[tuple[str, int, int]]:
        """The matches over tokens given by their normal forms and whether each may stand as a free token."""
        found: list[tuple[str, int, int]] = []
        # a partial reading: (pattern, next step, start, tokens taken); kept in the order readings branch
        live: list[tuple[int, int, int, int]] = []
        for i, norm in enumerate(norms):
            live.extend((p, 0, i, 0) for p in self._by_first.get(norm, ()))
            kept: list[tuple[int, int, int, int]] = []
            branched: list[tuple[int, int, int, int]] = []
            for p, step, start, taken in live:
                steps = self._patterns[p].steps
                while steps[step] is None:  # a free-token step: take this token there, and also try it at the next step
                    if free[i]:
                        branched.append((p, step + 1, start, taken + 1))
                    step += 1
                if steps[step] != norm:
                    continue
                if step + 1 == len(steps):
                    found.append((self._patterns[p].label, start, start + taken + 1))
                else:
                    kept.append((p, step + 1, start, taken + 1))
            live = kept + branched
        seen: set[tuple[str, int, int]] = set()
        out = []
        for m in found:
            if m not in seen:
                seen.add(m)
                out.append(m)
        return out


def filter_spans(spans: Sequence[Any]) -> list[Any]:
    """The longest of overlapping spans (the earliest among equally long ones), in text order."""
    chosen: list[Any] = []
    taken: set[int] = set()
    for sp in sorted(spans, key=lambda s: (s.end - s.start, -s.start), reverse=True):
        if sp.start not in taken and sp.end - 1 not in taken:
            chosen.append(sp)
            taken.update(range(sp.start, sp.end))
    return sorted(chosen, key=lambda s: s.start)
