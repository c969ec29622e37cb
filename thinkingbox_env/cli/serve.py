"""``serve``: a task's or a domain's tools over MCP."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .common import UserError, add_command

MCP_HTTP_PORT = 8765  # `thinkingbox serve --transport http`; an OpenEnv server takes OpenEnv's 8000


def _serve_openenv(args: argparse.Namespace) -> int:
    """``--protocol openenv``: the task or domain as an OpenEnv environment server (the ``openenv`` extra)."""
    try:
        from ..integrations import openenv
    except ImportError as exc:
        raise UserError(f"--protocol openenv needs the openenv extra (pip install 'thinkingbox-env[openenv]'): {exc}") from exc
    families = [f for f in (args.families or "").split(",") if f] or None
    port = openenv.DEFAULT_PORT if args.port is None else args.port
    try:
        if args.write_manifest:
            out = openenv.write_manifest(args.write_manifest, args.target, protocol=args.conversation, split=args.split,
                                         port=port)
            print(f"wrote {out / 'openenv.yaml'}, {out / 'pyproject.toml'} and {out / 'server'} (app.py, Dockerfile, "
                  f"requirements.txt): openenv validate {out}; openenv push {out}")
            return 0
        app = openenv.create_app(args.target, protocol=args.conversation, split=args.split, families=families,
                                 max_sessions=args.max_episodes)
    except ValueError as exc:
        raise UserError(str(exc)) from exc
    import uvicorn

    print(f"OpenEnv server for {args.target} on http://{args.host}:{port} (WebSocket /ws)", file=sys.stderr)
    uvicorn.run(app, host=args.host, port=port, log_level="warning")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    """``thinkingbox serve``: expose a task's tools over MCP; operator misconfiguration is reported as a user error."""
    if args.protocol == "openenv":
        return _serve_openenv(args)
    from ..serving.episodes import OperatorError
    from ..serving.limits import IdentityGuard
    from ..serving.transports import serve_http, serve_stdio

    try:
        try:
            guard = IdentityGuard(args.identity_failures, args.client_identity_failures, args.identity_backoff,
                                  args.identity_backoff_max)
        except ValueError as exc:
            raise OperatorError(str(exc)) from exc
        if args.transport == "http":
            port = MCP_HTTP_PORT if args.port is None else args.port
            serve_http(args.target, args.host, port, args.token, args.operator_token, args.idle_timeout,
                       max_episodes=args.max_episodes, single_episode=args.single_episode,
                       max_per_client=args.max_episodes_per_client, first_call_timeout=args.first_call_timeout,
                       workers=args.workers, guard=guard)
        else:
            serve_stdio(args.target, args.operator_socket, args.operator_port, args.operator_token, guard=guard)
    except OperatorError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


def add_serve_command(sub: Any) -> None:
    """Declare ``serve`` and its transport, token and operator options."""
    p = add_command(sub, "serve", "serve a task's (or a domain's) tools over MCP, or as an OpenEnv environment",
                    "Serve a task's tools (or a whole domain's) to an MCP client over stdio or streamable HTTP; the "
                    "operator API resets episodes and reads verdicts. With --protocol openenv, serve the task or domain "
                    "as an OpenEnv environment instead (one episode per WebSocket session, the verdict in the last step).",
                    ["thinkingbox serve retail/ST030_001", "thinkingbox serve retail --transport http --port 8765",
                     "thinkingbox serve retail --protocol openenv --port 8000"])
    p.add_argument("target", help="a task id (retail/ST030_001) or a domain (retail)")
    p.add_argument("--protocol", choices=["mcp", "openenv"], default="mcp",
                   help="mcp: the tools over MCP; openenv: an OpenEnv environment server (needs the openenv extra)")
    p.add_argument("--conversation", choices=["chat", "customer-tool"], default="chat",
                   help="openenv: chat (a message goes to the customer, <DONE> closes) or customer-tool (the customer is "
                        "the reply_to_customer tool, a message closes)")
    p.add_argument("--split", choices=["test", "train"], default="test",
                   help="openenv, domain target: draw frozen test tasks or generated train variants")
    p.add_argument("--families", help="openenv, domain target: comma-separated family codes to draw from")
    p.add_argument("--write-manifest", metavar="DIR",
                   help="openenv: write openenv.yaml and server/app.py for the target into DIR and exit")
    p.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    p.add_argument("--host", default="127.0.0.1", help="http: address to bind (anything but loopback needs --token)")
    p.add_argument("--port", type=int, default=None,
                   help=f"http: port (default {MCP_HTTP_PORT}); openenv: port (default 8000, OpenEnv's own, as in openenv.yaml)")
    p.add_argument("--token", action="append",
                   help="http: bearer token the agent side must send, 16+ characters (or THINKINGBOX_MCP_TOKEN); "
                        "repeat to give each client its own, which then counts as that client for the limits below")
    p.add_argument("--operator-token", help="token of the operator API, 16+ characters (or THINKINGBOX_OPERATOR_TOKEN; printed if generated)")
    p.add_argument("--idle-timeout", type=float, default=1800.0, help="http: seconds after which an idle session's episode is dropped")
    p.add_argument("--max-episodes", type=int, default=64, help="http: most live sessions (episodes) at once; more are refused")
    p.add_argument("--max-episodes-per-client", type=int, default=None,
                   help="http: most live sessions one client (token, or connection peer) may hold (default: half of --max-episodes)")
    p.add_argument("--first-call-timeout", type=float, default=120.0,
                   help="http: seconds after which a session that has made no tool call is dropped (default 120)")
    p.add_argument("--workers", type=int, default=16, help="http: threads running tool calls of different sessions at once")
    p.add_argument("--identity-failures", type=int, default=3,
                   help="failed identity checks of one record, in any sessions, before it is locked with backoff (0: off)")
    p.add_argument("--client-identity-failures", type=int, default=10,
                   help="failed identity checks by one client, over any records, before it is locked with backoff (0: off)")
    p.add_argument("--identity-backoff", type=float, default=30.0,
                   help="seconds of the first identity lock; each further failed check doubles it")
    p.add_argument("--identity-backoff-max", type=float, default=3600.0, help="longest identity lock, in seconds")
    p.add_argument("--single-episode", action="store_true",
                   help="http: every client shares one episode, as over stdio (stateless clients are refused otherwise)")
    p.add_argument("--operator-socket", help="stdio: serve the operator API on this Unix socket")
    p.add_argument("--operator-port", type=int, help="stdio: serve the operator API on this loopback port")
    p.set_defaults(func=cmd_serve)
