"""One canonical form for whatever an agent sends: every reader sees parsed tool calls.

An agent's turn reaches ``step()`` in many shapes: a message string, a dict call whose
``arguments`` are a dict or the JSON text a model wrote, an OpenAI assistant message with
one or several calls, raw model text with Hermes/Qwen ``<tool_call>`` blocks (the SkyRL and
verifiers adapters, a local checkpoint), or a call that came over MCP. If each reader
parsed these itself, the same trajectory would be graded differently depending on how it
arrived (a check reading ``arguments`` as a dict skips the JSON text a real model sends).
So :func:`parse_action` turns every shape into one :class:`ParsedAction` before anything
reads it: the tools run on its parsed arguments, the trace records them, and checks, rows,
adapters and transcripts read only that. Arguments that do not parse keep the model's text
and the reason, so the failed call is recorded and graded as the model's error.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal

from .arguments import arguments_text, parse_arguments, safe_repr
from .protocol import DONE_MARKER

__all__ = ["MAX_MESSAGE_CHARS", "ParsedAction", "ParsedCall", "hermes_calls", "parse_action", "valid_text"]

MAX_MESSAGE_CHARS = 20_000  # a customer-facing message; a reply of a real agent is a few hundred characters
_HERMES_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.S)
_UNCLOSED_HERMES_CALL = re.compile(r"<tool_call>\s*(\{.*)\Z", re.S)  # a block cut by the token cap


@dataclass(frozen=True)
class ParsedCall:
    """One tool call: its name, its arguments parsed (``None`` when they are not a JSON object) and why not.

    ``raw_arguments`` is what the agent sent, kept for the message it sees echoed and for
    the trace of a call whose arguments failed to parse.
    """

    id: str | None
    name: Any
    arguments: dict[str, Any] | None
    raw_arguments: Any
    error: str | None = None

    @property
    def trace_arguments(self) -> Any:
        """What the trace records: the parsed arguments, or the model's own text when they did not parse."""
        if self.arguments is not None:
            return self.arguments
        return self.raw_arguments if self.raw_arguments is None else arguments_text(self.raw_arguments)

    @property
    def display_name(self) -> str:
        return self.name if isinstance(self.name, str) else safe_repr(self.name)


@dataclass(frozen=True)
class ParsedAction:
    """An agent turn in canonical form: a message, tool calls (with optional text), or an action that is neither."""

    kind: Literal["message", "calls", "invalid"]
    content: str | None = None
    calls: tuple[ParsedCall, ...] = ()
    error: str | None = None


def parse_call(call_id: Any, name: Any, raw_arguments: Any) -> ParsedCall:
    """A call whose arguments are parsed once, here, whatever form they came in."""
    arguments, error = parse_arguments(raw_arguments)
    return ParsedCall(_call_id(call_id), name, arguments, raw_arguments, error)


def _call_id(value: Any) -> str | None:
    """The agent's id for a call when it is a usable one (a non-empty string); the env numbers the rest."""
    return value if isinstance(value, str) and value else None


def hermes_calls(text: str) -> tuple[str, list[tuple[Any, Any]]]:
    """The text outside ``<tool_call>`` blocks and each block's ``(name, arguments)``.

    A block that is not a JSON object with a ``name`` keeps its text as the arguments and no
    name, so the env records it as a malformed call (the model's error) instead of dropping it.
    A block the token cap cut off (an opening tag with no closing one) counts the same way.
    """
    calls: list[tuple[Any, Any]] = []
    blocks = _HERMES_CALL.findall(text)
    rest = _HERMES_CALL.sub("", text)
    cut = _UNCLOSED_HERMES_CALL.search(rest)
    if cut:
        blocks.append(cut.group(1))
        rest = rest[:cut.start()]
    for block in blocks:
        try:
            data = json.loads(block)
        except (json.JSONDecodeError, RecursionError, ValueError):
            calls.append((None, block))
            continue
        if isinstance(data, dict) and isinstance(data.get("name"), str):
            calls.append((data["name"], data.get("arguments", data.get("parameters", {}))))
        else:
            calls.append((None, block))
    return rest.strip(), calls


def valid_text(text: str) -> str:
    """``text`` as valid Unicode: a surrogate pair written as two code points joined, a lone surrogate as U+FFFD.

    A lone surrogate cannot be encoded (UTF-8 refuses it), so every reader downstream (the
    lemma lookup, a run file, a judge request) would raise on it; the agent's text is made
    valid once, here, and everything else reads valid text.
    """
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def parse_action(action: Any) -> ParsedAction:
    """The canonical form of ``action``; never raises, whatever the agent sent."""
    parsed = _parse(action)
    if parsed.content is not None and len(parsed.content) > MAX_MESSAGE_CHARS:
        # grading reads every word of every message: an unbounded one would hold the verdict for minutes
        return ParsedAction("invalid", error=f"the message is too long ({len(parsed.content):,} characters; "
                                             f"the limit is {MAX_MESSAGE_CHARS:,})")
    if parsed.content is None or parsed.content.isascii():
        return parsed
    return ParsedAction(parsed.kind, valid_text(parsed.content), parsed.calls, parsed.error)


def _parse(action: Any) -> ParsedAction:
    if isinstance(action, str):
        if "<tool_call>" in action and DONE_MARKER not in action:  # a closing is a message, whatever it quotes
            content, found = hermes_calls(action)
            if found:
                return ParsedAction("calls", content or None, tuple(parse_call(None, n, a) for n, a in found))
        return ParsedAction("message", action)
    if isinstance(action, dict) and "name" in action:
        return ParsedAction("calls", None, (parse_call(action.get("id"), action.get("name"), action.get("arguments")),))
    if isinstance(action, dict) and action.get("role") == "assistant":
        return _assistant_message(action)
    return ParsedAction("invalid", error=f"malformed action of type {type(action).__name__}: expected a message string, "
                                          "a tool call {\"name\", \"arguments\"}, or an assistant message with tool_calls")


def _assistant_message(action: dict[str, Any]) -> ParsedAction:
    calls = action.get("tool_calls") or []
    content = action.get("content")
    if not calls:
        if isinstance(content, str):
            return _parse(content)
        return ParsedAction("invalid", error="an assistant message needs text content or tool_calls")
    if not isinstance(calls, list):
        return ParsedAction("invalid", error="tool_calls must be a list")
    parsed = []
    for c in calls:
        fn = c.get("function") if isinstance(c, dict) else None
        if not isinstance(fn, dict):  # the name may also sit on the call itself (some clients flatten it)
            fn = c if isinstance(c, dict) and "name" in c else None
        if fn is None:
            parsed.append(ParsedCall(_call_id(c.get("id")) if isinstance(c, dict) else None, None, None, None,
                                     "a tool call needs a function with a name and arguments"))
        else:
            parsed.append(parse_call(c.get("id"), fn.get("name"), fn.get("arguments")))
    return ParsedAction("calls", content if isinstance(content, str) else None, tuple(parsed))
