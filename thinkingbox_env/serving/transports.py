"""The transports: streamable HTTP (the MCP endpoint and the operator API on one port) and stdio.

Over stdio, the transport MCP clients spawn as a subprocess, there is one episode and the
operator API listens on a Unix socket or a loopback port of the operator's choosing.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any

import anyio
from starlette.applications import Starlette

from .episodes import DEFAULT_FIRST_CALL_TIMEOUT, DEFAULT_MAX_EPISODES, DEFAULT_WORKERS, EpisodeHost
from .gate import SessionGate, resolve_tokens
from .limits import IdentityGuard
from .mcp_app import build_mcp_server
from .operator_api import build_operator_app, operator_routes

MCP_PATH = "/mcp"


def build_http_app(host: EpisodeHost, *, bind_host: str, token: str | list[str] | None, operator_token: str) -> Any:
    """The MCP endpoint and the operator API in one app, so one port serves both over HTTP."""
    server = build_mcp_server(host)
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        host=bind_host,
        session_idle_timeout=host.idle_timeout,
        # the host enforces the cap; the transport's own bound only catches streams the host has not closed yet
        max_sessions=None if host.single_episode else 2 * host.max_episodes,
        custom_starlette_routes=operator_routes(host, operator_token),
    )
    return SessionGate(app, host, token, MCP_PATH)

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
