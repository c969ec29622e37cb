"""Telling a simulated-user reply that quotes its own prompt, or was cut at the token cap.

A small user model may answer with its prompt instead of the customer's words: the
fenced dialogue block, the profile's headings, its instructions. The agent then reads
text no customer would write (and may take the profile's facts from it), and a reply
cut at the token cap is half a message. Neither stops a trial, but a run whose user
replies are mostly of this kind measures the user, not the agent, so each reply is
checked and the row says how many were flagged.

A reply quotes its prompt when it holds a fence marker or a quoted dialogue line, or
shares a run of :data:`QUOTE_WORDS` words with the instructions. What the customer is
meant to say (the facts, the goal, the phrases the prompt prescribes, the decisions'
reasons) is not instruction text, so repeating it is never a quote.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

QUOTE_WORDS = 8  # a run of this many words shared with the instructions is a quote, not a coincidence
_MARKERS = re.compile(r"<<<|>>>|\[\[\s*(?:END\s+)?(?:DIALOGUE|PROFILE|LATEST ASSISTANT MESSAGE)|nonce\b|^(?:CUSTOMER|ASSISTANT):\s*\"|"
                      r"\n\s*(?:CUSTOMER|ASSISTANT):\s*\"", re.IGNORECASE)
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _runs(words: list[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}


class EchoDetector:
    """Built once per episode from the instruction text; ``quotes`` tells whether a raw reply echoes it."""

    def __init__(self, instructions: Iterable[str], sayable: Iterable[str] = ()):
        """``instructions``: the prompt's instruction text; ``sayable``: passages inside it the customer may repeat."""
        text = "\n".join(instructions)
        for passage in sorted((p for p in sayable if p), key=len, reverse=True):
            text = text.replace(passage, "\n")
        # runs never cross a line, so words on either side of a removed passage do not join into a run
        self._runs: set[tuple[str, ...]] = set()
        for line in text.splitlines():
            self._runs |= _runs(_words(line), QUOTE_WORDS)

    def quotes(self, reply: str | None) -> bool:
        """Whether ``reply`` (as the model wrote it, before normalising) holds a fence marker or a run of the instructions."""
        text = reply or ""
        if _MARKERS.search(text):
            return True
        return not self._runs.isdisjoint(_runs(_words(text), QUOTE_WORDS))
