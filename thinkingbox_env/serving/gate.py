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


async def end_sdk_session(app: Any, like: Any, session: str, path: str) -> None:
    """End the MCP SDK's transport of ``session`` the way a client ends it: an HTTP DELETE naming the session.

    The SDK has no call that ends a session by its id; the protocol's own teardown, a DELETE with
    the ``mcp-session-id`` header to the MCP endpoint (``path``), is public, and the SDK answers it by
    terminating the transport and forgetting the session. The request takes its scheme, server,
    client and Host header from ``like`` (a request the gate is serving) and goes to the app behind the gate, so it
    needs no token; its answer (200, or 404 once the SDK has already let the session go) is discarded.
    """
    scope = {key: like[key] for key in ("scheme", "server", "client", "root_path", "http_version", "asgi") if key in like}
    scope.update({"type": "http", "method": "DELETE", "path": path, "raw_path": path.encode("latin-1"),
                  "query_string": b"", "headers": [
                      *[(k, v) for k, v in like.get("headers", []) if k.lower() == b"host"],  # the SDK checks the Host header
                      (b"mcp-session-id", session.encode("latin-1")), (b"accept", b"application/json, text/event-stream")]})
    delivered = False

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": b"", "more_body": False}
        return {"type": "http.disconnect"}

    async def discard(message: Any) -> None:
        return None

    try:
        await app(scope, receive, discard)
    except Exception:  # noqa: BLE001 - the host already dropped the episode; the SDK's idle timeout still ends the transport
        log.debug("ending the MCP transport of session %s failed", session, exc_info=True)


class SessionGate:
    """ASGI middleware in front of the MCP endpoint: the agent token, then the session binding.

    It admits a request without a session id only as a new session (within the
    episode cap and the client's share), opens that session's episode when the
    server issues its id, refuses ids that name no live episode before the MCP layer
    sees them, drops the episode when the client closes its session, closes the
    transport of sessions the host expired, and refuses stateless-era requests
    unless the host shares one episode.
    """

    def __init__(self, app: Any, host: EpisodeHost, token: str | list[str] | None, mcp_path: str = "/mcp"):
        self.app, self.host, self.mcp_path = app, host, mcp_path
        self.tokens = [token] if isinstance(token, str) else list(token or [])

    async def _close_ended(self, scope: Any) -> None:
        """End the MCP transport of every session the host expired, so its streams and its SDK slot go too."""
        for session in self.host.take_ended():
            await end_sdk_session(self.app, scope, session, self.mcp_path)

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
                await self._close_ended(scope)
                await _rpc_refusal(str(exc), 404)(scope, receive, send)
                return
            await self._close_ended(scope)
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
            await self._close_ended(scope)
            await _rpc_refusal(str(exc), 429, types.INTERNAL_ERROR)(scope, receive, send)
            return
        except CapacityError as exc:
            await self._close_ended(scope)
            await _rpc_refusal(str(exc), 503, types.INTERNAL_ERROR)(scope, receive, send)
            return
        await self._close_ended(scope)
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
