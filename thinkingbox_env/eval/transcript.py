"""One walk over a trial's trace for every transcript view: ``thinkingbox show`` and the HTML report.

The views differ only in markup. Which events are shown, in what order, who speaks and
where a long text is cut is decided here once, so the terminal and the report cannot
disagree about what a trial did; each view maps the :class:`TranscriptLine` s to its
own markup and escapes the texts for it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..contracts.events import is_message, is_tool_call

LineKind = Literal["reasoning", "said", "call", "result"]

_SPEAKER_OF_SOURCE = {"agent": "ASSISTANT", "simulator": "USER", "task": "USER"}


@dataclass(frozen=True)
class TranscriptLine:
    """One line of a transcript, unescaped: ``text`` is already cut to the view's width.

    ``speaker`` is set on ``said`` lines (``ASSISTANT``, ``USER``, or the role of any
    other message, upper-cased); ``name`` and ``error`` on ``call`` lines (the tool,
    and for a failed call its error kind, ``error`` where it has none).
    """

    kind: LineKind
    text: str
    speaker: str = ""
    name: str = ""
    error: str | None = None


def cut(value: Any, width: int) -> str:
    """``value`` as text (JSON unless it is a string), cut to ``width`` characters with a `` ...`` mark."""
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= width else text[:width] + " ..."


def shown_events(trace: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The trace events a transcript shows.

    The system prompt and policy are left out, and so are tool messages, whose content is the
    result already shown with its call (so nothing prints twice). A system message of the env
    that is a JSON error (a malformed action) is kept.
    """
    shown = []
    for ev in trace:
        if is_message(ev):
            if ev["role"] == "system" and ev.get("source") == "env" and not str(ev.get("content") or "").startswith("{"):
                continue
            if ev["role"] == "tool" or ev.get("source") == "tool":
                continue
        shown.append(ev)
    return shown


def speaker(event: Mapping[str, Any]) -> str:
    """Who said a message, by its source: the agent, the customer (simulated or the task's opening), else its role."""
    return _SPEAKER_OF_SOURCE.get(event.get("source", ""), str(event.get("role", "")).upper())


def render_trace(trace: Iterable[Mapping[str, Any]], width: int) -> list[TranscriptLine]:
    """The lines of a transcript: each shown message's reasoning and text, each tool call and its result, in order."""
    lines: list[TranscriptLine] = []
    for ev in shown_events(trace):
        if is_message(ev):
            if ev.get("reasoning"):
                lines.append(TranscriptLine("reasoning", cut(ev.get("reasoning"), width)))
            if ev.get("content"):
                lines.append(TranscriptLine("said", cut(ev["content"], width), speaker=speaker(ev)))
        elif is_tool_call(ev):
            error = None if ev.get("ok") else str(ev.get("error_kind") or "error")
            lines.append(TranscriptLine("call", cut(ev.get("arguments"), width), name=str(ev["name"]), error=error))
            lines.append(TranscriptLine("result", cut(ev.get("result"), width)))
    return lines
