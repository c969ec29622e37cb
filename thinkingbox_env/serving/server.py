"""Serve a task's tools over the Model Context Protocol, with the operator surface kept apart.

The agent side is a plain MCP server: tool names, descriptions and input schemas
come from the same ``@tool`` definitions the environment uses, and a call runs
through the same ``Toolbox.call`` error contract. Over stdio there is one episode
per process; over streamable HTTP every MCP session gets its own isolated episode,
bound to the session id the server issued at the handshake and dropped after a
configurable idle time (sooner if it has made no tool call yet, so bare handshakes
cannot hold the slots). A session belongs to the client that opened it (its agent token;
the connection peer only on a token-less loopback server): another client naming its id is
answered as if the id were unknown. Each client may hold at
most a share of the slots, tool calls of different sessions run concurrently on
worker threads while one session's calls run one at a time in arrival order, and
failed identity checks are counted across sessions (:mod:`.limits`). A request that names an id the server did not issue, or
one whose episode has expired or been closed, is refused with a message saying
so: an episode is never replaced behind a client's back, since an agent that went
on working on a fresh state would be graded on writes it never made. Requests of
the stateless (2026-era) protocol carry no server-issued id, so they are refused
unless the server runs in single-episode mode, where every client shares the one
episode as over stdio.

The operator side (reset an episode, read its diff, compute its verdict) is a
small HTTP API under ``/operator``, guarded by its own bearer token. It is never
listed as an MCP tool and no agent-facing tool can reach it, so the agent cannot
read the golden outcome or the checks. Over stdio the operator API listens on a
Unix socket or a loopback port of the operator's choosing.
"""

from __future__ import annotations

import hmac
import json
import logging
import os
import secrets
import sys
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server
from mcp.shared.exceptions import MCPError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..actions import valid_text
from ..checks import grade, interleave, state_outcome
from ..domain import Domain, load_domain
from ..records import FinishReason
from ..registry import UnknownTaskError, list_tasks, load_task
from ..spec import TaskSpec
from ..state import EpisodeState
from ..task_cache import runtime_for
from ..tools import ToolResult
from ..version import __version__
from .limits import IdentityGuard, check_failed

log = logging.getLogger(__name__)

STDIO_SESSION = "default"
ERROR_KIND_META = "thinkingbox/error_kind"
WRITES_META = "thinkingbox/writes"
TOKEN_VARIABLE = "THINKINGBOX_MCP_TOKEN"
OPERATOR_TOKEN_VARIABLE = "THINKINGBOX_OPERATOR_TOKEN"
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
MIN_TOKEN_LENGTH = 16
DEFAULT_MAX_EPISODES = 64  # each live episode holds its own state (several MB): the cap bounds the server's memory
DEFAULT_FIRST_CALL_TIMEOUT = 120.0  # a session with no tool call yet: long enough for a model's first turn, short for a squatter
DEFAULT_WORKERS = 16  # threads running tool calls; DuckDB releases the GIL, so reads of different episodes overlap
MAX_SEED = 2**32 - 1
FINISH_REASONS = tuple(r.value for r in FinishReason)
STATELESS_REFUSED = (
    "this server binds every episode to an MCP session: requests of the stateless protocol era carry no "
    "server-issued session id and are refused; connect with the initialize handshake (mode='legacy' or "
    "'auto' in the Python client), or start the server with --single-episode to share one episode"
)


class OperatorError(ValueError):
    """A bad operator request; answered with HTTP 400 and the message."""


class SessionError(LookupError):
    """A request naming no live episode (never issued, expired or closed); answered with 404 and the reason."""


class CapacityError(RuntimeError):
    """The server already holds its maximum number of live episodes; answered with 503."""


class ShareError(CapacityError):
    """This client already holds its share of the episodes; answered with 429."""


def default_share(max_episodes: int) -> int:
    """Episodes one client may hold when not told: half the slots (at least one), so one client cannot take them all."""
    return max(1, (max_episodes + 1) // 2)


def check_token(label: str, token: str) -> str:
    """Refuse tokens an attacker could guess or an operator could mistype into something trivially weak."""
    if len(token) < MIN_TOKEN_LENGTH:
        raise OperatorError(f"the {label} must be at least {MIN_TOKEN_LENGTH} characters long (got {len(token)})")
    if not all(33 <= ord(ch) < 127 for ch in token):
        raise OperatorError(f"the {label} must be printable ASCII without spaces (it travels in an HTTP header)")
    return token


@dataclass
class HostedEpisode:
    """One session's slot on the server: its task, its state and the calls made on it.

    The slot outlives an operator reset (the state inside it is swapped), so calls
    queued on it never run on a state that was replaced under them. ``lock`` guards
    the state (a tool call, a reset, the operator's reads); ``order`` queues the
    session's tool calls in arrival order on the event loop, before they take a thread.
    """

    task: TaskSpec
    seed: int
    state: EpisodeState
    client: str = "stdio"
    calls: list[dict[str, Any]] = field(default_factory=list)
    last_used: float = field(default_factory=time.monotonic)
    opened: float = field(default_factory=time.monotonic)
    engaged: bool = False  # a tool call or an operator reset has happened: the first-call timeout no longer applies
    closed: bool = False
    busy: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    order: Any = field(default=None, repr=False)  # an anyio.Lock, made on the event loop that serves the session

    def close(self) -> None:
        with self.lock:
            self.closed = True
            self.state.close()


class EpisodeHost:
    """The episodes of one server, keyed by server-issued MCP session id (or one shared episode).

    In session mode an episode exists only between :meth:`open` (called when the server
    issues a session id) and :meth:`drop` (the client closed the session) or expiry;
    every lookup of any other id raises :class:`SessionError` instead of creating an
    episode, so a client cannot choose its own id, reach another client's episode or
    silently continue on a fresh state. In single-episode mode (stdio, or HTTP with
    ``--single-episode``) every request shares the one episode keyed ``default``.

    A session that has made no tool call (and had no operator reset) expires after
    ``first_call_timeout``, one that has after ``idle_timeout`` without a request; one
    client holds at most ``max_per_client`` episodes; ``guard`` counts failed identity
    checks across all of them. ``clock`` is injectable for tests of the timeouts.
    """

    def __init__(self, target: str, idle_timeout: float | None = 1800.0, *, max_episodes: int = DEFAULT_MAX_EPISODES,
                 single_episode: bool = False, max_per_client: int | None = None,
                 first_call_timeout: float | None = DEFAULT_FIRST_CALL_TIMEOUT, workers: int = DEFAULT_WORKERS,
                 guard: IdentityGuard | None = None, clock: Callable[[], float] = time.monotonic):
        if max_episodes < 1:
            raise OperatorError(f"max_episodes must be at least 1 (got {max_episodes})")
        if idle_timeout is not None and not idle_timeout > 0:
            raise OperatorError(f"the idle timeout must be a positive number of seconds (got {idle_timeout})")
        if first_call_timeout is not None and not first_call_timeout > 0:
            raise OperatorError(f"the first-call timeout must be a positive number of seconds (got {first_call_timeout})")
        if max_per_client is not None and max_per_client < 1:
            raise OperatorError(f"max_episodes_per_client must be at least 1 (got {max_per_client})")
        if workers < 1:
            raise OperatorError(f"workers must be at least 1 (got {workers})")
        if "/" in target:
            self.default_task = load_task(target)
            self.domain: Domain = load_domain(self.default_task.domain)
        else:
            self.domain = load_domain(target)
            tasks = list_tasks(domain=target)
            if not tasks:
                raise OperatorError(f"domain '{target}' has no frozen tasks to start episodes with")
            self.default_task = load_task(tasks[0])
        self.toolbox = self.domain.toolbox
        self.single_episode = single_episode
        self.idle_timeout = None if single_episode else idle_timeout  # the one shared episode never expires
        self.first_call_timeout = None if single_episode else first_call_timeout
        self.max_episodes = 1 if single_episode else max_episodes
        self.max_per_client = min(self.max_episodes, max_per_client if max_per_client is not None else default_share(self.max_episodes))
        self.workers = workers
        self.guard = guard if guard is not None else IdentityGuard(clock=clock)
        self.clock = clock
        self._limiter: Any = None  # an anyio.CapacityLimiter, made on the serving event loop
        self._episodes: dict[str, HostedEpisode] = {}
        self._gone: OrderedDict[str, str] = OrderedDict()  # recently ended sessions -> why, for a precise refusal
        self._reserved: Counter[str] = Counter()  # client -> handshakes in progress
        self.ended: list[str] = []  # sessions ended by expiry since the transport last looked (it closes their streams)
        self._lock = threading.RLock()
        if single_episode:
            self._episodes[STDIO_SESSION] = self._new(self.default_task, 0)

    # ------------------------------------------------------------------ episodes

    def _new(self, task: TaskSpec, seed: int, client: str = "stdio") -> HostedEpisode:
        if task.domain != self.domain.name:
            raise OperatorError(f"this server serves the '{self.domain.name}' tools; task '{task.full_id}' needs '{task.domain}'")
        state = runtime_for(task).new_state()
        now = self.clock()  # after the state is built: a first build of the task's template is not the client's idle time
        return HostedEpisode(task, seed, state, client=client, last_used=now, opened=now)

    def key(self, session: str | None) -> str:
        """The episode key a request maps to: its session id, or the shared one in single-episode mode."""
        if self.single_episode:
            return STDIO_SESSION
        if not session:
            raise SessionError("this request carries no MCP session id; open a session with the initialize handshake first")
        return session

    def held_by(self, client: str) -> int:
        with self._lock:
            return sum(ep.client == client for ep in self._episodes.values()) + self._reserved[client]

    def reserve(self, client: str = "stdio") -> None:
        """Hold a slot for a session about to be issued, so concurrent handshakes cannot overshoot the caps."""
        self.expire()
        with self._lock:
            if len(self._episodes) + sum(self._reserved.values()) >= self.max_episodes:
                raise CapacityError(
                    f"this server already holds its maximum of {self.max_episodes} live episodes; close a session "
                    "(HTTP DELETE), wait for an idle one to expire, or start the server with a higher --max-episodes"
                )
            held = self.held_by(client)
            if held >= self.max_per_client:
                raise ShareError(
                    f"this client ({client}) already holds {held} live episodes, its share of this server "
                    f"(--max-episodes-per-client {self.max_per_client} of --max-episodes {self.max_episodes}); close one "
                    "of its sessions (HTTP DELETE) or start the server with a higher --max-episodes-per-client"
                )
            self._reserved[client] += 1

    def release(self, client: str = "stdio") -> None:
        with self._lock:
            if self._reserved[client] > 0:
                self._reserved[client] -= 1
            if not self._reserved[client]:
                del self._reserved[client]

    def open(self, session: str, client: str = "stdio") -> HostedEpisode:
        """The episode of a session id the server has just issued; takes the slot :meth:`reserve` held."""
        ep = self._new(self.default_task, 0, client)
        with self._lock:
            self.release(client)
            old = self._episodes.pop(session, None)
            self._episodes[session] = ep
        if old is not None:  # cannot happen with server-issued ids; never leak a state if it did
            old.close()
        log.info("session %s opened on %s for %s", session[:12], ep.task.full_id, client)
        return ep

    def drop(self, session: str, reason: str) -> None:
        with self._lock:
            ep = self._episodes.pop(session, None)
            if ep is not None:
                self._remember_gone(session, reason)
        if ep is not None:
            ep.close()
            log.info("session %s %s after %d tool calls", session[:12], reason, len(ep.calls))

    def _remember_gone(self, session: str, reason: str) -> None:
        self._gone[session] = reason
        while len(self._gone) > 4096:
            self._gone.popitem(last=False)

    def _refusal(self, key: str) -> SessionError:
        why = self._gone.get(key)
        if why is not None:
            return SessionError(f"session {key[:12]}... has {why}; its episode and its writes are gone: open a new session")
        return SessionError(f"unknown session {key[:40]!r}: this server did not issue it (or it ended long ago)")

    def episode(self, session: str | None, client: str | None = None) -> HostedEpisode:
        """The live episode of a request, touched; :class:`SessionError` naming why if there is none.

        With ``client``, a session another client opened is answered exactly as an unknown one
        (and not touched): an id that leaked is worth nothing to anyone but its owner, who
        cannot even learn from the answer that it exists.
        """
        key = self.key(session)
        self.expire()
        with self._lock:
            ep = self._episodes.get(key)
            if ep is not None and client is not None and not self.single_episode and ep.client != client:
                raise SessionError(f"unknown session {key[:40]!r}: this server did not issue it (or it ended long ago)")
            if ep is None:
                raise self._refusal(key)
            ep.last_used = self.clock()
            return ep

    def reset(self, session: str, task_id: str | None = None, spec: dict[str, Any] | None = None, seed: int = 0) -> HostedEpisode:
        if spec is not None:
            from ..spec import parse_task

            task = parse_task(spec, "operator reset request")
        elif task_id is not None:
            task = load_task(task_id)
        else:
            task = None
        ep = self.episode(session)  # only a live session can be reset: the operator cannot mint ids either
        new = self._new(task if task is not None else ep.task, seed, ep.client)
        with ep.lock:  # waits for a call in progress; calls queued behind it see the new state
            if ep.closed:
                new.state.close()
                raise SessionError(f"session {self.key(session)[:12]}... ended during the reset")
            old_state = ep.state
            ep.task, ep.seed, ep.state, ep.calls = new.task, new.seed, new.state, []
            ep.engaged, ep.last_used = True, self.clock()
            old_state.close()
        return ep

    def expire(self) -> None:
        """Drop the episodes past their first-call or idle timeout (never one with a call running)."""
        if self.idle_timeout is None and self.first_call_timeout is None:
            return
        now = self.clock()
        stale: list[tuple[str, HostedEpisode, str]] = []
        with self._lock:
            for key, ep in list(self._episodes.items()):
                if ep.busy:
                    continue
                if self.idle_timeout is not None and ep.last_used < now - self.idle_timeout:
                    stale.append((key, ep, f"expired after {self.idle_timeout:g} s idle"))
                elif not ep.engaged and self.first_call_timeout is not None and ep.opened < now - self.first_call_timeout:
                    stale.append((key, ep, f"expired after {self.first_call_timeout:g} s without a tool call"))
            for key, ep, why in stale:
                del self._episodes[key]
                ep.closed = True
                self._remember_gone(key, why)
                self.ended.append(key)
        for key, ep, why in stale:
            ep.close()
            log.info("episode of session %s %s", key[:12], why)

    def take_ended(self) -> list[str]:
        """Sessions ended by expiry since the last look, for the transport to close their streams too."""
        with self._lock:
            ended, self.ended = self.ended, []
            return ended

    def sessions(self) -> list[dict[str, Any]]:
        self.expire()
        with self._lock:
            now = self.clock()
            return [
                {"session": k, "task_id": ep.task.full_id, "seed": ep.seed, "tool_calls": len(ep.calls),
                 "idle_s": round(now - ep.last_used, 3), "client": ep.client}
                for k, ep in sorted(self._episodes.items())
            ]

    def existing(self, session: str) -> HostedEpisode:
        """The live episode for the operator, without counting the look as client activity."""
        key = self.key(session)
        self.expire()
        with self._lock:
            ep = self._episodes.get(key)
            if ep is None:
                why = self._gone.get(key)
                raise SessionError(f"session {key[:40]!r} has {why}" if why else f"unknown session {key[:40]!r}")
            return ep

    # ------------------------------------------------------------------ agent side

    def call(self, session: str | None, name: str, arguments: Any) -> ToolResult:
        """Run one tool call on the session's episode, atomically with respect to every other call and reset of it."""
        return self.call_on(self.episode(session), name, arguments)

    def call_on(self, ep: HostedEpisode, name: str, arguments: Any) -> ToolResult:
        """Run one call on ``ep`` under its lock (on a worker thread when served over MCP).

        A call the server has received runs to completion (or rolls back) even if its
        client disconnects before reading the result: its writes stay in the episode,
        where the operator's diff and verdict see them, like a request a real backend
        committed before the connection dropped.
        """
        with ep.lock:
            if ep.closed:
                raise SessionError("this session's episode ended while the call waited; open a new session")
            ep.busy += 1
            try:
                ep.engaged = True
                result = self._guarded_call(ep, name, arguments)
                ep.calls.append({"name": result.name, "arguments": arguments, "result": result.content, "ok": result.ok,
                                 "writes": result.writes and result.ok, "error_kind": result.error_kind})
                ep.last_used = self.clock()
                return result
            finally:
                ep.busy -= 1

    def _guarded_call(self, ep: HostedEpisode, name: str, arguments: Any) -> ToolResult:
        """The call, through the server-wide identity lockout when the tool checks a secret."""
        spec = self.toolbox.tools.get(name) if isinstance(name, str) else None
        field_name = spec.identity if spec is not None else None
        record = arguments.get(field_name) if field_name and isinstance(arguments, dict) else None
        if not isinstance(record, str) or not self.guard.enabled:
            return self.toolbox.call(ep.state, name, arguments)
        record = record.strip().upper()
        refusal = self.guard.begin(name, record, ep.client)
        if refusal is not None:
            return ToolResult(name, {"error": refusal}, False, spec.writes if spec is not None else False, "precondition")
        failed = False
        try:
            result = self.toolbox.call(ep.state, name, arguments)
            failed = result.ok and check_failed(result.content)
            return result
        finally:
            self.guard.finish(name, record, ep.client, failed)

    def limiter(self) -> Any:
        """The worker-thread limiter of the serving event loop (made on first use there)."""
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(self.workers)
        return self._limiter

    # ------------------------------------------------------------------ operator side

    def outcome(self, session: str) -> dict[str, Any]:
        ep = self.existing(session)
        with ep.lock:
            return state_outcome(ep.task, ep.state).to_json()

    def verdict(self, session: str, final_message: str = "", transcript: str = "", finish_reason: str = "done_marker",
                dialogue: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """The episode's verdict by the same ``grade`` as the in-process env; the trace is the server's call record.

        The server sees no judge and no conversation beyond what the operator sends, so
        rubric checks are left unevaluated here. ``dialogue`` (each message with the number
        of tool calls made before it, as :func:`~thinkingbox_env.checks.dialogue_positions`
        gives it) places the messages between the server's calls, which the dialogue and
        process checks read; without it only ``final_message`` is known, said after the
        last call, so a consent the customer gave cannot be seen.
        """
        ep = self.existing(session)
        with ep.lock:
            task = ep.task
            outcome = state_outcome(task, ep.state)
            calls = list(ep.calls)
        if dialogue is None:
            dialogue = [{"role": "assistant", "content": final_message, "calls_before": len(calls)}] if final_message else []
        trace = interleave(calls, dialogue)
        said = [{"role": m["role"], "content": m["content"]} for m in dialogue]
        return grade(task, outcome, final_message=final_message, transcript=transcript, dialogue=said, trace=trace,
                     finish_reason=finish_reason).to_json()

    def close(self) -> None:
        with self._lock:
            episodes = list(self._episodes.values())
            self._episodes.clear()
        for ep in episodes:
            ep.close()


# --------------------------------------------------------------------------- MCP (agent side)


def _session_key(ctx: Any) -> str | None:
    """The server-issued session id of an HTTP request (checked by :class:`SessionGate`); None elsewhere."""
    request = getattr(ctx, "request", None)
    headers = getattr(request, "headers", None)
    return headers.get("mcp-session-id") if headers is not None else None


OPENING_PROMPT = "opening_request"


def _policy_text(domain: Domain) -> str:
    """The policy as the environment's opening observation gives it (title and frozen clock first)."""
    return f"# {domain.spec.title}\n\nCurrent time: {domain.spec.clock.isoformat()}\n\n{domain.policy.strip()}\n"


def _documents(domain: Domain) -> dict[str, tuple[str, str, str]]:
    """``uri -> (name, description, text)``: what an agent may read besides the tools (policy and knowledge base)."""
    docs = {f"thinkingbox://{domain.name}/policy": (
        "policy", f"The {domain.spec.title} policy the agent must follow, with the current time", _policy_text(domain))}
    for name, text in domain.kb_documents().items():
        docs[f"thinkingbox://{domain.name}/kb/{name}"] = (f"kb/{name}", f"Knowledge-base document {name}", text)
    return docs


def build_mcp_server(host: EpisodeHost) -> Server:
    """The agent side, so an MCP client gets the whole task over MCP.

    The tools, the task's opening request as a prompt, and the policy and KB as resources.
    """
    documents = _documents(host.domain)
    tools = [
        types.Tool(name=t.name, description=t.description, input_schema=t.parameters)
        for t in host.toolbox.tools.values()
    ]

    async def on_list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            ep = host.episode(_session_key(ctx))
            if ep.order is None:
                ep.order = anyio.Lock()  # FIFO: the session's calls run in the order they arrived
            async with ep.order:  # queued here, on the loop, so a flood of one session's calls holds no thread
                result = await anyio.to_thread.run_sync(host.call_on, ep, params.name, params.arguments, limiter=host.limiter())
        except SessionError as exc:  # expired between the gate and the call: refuse, never run on another state
            raise MCPError(types.INVALID_REQUEST, str(exc)) from exc
        return types.CallToolResult(
            content=[types.TextContent(text=result.text())],
            is_error=not result.ok,
            _meta={ERROR_KIND_META: result.error_kind, WRITES_META: result.writes},
        )

    async def on_list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=[types.Prompt(
            name=OPENING_PROMPT, description="The customer's opening request of this session's task")])

    async def on_get_prompt(ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        if params.name != OPENING_PROMPT:
            raise ValueError(f"unknown prompt '{params.name}'; this server has '{OPENING_PROMPT}'")
        task = host.episode(_session_key(ctx)).task
        return types.GetPromptResult(description=f"The opening request of task {task.full_id}", messages=[
            types.PromptMessage(role="user", content=types.TextContent(text=task.user.opening))])

    async def on_list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[
            types.Resource(uri=uri, name=name, description=desc, mime_type="text/markdown", size=len(text.encode()))
            for uri, (name, desc, text) in documents.items()])

    async def on_read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        uri = str(params.uri)
        if uri not in documents:
            raise ValueError(f"unknown resource '{uri}'; list_resources names the policy and the knowledge-base documents")
        return types.ReadResourceResult(contents=[types.TextResourceContents(uri=uri, mime_type="text/markdown",
                                                                             text=documents[uri][2])])

    return Server(
        "thinkingbox",
        version=__version__,
        instructions=f"Tools of the {host.domain.spec.title} backend. The prompt '{OPENING_PROMPT}' is the customer's "
                     "request; the resources are the policy to follow and the knowledge base.",
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
        on_list_prompts=on_list_prompts,
        on_get_prompt=on_get_prompt,
        on_list_resources=on_list_resources,
        on_read_resource=on_read_resource,
    )


# --------------------------------------------------------------------------- operator API


def _bearer_ok(request: Request, token: str) -> bool:
    header = request.headers.get("authorization", "")
    return header.startswith("Bearer ") and hmac.compare_digest(header[7:].encode(), token.encode())


def _bearer_index(request: Request, tokens: list[str]) -> int | None:
    """Which agent token the request carries (each compared in constant time), or None."""
    found = None
    for i, token in enumerate(tokens):
        if _bearer_ok(request, token) and found is None:
            found = i
    return found


def client_of(scope: Any, token_index: int | None, tokens: int) -> str:
    """The client a request counts against and its sessions belong to: the agent token it authenticated with.

    Only a server without tokens (which listens on loopback alone) falls back to the connection
    peer's address; there every local process is one client, which is all an address can tell.
    """
    if tokens and token_index is not None:
        return f"token {token_index + 1}"
    peer = scope.get("client") or ("unknown", 0)
    return f"peer {peer[0]}"


def _body_keys(body: dict[str, Any], allowed: tuple[str, ...]) -> None:
    unknown = sorted(set(body) - set(allowed))
    if unknown:
        raise OperatorError(f"unknown field(s) {', '.join(map(repr, unknown))}; this route takes {', '.join(allowed)}")


def _optional_str(body: dict[str, Any], name: str, default: str) -> str:
    value = body.get(name, default)
    if not isinstance(value, str):
        raise OperatorError(f"'{name}' must be a string, got {type(value).__name__}")
    return valid_text(value)


def parse_reset_body(body: dict[str, Any]) -> tuple[str | None, dict[str, Any] | None, int]:
    """Validate a reset request: (task_id, spec, seed), or :class:`OperatorError` naming the bad field."""
    _body_keys(body, ("task_id", "spec", "seed"))
    task_id, spec, seed = body.get("task_id"), body.get("spec"), body.get("seed", 0)
    if task_id is not None and (not isinstance(task_id, str) or not task_id.strip() or len(task_id) > 200):
        raise OperatorError(f"'task_id' must be a task id string such as 'retail/ST030_001', got {type(task_id).__name__}")
    if spec is not None and not isinstance(spec, dict):
        raise OperatorError(f"'spec' must be a JSON object (a task spec), got {type(spec).__name__}")
    if task_id is not None and spec is not None:
        raise OperatorError("give either 'task_id' or 'spec', not both")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise OperatorError(f"'seed' must be an integer from 0 to {MAX_SEED}, got {seed!r:.40}")
    return task_id, spec, seed


def parse_dialogue(value: Any) -> list[dict[str, Any]] | None:
    """The verdict body's optional ``dialogue``: a list of ``{role, content, calls_before}`` objects."""
    if value is None:
        return None
    if not isinstance(value, list):
        raise OperatorError(f"'dialogue' must be a list of messages, got {type(value).__name__}")
    out = []
    for i, m in enumerate(value):
        if not isinstance(m, dict) or m.get("role") not in ("user", "assistant") or not isinstance(m.get("content"), str):
            raise OperatorError(f"'dialogue'[{i}] must be an object with role 'user' or 'assistant' and a string content")
        calls = m.get("calls_before", 0)
        if isinstance(calls, bool) or not isinstance(calls, int) or calls < 0:
            raise OperatorError(f"'dialogue'[{i}].calls_before must be a non-negative integer, got {calls!r:.40}")
        out.append({"role": m["role"], "content": valid_text(m["content"]), "calls_before": calls})
    return out


def parse_verdict_body(body: dict[str, Any]) -> tuple[str, str, str, list[dict[str, Any]] | None]:
    """Validate the operator's verdict request; a bad field is an operator error, not a server crash."""
    _body_keys(body, ("final_message", "transcript", "finish_reason", "dialogue"))
    finish = _optional_str(body, "finish_reason", "done_marker")
    if finish not in FINISH_REASONS:
        raise OperatorError(f"'finish_reason' must be one of {', '.join(FINISH_REASONS)}, got {finish[:40]!r}")
    return (_optional_str(body, "final_message", ""), _optional_str(body, "transcript", ""), finish,
            parse_dialogue(body.get("dialogue")))


MAX_OPERATOR_BODY_BYTES = 4 * 1024 * 1024  # a spec or a dialogue; grading an unbounded body held a worker for minutes


class BodyTooLarge(OperatorError):
    """A request body over :data:`MAX_OPERATOR_BODY_BYTES` (answered 413)."""


async def _bounded_body(request: Request) -> bytes:
    """The request body, refused as soon as it passes :data:`MAX_OPERATOR_BODY_BYTES` (read in chunks, never whole)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > MAX_OPERATOR_BODY_BYTES:
        raise BodyTooLarge(f"the request body is too large ({int(declared):,} bytes; the limit is {MAX_OPERATOR_BODY_BYTES:,})")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_OPERATOR_BODY_BYTES:
            raise BodyTooLarge(f"the request body is too large (over {MAX_OPERATOR_BODY_BYTES:,} bytes)")
        chunks.append(chunk)
    return b"".join(chunks)


def operator_routes(host: EpisodeHost, operator_token: str) -> list[Route]:
    """The operator API (sessions, reset, diff, outcome, verdict), behind a token the agent never sees, so it cannot grade itself."""
    def guarded(handler: Any) -> Any:
        async def endpoint(request: Request) -> Response:
            if not _bearer_ok(request, operator_token):
                return JSONResponse({"error": "operator token required"}, status_code=401)
            try:
                raw = await _bounded_body(request) if request.method == "POST" else b""
                try:
                    body = json.loads(raw) if raw.strip() else {}
                except (ValueError, RecursionError) as exc:
                    raise OperatorError(f"the request body is not valid JSON: {str(exc)[:120]}") from exc
                if not isinstance(body, dict):
                    raise OperatorError("the request body must be a JSON object")
                # on a thread: grading or a reset waits for the episode's call in progress, never on the event loop
                answer = await anyio.to_thread.run_sync(handler, request.path_params.get("session", ""), body)
                return JSONResponse(answer)
            except (SessionError, UnknownTaskError) as exc:
                return JSONResponse({"error": str(exc)}, status_code=404)
            except BodyTooLarge as exc:
                return JSONResponse({"error": str(exc)}, status_code=413)
            except ClientDisconnect:  # nobody is left to read an answer; the operator app over stdio has no gate to catch it
                return Response(status_code=400)
            except KeyError as exc:
                return JSONResponse({"error": f"unknown session or task: {exc.args[0]}"}, status_code=404)
            except (OperatorError, ValueError) as exc:
                return JSONResponse({"error": str(exc)}, status_code=400)

        return endpoint

    def reset(session: str, body: dict[str, Any]) -> dict[str, Any]:
        task_id, spec, seed = parse_reset_body(body)
        ep = host.reset(session, task_id, spec, seed)
        return {"session": session, "task_id": ep.task.full_id, "seed": ep.seed}

    def verdict(session: str, body: dict[str, Any]) -> dict[str, Any]:
        return host.verdict(session, *parse_verdict_body(body))

    def no_body(handler: Any) -> Any:
        def run(session: str, body: dict[str, Any]) -> dict[str, Any]:
            _body_keys(body, ())
            return handler(session)

        return run

    return [
        Route("/operator/sessions", guarded(no_body(lambda s: {"sessions": host.sessions()})), methods=["GET"]),
        Route("/operator/sessions/{session}/reset", guarded(reset), methods=["POST"]),
        Route("/operator/sessions/{session}/diff", guarded(no_body(lambda s: {k: v for k, v in host.outcome(s).items() if k in ("diff", "state_hash")})), methods=["GET"]),
        Route("/operator/sessions/{session}/outcome", guarded(no_body(host.outcome)), methods=["GET"]),
        Route("/operator/sessions/{session}/verdict", guarded(verdict), methods=["POST"]),
    ]


def _rpc_refusal(message: str, status: int, code: int = types.INVALID_REQUEST) -> JSONResponse:
    """A JSON-RPC error body at an HTTP error status: MCP clients surface its message verbatim."""
    return JSONResponse({"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}, status_code=status)


class SessionGate:
    """ASGI middleware in front of the MCP endpoint: the agent token, then the session binding.

    It admits a request without a session id only as a new session (within the
    episode cap and the client's share), opens that session's episode when the
    server issues its id, refuses ids that name no live episode before the MCP layer
    sees them, drops the episode when the client closes its session, closes the
    transport of sessions the host expired, and refuses stateless-era requests
    unless the host shares one episode.
    """

    def __init__(self, app: Any, host: EpisodeHost, token: str | list[str] | None, server: Server | None = None):
        self.app, self.host, self.server = app, host, server
        self.tokens = [token] if isinstance(token, str) else list(token or [])

    def _close_ended(self) -> None:
        """End the MCP transport of every session the host expired, so its streams and its SDK slot go too."""
        manager = getattr(self.server, "_session_manager", None)
        instances = getattr(manager, "_server_instances", None)
        for session in self.host.take_ended():
            transport = instances.get(session) if isinstance(instances, dict) else None
            scope = getattr(transport, "idle_scope", None)
            if scope is not None:
                scope.cancel()  # its serve loop ends and the manager discards the transport

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await self._serve(scope, receive, send)
        except ClientDisconnect:  # the client left mid-request: nothing to answer, and nothing went wrong here
            log.debug("client disconnected during %s %s", scope.get("method"), scope.get("path"))

    async def _serve(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"].startswith("/operator"):
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        index = _bearer_index(request, self.tokens) if self.tokens else None
        if self.tokens and index is None:
            await JSONResponse({"error": "bearer token required"}, status_code=401)(scope, receive, send)
            return
        client = client_of(scope, index, len(self.tokens))
        if self.host.single_episode:
            await self.app(scope, receive, send)
            return
        version = request.headers.get("mcp-protocol-version")
        if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
            await _rpc_refusal(STATELESS_REFUSED, 400)(scope, receive, send)
            return
        session = request.headers.get("mcp-session-id")
        if session is not None:
            try:
                self.host.episode(session, client)
            except SessionError as exc:
                self._close_ended()
                await _rpc_refusal(str(exc), 404)(scope, receive, send)
                return
            self._close_ended()
            if scope["method"] != "DELETE":
                await self.app(scope, receive, send)
                return
            status: list[int] = []

            async def watch(message: Any) -> None:
                if message["type"] == "http.response.start":
                    status.append(message["status"])
                await send(message)

            await self.app(scope, receive, watch)
            if status and status[0] < 300:
                self.host.drop(session, "been closed by its client")
            return
        try:
            self.host.reserve(client)
        except ShareError as exc:
            self._close_ended()
            await _rpc_refusal(str(exc), 429, types.INTERNAL_ERROR)(scope, receive, send)
            return
        except CapacityError as exc:
            self._close_ended()
            await _rpc_refusal(str(exc), 503, types.INTERNAL_ERROR)(scope, receive, send)
            return
        self._close_ended()
        opened = False

        async def issue(message: Any) -> None:
            nonlocal opened
            if message["type"] == "http.response.start" and message["status"] < 300:
                issued = next((v.decode("latin-1") for k, v in message.get("headers", []) if k.lower() == b"mcp-session-id"), None)
                if issued:
                    self.host.open(issued, client)
                    opened = True
            await send(message)

        try:
            await self.app(scope, receive, issue)
        finally:
            if not opened:
                self.host.release(client)


def build_http_app(host: EpisodeHost, *, bind_host: str, token: str | list[str] | None, operator_token: str) -> Any:
    """The MCP endpoint and the operator API in one app, so one port serves both over HTTP."""
    server = build_mcp_server(host)
    app = server.streamable_http_app(
        streamable_http_path="/mcp",
        host=bind_host,
        session_idle_timeout=host.idle_timeout,
        # the host enforces the cap; the transport's own bound only catches streams the host has not closed yet
        max_sessions=None if host.single_episode else 2 * host.max_episodes,
        custom_starlette_routes=operator_routes(host, operator_token),
    )
    return SessionGate(app, host, token, server)


def build_operator_app(host: EpisodeHost, operator_token: str) -> Starlette:
    """The operator API alone, for stdio serving where MCP runs over the pipes."""
    return Starlette(routes=operator_routes(host, operator_token))


# --------------------------------------------------------------------------- entry points


def resolve_tokens(bind_host: str, token: str | list[str] | None, operator_token: str | None) -> tuple[list[str], str]:
    """Decide the tokens from arguments and environment, refusing to expose an unauthenticated server beyond loopback.

    Several agent tokens may be given (one per client): each is then a client of its own
    for the per-client episode share and identity lockout.
    """
    tokens = [token] if isinstance(token, str) else list(token or [])
    if not tokens and os.environ.get(TOKEN_VARIABLE):
        tokens = [os.environ[TOKEN_VARIABLE]]
    for t in tokens:
        check_token(f"agent token (--token or {TOKEN_VARIABLE})", t)
    if len(set(tokens)) != len(tokens):
        raise OperatorError("the agent tokens must differ from one another (each names one client)")
    if bind_host not in LOOPBACK_HOSTS and not tokens:
        raise OperatorError(
            f"binding to {bind_host} exposes the tools beyond this machine: give a bearer token with --token or {TOKEN_VARIABLE}"
        )
    operator_token = operator_token if operator_token is not None else os.environ.get(OPERATOR_TOKEN_VARIABLE) or None
    if operator_token is None:
        operator_token = secrets.token_urlsafe(24)
        print(f"operator token: {operator_token}", file=sys.stderr, flush=True)
    check_token(f"operator token (--operator-token or {OPERATOR_TOKEN_VARIABLE})", operator_token)
    if any(hmac.compare_digest(t, operator_token) for t in tokens):
        raise OperatorError("the operator token must differ from the agent token")
    return tokens, operator_token


def serve_http(target: str, bind_host: str = "127.0.0.1", port: int = 8765, token: str | list[str] | None = None,
               operator_token: str | None = None, idle_timeout: float | None = 1800.0, *,
               max_episodes: int = DEFAULT_MAX_EPISODES, single_episode: bool = False, max_per_client: int | None = None,
               first_call_timeout: float | None = DEFAULT_FIRST_CALL_TIMEOUT, workers: int = DEFAULT_WORKERS,
               guard: IdentityGuard | None = None) -> None:
    """Serve over streamable HTTP, where clients may run many episodes concurrently."""
    import uvicorn

    tokens, operator_token = resolve_tokens(bind_host, token, operator_token)
    host = EpisodeHost(target, idle_timeout, max_episodes=max_episodes, single_episode=single_episode,
                       max_per_client=max_per_client, first_call_timeout=first_call_timeout, workers=workers, guard=guard)
    app = build_http_app(host, bind_host=bind_host, token=tokens, operator_token=operator_token)
    mode = ("one shared episode" if single_episode else
            f"one episode per session, at most {host.max_episodes}, {host.max_per_client} per client")
    print(f"serving {target} over MCP at http://{bind_host}:{port}/mcp ({mode}; operator API under /operator)", file=sys.stderr, flush=True)
    try:
        uvicorn.run(app, host=bind_host, port=port, log_level="warning")
    finally:
        host.close()


def serve_stdio(target: str, operator_socket: str | None = None, operator_port: int | None = None,
                operator_token: str | None = None, guard: IdentityGuard | None = None) -> None:
    """Serve one episode over stdio, the transport MCP clients spawn as a subprocess; the operator API listens on a side socket."""
    from mcp.server.stdio import stdio_server

    host = EpisodeHost(target, idle_timeout=None, single_episode=True, guard=guard)
    server = build_mcp_server(host)
    operator = None
    if operator_socket or operator_port:
        _, operator_token = resolve_tokens("127.0.0.1", None, operator_token)
        operator = _start_operator_thread(build_operator_app(host, operator_token), operator_socket, operator_port)

    async def run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    try:
        anyio.run(run)
    finally:
        if operator is not None:
            operator.should_exit = True
        host.close()


def _start_operator_thread(app: Starlette, socket_path: str | None, port: int | None) -> Any:
    """The operator API beside a stdio server: its own thread, loopback or a Unix socket only."""
    import uvicorn

    if socket_path and os.path.exists(socket_path):
        os.unlink(socket_path)
    config = uvicorn.Config(app, uds=socket_path, host="127.0.0.1", port=port or 0, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="thinkingbox-operator", daemon=True)
    thread.start()
    return server

