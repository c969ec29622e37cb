"""Figures the realmodel tests read off run rows: seconds per trial and the tool-call parse rate.

Kept apart from the tests so the numbers docs/evaluation.md quotes are computed one way,
from the rows alone.
"""

from __future__ import annotations

from typing import Any


def model_turns(row: dict[str, Any]) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """Each agent message a model call produced, with the tool-call events its calls became (in trace order)."""
    trace = row.get("trace") or []
    out = []
    for i, event in enumerate(trace):
        if event.get("type") != "message" or event.get("source") != "agent" or "model_call" not in event:
            continue
        wanted = len(event.get("tool_calls") or [])
        calls = []
        for later in trace[i + 1:]:
            if len(calls) == wanted or later.get("type") != "tool_call":
                break
            calls.append(later)
        out.append((event, calls))
    return out


def parsed(call: dict[str, Any]) -> bool:
    """A call whose arguments reached the tool as a JSON object (not the model's unparsed text)."""
    return isinstance(call.get("arguments"), dict) and call.get("error_kind") != "malformed"


def tool_call_figures(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Model turns, those with tool calls, and the share of the latter whose every call parsed."""
    turns = [t for row in rows for t in model_turns(row)]
    calling = [calls for message, calls in turns if message.get("tool_calls")]
    ok = [calls for calls in calling if calls and all(parsed(c) for c in calls)]
    return {"model_turns": len(turns), "turns_with_calls": len(calling), "turns_parsed": len(ok),
            "parse_rate": len(ok) / len(calling) if calling else None}


def seconds_per_trial(rows: list[dict[str, Any]]) -> float:
    return sum(r["timings"]["seconds"] for r in rows) / len(rows)
