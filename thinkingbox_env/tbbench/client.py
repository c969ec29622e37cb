"""A blocking MCP client for one benchmark server process spoken to over stdio.

The benchmark's isolation model is one server process per episode: the process
holds the episode's database in memory and computes its hashes. The MCP client
is asynchronous and the Gymnasium API is not, so each connection owns an event
loop on a background thread and every call is handed to it and waited for.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import tempfile
import threading
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from ..extras import MCP_MODULES, require_extra
from .format import ServerCommand

log = logging.getLogger(__name__)


class TBBenchServerError(RuntimeError):
    """A benchmark server could not be started, or refused a reserved call."""


PROCESS_TOKEN = "THINKINGBOX_TBBENCH_PROCESS"


def child_with_token(token: str) -> int | None:
    """The pid of this process's child whose environment carries ``PROCESS_TOKEN=token`` (Linux ``/proc``), else None.

    The SDK's stdio transport does not expose the process it spawns; a token
    of our own in its environment finds it without racing other spawns, so
    that a discarded server can be stopped at once and none outlives us.
    """
    needle = f"{PROCESS_TOKEN}={token}".encode()
    try:
        tasks = os.listdir(f"/proc/{os.getpid()}/task")
    except OSError:
        return None
    for tid in tasks:
        try:
            with open(f"/proc/{os.getpid()}/task/{tid}/children", encoding="ascii") as fh:
                children = [int(c) for c in fh.read().split()]
        except OSError:
            continue
        for pid in children:
            try:
                with open(f"/proc/{pid}/environ", "rb") as fh:
                    if needle in fh.read().split(b"\0"):
                        return pid
            except OSError:
                continue
    return None


def pid_alive(pid: int) -> bool:
    """Whether ``pid`` is a live process that is not a zombie waiting to be reaped."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        try:
            os.kill(pid, 0)
        except OSError:
            return False
        return True


def result_payload(result: Any) -> tuple[Any, bool]:
    """(JSON value, is_error) of an MCP tool result: structured content first, then the text as JSON."""
    structured = getattr(result, "structured_content", None)
    text = "".join(getattr(block, "text", "") for block in result.content or [])
    if isinstance(structured, dict) and not text:
        return structured, bool(result.is_error)
    try:
        return json.loads(text), bool(result.is_error)
    except json.JSONDecodeError:
        return (structured if isinstance(structured, dict) else text), bool(result.is_error)


class StdioServer:
    """One spawned server and its MCP session, usable from synchronous code."""

    def __init__(self, server: ServerCommand, timeout: float = 60.0, cwd: str | None = None):
        # checked here, in the caller's thread: the MCP client is imported in the session's thread, where a missing
        # package would only surface as a server that "could not be started"
        require_extra("mcp", MCP_MODULES, "the published benchmark's MCP servers (tbbench)")
        self.server, self.cwd = server, cwd
        # the server's stderr, kept so that a failed start can say why (and never tied to our own stderr)
        self._errlog = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115 - closed in close()
        self.timeout = timeout
        self.tools: list[Any] = []
        self.token = uuid.uuid4().hex
        self.pid: int | None = None  # found after the handshake (Linux); used to stop a discarded process at once
        self.handed_out = False  # set by the pool: a process serves one episode, never two
        self._loop = asyncio.new_event_loop()
        self._queue: asyncio.Queue | None = None
        self._thread = threading.Thread(target=self._loop.run_until_complete, args=(self._main(),),
                                        name=f"tbbench-{server.name}", daemon=True)
        self._ready = threading.Event()
        self._failure: BaseException | None = None
        self._thread.start()
        if not self._ready.wait(timeout) or self._failure is not None:
            reason = self._failure if self._failure is not None else f"no answer within {timeout:.0f}s"
            stderr = self.stderr_tail()
            self.close()
            if stderr:
                reason = f"{reason}; server stderr: {stderr}"
            raise TBBenchServerError(f"server '{server.name}' ({' '.join(server.command)}) could not be started: {reason}")
        self.pid = child_with_token(self.token)

    async def _main(self) -> None:
        from mcp import Client
        from mcp.client.stdio import StdioServerParameters, stdio_client

        params = StdioServerParameters(command=self.server.command[0], args=list(self.server.command[1:]),
                                       env={**os.environ, **dict(self.server.env), PROCESS_TOKEN: self.token}, cwd=self.cwd)
        self._queue = asyncio.Queue()
        try:
            transport = stdio_client(params, errlog=self._errlog)
            async with Client(transport, mode="legacy", read_timeout_seconds=self.timeout) as client:
                self.tools = list((await client.list_tools()).tools)
                self._ready.set()
                while True:
                    item = await self._queue.get()
                    if item is None:
                        return
                    job, future = item
                    try:
                        future.set_result(await job(client))
                    except Exception as exc:  # noqa: BLE001 - handed back to the caller
                        future.set_exception(exc)
        except BaseException as exc:  # noqa: BLE001 - reported by the constructor or the next call
            self._failure = exc
            self._ready.set()

    def _run(self, job: Callable[[Any], Awaitable[Any]]) -> Any:
        if self._queue is None or not self._thread.is_alive():
            raise TBBenchServerError(f"server '{self.server.name}' is not running ({self._failure or 'closed'})")

        async def submit() -> Any:
            future = self._loop.create_future()
            await self._queue.put((job, future))  # type: ignore[union-attr]
            return await future

        return asyncio.run_coroutine_threadsafe(submit(), self._loop).result(self.timeout)

    def call(self, name: str, arguments: dict[str, Any]) -> tuple[Any, bool]:
        """(JSON result, is_error) of one tool call."""
        async def job(client: Any) -> Any:
            return await client.call_tool(name, arguments)

        return result_payload(self._run(job))

    def stderr_tail(self, limit: int = 2000) -> str:
        try:
            self._errlog.flush()
            self._errlog.seek(0)
            return self._errlog.read()[-limit:].strip()
        except (OSError, ValueError):
            return ""

    def kill(self) -> None:
        """Stop the process group now (SIGKILL); for a process that is discarded, or still alive at exit."""
        if self.pid is not None and pid_alive(self.pid):
            try:
                os.killpg(self.pid, signal.SIGKILL)  # the SDK starts each server in a session of its own
            except OSError:
                pass

    def close(self, stop: bool = False) -> None:
        """End the session and the process; ``stop``: kill it rather than wait out the SDK's grace period for its exit.

        The servers exit on end of input only after a couple of seconds, which
        the SDK waits for; a process that has served its episode holds nothing
        worth a graceful exit, so the pool stops it at once.
        """
        if self._thread.is_alive() and self._queue is not None:
            self._loop.call_soon_threadsafe(self._queue.put_nowait, None)
            if stop:
                self.kill()
            self._thread.join(self.timeout)
        if self._thread.is_alive() or stop:
            self.kill()
        if not self._thread.is_alive() and not self._loop.is_closed():
            self._loop.close()
        self._errlog.close()
