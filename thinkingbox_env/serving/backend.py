"""Run an environment's tool calls through a real MCP client session.

``MCPToolBackend`` stands in for the in-process tool runner: tool calls travel
over MCP (a ``thinkingbox serve`` subprocess on stdio, or a streamable HTTP URL),
and the final-state facts for the verdict come from the server's operator API.
The same task then gives the same trace, diff and verdict either way, which is
what makes a served environment trustworthy.

The MCP client is asynchronous and the Gymnasium API is not, so the client
lives in one long-lived task on an event loop in a background thread, and each
call is handed to it and waited for.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import secrets
import socket
import sys
import tempfile
import threading
import time
from typing import Any
from urllib.parse import urlsplit

from ..checks import StateOutcome
from ..toolkit.tools import ToolResult
from .episodes import STDIO_SESSION
from .gate import OPERATOR_TOKEN_VARIABLE
from .mcp_app import ERROR_KIND_META, WRITES_META


class MCPBackendError(RuntimeError):
    """The MCP server or its operator API could not be reached or refused a request."""


class _UnixHTTPConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float):
        super().__init__("localhost", timeout=timeout)
        self.path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        sock.connect(self.path)
        self.sock = sock


class OperatorClient:
    """The operator API of a ``thinkingbox serve`` process, over TCP or a Unix socket."""

    def __init__(self, token: str, base_url: str | None = None, socket_path: str | None = None, timeout: float = 60.0):
        if (base_url is None) == (socket_path is None):
            raise ValueError("give exactly one of base_url or socket_path")
        self.token, self.base_url, self.socket_path, self.timeout = token, base_url, socket_path, timeout

    def _connection(self) -> tuple[http.client.HTTPConnection, str]:
        if self.socket_path is not None:
            return _UnixHTTPConnection(self.socket_path, self.timeout), ""
        assert self.base_url is not None  # __init__ takes exactly one of base_url and socket_path
        parts = urlsplit(self.base_url)
        cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        return cls(parts.hostname or "127.0.0.1", parts.port, timeout=self.timeout), parts.path.rstrip("/")

    def request(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        conn, prefix = self._connection()
        try:
            payload = json.dumps(body) if body is not None else None
            headers = {"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"}
            conn.request(method, prefix + path, body=payload, headers=headers)
            response = conn.getresponse()
            data = json.loads(response.read() or b"{}")
        except (OSError, http.client.HTTPException, json.JSONDecodeError) as exc:
            raise MCPBackendError(f"operator API {method} {path} failed: {exc}") from exc
        finally:
            conn.close()
        if response.status != 200:
            raise MCPBackendError(f"operator API {method} {path} answered {response.status}: {data.get('error', data)}")
        return data

    def reset(self, session: str, body: dict[str, Any]) -> dict[str, Any]:
        return self.request("POST", f"/operator/sessions/{session}/reset", body)

    def outcome(self, session: str) -> dict[str, Any]:
        return self.request("GET", f"/operator/sessions/{session}/outcome")

    def verdict(self, session: str, final_message: str = "", transcript: str = "",
                finish_reason: str = "done_marker", dialogue: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"final_message": final_message, "transcript": transcript, "finish_reason": finish_reason}
        if dialogue is not None:
            body["dialogue"] = dialogue
        return self.request("POST", f"/operator/sessions/{session}/verdict", body)


class MCPToolBackend:
    """An :class:`~thinkingbox_env.envs.env.EpisodeBackend` whose episode lives on an MCP server.

    Build it with :meth:`stdio` or :meth:`http`. The server holds the state; ``outcome``
    asks its operator API for what grading needs.
    """

    state = None  # no state in this process

    def __init__(self, connect: Any, operator: OperatorClient, session: str | None = None,
                 timeout: float = 60.0, cleanup: Any = None):
        self._connect = connect  # () -> async context manager yielding an mcp Client
        self.operator = operator
        self.session = session
        self.timeout = timeout
        self._cleanup = cleanup
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._queue: asyncio.Queue | None = None
        self._done: asyncio.Future | None = None
        self.env: Any = None
        self.tool_names: list[str] = []

    # ------------------------------------------------------------------ construction

    @classmethod
    def stdio(cls, target: str, timeout: float = 60.0, python: str | None = None) -> MCPToolBackend:
        """Spawn ``thinkingbox serve TARGET --transport stdio`` with a private operator socket."""
        from mcp import Client
        from mcp.client.stdio import StdioServerParameters

        workdir = tempfile.mkdtemp(prefix="thinkingbox-mcp-")
        socket_path = os.path.join(workdir, "operator.sock")
        token = secrets.token_urlsafe(24)
        env = {**os.environ, OPERATOR_TOKEN_VARIABLE: token}
        params = StdioServerParameters(
            command=python or sys.executable,
            args=["-m", "thinkingbox_env.cli.main", "serve", target, "--transport", "stdio", "--operator-socket", socket_path],
            env=env,
        )

        def cleanup() -> None:
            for path in (socket_path,):
                if os.path.exists(path):
                    os.unlink(path)
            os.rmdir(workdir)

        operator = OperatorClient(token, socket_path=socket_path, timeout=timeout)
        return cls(lambda: Client(params, mode="legacy", read_timeout_seconds=timeout), operator,
                   session=STDIO_SESSION, timeout=timeout, cleanup=cleanup)

    @classmethod
    def http(cls, url: str, operator_token: str, token: str | None = None, timeout: float = 60.0) -> MCPToolBackend:
        """Connect to ``thinkingbox serve ... --transport http`` at ``url`` (ending in ``/mcp``)."""
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        parts = urlsplit(url)
        base = f"{parts.scheme}://{parts.netloc}"
        backend: MCPToolBackend

        async def remember_session(response: Any) -> None:
            sid = response.headers.get("mcp-session-id")
            if sid and backend.session is None:
                backend.session = sid

        def connect() -> Any:
            headers = {"Authorization": f"Bearer {token}"} if token else None
            client = create_mcp_http_client(headers=headers)
            client.event_hooks["response"].append(remember_session)
            return Client(streamable_http_client(url, http_client=client), mode="legacy", read_timeout_seconds=timeout)

        backend = cls(connect, OperatorClient(operator_token, base_url=base, timeout=timeout), timeout=timeout)
        return backend

    # ------------------------------------------------------------------ the client task

    def _ensure_connected(self) -> None:
        if self._thread is not None:
            return
        loop = asyncio.new_event_loop()
        ready: threading.Event = threading.Event()
        failure: list[BaseException] = []

        async def main() -> None:
            self._queue = asyncio.Queue()
            try:
                async with self._connect() as client:
                    listed = await client.list_tools()
                    self.tool_names = [t.name for t in listed.tools]
                    ready.set()
                    while True:
                        item = await self._queue.get()
                        if item is None:
                            return
                        job, future = item
                        try:
                            future.set_result(await job(client))
                        except Exception as exc:  # noqa: BLE001 - handed back to the caller
                            future.set_exception(exc)
            except BaseException as exc:  # noqa: BLE001 - surfaced by _ensure_connected
                failure.append(exc)
                ready.set()

        def run() -> None:
            asyncio.set_event_loop(loop)
            loop.run_until_complete(main())

        self._loop = loop
        self._thread = threading.Thread(target=run, name="thinkingbox-mcp-client", daemon=True)
        self._thread.start()
        if not ready.wait(self.timeout) or failure:
            reason = failure[0] if failure else "timed out"
            self.close()
            raise MCPBackendError(f"could not connect to the MCP server: {reason}")

    def _run(self, job: Any) -> Any:
        self._ensure_connected()
        assert self._loop is not None and self._queue is not None

        async def submit() -> Any:
            future = self._loop.create_future()  # type: ignore[union-attr]
            await self._queue.put((job, future))  # type: ignore[union-attr]
            return await future

        return asyncio.run_coroutine_threadsafe(submit(), self._loop).result(self.timeout)

    # ------------------------------------------------------------------ EpisodeBackend

    def start(self, env: Any) -> None:
        self.env = env
        first = self._thread is None
        self._ensure_connected()
        if first and self.operator.socket_path is not None:
            self.wait_for_operator()
        if self.session is None:
            raise MCPBackendError("the MCP server did not assign a session id")
        body: dict[str, Any] = {"seed": 0}
        if env.task.split == "test":
            body["task_id"] = env.task.full_id
        else:
            body["spec"] = env.task.model_dump(mode="json")
        self.operator.reset(self.session, body)

    def call(self, name: Any, arguments: Any) -> ToolResult:
        toolbox = self.env.toolbox
        shown = name if isinstance(name, str) else str(name)
        if isinstance(name, str) and name in toolbox:
            parsed, err = toolbox.parse_arguments(arguments)
            if err is not None:  # the same answer the server would give, without the round trip
                return ToolResult(name, {"error": f"tool '{name}': {err}"}, False, toolbox[name].writes, "arguments")
        else:
            parsed = arguments if isinstance(arguments, dict) else {}

        async def job(client: Any) -> Any:
            return await client.call_tool(shown, parsed)

        result = self._run(job)
        text = "".join(getattr(block, "text", "") for block in result.content)
        try:
            content = json.loads(text)
        except json.JSONDecodeError:
            content = {"error": text} if result.is_error else text
        meta = result.meta or {}
        return ToolResult(shown, content, not result.is_error, bool(meta.get(WRITES_META, False)), meta.get(ERROR_KIND_META))

    def outcome(self) -> StateOutcome:
        return StateOutcome.from_json(self.operator.outcome(self.session))  # type: ignore[arg-type]

    def close(self) -> None:
        if self._loop is not None and self._queue is not None and self._thread is not None and self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._queue.put_nowait, None)
            self._thread.join(self.timeout)
        if self._loop is not None and not self._loop.is_running():
            self._loop.close()
        self._loop = self._thread = self._queue = None
        if self._cleanup is not None:
            try:
                self._cleanup()
            except OSError:
                pass
            self._cleanup = None

    def wait_for_operator(self, seconds: float = 30.0) -> None:
        """Block until the operator socket of a spawned stdio server accepts connections."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                self.operator.request("GET", "/operator/sessions")
                return
            except MCPBackendError:
                time.sleep(0.05)
        raise MCPBackendError("the operator API of the MCP server did not come up")
