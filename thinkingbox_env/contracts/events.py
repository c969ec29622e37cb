"""Trace events: what an episode did, in order, as the env records it and every reader reads it.

Grading, the failure category, the metrics, the run files and the transcript views all
walk the same trace. Its events are built here only (the env, the MCP server's
``interleave``) and read through :func:`is_tool_call` and :func:`is_message`, so a key
is named once and a type checker follows it from the env to every reader.

The events are ``TypedDict`` s, plain ``dict`` s at run time, on purpose: one is made per
step on the hot path, a run file stores them as JSON as they are, and keys that other
layers add (the eval runner's ``model_call``, ``usage`` and ``reasoning``, a run file's
``content_ref``) or that rows of other versions carry survive every reader untouched.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, TypedDict

from typing_extensions import TypeIs  # typing.TypeIs from Python 3.13


class _ToolCallRequired(TypedDict):
    type: Literal["tool_call"]
    name: str
    arguments: Any
    result: Any
    ok: bool
    writes: bool


class ToolCallEvent(_ToolCallRequired, total=False):
    """A tool call, successful or not (a malformed action is recorded as a failed call named ``<invalid action>``).

    ``writes`` is true only for a write that succeeded. ``id`` and ``error_kind`` are
    absent from the golden trajectory's calls (``runtime.golden_calls``), which are
    not episode events but are read by the same checks.
    """

    id: str | None
    error_kind: str | None


class _MessageRequired(TypedDict):
    type: Literal["message"]
    role: str
    content: str | None
    source: str


class MessageEvent(_MessageRequired, total=False):
    """A chat message; ``source`` says who produced it: ``env``, ``task``, ``agent``, ``simulator``, ``tool`` or ``operator``.

    ``model_call``, ``usage`` and ``reasoning`` are added to agent messages by the eval
    runner (the model call that produced them); ``content_ref`` replaces a long system
    text in a run file until the reader puts the text back.
    """

    tool_calls: list[dict[str, Any]]
    model_call: int
    usage: dict[str, Any]
    reasoning: str
    content_ref: str


TraceEvent = ToolCallEvent | MessageEvent
Trace = list[TraceEvent]

INVALID_ACTION = "<invalid action>"  # the name of the failed call a malformed action is recorded as


def tool_call_event(*, call_id: str | None, name: str, arguments: Any, result: Any, ok: bool, writes: bool,
                    error_kind: str | None) -> ToolCallEvent:
    """A tool call as the env records it (the key order is the run files')."""
    return {"type": "tool_call", "id": call_id, "name": name, "arguments": arguments, "result": result, "ok": ok,
            "writes": writes, "error_kind": error_kind}


def invalid_action_event(reason: str) -> ToolCallEvent:
    """A malformed action, recorded as a failed call so the tool-usage checks and counts see it."""
    return tool_call_event(call_id=None, name=INVALID_ACTION, arguments=None, result={"error": reason}, ok=False,
                           writes=False, error_kind="malformed")


def message_event(role: str, content: str | None, source: str,
                  tool_calls: list[dict[str, Any]] | None = None) -> MessageEvent:
    """A chat message as the env records it; the tool calls are copied, so the message's later edits do not reach the trace."""
    event: MessageEvent = {"type": "message", "role": role, "content": content, "source": source}
    if tool_calls:
        event["tool_calls"] = copy.deepcopy(tool_calls)
    return event


def is_tool_call(event: Mapping[str, Any]) -> TypeIs[ToolCallEvent]:
    """Whether ``event`` is a tool call (also true of a trace event read back from a run file)."""
    return event.get("type") == "tool_call"


def is_message(event: Mapping[str, Any]) -> TypeIs[MessageEvent]:
    """Whether ``event`` is a chat message."""
    return event.get("type") == "message"


def tool_calls(trace: Iterable[Mapping[str, Any]]) -> list[ToolCallEvent]:
    """The tool calls of a trace, in order."""
    return [e for e in trace if is_tool_call(e)]


def text_turns(trace: Sequence[Mapping[str, Any]]) -> list[MessageEvent]:
    """The plain user and assistant messages of a trace: what the customer and the agent said to each other."""
    return [e for e in trace if is_message(e) and e.get("role") in ("user", "assistant")
            and e.get("content") and not e.get("tool_calls")]
