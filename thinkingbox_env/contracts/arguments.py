"""A call's arguments as the agent sends them: a dict or JSON text, parsed once, bounded, and shown as text.

Every structural limit is checked before pydantic, a tool or the database sees the value: the
size of the text, the nesting depth (read without parsing, which could recurse without bound),
lone UTF-16 halves that UTF-8 cannot store, and numbers beyond what a double holds exactly.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

MAX_ARGUMENT_BYTES = 32_768
MAX_ARGUMENT_DEPTH = 16  # no tool takes anything nested this deep; bounds every recursive walk of agent input
INT64 = (-(2**63), 2**63 - 1)  # the backend's widest integer column
# beyond 2**53 a double no longer holds every whole number, let alone cents: no amount, count or
# rate a tool takes is that large, and such values (1e308) used to fail as "internal" errors when
# a tool rounded them to cents
MAX_FLOAT_MAGNITUDE = float(2**53)
_SURROGATE = re.compile("[\ud800-\udfff]")  # lone UTF-16 halves: JSON can spell them, UTF-8 cannot store them


def _bracket_depth(text: str) -> int:
    """The deepest bracket nesting of a JSON text, read without parsing it (which could recurse without bound)."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def _json_problem(value: Any, path: str, depth: int) -> str | None:
    """The first thing in ``value`` that is not a plain, bounded JSON value, described with its path; None if all is well."""
    where = f"argument '{path}'" if path else "arguments"
    if depth > MAX_ARGUMENT_DEPTH:
        return f"{where}: nested more than {MAX_ARGUMENT_DEPTH} levels deep"
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, str):
        if "\x00" in value:
            return f"{where}: contains a NUL character"
        if _SURROGATE.search(value):
            return f"{where}: contains a lone surrogate (\\ud800-\\udfff), which is not a character text can store"
        return None
    if isinstance(value, int):
        if not INT64[0] <= value <= INT64[1]:
            return f"{where}: integer out of the 64-bit range"
        if abs(value) > MAX_FLOAT_MAGNITUDE:
            return f"{where}: {value} is beyond ±2^53, larger than any amount or count the backend stores"
        return None
    if isinstance(value, float):
        if not math.isfinite(value):
            return f"{where}: {value} is not a finite number"
        if abs(value) > MAX_FLOAT_MAGNITUDE:
            return f"{where}: {value!r} is beyond ±2^53, larger than any amount or count the backend stores"
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"{where}: keys must be strings, got {type(key).__name__}"
            if "\x00" in key:
                return f"{where}: a key contains a NUL character"
            if _SURROGATE.search(key):
                return f"{where}: a key contains a lone surrogate"
            problem = _json_problem(item, f"{path}.{key}" if path else key, depth + 1)
            if problem is not None:
                return problem
        return None
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            problem = _json_problem(item, f"{path}[{i}]" if path else f"[{i}]", depth + 1)
            if problem is not None:
                return problem
        return None
    return f"{where}: {type(value).__name__} is not a JSON value"


def parse_arguments(raw: Any) -> tuple[dict[str, Any] | None, str | None]:
    """Arguments arrive as a dict or a JSON string; return (arguments, error).

    Every structural problem an agent can produce is caught here, before pydantic
    or the backend sees the value, so it comes back as an argument error naming
    where it is rather than as an exception (deep nesting used to escape as
    ``RecursionError``) or as an "internal" error from the database driver.
    """
    if raw is None:
        return {}, None
    if isinstance(raw, str):
        if len(raw.encode("utf-8", "replace")) > MAX_ARGUMENT_BYTES:
            return None, f"arguments are too large ({len(raw)} characters; the limit is {MAX_ARGUMENT_BYTES} bytes)"
        if not raw.strip():
            return {}, None
        if _bracket_depth(raw) > MAX_ARGUMENT_DEPTH:
            return None, f"arguments are nested more than {MAX_ARGUMENT_DEPTH} levels deep"
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as exc:
            return None, f"arguments are not valid JSON: {exc.msg} at position {exc.pos}"
        except (ValueError, RecursionError) as exc:  # e.g. an integer literal too long to convert
            return None, f"arguments are not valid JSON: {exc}"
    if not isinstance(raw, dict):
        return None, f"arguments must be a JSON object, got {type(raw).__name__}"
    problem = _json_problem(raw, "", 0)
    if problem is not None:
        return None, problem
    size = len(json.dumps(raw))
    if size > MAX_ARGUMENT_BYTES:
        return None, f"arguments are too large ({size} bytes; the limit is {MAX_ARGUMENT_BYTES} bytes)"
    return raw, None


def safe_repr(value: Any, limit: int = 100) -> str:
    """``repr`` for agent-supplied values, which may be nested too deep to repr at all."""
    try:
        return repr(value)[:limit]
    except (RecursionError, ValueError):  # ValueError: an int too long to print
        return f"<{type(value).__name__}>"


def arguments_text(arguments: Any) -> str:
    """The arguments as the agent's message shows them: its own string, or JSON; never raises."""
    if isinstance(arguments, str):
        return arguments
    try:
        return json.dumps(arguments if arguments is not None else {}, default=str)
    except (RecursionError, ValueError, TypeError):
        return safe_repr(arguments, MAX_ARGUMENT_BYTES)
