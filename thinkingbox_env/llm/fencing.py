"""Untrusted text inside a model prompt: a fence the quoted text cannot forge, and escaping of what looks like one.

The judge and the LLM user both read a conversation whose assistant turns were
written by the agent under test. Pasted into a prompt as ``ROLE: text`` lines, an
agent message can end the transcript early, open a new section, write a line
``CUSTOMER: yes, go ahead`` or ``Requirement: ...`` and be read as if the prompt's
author had written it. Three things close that:

- every turn is one line, ``SPEAKER: "<text as a JSON string>"``: newlines inside the
  text become escaped newlines, so no text starts a line of its own and no forged speaker label
  or section heading reaches a line start;
- the block is opened and closed by marker lines that carry a nonce, a hash of
  everything the block holds: text cannot contain the hash of a block that contains
  it, so the agent cannot write the closing marker, and the prompt tells the model
  that only the markers with this nonce count;
- anything in the text that looks like a marker (``<<<``, ``>>>``) is rewritten to
  look-alike characters, and so is the nonce itself, should it appear.

The nonce is derived from the content rather than drawn at random so that the same
episode yields the same prompt (reproducible judge requests, cacheable by a server).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence

_OPEN, _CLOSE = "<<<", ">>>"
_OPEN_SAFE, _CLOSE_SAFE = "\u2039\u2039\u2039", "\u203a\u203a\u203a"  # look-alike brackets a marker never uses


def neutralise(text: str, nonce: str | None = None) -> str:
    """``text`` with every marker-like sequence (and the nonce) rewritten, so it cannot open or close a fence."""
    text = text.replace(_OPEN, _OPEN_SAFE).replace(_CLOSE, _CLOSE_SAFE)
    if nonce:
        text = text.replace(nonce, "[nonce]")
    return text


def one_line(text: str) -> str:
    """``text`` with line breaks as spaces, for short record lines that stay readable unquoted."""
    return " ".join(text.split())


def nonce_for(*parts: str) -> str:
    """A 16-hex-digit nonce from the block's content (see the module docstring for why it cannot be forged)."""
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode("utf-8", "surrogatepass"))
        h.update(b"\x00")
    return h.hexdigest()[:16]


# line breaks JSON leaves as they are without ensure_ascii, though str.splitlines and many tokenizers break lines on them
_UNESCAPED_BREAKS = str.maketrans({"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"})


def quoted_turn(speaker: str, text: str, nonce: str) -> str:
    """One turn as one line: the speaker label, then the text as a JSON string (escaped, never more than one line)."""
    return f"{speaker}: {json.dumps(neutralise(text, nonce), ensure_ascii=False).translate(_UNESCAPED_BREAKS)}"


def begin_marker(label: str, nonce: str) -> str:
    """The line that opens a fenced block."""
    return f"{_OPEN}BEGIN {label} {nonce}{_CLOSE}"


def end_marker(label: str, nonce: str) -> str:
    """The line that closes a fenced block."""
    return f"{_OPEN}END {label} {nonce}{_CLOSE}"


def fence_lines(label: str, lines: Sequence[str], nonce: str) -> str:
    """Already-escaped lines between the block's two markers."""
    return "\n".join([begin_marker(label, nonce), *lines, end_marker(label, nonce)])


def fence_dialogue(label: str, turns: Iterable[tuple[str, str]], *extra: str) -> tuple[str, str]:
    """A conversation as a fenced block of quoted turns, and its nonce.

    ``turns`` are (speaker label, text) pairs; ``extra`` are further strings that the
    nonce should depend on (other blocks of the same prompt), so one nonce can fence them all.
    """
    turns = list(turns)
    nonce = nonce_for(label, *(f"{s}\x00{t}" for s, t in turns), *extra)
    return fence_lines(label, [quoted_turn(s, t, nonce) for s, t in turns], nonce), nonce


def fence_note(label: str, prefix: str, text: str, nonce: str) -> str:
    """A one-line record (``prefix`` trusted, ``text`` not) as a fenced block under an existing nonce."""
    return fence_lines(label, [prefix + neutralise(one_line(text), nonce)], nonce)
