"""Warm benchmark server processes, started ahead of the episodes that take them.

The benchmark isolates episodes by process, and we keep that model: a process
serves one episode and is then discarded. What costs is starting one (an
interpreter importing the servers' packages, then the MCP handshake: seconds),
so a pool keeps ``size`` processes per server command started and handshaken
before they are asked for. ``take()`` hands one out (starting one in the caller
only when none is ready or on its way), a background thread starts its
replacement at once, and ``discard()`` stops a used process off the caller's
thread. A process is never handed out twice and never returns to the pool.

Every pool is closed at interpreter exit (and on ``close()``): warm processes,
starting ones and discarded ones still shutting down are stopped, and any still
alive after that are killed by process group, so none outlives the run.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import weakref
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .client import StdioServer, TBBenchServerError
from .clone import TBBench
from .format import ServerCommand

log = logging.getLogger(__name__)

POOL_VARIABLE = "THINKINGBOX_TBBENCH_POOL"
DEFAULT_POOL_SIZE = 2


def pool_size_from(value: int | str | None) -> int:
    """A pool size from an argument or ``THINKINGBOX_TBBENCH_POOL``; the default is 2 (0 turns the pool off)."""
    if value is None:
        value = os.environ.get(POOL_VARIABLE)
        if value is None or value == "":
            return DEFAULT_POOL_SIZE
        where = f"{POOL_VARIABLE}={value!r}"
    else:
        where = f"pool_size={value!r}"
    try:
        size = int(value)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: the server pool size must be a whole number >= 0") from None
    if isinstance(value, bool) or size < 0:
        raise ValueError(f"{where}: the server pool size must be a whole number >= 0")
    return size


@dataclass
class _Slot:
    """The warm processes of one server command."""
    ready: deque[StdioServer] = field(default_factory=deque)
    starting: int = 0
    waiting: int = 0
    failure: BaseException | None = None  # the last background start failed: no refills until a start succeeds


class ServerPool:
    """``size`` warm processes per server command, each handed out once; see the module docstring."""

    def __init__(self, size: int, timeout: float = 60.0, cwd: str | None = None):
        if size < 0:
            raise ValueError(f"pool size must be >= 0, got {size}")
        self.size, self.timeout, self.cwd = size, timeout, cwd
        self._cond = threading.Condition()
        self._slots: dict[ServerCommand, _Slot] = {}
        self._live: set[StdioServer] = set()  # every process this pool started that is not closed yet
        self._threads: set[threading.Thread] = set()
        self._closed = False
        self.started = 0  # processes started (warm or in the caller), for the tests and the benchmark
        self.handed_out = 0
        _POOLS.add(self)

    # ------------------------------------------------------------------ handing out

    def take(self, command: ServerCommand) -> StdioServer:
        """A started, handshaken process for one episode, never handed out before; its replacement starts in the background."""
        with self._cond:
            if self._closed:
                raise TBBenchServerError("the server pool is closed")
            slot = self._slots.setdefault(command, _Slot())
            slot.waiting += 1
            try:
                # wait for a start already on its way rather than start another one beside it
                while not slot.ready and slot.starting >= slot.waiting and not self._closed:
                    self._cond.wait()
            finally:
                slot.waiting -= 1
            server = slot.ready.popleft() if slot.ready else None
            self._refill(command, slot)
        if server is None:
            server = self._start(command)  # nothing warm: start one here, as without a pool (its errors are the caller's)
            with self._cond:
                self._slots[command].failure = None
                self._refill(command, self._slots[command])
        server.handed_out = True
        with self._cond:
            self.handed_out += 1
        return server

    def prewarm(self, command: ServerCommand) -> None:
        """Start warm processes for a command ahead of its first ``take()`` (when a task is made)."""
        with self._cond:
            if not self._closed:
                self._refill(command, self._slots.setdefault(command, _Slot()))

    def offer(self, command: ServerCommand, server: StdioServer) -> None:
        """Keep a started process that has served no episode (the one that listed the tools) as a warm one, or close it."""
        with self._cond:
            slot = self._slots.setdefault(command, _Slot())
            keep = not self._closed and not server.handed_out and len(slot.ready) + slot.starting < self.size
            if keep:
                slot.ready.append(server)
                self._live.add(server)
                self._cond.notify_all()
        if not keep:
            server.close(stop=True)

    def resize(self, size: int) -> None:
        """Keep ``size`` warm processes per command from now on; warm ones beyond it are stopped, missing ones started."""
        if size < 0:
            raise ValueError(f"pool size must be >= 0, got {size}")
        surplus: list[StdioServer] = []
        with self._cond:
            self.size = size
            for command, slot in self._slots.items():
                while len(slot.ready) > size:
                    surplus.append(slot.ready.pop())
                self._refill(command, slot)
        for server in surplus:
            self.discard(server)

    def discard(self, server: StdioServer) -> None:
        """Stop a process after its episode, on a thread of its own so that the caller does not wait for it."""
        self._spawn(self._close_one, server, name=f"tbbench-discard-{server.server.name}")

    # ------------------------------------------------------------------ starting and stopping

    def _start(self, command: ServerCommand) -> StdioServer:
        server = StdioServer(command, self.timeout, cwd=self.cwd)
        with self._cond:
            self.started += 1
            if self._closed:
                closed = True
            else:
                closed = False
                self._live.add(server)
        if closed:
            server.close(stop=True)
            raise TBBenchServerError("the server pool was closed while a server started")
        return server

    def _refill(self, command: ServerCommand, slot: _Slot) -> None:
        """Start background processes until ready + starting reaches the pool size (holding the lock)."""
        if self._closed or slot.failure is not None:
            return
        while len(slot.ready) + slot.starting < self.size:
            slot.starting += 1
            self._spawn(self._warm_one, command, name=f"tbbench-warm-{command.name}")

    def _warm_one(self, command: ServerCommand) -> None:
        try:
            server = self._start(command)
        except BaseException as exc:  # noqa: BLE001 - the next take() starts one itself and reports the error
            with self._cond:
                slot = self._slots[command]
                slot.starting -= 1
                if not self._closed:
                    slot.failure = exc
                    log.warning("warm start of server '%s' failed: %s", command.name, exc)
                self._cond.notify_all()
            return
        with self._cond:
            slot = self._slots[command]
            slot.starting -= 1
            slot.ready.append(server)
            self._cond.notify_all()

    def _close_one(self, server: StdioServer) -> None:
        try:
            server.close(stop=True)
        finally:
            with self._cond:
                self._live.discard(server)

    def _spawn(self, target: Callable[[Any], None], arg: Any, name: str) -> None:
        def run() -> None:
            try:
                target(arg)
            finally:
                with self._cond:
                    self._threads.discard(thread)

        thread = threading.Thread(target=run, name=name, daemon=True)
        with self._cond:
            self._threads.add(thread)
        thread.start()

    def live_pids(self) -> list[int]:
        """The pids of the processes this pool has started and not yet stopped (where they are known)."""
        with self._cond:
            return sorted(s.pid for s in self._live if s.pid is not None)

    def close(self) -> None:
        """Stop every process of the pool (warm, starting, being discarded) and wait for them; idempotent."""
        with self._cond:
            self._closed = True
            warm = [s for slot in self._slots.values() for s in slot.ready]
            for slot in self._slots.values():
                slot.ready.clear()
            self._cond.notify_all()
        for server in warm:
            self._close_one(server)
        with self._cond:
            threads = list(self._threads)
        for thread in threads:
            thread.join(self.timeout)
        with self._cond:
            left = list(self._live)
            self._live.clear()
        for server in left:  # a start or a discard that did not finish in time
            server.kill()


_POOLS: weakref.WeakSet[ServerPool] = weakref.WeakSet()
_BENCH_LOCK = threading.Lock()


def bench_pool(bench: TBBench, timeout: float = 60.0) -> ServerPool:
    """The clone's pool of warm server processes, made on first use with the clone's pool size (servers run in the clone)."""
    with _BENCH_LOCK:
        if bench._pool is None:
            bench._pool = ServerPool(pool_size_from(bench.pool_size), timeout, cwd=str(bench.data_dir))
        return bench._pool


def set_pool_size(bench: TBBench, size: int | str | None) -> None:
    """Change how many warm processes the clone keeps per server command (episodes running keep theirs)."""
    new = pool_size_from(size)
    with _BENCH_LOCK:
        bench.pool_size, pool = new, bench._pool
    if pool is not None:
        pool.resize(new)


@atexit.register
def _close_pools() -> None:
    for pool in list(_POOLS):
        try:
            pool.close()
        except Exception as exc:  # noqa: BLE001 - every pool gets its turn
            log.warning("closing a server pool at exit failed: %s", exc)
