"""Compact tool schemas, for models whose context cannot hold a domain's full ones.

A domain's opening (instructions, policy, request) carries every tool schema, with
descriptions written for a reader who has never seen the backend: retail's 42 tools
alone take about as much room as its policy, more than a small model's whole context
once the completion budget is added. The compact form keeps what a call needs (names,
types, enums, which arguments are required) and the first sentence of each
description; it drops the rest of the prose, the schema bookkeeping (``additionalProperties``,
defaults, ``null`` alternatives of optional arguments, titles), the length and pattern bounds
the env checks itself, and an argument's description where its name already says it
(``ticket_id``: "The ticket number.").

It changes what the model reads, so a run with it is recorded as such and compared
only with runs that used it too.
"""

from __future__ import annotations

import copy
import re
from typing import Any

_SENTENCE_END = re.compile(r"[.!?](?=\s+[A-Z\"'(])")
_ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.", "approx.", "incl.", "no.")
_WORD = re.compile(r"[a-z0-9]+")
# words that say nothing an argument's name does not: articles, and the nouns every identifier is described with
_FILLER = frozenset({"the", "a", "an", "of", "for", "to", "in", "on", "as", "its", "this", "that", "is", "be", "given",
                     "number", "id", "identifier", "code", "customer", "customers", "s", "record", "value", "new"})
SAYS_IT_MAX_WORDS = 6  # a longer description says more than the name, whatever its words


def first_sentence(text: str) -> str:
    """The first sentence of the first paragraph (an abbreviation such as ``e.g.`` does not end a sentence)."""
    paragraph = text.strip().split("\n\n", 1)[0].strip()
    for end in _SENTENCE_END.finditer(paragraph):
        head = paragraph[:end.end()]
        if not head.lower().endswith(_ABBREVIATIONS):
            return head
    return paragraph


def lists_the_enum(description: str, values: list[Any]) -> bool:
    """Whether a description only repeats the allowed values (``low, normal, high or urgent.``), which the enum already gives."""
    allowed = set(_WORD.findall(" ".join(str(v).lower() for v in values))) | {"or", "and"}
    words = _WORD.findall(description.lower())
    return bool(words) and all(w in allowed for w in words)


def name_says_it(name: str, description: str) -> bool:
    """Whether an argument's name says all its (short) description does: every word left is a word of the name."""
    words = _WORD.findall(description.lower())
    if not words or len(words) > SAYS_IT_MAX_WORDS:
        return False
    named = set(_WORD.findall(name.lower().replace("_", " ")))
    return all(w in named or w in _FILLER for w in words)


def _compact_property(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    out = dict(schema)
    options = out.get("anyOf")
    if isinstance(options, list):
        kept = [o for o in options if not (isinstance(o, dict) and o.get("type") == "null")]
        if len(kept) == 1 and isinstance(kept[0], dict):  # "X or null" of an optional argument: X
            del out["anyOf"]
            out = {**kept[0], **out}
    # length and pattern bounds go too: the env enforces them and names them in its refusal, and a server that turns the
    # schema into a generation grammar (llama.cpp's) fails to build some of them (a regex pattern, a 4,000-character bound)
    for key in ("default", "title", "additionalProperties", "pattern", "maxLength", "minLength"):
        out.pop(key, None)
    description = out.pop("description", None)
    enum = out.get("enum")
    if isinstance(description, str) and not name_says_it(name, description) \
            and not (isinstance(enum, list) and lists_the_enum(description, enum)):
        out["description"] = first_sentence(description)
    if isinstance(out.get("items"), dict):
        out["items"] = _compact_property(name, out["items"])
    if isinstance(out.get("properties"), dict):
        out["properties"] = {k: _compact_property(k, v) for k, v in out["properties"].items()}
    return out


def compact_tool_schema(tool: dict[str, Any]) -> dict[str, Any]:
    """One OpenAI tool schema in its compact form (the original is left as it is)."""
    out = copy.deepcopy(tool)
    fn = out.get("function")
    if not isinstance(fn, dict):
        return out
    if isinstance(fn.get("description"), str):
        fn["description"] = first_sentence(fn["description"])
    params = fn.get("parameters")
    if isinstance(params, dict):
        params = {k: v for k, v in params.items() if k not in ("additionalProperties", "title")}
        if isinstance(params.get("properties"), dict):
            params["properties"] = {k: _compact_property(k, v) for k, v in params["properties"].items()}
        fn["parameters"] = params
    return out


def compact_tool_schemas(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every schema of a tool list in its compact form."""
    return [compact_tool_schema(t) for t in tools]


class CompactToolsAgent:
    """Shows an agent the compact form of the tools it is reset with; everything else passes through."""

    def __init__(self, agent: Any):
        self.agent = agent

    def __getattr__(self, name: str) -> Any:
        return getattr(self.agent, name)

    def reset(self, task: Any, observation: dict[str, Any]) -> None:
        self.agent.reset(task, {**observation, "tools": compact_tool_schemas(observation.get("tools") or [])})

    def act(self, observation: dict[str, Any]) -> Any:
        return self.agent.act(observation)
