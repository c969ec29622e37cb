"""Serve a task's tools over the Model Context Protocol, with the operator surface kept apart.

The agent side is a plain MCP server: tool names, descriptions and input schemas
come from the same ``@tool`` definitions the environment uses, and a call runs
through the same ``Toolbox.call`` error contract. Over stdio there is one episode
per process; over streamable HTTP every MCP session gets its own isolated episode,
dropped after a configurable idle time.

The operator side (reset an episode, read its diff, compute its verdict) is a
small HTTP API under ``/operator``, guarded by its own bearer token. It is never
listed as an MCP tool and no agent-facing tool can reach it, so the agent cannot
read the golden outcome or the checks. Over stdio the operator API listens on a
Unix socket or a loopback port of the operator's choosing.
"""

from __future__ import annotations

import hmac
import logging
import os
import secrets
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..checks import grade, state_outcome
from ..domain import Domain, load_domain
from ..registry import list_tasks, load_task
from ..runtime import runtime_for
from ..spec import TaskSpec
from ..state import EpisodeState
from ..tools import ToolResult
from ..version import __version__

log = logging.getLogger(__name__)

STDIO_SESSION = "default"
ERROR_KIND_META = "thinkingbox/error_kind"
WRITES_META = "thinkingbox/writes"
TOKEN_VARIABLE = "THINKINGBOX_MCP_TOKEN"
OPERATOR_TOKEN_VARIABLE = "THINKINGBOX_OPERATOR_TOKEN"
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


class OperatorError(ValueError):
    """A bad operator request; answered with HTTP 400 and the message."""


@dataclass
class HostedEpisode:
    """One episode held by the server: its task, its state and the calls made on it."""

    task: TaskSpec
    seed: int
    state: EpisodeState
    calls: list[dict[str, Any]] = field(default_factory=list)
    last_used: float = field(default_factory=time.monotonic)

    def close(self) -> None:
        self.state.close()


class EpisodeHost:
    """The episodes of one server, keyed by MCP session id (or one for stdio)."""

    def __init__(self, target: str, idle_timeout: float | None = 1800.0):
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
        self.idle_timeout = idle_timeout
        self._episodes: dict[str, HostedEpisode] = {}
        self._lock = threading.RLock()

    # ------------------------------------------------------------------ episodes

    def _new(self, task: TaskSpec, seed: int) -> HostedEpisode:
        if task.domain != self.domain.name:
            raise OperatorError(f"this server serves the '{self.domain.name}' tools; task '{task.full_id}' needs '{task.domain}'")
        return HostedEpisode(task, seed, runtime_for(task).new_state())

    def episode(self, session: str) -> HostedEpisode:
        with self._lock:
            self.expire()
            ep = self._episodes.get(session)
            if ep is None:
                ep = self._new(self.default_task, 0)
                self._episodes[session] = ep
            ep.last_used = time.monotonic()
            return ep

    def reset(self, session: str, task_id: str | None = None, spec: dict[str, Any] | None = None, seed: int = 0) -> HostedEpisode:
        if spec is not None:
            from ..spec import parse_task

            task = parse_task(spec, "operator reset request")
        elif task_id is not None:
            task = load_task(task_id)
        else:
            with self._lock:
                current = self._episodes.get(session)
            task = current.task if current is not None else self.default_task
        new = self._new(task, seed)
        with self._lock:
            old = self._episodes.pop(session, None)
            self._episodes[session] = new
        if old is not None:
            old.close()
        return new

    def expire(self) -> None:
        if self.idle_timeout is None:
            return
        cutoff = time.monotonic() - self.idle_timeout
        with self._lock:
            stale = [k for k, ep in self._episodes.items() if ep.last_used < cutoff]
            for key in stale:
                self._episodes.pop(key).close()
                log.info("episode of session %s expired after %.0f s idle", key[:12], self.idle_timeout)

    def sessions(self) -> list[dict[str, Any]]:
        with self._lock:
            self.expire()
            now = time.monotonic()
            return [
                {"session": k, "task_id": ep.task.full_id, "seed": ep.seed, "tool_calls": len(ep.calls), "idle_s": round(now - ep.last_used, 3)}
                for k, ep in sorted(self._episodes.items())
            ]

    def existing(self, session: str) -> HostedEpisode:
        with self._lock:
            self.expire()
            ep = self._episodes.get(session)
        if ep is None:
            raise KeyError(session)
        return ep

    # ------------------------------------------------------------------ agent side

    def call(self, session: str, name: str, arguments: Any) -> ToolResult:
        with self._lock:  # the operator API may run on another thread (stdio mode)
            ep = self.episode(session)
            result = self.toolbox.call(ep.state, name, arguments)
            ep.calls.append({"name": result.name, "ok": result.ok, "writes": result.writes and result.ok, "error_kind": result.error_kind})
            return result

    # ------------------------------------------------------------------ operator side

    def outcome(self, session: str) -> dict[str, Any]:
        with self._lock:
            ep = self.existing(session)
            return state_outcome(ep.task, ep.state).to_json()

    def verdict(self, session: str, final_message: str = "", transcript: str = "", finish_reason: str = "done_marker") -> dict[str, Any]:
        """The episode's verdict by the same ``grade`` as the in-process env; the trace is the server's call record.

        The server sees no judge and no dialogue beyond what the operator sends, so rubric
        checks are left unevaluated here.
        """
        with self._lock:
            ep = self.existing(session)
            outcome = state_outcome(ep.task, ep.state)
            trace = [{"type": "tool_call", **c} for c in ep.calls]
        return grade(ep.task, outcome, final_message=final_message, transcript=transcript, trace=trace,
                     finish_reason=finish_reason).to_json()

    def close(self) -> None:
        with self._lock:
            for ep in self._episodes.values():
                ep.close()
            self._episodes.clear()


# --------------------------------------------------------------------------- MCP (agent side)


def _session_key(ctx: Any) -> str:
    request = getattr(ctx, "request", None)
    if request is not None:
        sid = request.headers.get("mcp-session-id")
        if sid:
            return sid
    return STDIO_SESSION


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
    """The agent side: the tools, the task's opening request as a prompt, and the policy and KB as resources,
    so an MCP client gets the whole task over MCP."""
    documents = _documents(host.domain)
    tools = [
        types.Tool(name=t.name, description=t.description, input_schema=t.parameters)
        for t in host.toolbox.tools.values()
    ]

    async def on_list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        result = host.call(_session_key(ctx), params.name, params.arguments)
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


def operator_routes(host: EpisodeHost, operator_token: str) -> list[Route]:
    def guarded(handler: Any) -> Any:
        async def endpoint(request: Request) -> Response:
            if not _bearer_ok(request, operator_token):
                return JSONResponse({"error": "operator token required"}, status_code=401)
            try:
                body = await request.json() if request.method == "POST" and await request.body() else {}
                if not isinstance(body, dict):
                    raise OperatorError("the request body must be a JSON object")
                return JSONResponse(handler(request.path_params.get("session", ""), body))
            except KeyError as exc:
                return JSONResponse({"error": f"unknown session or task: {exc.args[0]}"}, status_code=404)
            except (OperatorError, ValueError) as exc:
                return JSONResponse({"error": str(exc)}, status_code=400)

        return endpoint

    def reset(session: str, body: dict[str, Any]) -> dict[str, Any]:
        seed = body.get("seed", 0)
        if not isinstance(seed, int):
            raise OperatorError("seed must be an integer")
        ep = host.reset(session, body.get("task_id"), body.get("spec"), seed)
        return {"session": session, "task_id": ep.task.full_id, "seed": ep.seed}

    return [
        Route("/operator/sessions", guarded(lambda s, b: {"sessions": host.sessions()}), methods=["GET"]),
        Route("/operator/sessions/{session}/reset", guarded(reset), methods=["POST"]),
        Route("/operator/sessions/{session}/diff", guarded(lambda s, b: {k: v for k, v in host.outcome(s).items() if k in ("diff", "state_hash")}), methods=["GET"]),
        Route("/operator/sessions/{session}/outcome", guarded(lambda s, b: host.outcome(s)), methods=["GET"]),
        Route(
            "/operator/sessions/{session}/verdict",
            guarded(lambda s, b: host.verdict(s, str(b.get("final_message", "")), str(b.get("transcript", "")), str(b.get("finish_reason", "done_marker")))),
            methods=["POST"],
        ),
    ]


class AgentTokenMiddleware:
    """Refuses every MCP request that lacks the agent bearer token (when one is configured)."""

    def __init__(self, app: Any, token: str | None):
        self.app = app
        self.token = token

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        guarded = self.token and scope["type"] == "http" and not scope["path"].startswith("/operator")
        if guarded and not _bearer_ok(Request(scope), self.token):
            await JSONResponse({"error": "bearer token required"}, status_code=401)(scope, receive, send)
            return
        await self.app(scope, receive, send)


def build_http_app(host: EpisodeHost, *, bind_host: str, token: str | None, operator_token: str) -> Any:
    server = build_mcp_server(host)
    app = server.streamable_http_app(
        streamable_http_path="/mcp",
        host=bind_host,
        session_idle_timeout=host.idle_timeout,
        custom_starlette_routes=operator_routes(host, operator_token),
    )
    return AgentTokenMiddleware(app, token)


def build_operator_app(host: EpisodeHost, operator_token: str) -> Starlette:
    return Starlette(routes=operator_routes(host, operator_token))


# --------------------------------------------------------------------------- entry points


def resolve_tokens(bind_host: str, token: str | None, operator_token: str | None) -> tuple[str | None, str]:
    token = token or os.environ.get(TOKEN_VARIABLE) or None
    if bind_host not in LOOPBACK_HOSTS and not token:
        raise OperatorError(
            f"binding to {bind_host} exposes the tools beyond this machine: give a bearer token with --token or {TOKEN_VARIABLE}"
        )
    operator_token = operator_token or os.environ.get(OPERATOR_TOKEN_VARIABLE)
    if not operator_token:
        operator_token = secrets.token_urlsafe(24)
        print(f"operator token: {operator_token}", file=sys.stderr, flush=True)
    if token and hmac.compare_digest(token, operator_token):
        raise OperatorError("the operator token must differ from the agent token")
    return token, operator_token


def serve_http(target: str, bind_host: str = "127.0.0.1", port: int = 8765, token: str | None = None,
               operator_token: str | None = None, idle_timeout: float | None = 1800.0) -> None:
    import uvicorn

    token, operator_token = resolve_tokens(bind_host, token, operator_token)
    host = EpisodeHost(target, idle_timeout)
    app = build_http_app(host, bind_host=bind_host, token=token, operator_token=operator_token)
    print(f"serving {target} over MCP at http://{bind_host}:{port}/mcp (operator API under /operator)", file=sys.stderr, flush=True)
    try:
        uvicorn.run(app, host=bind_host, port=port, log_level="warning")
    finally:
        host.close()


def serve_stdio(target: str, operator_socket: str | None = None, operator_port: int | None = None,
                operator_token: str | None = None) -> None:
    from mcp.server.stdio import stdio_server

    host = EpisodeHost(target, idle_timeout=None)
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

