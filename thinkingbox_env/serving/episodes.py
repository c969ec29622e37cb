"""The episode host: the live episodes of one server, one per MCP session (or one shared), and their calls.

Over stdio there is one episode per process; over streamable HTTP every MCP session gets
its own isolated episode, bound to the session id the server issued at the handshake and
dropped after a configurable idle time (sooner if it has made no tool call yet, so bare
handshakes cannot hold the slots). Each client may hold at most a share of the slots, one
session's calls run one at a time, and failed identity checks are counted across sessions
(:mod:`.limits`). A request that names an id the server did not issue, or one whose episode
has expired or been closed, is refused with a message saying so: an episode is never
replaced behind a client's back, since an agent that went on working on a fresh state would
be graded on writes it never made. The operator's reads (diff, outcome, verdict) grade an
episode with the same ``grade`` as the in-process env.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio

from ..checks import grade, interleave, state_outcome
from ..contracts.spec import TaskSpec
from ..state import EpisodeState
from ..tasks.domain import Domain, load_domain
from ..tasks.lookup import list_tasks, load_task
from ..tasks.runtime import runtime_for
from ..toolkit.tools import ToolResult
from .limits import IdentityGuard, check_failed

log = logging.getLogger(__name__)


STDIO_SESSION = "default"
DEFAULT_MAX_EPISODES = 64  # each live episode holds its own state (several MB): the cap bounds the server's memory
DEFAULT_FIRST_CALL_TIMEOUT = 120.0  # a session with no tool call yet: long enough for a model's first turn, short for a squatter
DEFAULT_WORKERS = 16  # threads running tool calls; DuckDB releases the GIL, so reads of different episodes overlap


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
            from ..contracts.spec import parse_task

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
                     finish_reason=finish_reason, runtime=runtime_for(task)).to_json()

    def close(self) -> None:
        with self._lock:
            episodes = list(self._episodes.values())
            self._episodes.clear()
        for ep in episodes:
            ep.close()
