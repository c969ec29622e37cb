"""The gate in front of the MCP endpoint: tokens, who a client is, and the binding of a session to its episode.

A session belongs to the client that opened it (its agent token; the connection peer only on
a token-less loopback server): another client naming its id is answered as if the id were
unknown. A request without a session id is admitted only as a new session, within the
episode cap and the client's share. Requests of the stateless (2026-era) protocol carry no
server-issued id, so they are refused unless the server runs in single-episode mode, where
every client shares the one episode as over stdio. The tokens themselves are decided here
(:func:`resolve_tokens`): no server without one is exposed beyond loopback.
"""

from __future__ import annotations

import hmac
import logging
import os
import secrets
import sys
from typing import Any

import mcp_types as types
from mcp.server import Server
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse

from .episodes import CapacityError, EpisodeHost, OperatorError, SessionError, ShareError

log = logging.getLogger(__name__)


TOKEN_VARIABLE = "THINKINGBOX_MCP_TOKEN"
OPERATOR_TOKEN_VARIABLE = "THINKINGBOX_OPERATOR_TOKEN"
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
MIN_TOKEN_LENGTH = 16
STATELESS_REFUSED = (
    "this server binds every episode to an MCP session: requests of the stateless protocol era carry no "
    "server-issued session id and are refused; connect with the initialize handshake (mode='legacy' or "
    "'auto' in the Python client), or start the server with --single-episode to share one episode"
)


def check_token(label: str, token: str) -> str:
    """Refuse tokens an attacker could guess or an operator could mistype into something trivially weak."""
    if len(token) < MIN_TOKEN_LENGTH:
        raise OperatorError(f"the {label} must be at least {MIN_TOKEN_LENGTH} characters long (got {len(token)})")
    if not all(33 <= ord(ch) < 127 for ch in token):
        raise OperatorError(f"the {label} must be printable ASCII without spaces (it travels in an HTTP header)")
    return token

def bearer_ok(request: Request, token: str) -> bool:
    """Whether the request carries ``token`` as its bearer token (compared in constant time)."""
    header = request.headers.get("authorization", "")
    return header.startswith("Bearer ") and hmac.compare_digest(header[7:].encode(), token.encode())


def _bearer_index(request: Request, tokens: list[str]) -> int | None:
    """Which agent token the request carries (each compared in constant time), or None."""
    found = None
    for i, token in enumerate(tokens):
        if bearer_ok(request, token) and found is None:
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

def _rpc_refusal(message: str, status: int, code: int = types.INVALID_REQUEST) -> JSONResponse:
    """A JSON-RPC error body at an HTTP error status: MCP clients surface its message verbatim."""
    return JSONResponse({"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}, status_code=status)


def end_sdk_session(server: Server | None, session: str) -> None:
    """End the MCP SDK's transport of ``session``, if it still has one: its serve loop ends and the SDK discards it.

    The SDK offers no public call that ends a session by its id (checked against mcp 2.3.0, and
    2.0.0 before it): its session manager is public (``Server.session_manager``), but it keeps the
    transports only in the private ``_server_instances`` and ends one only on the client's DELETE or
    its own idle timeout.
    This function is the one place the package reads that private field; the transport's
    ``idle_scope`` it cancels is public, and cancelling it is what the SDK's idle timeout does.
    Should a later SDK drop the field, nothing is ended here and the SDK's own idle timeout (the
    host's, passed to it) still closes the transport.
    """
    if server is None:
        return
    try:
        manager = server.session_manager
    except RuntimeError:  # no streamable HTTP app was built: there is no transport to end
        return
    instances = getattr(manager, "_server_instances", None)
    transport = instances.get(session) if isinstance(instances, dict) else None
    scope = getattr(transport, "idle_scope", None)
    if scope is not None:
        scope.cancel()


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
        for session in self.host.take_ended():
            end_sdk_session(self.server, session)

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
