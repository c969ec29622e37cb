"""One benchmark task, parsed and merged (``TBTask``), and the spellings of its golden calls, rubrics and sources.

Everything an episode needs is read here once; a malformed golden call, rubric or source is
refused with its location when the task is built, not mid-episode.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from ..contracts.spec import ToolCall, UserSpec
from .format import GOLDEN_REPLY, NAMESPACE, TBBenchFormatError
from .user_facts import user_spec

# Keys we accept for the same thing; the first one is the benchmark's own.
_NAME_KEYS = ("name", "tool", "tool_name")
_ARGUMENT_KEYS = ("arguments", "args", "parameters", "input")


@dataclass
class TBTask:
    """One benchmark task, parsed and merged: everything an episode needs, nothing executed."""

    file: str
    test: str
    scenario: str
    query: str
    user_context: Any
    system_prompt: str
    policy: str
    tools: list[str] | None  # the scenario's tool list; None: every tool the servers offer
    world_state: dict[str, dict[str, Any]]  # per server, init merged in, sources included
    domain: str = NAMESPACE
    split: str = "test"
    golden_reply: str = GOLDEN_REPLY
    builtin_tools: list[dict[str, Any]] = field(default_factory=list)  # answered by the agent loop, not a server
    user: UserSpec = field(init=False)

    def __post_init__(self) -> None:
        self.user = user_spec(self.query, self.user_context)

    @property
    def id(self) -> str:
        return f"{self.file}:{self.test}"

    @property
    def full_id(self) -> str:
        return f"{NAMESPACE}/{self.id}"

    @property
    def family(self) -> str:
        return self.scenario

    @property
    def servers(self) -> list[str]:
        return list(self.world_state)

    def server_config(self, server: str) -> dict[str, Any]:
        """What ``__reserved__init`` receives: the merged state without the KB ``sources``."""
        return {k: v for k, v in self.world_state[server].items() if k != "sources"}

    def sources(self) -> list[dict[str, str]]:
        """The knowledge-base documents of every server, as ``{"source", "text"}``."""
        out: list[dict[str, str]] = []
        for server, state in self.world_state.items():
            out += normalise_sources(state.get("sources"), f"{self.full_id}: world_state.{server}.sources")
        return out

    def golden_interactions(self, server: str) -> list[dict[str, Any]]:
        gtc = self.world_state[server].get("golden_test_case") or {}
        return list(gtc.get("tool_interactions") or []) if isinstance(gtc, dict) else []

    @property
    def golden(self) -> list[ToolCall]:
        """The golden tool calls of every server, in order: what the oracle agent replays."""
        calls = []
        for server in self.world_state:
            for i, item in enumerate(self.golden_interactions(server)):
                calls.append(golden_call(item, f"{self.full_id}: init.{server}.golden_test_case.tool_interactions[{i}]"))
        return calls

    def rubrics(self) -> list[str]:
        out: list[str] = []
        for server, state in self.world_state.items():
            for i, r in enumerate(state.get("rubrics_yesno") or []):
                out.append(rubric_text(r, f"{self.full_id}: init.{server}.rubrics_yesno[{i}]"))
        return out

    def content_key(self) -> str:
        payload = {"query": self.query, "user_context": self.user_context, "world_state": self.world_state,
                   "policy": self.policy, "system_prompt": self.system_prompt, "tools": self.tools}
        return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def golden_call(item: Any, where: str) -> ToolCall:
    """Accept the several spellings of a tool call in the benchmark files and refuse anything else with its location."""
    if isinstance(item, dict):
        name = next((item[k] for k in _NAME_KEYS if isinstance(item.get(k), str)), None)
        args: Any = next((item[k] for k in _ARGUMENT_KEYS if k in item), {})
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except json.JSONDecodeError:
                args = None
        if name and isinstance(args, dict | None):
            return ToolCall(name=name, arguments=args or {})
    raise TBBenchFormatError(f"{where}: a tool interaction needs a tool 'name' and an 'arguments' mapping, got {item!r}")


def rubric_text(item: Any, where: str) -> str:
    """A rubric question from either of the benchmark's spellings (a string or a mapping with ``question``)."""
    if isinstance(item, str) and item.strip():
        return item.strip()
    if isinstance(item, dict) and isinstance(item.get("question"), str):
        return item["question"].strip()
    raise TBBenchFormatError(f"{where}: a rubric must be a yes/no question (a string), got {item!r}")


def normalise_sources(sources: Any, where: str) -> list[dict[str, str]]:
    """KB documents given as a list of strings or mappings, or as a name -> text mapping."""
    if sources is None:
        return []
    if isinstance(sources, dict):
        return [{"source": str(k), "text": str(v)} for k, v in sources.items()]
    if not isinstance(sources, list):
        raise TBBenchFormatError(f"{where}: must be a list of documents, got {type(sources).__name__}")
    out = []
    for i, doc in enumerate(sources):
        if isinstance(doc, str):
            out.append({"source": f"source_{i}", "text": doc})
        elif isinstance(doc, dict) and "snippets" in doc:
            # the release's shape: {name, snippets: [text, ...]}; each snippet is a unit of its own for search
            extra = sorted(set(doc) - {"name", "snippets"})
            if extra:
                raise TBBenchFormatError(f"{where}[{i}].{extra[0]}: unknown field of a source document (known: name, snippets)")
            name, snippets = doc.get("name"), doc["snippets"]
            if not isinstance(name, str) or not name.strip():
                raise TBBenchFormatError(f"{where}[{i}].name: a source document needs its name (a string)")
            if not isinstance(snippets, list) or not all(isinstance(x, str) for x in snippets):
                raise TBBenchFormatError(f"{where}[{i}].snippets: must be a list of strings")
            out += [{"source": name, "text": x} for x in snippets]
        elif isinstance(doc, dict):
            text = next((doc[k] for k in ("text", "content", "body") if isinstance(doc.get(k), str)), None)
            if text is None:
                raise TBBenchFormatError(f"{where}[{i}]: a document needs its 'text'")
            name = next((str(doc[k]) for k in ("source", "name", "title", "id") if doc.get(k) is not None), f"source_{i}")
            out.append({"source": name, "text": text})
        else:
            raise TBBenchFormatError(f"{where}[{i}]: a document must be a string or a mapping")
    return out
