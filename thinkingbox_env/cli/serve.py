"""``serve``: a task's or a domain's tools over MCP."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .common import add_command


def cmd_serve(args: argparse.Namespace) -> int:
    """``thinkingbox serve``: expose a task's tools over MCP; operator misconfiguration is reported as a user error."""
    from ..serving.server import OperatorError, serve_http, serve_stdio

    try:
        if args.transport == "http":
            serve_http(args.target, args.host, args.port, args.token, args.operator_token, args.idle_timeout,
                       max_episodes=args.max_episodes, single_episode=args.single_episode)
        else:
            serve_stdio(args.target, args.operator_socket, args.operator_port, args.operator_token)
    except OperatorError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


def add_serve_command(sub: Any) -> None:
    """Declare ``serve`` and its transport, token and operator options."""
    p = add_command(sub, "serve", "serve a task's (or a domain's) tools over MCP",
                    "Serve a task's tools (or a whole domain's) to an MCP client over stdio or streamable HTTP; the "
                    "operator API resets episodes and reads verdicts.",
                    ["thinkingbox serve retail/ST030_001", "thinkingbox serve retail --transport http --port 8765"])
    p.add_argument("target", help="a task id (retail/ST030_001) or a domain (retail)")
    p.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    p.add_argument("--host", default="127.0.0.1", help="http: address to bind (anything but loopback needs --token)")
    p.add_argument("--port", type=int, default=8765, help="http: port")
    p.add_argument("--token", help="http: bearer token the agent side must send, 16+ characters (or THINKINGBOX_MCP_TOKEN)")
    p.add_argument("--operator-token", help="token of the operator API, 16+ characters (or THINKINGBOX_OPERATOR_TOKEN; printed if generated)")
    p.add_argument("--idle-timeout", type=float, default=1800.0, help="http: seconds after which an idle session's episode is dropped")
    p.add_argument("--max-episodes", type=int, default=64, help="http: most live sessions (episodes) at once; more are refused")
    p.add_argument("--single-episode", action="store_true",
                   help="http: every client shares one episode, as over stdio (stateless clients are refused otherwise)")
    p.add_argument("--operator-socket", help="stdio: serve the operator API on this Unix socket")
    p.add_argument("--operator-port", type=int, help="stdio: serve the operator API on this loopback port")
    p.set_defaults(func=cmd_serve)
