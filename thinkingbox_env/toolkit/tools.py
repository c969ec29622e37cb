"""Typed Python functions as agent tools, and the error contract around calling them.

One definition serves every consumer: the pydantic model built from the function
signature validates arguments, and its JSON schema is what the OpenAI function
list, the MCP server and the action-space sampler all read. A tool call never
raises out of ``Toolbox.call``: bad arguments, failed preconditions and bugs all
come back as ``{"error": ...}`` observations, and a write tool that fails part-way
is rolled back so the state is exactly as before the call.
"""

from __future__ import annotations

import decimal
import difflib
import inspect
import json
import logging
import marshal
import re
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Annotated, Any

import duckdb
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, WithJsonSchema, create_model

from ..contracts.arguments import parse_arguments, safe_repr
from ..contracts.protocol import END_TOOL_NAME
from ..state import FastPathMismatch, ToolContext
from ..state.diff import jsonable

log = logging.getLogger(__name__)



_ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
EARLIEST_DATE = date(1900, 1, 1)  # no record of these systems holds a day outside this range
LATEST_DATE = date(2100, 12, 31)


def _iso_date(value: Any) -> date:
    day: date | None = None
    if isinstance(value, date) and not isinstance(value, datetime):
        day = value
    elif isinstance(value, str) and _ISO_DAY.fullmatch(value.strip()):  # fromisoformat alone also takes 20260302 and 2026-W10-1
        try:
            day = date.fromisoformat(value.strip())
        except ValueError:
            pass
    if day is None:
        raise ValueError(f"expected a date written YYYY-MM-DD, got {value!r}")
    if not EARLIEST_DATE <= day <= LATEST_DATE:
        raise ValueError(f"{day.isoformat()} is outside the range a record can hold ({EARLIEST_DATE} to {LATEST_DATE})")
    return day


IsoDate = Annotated[date, BeforeValidator(_iso_date), WithJsonSchema({"type": "string", "format": "date"})]
"""A calendar-day tool argument: the agent sees ``format: date`` in the schema and the tool receives a ``date``.

Only ``YYYY-MM-DD`` text is accepted (pydantic's own ``date`` would also take a
number as a Unix timestamp, which no customer means)."""


class _FreeTextMarker:
    """Marks a tool argument whose value is the agent's own words (a subject, a note), not a decided value."""

    def __repr__(self) -> str:
        return "FreeText"


FREE_TEXT = _FreeTextMarker()

FreeText = Annotated[str, FREE_TEXT]
"""A free-text tool argument: no policy rule decides its value, so golden writes need no source for it
and state checks compare it only where a task says so."""


MAX_TEXT_ARGUMENT_CHARS = 500  # an id, a name, a status, a query: the longest in any golden call is 61
MAX_FREE_TEXT_CHARS = 4_000   # a note or a reason in the agent's own words: the longest in any golden call is 217


def _default_text_limit(annotation: Any) -> int | None:
    """The length bound a text argument gets when its declaration states none; None for other types or a declared bound."""
    args = typing.get_args(annotation) if typing.get_origin(annotation) is Annotated else ()
    base, metadata = (args[0], list(args[1:])) if args else (annotation, [])
    if any(getattr(m, "max_length", None) is not None for m in metadata):
        return None
    members = [a for a in typing.get_args(base) if a is not type(None)] if typing.get_origin(base) in (typing.Union, types.UnionType) else [base]
    if len(members) != 1:
        return None
    member = members[0]
    if typing.get_origin(member) is Annotated:
        inner = typing.get_args(member)
        if any(getattr(m, "max_length", None) is not None for m in inner[1:]):
            return None
        member = inner[0]
    if member is not str:
        return None
    return MAX_FREE_TEXT_CHARS if _has_marker(annotation, metadata) else MAX_TEXT_ARGUMENT_CHARS


def _has_marker(annotation: Any, metadata: list[Any]) -> bool:
    if any(m is FREE_TEXT for m in metadata):
        return True
    if typing.get_origin(annotation) is Annotated:
        return any(m is FREE_TEXT for m in typing.get_args(annotation)[1:])
    return any(_has_marker(a, []) for a in typing.get_args(annotation))


def plain_annotation(annotation: Any) -> Any:
    """A tool argument's type with calendar days as text (``date | None`` becomes ``str | None``).

    For consumers that derive their own schema from type hints (transformers'
    ``get_json_schema``, used by TRL), which know ``str`` but not ``date``.
    """
    if annotation is date:
        return str
    origin = typing.get_origin(annotation)
    if origin is Annotated:  # ``IsoDate | None`` keeps its Annotated form inside the union: look through it
        return plain_annotation(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return typing.Union[tuple(plain_annotation(a) for a in typing.get_args(annotation))]  # noqa: UP007 - built from a tuple
    if origin in (list, tuple, dict, set, frozenset):
        return origin[tuple(plain_annotation(a) for a in typing.get_args(annotation))]
    return annotation


class ToolError(Exception):
    """Raised by a tool when a domain precondition fails; the agent sees ``{"error": message}``."""


@dataclass
class ToolResult:
    """A tool call's outcome; errors are results with a kind, so the agent can recover and the trace can count them."""
    name: str
    content: Any  # JSON-safe value
    ok: bool
    writes: bool
    error_kind: str | None = None  # "unknown_tool" | "arguments" | "precondition" | "transient" | "internal"

    def text(self) -> str:
        return json.dumps(self.content, ensure_ascii=False, sort_keys=False, default=str)


def _arg_docs(doc: str) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into its summary and its ``Args:`` entries."""
    doc = inspect.cleandoc(doc or "")
    summary_lines, args, current, in_args = [], {}, None, False
    for line in doc.splitlines():
        if re.match(r"^(Args|Arguments|Parameters):\s*$", line.strip()):
            in_args = True
            continue
        if in_args:
            if re.match(r"^(Returns|Raises|Yields|Examples?|Notes?):\s*$", line.strip()):
                in_args = False
                continue
            m = re.match(r"^\s+(\w+)(?:\s*\([^)]*\))?:\s*(.*)$", line)
            if m:
                current = m.group(1)
                args[current] = m.group(2).strip()
            elif current and line.strip():
                args[current] += " " + line.strip()
        else:
            summary_lines.append(line)
    return "\n".join(summary_lines).strip(), args


def _clean_schema(node: Any, names: bool = False) -> Any:
    """Drop pydantic's titles so the schema reads like a hand-written function schema.

    ``names``: ``node`` maps argument names to their schemas (a ``properties`` object), where a
    key ``title`` is an argument called title, never pydantic's bookkeeping.
    """
    if isinstance(node, dict):
        return {k: _clean_schema(v, names=not names and k == "properties") for k, v in node.items() if names or k != "title"}
    if isinstance(node, list):
        return [_clean_schema(v) for v in node]
    return node


@dataclass
class Tool:
    """A domain function whose schema and argument model both come from its signature, so the two cannot disagree."""
    name: str
    description: str
    fn: Callable[..., Any]
    writes: bool
    model: type[BaseModel]
    ends_episode: bool = False
    param_docs: dict[str, str] = field(default_factory=dict)
    identity: str | None = None  # the argument naming the record whose secret this tool checks (a server limits guesses on it)
    _parameters_json: str | None = field(default=None, repr=False, compare=False)

    @property
    def parameters(self) -> dict[str, Any]:
        """The arguments' JSON schema (a fresh copy: callers may edit it)."""
        if self._parameters_json is None:  # pydantic rebuilds a schema from scratch each time: keep it
            schema = _clean_schema(self.model.model_json_schema())
            schema.setdefault("properties", {})
            schema["additionalProperties"] = False
            self._parameters_json = json.dumps(schema)
        return json.loads(self._parameters_json)

    @property
    def free_text_arguments(self) -> frozenset[str]:
        """Arguments typed :data:`FreeText`: the agent's own words, which no rule determines."""
        return frozenset(n for n, f in self.model.model_fields.items() if _has_marker(f.annotation, list(f.metadata)))

    def openai_schema(self) -> dict[str, Any]:
        return {"type": "function", "function": {"name": self.name, "description": self.description, "parameters": self.parameters}}

    def mcp_schema(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "inputSchema": self.parameters}

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        parsed = self.model.model_validate(arguments)
        return {k: getattr(parsed, k) for k in type(parsed).model_fields}


def tool(fn: Callable[..., Any] | None = None, *, writes: bool = False, name: str | None = None,
         identity: str | None = None) -> Any:
    """Turn ``def f(db, arg: type = default, ...)`` into a :class:`Tool`.

    The first parameter receives the episode state; the others become the tool's
    arguments, typed by their annotations and described by the docstring's
    ``Args:`` section. ``identity`` marks a tool that checks a secret (factors it
    reports as ``"match"`` / ``"no match"``) and names the argument holding the
    record checked: an MCP server counts its failed checks across sessions.
    """

    def wrap(func: Callable[..., Any]) -> Tool:
        summary, docs = _arg_docs(func.__doc__ or "")
        if not summary:
            raise TypeError(f"tool '{func.__name__}' needs a docstring: it is the description the agent reads")
        sig = inspect.signature(func)
        hints = typing.get_type_hints(func, include_extras=True)  # keep Annotated limits: the agent reads them in the schema
        params = list(sig.parameters.values())
        if not params:
            raise TypeError(f"tool '{func.__name__}' must take the episode state as its first parameter")
        fields: dict[str, Any] = {}
        for p in params[1:]:
            if p.name not in hints:
                raise TypeError(f"tool '{func.__name__}': parameter '{p.name}' has no type annotation")
            default = ... if p.default is inspect.Parameter.empty else p.default
            # the docstring's description joins any Field(...) limits of an Annotated hint rather than replacing them;
            # text without a declared bound gets the contract's (a 30,000-character "id" is refused by name, not stored)
            limit = _default_text_limit(hints[p.name])
            fields[p.name] = (Annotated[hints[p.name], Field(description=docs.get(p.name), max_length=limit)], default)
        model = create_model(
            f"{func.__name__}_arguments",
            __config__=ConfigDict(extra="forbid"),
            **fields,
        )
        if identity is not None and identity not in fields:
            raise TypeError(f"tool '{func.__name__}': identity argument '{identity}' is not one of its parameters")
        return Tool(name or func.__name__, summary, func, writes, model, param_docs=docs, identity=identity)

    return wrap(fn) if fn is not None else wrap


def _end_conversation(db: ToolContext) -> dict[str, Any]:
    """End the conversation with the customer. Call it only when the request is fully handled."""
    return {"ended": True}


END_TOOL = tool(_end_conversation, name=END_TOOL_NAME)
END_TOOL.ends_episode = True


def describe_validation_error(tool_name: str, exc: ValidationError) -> str:
    """Turn pydantic's errors into one sentence an agent can act on (which argument, what was wrong)."""
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"])
        if err["type"] == "extra_forbidden":
            parts.append(f"unexpected argument '{loc}'")
        elif err["type"] == "missing":
            parts.append(f"missing required argument '{loc}'")
        else:
            parts.append(f"argument '{loc}': {err['msg']}")
    return f"invalid arguments for tool '{tool_name}': " + "; ".join(parts)


class Toolbox:
    """A domain's tools plus the built-in end tool, and the one place tool calls are run."""

    def __init__(self, tools: list[Tool]):
        self.tools: dict[str, Tool] = {}
        self._shared_schemas: tuple[tuple[int, ...], list[dict[str, Any]], bytes] | None = None
        for t in [*tools, END_TOOL]:
            if t.name in self.tools:
                raise ValueError(f"duplicate tool name '{t.name}'")
            self.tools[t.name] = t

    @classmethod
    def from_module(cls, module: Any) -> Toolbox:
        found = [v for v in vars(module).values() if isinstance(v, Tool) and v is not END_TOOL]
        order = getattr(module, "TOOLS", None)
        if order is not None:
            found = list(order)
        return cls(found)

    def __contains__(self, name: str) -> bool:
        return name in self.tools

    def __getitem__(self, name: str) -> Tool:
        return self.tools[name]

    def openai_schemas(self) -> list[dict[str, Any]]:
        return [t.openai_schema() for t in self.tools.values()]

    def shared_openai_schemas(self) -> tuple[list[dict[str, Any]], bytes]:
        """The schemas, built once per set of tools and shared by every env (read only), and their copy as ``marshal`` bytes.

        An observation gets its own copy of the schemas at every reset, so that a caller editing it
        edits nothing shared; ``marshal.loads`` makes that copy in a third of ``json.loads``'s time.
        The bytes never leave the process (marshal's format is the interpreter's own).
        """
        key = tuple(id(t) for t in self.tools.values())
        cached = self._shared_schemas
        if cached is None or cached[0] != key:
            schemas = self.openai_schemas()
            cached = (key, schemas, marshal.dumps(json.loads(json.dumps(schemas))))  # plain JSON values only
            self._shared_schemas = cached
        return cached[1], cached[2]

    def parse_arguments(self, raw: Any) -> tuple[dict[str, Any] | None, str | None]:
        """Arguments arrive as a dict or a JSON string; return (arguments, error) (see :func:`parse_arguments`)."""
        return parse_arguments(raw)

    def call(self, state: Any, name: Any, raw_arguments: Any) -> ToolResult:
        if not isinstance(name, str) or name not in self.tools:
            shown = name if isinstance(name, str) else safe_repr(name)
            close = difflib.get_close_matches(name, list(self.tools), n=3) if isinstance(name, str) else []
            hint = f"; did you mean {', '.join(close)}?" if close else f"; available tools: {', '.join(self.tools)}"
            return ToolResult(shown[:100], {"error": f"unknown tool '{shown[:100]}'{hint}"}, False, False, "unknown_tool")
        t = self.tools[name]
        arguments, err = self.parse_arguments(raw_arguments)
        if err is not None:
            return ToolResult(name, {"error": f"tool '{name}': {err}"}, False, t.writes, "arguments")
        try:
            kwargs = t.validate(arguments)  # type: ignore[arg-type]
        except ValidationError as exc:
            return ToolResult(name, {"error": describe_validation_error(name, exc)}, False, t.writes, "arguments")
        plan = getattr(state, "faults", None)  # the task's scheduled transient failures, declared on the state (EpisodeState.faults)
        if plan is not None:
            scheduled = plan.on_call(name)
            if scheduled is not None:
                return ToolResult(name, {"error": scheduled}, False, t.writes, "transient")
        saved = state.begin() if t.writes else None
        try:
            value = t.fn(state, **kwargs)
        except ToolError as exc:
            if t.writes:
                state.rollback(saved)
            return ToolResult(name, {"error": str(exc)}, False, t.writes, "precondition")
        except duckdb.ConstraintException as exc:
            if t.writes:
                state.rollback(saved)
            return ToolResult(name, {"error": f"tool '{name}' was refused by the backend: {exc}"}, False, t.writes, "precondition")
        except (duckdb.ConversionException, duckdb.OutOfRangeException, OverflowError, decimal.InvalidOperation) as exc:
            # a value that passed its type but does not fit the backend's column: the agent's argument, not a bug
            if t.writes:
                state.rollback(saved)
            reason = str(exc).splitlines()[0][:200]
            return ToolResult(name, {"error": f"tool '{name}': an argument value does not fit the backend ({reason})"}, False, t.writes, "arguments")
        except FastPathMismatch:
            raise  # verify mode (THINKINGBOX_STATE_VERIFY) exists to stop on an engine bug, not to hand it to the agent
        except Exception as exc:  # noqa: BLE001 - the contract is that step() never raises
            log.exception("tool %s failed", name)
            if t.writes:
                state.rollback(saved)
            return ToolResult(name, {"error": f"internal error in tool '{name}' ({type(exc).__name__})"}, False, t.writes, "internal")
        if t.writes:
            state.commit()
        return ToolResult(name, jsonable(value), True, t.writes)


def tool_function(tool: Tool, run: Callable[[Any, str, dict[str, Any]], str]) -> Callable[..., str]:
    """A method whose signature and docstring are the tool's, for schema extraction from Python functions.

    Trainers that expose methods as tools (TRL) derive the schema the model sees from
    the signature and the Google-style docstring; building both from the tool's own
    definition keeps that schema equal to the env's. ``run(self, name, arguments)``
    does the call.
    """
    name = tool.name

    def method(self: Any, **kwargs: Any) -> str:
        return run(self, name, kwargs)

    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, Any] = {}
    for field_name, model_field in tool.model.model_fields.items():
        default = inspect.Parameter.empty if model_field.is_required() else model_field.default
        annotation = plain_annotation(model_field.annotation)  # transformers' schema extraction knows no date type
        params.append(inspect.Parameter(field_name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation))
        annotations[field_name] = annotation
    annotations["return"] = str
    method.__signature__ = inspect.Signature(params, return_annotation=str)  # type: ignore[attr-defined]
    method.__annotations__ = annotations
    method.__name__ = method.__qualname__ = name
    args = "".join(f"    {k}: {tool.param_docs.get(k) or k}\n" for k in tool.model.model_fields)
    method.__doc__ = f"{tool.description}\n\nArgs:\n{args}\nReturns:\n    The tool result as JSON text." if args else (
        f"{tool.description}\n\nReturns:\n    The tool result as JSON text."
    )
    return method
