"""A benchmark task as a Gymnasium environment, with the reference harness's verdict.

``TBBenchEnv`` is the engine's ``ThinkingboxEnv`` with another episode backend:
the actions, observations, simulated user, ``<DONE>`` marker, user-turn cap and
``info`` fields are the engine's, so the eval harness, metrics and reports work
unchanged. What differs is where the state lives (one benchmark server process
per server per episode, their isolation model) and how the verdict is reached:
result hash equal to golden hash on every server, and every rubric question
answered yes by the judge about the last assistant message.

``search_policy`` is served here, over the scenario's ``sources``, with BM25:
the reference answers it from a Typesense server, which is not available
offline. The ``sources`` are therefore stripped from the server's init.
"""

from __future__ import annotations

import json
import logging
import threading
from typing import Any

import gymnasium as gym
from rank_bm25 import BM25Plus

from ..checks import CheckResult, Judge, assemble_verdict
from ..contracts.actions import ParsedCall
from ..contracts.events import is_tool_call
from ..contracts.records import FinishReason, Verdict
from ..envs.env import ThinkingboxEnv
from ..envs.spaces import AgentAction, ChatObservation
from ..toolkit.kb import tokenize
from ..toolkit.tools import ToolResult
from ..users import ScriptedUser, SimulatedUser
from .client import StdioServer, TBBenchServerError
from .clone import TBBench
from .format import RESERVED_PREFIX, SEARCH_TOOL
from .pool import bench_pool
from .task import TBTask

log = logging.getLogger(__name__)

DEFAULT_SEARCH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "what to look for in the policy documents"},
        "top_k": {"type": "integer", "minimum": 1, "maximum": 10, "description": "how many snippets to return (default 3)"},
    },
    "required": ["query"],
}


def is_search_tool(name: str) -> bool:
    """Policy search goes by ``search_policy`` or a namespaced ``<namespace>_search_policy`` (``knowledge_base_search_policy``)."""
    return name == SEARCH_TOOL or name.endswith("_" + SEARCH_TOOL)


# The servers declare no read-only hints, so whether a call can change state is read from the tool's name (and, for
# the multi-action ``*_api`` tools, from its ``action`` argument): the verb tokens of every tool name of the release.
READ_VERBS = frozenset({"get", "check", "search", "verify", "lookup", "validate", "list", "find", "view", "retrieve",
                        "read", "fetch", "query"})
WRITE_VERBS = frozenset({"create", "update", "add", "cancel", "delete", "modify", "process", "grant", "assign", "allocate",
                         "provision", "revoke", "retire", "send", "charge", "reship", "reschedule", "reset", "reinstate",
                         "schedule", "file", "generate", "execute", "escalate", "set", "remove", "apply", "submit", "approve",
                         "reject", "close", "transfer", "issue"})


def _reads_only(words: list[str]) -> bool:
    return bool(set(words) & READ_VERBS) and not set(words) & WRITE_VERBS


def call_writes(name: str, arguments: Any) -> bool:
    """Whether a call may change the server's state; anything not recognisably a read counts as a write.

    A tool named ``<system>_api`` (``workday_api``, ``box_api``) does what its
    ``action`` argument says, so such a call is a read when the action is
    (``get_folder_details``) and a write otherwise (``grant_folder_access``).
    """
    if is_search_tool(name):
        return False
    words = name.lower().split("_")
    if words[-1] == "api":
        action = arguments.get("action") if isinstance(arguments, dict) else None
        return not (isinstance(action, str) and _reads_only(action.lower().split("_")))
    return not _reads_only(words)


def in_band_error(content: Any) -> str | None:
    """The error kind of a failure a server reports as an ordinary result (``{"error": "...", "tool": ...}``), else None."""
    if not (isinstance(content, dict) and isinstance(content.get("error"), str) and set(content) <= {"error", "tool"}):
        return None
    text = content["error"].lower()
    if "unknown tool" in text:
        return "unknown_tool"
    if "validation" in text or "field required" in text or "input should be" in text:
        return "arguments"
    return "precondition"


class PolicySearch:
    """BM25 over a task's KB documents, answering in the reference's snippet format.

    BM25+ rather than Okapi: a scenario has only a handful of documents, and
    Okapi's inverse document frequency is zero or negative for a term found in
    half of them or more, which would leave every score at zero.
    """

    def __init__(self, documents: list[dict[str, str]]):
        self.documents = documents
        self._bm25 = BM25Plus([tokenize(d["text"]) for d in documents]) if documents else None

    def __call__(self, arguments: Any, name: str = SEARCH_TOOL) -> ToolResult:
        """One search call under the tool's own name; ``max_results`` (the servers' argument) or ``top_k``, 1 to 10."""
        args = arguments
        if isinstance(args, str):
            try:
                args = json.loads(args or "{}")
            except json.JSONDecodeError as exc:
                return ToolResult(name, {"error": f"tool '{name}': arguments are not valid JSON: {exc}"}, False, False, "arguments")
        query = args.get("query") if isinstance(args, dict) else None
        if not isinstance(query, str) or not query.strip():
            return ToolResult(name, {"error": f"tool '{name}': argument 'query' (a non-empty string) is required"},
                              False, False, "arguments")
        assert isinstance(args, dict)
        top_k = args.get("max_results", args.get("top_k"))
        top_k = 3 if top_k is None else top_k
        if not isinstance(top_k, int) or isinstance(top_k, bool) or not 1 <= top_k <= 10:
            return ToolResult(name, {"error": f"tool '{name}': argument 'max_results' must be an integer from 1 to 10"},
                              False, False, "arguments")
        return ToolResult(name, {"snippets": self.search(query, top_k)}, True, False)

    def search(self, query: str, top_k: int = 3) -> list[dict[str, Any]]:
        terms = tokenize(query)
        if self._bm25 is None or not terms:
            return []
        scores = self._bm25.get_scores(terms)
        ranked = sorted(range(len(self.documents)), key=lambda i: (-scores[i], i))
        out: list[dict[str, Any]] = []
        for i in ranked:
            if len(out) == top_k:
                break
            if not set(terms) & set(tokenize(self.documents[i]["text"])):
                continue
            # no vector index offline: vector_distance stays null, score is the BM25 score
            out.append({"source": self.documents[i]["source"], "score": round(float(scores[i]), 4),
                        "vector_distance": None, "text": self.documents[i]["text"]})
        return out


def parse_arguments(name: str, arguments: Any) -> dict[str, Any] | ToolResult:
    """A call's arguments as a JSON object, or the failed call that names why they are not one."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments or "{}")
        except json.JSONDecodeError as exc:
            return ToolResult(name, {"error": f"tool '{name}': arguments are not valid JSON: {exc}"}, False, False, "arguments")
    if not isinstance(arguments, dict):
        return ToolResult(name, {"error": f"tool '{name}': arguments must be a JSON object"}, False, False, "arguments")
    return arguments


def builtin_call(name: str, tool: dict[str, Any], arguments: Any) -> ToolResult:
    """An agent builtin tool, answered by the loop as the reference agent does: its required arguments checked, nothing run."""
    args = parse_arguments(name, arguments)
    if isinstance(args, ToolResult):
        return args
    missing = [k for k in tool["parameters"].get("required", []) if not isinstance(args.get(k), str) or not args[k].strip()]
    if missing:
        return ToolResult(name, {"error": f"tool '{name}': argument '{missing[0]}' (a non-empty string) is required"},
                          False, False, "arguments")
    return ToolResult(name, {"status": "reported", **args}, True, False)


def _reserved_ok(answer: Any) -> bool:
    if answer in ({}, None, "", "ok"):
        return True
    return isinstance(answer, dict) and str(answer.get("status", "")).lower() == "ok"


class ServerEpisode:
    """The episode backend: the task's server processes, started, initialised and torn down together."""

    def __init__(self, bench: TBBench, task: TBTask, routes: dict[str, str], search: PolicySearch, timeout: float,
                 search_names: frozenset[str] = frozenset({SEARCH_TOOL}), builtins: dict[str, dict[str, Any]] | None = None):
        self.bench, self.task, self.routes, self.search, self.timeout = bench, task, routes, search, timeout
        self.search_names = search_names
        self.builtins = builtins or {}
        self.servers: dict[str, StdioServer] = {}
        self.env: Any = None

    def start(self, env: Any) -> None:
        self.env = env
        try:
            for name in self.task.servers:
                server = bench_pool(self.bench, self.timeout).take(self.bench.servers[name])
                self.servers[name] = server
                answer, is_error = server.call("__reserved__init", {"config": self.task.server_config(name)})
                if is_error or not _reserved_ok(answer):
                    raise TBBenchServerError(f"{self.task.full_id}: server '{name}' refused __reserved__init: {answer!r}")
        except BaseException:
            self.close()
            raise

    def call(self, name: Any, arguments: Any) -> ToolResult:
        shown = name if isinstance(name, str) else str(name)
        if shown in self.builtins:
            return builtin_call(shown, self.builtins[shown], arguments)
        if shown in self.search_names:
            return self.search(arguments, shown)
        server = self.routes.get(shown)
        if server is None:
            known = sorted([*self.routes, *self.search_names, *self.builtins])
            return ToolResult(shown, {"error": f"unknown tool '{shown}'; available: {', '.join(known)}"},
                              False, False, "unknown_tool")
        arguments = parse_arguments(shown, arguments)
        if isinstance(arguments, ToolResult):
            return arguments
        content, is_error = self.servers[server].call(shown, arguments)
        if is_error:
            if not (isinstance(content, dict) and "error" in content):
                content = {"error": content}
            return ToolResult(shown, content, False, self._writes(shown, arguments), "internal")
        kind = in_band_error(content)  # the servers answer a failed tool with isError false and an error object
        return ToolResult(shown, content, kind is None, self._writes(shown, arguments), kind)

    def _writes(self, name: str, arguments: Any) -> bool:
        declared = self.env.read_only_tools if self.env is not None else set()
        return name not in declared and call_writes(name, arguments)

    def effects(self) -> dict[str, dict[str, Any]]:
        out = {}
        for name, server in self.servers.items():
            answer, is_error = server.call("__reserved__geteffects", {})
            if is_error or not isinstance(answer, dict):
                raise TBBenchServerError(f"{self.task.full_id}: server '{name}' failed __reserved__geteffects: {answer!r}")
            out[name] = answer
        return out

    def close(self) -> None:
        servers, self.servers = self.servers, {}
        for name, server in servers.items():
            try:
                server.call("__reserved__teardown", {})
            except Exception as exc:  # noqa: BLE001 - the process goes away regardless
                log.info("%s: teardown of server '%s' failed: %s", self.task.full_id, name, exc)
            bench_pool(self.bench, self.timeout).discard(server)  # never reused: the next episode takes a fresh one


_LISTING_LOCK = threading.Lock()


def list_server_tools(bench: TBBench, server: str, timeout: float) -> list[dict[str, Any]]:
    """The agent-facing tools of a server (reserved ones removed), listed once per clone and server."""
    with _LISTING_LOCK:
        return _list_server_tools(bench, server, timeout)


def _list_server_tools(bench: TBBench, server: str, timeout: float) -> list[dict[str, Any]]:
    if server not in bench.tool_listings:
        proc = StdioServer(bench.servers[server], timeout, cwd=str(bench.data_dir))
        try:
            tools = []
            for t in proc.tools:
                if t.name.startswith(RESERVED_PREFIX):
                    continue
                annotations = getattr(t, "annotations", None)
                tools.append({"name": t.name, "description": t.description or "",
                              "parameters": t.input_schema or {"type": "object", "properties": {}},
                              "read_only": bool(annotations is not None and annotations.read_only_hint)})
            bench.tool_listings[server] = tools
        except BaseException:
            proc.close(stop=True)
            raise
        # it has served no episode, so it becomes the first warm process of its command
        bench_pool(bench, timeout).offer(bench.servers[server], proc)
    return bench.tool_listings[server]


class TBBenchEnv(ThinkingboxEnv):
    """One benchmark task; ``reset()`` starts its server processes, ``close()`` ends them."""

    # A benchmark task and its server episode stand where the engine's TaskSpec and EpisodeState do: the base
    # class reads only the fields they share (ids, split, user), and every method that needs more is overridden here.
    task: TBTask  # type: ignore[assignment]
    state: ServerEpisode | None  # type: ignore[assignment]

    def __init__(self, task: TBTask, bench: TBBench, user: SimulatedUser | None = None, judge: Judge | None = None,
                 max_actions: int = 50, max_user_turns: int = 10, render_mode: str | None = None,
                 timeout: float = 60.0):
        # ThinkingboxEnv.__init__ builds a DuckDB runtime for a domain; here the state lives in the servers.
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}, got {render_mode!r}")
        if max_actions < 1 or max_user_turns < 0:
            raise ValueError("max_actions must be >= 1 and max_user_turns >= 0")
        self.task, self.bench, self.timeout = task, bench, timeout
        self.user = user if user is not None else ScriptedUser()
        self.judge = judge
        self.max_actions, self.max_user_turns, self.render_mode = max_actions, max_user_turns, render_mode
        self.routes: dict[str, str] = {}
        self.search_names: set[str] = set()
        self.builtins: dict[str, dict[str, Any]] = {}
        self.read_only_tools: set[str] = set()
        self.tool_schemas = self._agent_tools()
        pool = bench_pool(bench, timeout)
        for server in task.servers:  # the first reset then takes a process started while the caller set up
            pool.prewarm(bench.servers[server])
        self._tool_schemas_json = json.dumps(self.tool_schemas)
        self.search = PolicySearch(task.sources())
        self.observation_space = ChatObservation()
        self.action_space = AgentAction(self.tool_schemas)
        self.tool_backend: Any = None
        self.state = None
        self.messages, self.trace = [], []
        self._done, self._actions, self._user_turns, self._call_counter = True, 0, 0, 0
        self.final_info = None

    def _agent_tools(self) -> list[dict[str, Any]]:
        listed: dict[str, dict[str, Any]] = {}
        for server in self.task.servers:
            for t in list_server_tools(self.bench, server, self.timeout):
                search = is_search_tool(t["name"])
                if t["name"] in listed and not search:
                    raise TBBenchServerError(f"{self.task.full_id}: tool '{t['name']}' is offered by servers "
                                             f"'{self.routes[t['name']]}' and '{server}'")
                listed[t["name"]] = t
                if search:
                    self.search_names.add(t["name"])  # answered here, over the scenario's sources, with the server's schema
                else:
                    self.routes[t["name"]] = server
                if t["read_only"]:
                    self.read_only_tools.add(t["name"])
        wanted_search = [n for n in (self.task.tools or []) if is_search_tool(n) and n not in listed]
        if not self.search_names and not wanted_search and self.task.sources():
            wanted_search = [SEARCH_TOOL]
        for name in wanted_search:
            listed[name] = {"name": name, "description": "Search the company policy documents.", "parameters": DEFAULT_SEARCH_SCHEMA}
            self.search_names.add(name)
        for t in self.task.builtin_tools:
            if t["name"] in listed:
                raise TBBenchServerError(f"{self.task.full_id}: the agent's builtin tool '{t['name']}' is also offered by a server")
            listed[t["name"]] = t
            self.builtins[t["name"]] = t
        names = list(listed)
        if self.task.tools is not None:
            unknown = [n for n in self.task.tools if n not in listed]
            if unknown:
                raise TBBenchServerError(f"{self.task.full_id}: scenario '{self.task.scenario}' lists tool '{unknown[0]}', "
                                         f"which no server offers (offered: {', '.join(names)})")
            # the scenario's list selects among the servers' tools; the agent's builtin tools are always offered
            names = [n for n in names if n in self.task.tools or n in self.builtins]
            self.routes = {n: s for n, s in self.routes.items() if n in self.task.tools}
            self.search_names = {n for n in self.search_names if n in self.task.tools}
        return [{"type": "function", "function": {"name": n, "description": listed[n]["description"],
                                                  "parameters": listed[n]["parameters"]}} for n in names]

    def _run_calls(self, calls: tuple[ParsedCall, ...], content: str | None, out: list[dict[str, Any]]) -> FinishReason | None:
        """The engine's tool loop, where the agent's end-turn builtin tools (``InjectionAttackInToolResponse``) also end the episode.

        Calls after the first end-turn call of a message are not run, as the
        engine does for its own end tool.
        """
        for i, call in enumerate(calls):
            name = call.name
            if isinstance(name, str) and self.builtins.get(name, {}).get("is_end_turn"):
                finish = super()._run_calls(calls[:i + 1], content, out)
                last = next((e for e in reversed(self.trace) if is_tool_call(e)), None)
                if finish is None and last is not None and last.get("name") == name and last.get("ok"):
                    return FinishReason.END_TOOL
                return finish
        return super()._run_calls(calls, content, out)

    @property
    def policy_text(self) -> str:
        return self.task.policy

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        gym.Env.reset(self, seed=seed)
        if options:
            unknown = set(options) - {"max_actions"}
            if unknown:
                raise ValueError(f"unknown reset options {sorted(unknown)}; supported: max_actions")
            self.max_actions = int(options.get("max_actions", self.max_actions))
        if self.state is not None:
            self.state.close()
            self.state = None
        episode = ServerEpisode(self.bench, self.task, self.routes, self.search, self.timeout,
                                frozenset(self.search_names), self.builtins)
        episode.start(self)
        self.state = self.tool_backend = episode
        self.user.reset(self.task.user, seed)
        self.messages, self.trace = [], []
        self._done, self._actions, self._user_turns, self._call_counter = False, 0, 0, 0
        self.final_info = None
        out: list[dict[str, Any]] = []
        self._emit({"role": "system", "content": self.task.system_prompt}, out, "env")
        self._emit({"role": "system", "content": self.policy_text}, out, "env")
        self._emit({"role": "user", "content": self.task.query}, out, "task")
        obs = {"messages": [dict(m) for m in out], "tools": json.loads(self._tool_schemas_json)}
        return obs, {"task_id": self.task.full_id, "split": self.task.split, "family": self.task.family}

    def evaluate(self) -> dict[str, Any]:
        """The reference verdict as checks: one hash check per server, one rubric check per question."""
        if self.state is None:
            raise RuntimeError("call reset() before evaluate()")
        effects = self.state.effects()
        results: list[CheckResult] = []
        rubrics: list[str] = []
        for server, e in effects.items():
            got, want = e.get("result_db_hash"), e.get("golden_db_hash")
            same = isinstance(got, str) and bool(got) and got == want
            detail = "result hash equals golden hash" if same else f"result hash {got!r} != golden hash {want!r}"
            results.append(CheckResult(f"db_hash:{server}", "effect", same, detail))
            rubrics += [str(q) for q in (e.get("rubrics_yesno") or [])]
        if not any(e.get("rubrics_yesno") for e in effects.values()):
            rubrics = self.task.rubrics()
        final = self.final_message()
        for i, question in enumerate(rubrics):
            name = f"rubric:{i + 1}"
            if self.judge is None:
                results.append(CheckResult(name, "rubric", None, f"not evaluated: no judge configured ({question})"))
                continue
            try:
                if getattr(self.judge, "accepts_dialogue", False):  # fenced apart from the question (judge.py)
                    answer, reason = self.judge(question, f"ASSISTANT: {final}", dialogue=[{"role": "assistant", "content": final}])
                else:
                    answer, reason = self.judge(question, f"ASSISTANT: {final}")
                # an answer that did not parse is unjudged, never a yes
                results.append(CheckResult(name, "rubric", None if answer is None else bool(answer), f"{question} -> {reason}"))
            except Exception as exc:  # noqa: BLE001 - an unavailable judge leaves the check unevaluated
                results.append(CheckResult(name, "rubric", None, f"not evaluated: judge failed ({type(exc).__name__}: {exc})"))
        hashes = {s: e.get("result_db_hash") for s, e in effects.items()}
        return {
            "results": results,
            "diff": {s: e.get("diff") for s, e in effects.items()},
            "state_hash": next(iter(hashes.values())) if len(hashes) == 1 else json.dumps(hashes, sort_keys=True),
            "golden_has_effects": bool(self.task.golden),
        }

    def verdict(self, finish_reason: FinishReason | str = FinishReason.DONE_MARKER) -> Verdict:
        """The reference verdict, assembled into the same record as every other environment's."""
        ev = self.evaluate()
        return assemble_verdict(self.task.full_id, ev["results"], trace=self.trace, finish_reason=finish_reason,
                                golden_has_effects=ev["golden_has_effects"], diff=ev["diff"], state_hash=ev["state_hash"])

    def close(self) -> None:
        if self.state is not None:
            self.state.close()
            self.state = None
        self.tool_backend = None
        self._done = True
