"""Limits a served backend keeps across its sessions: identity lockout with exponential backoff.

In process, an identity tool (one declared with ``@tool(identity=...)``, such as
``verify_identity``) locks a record after a few failed checks *within the episode*:
that is the conversation's rule, and the Gymnasium env keeps it. A server, though,
hands out fresh episodes to whoever opens a session, so a per-episode rule alone lets
a client guess a secret three times per session for as long as it likes. The
:class:`IdentityGuard` therefore counts failed checks for the life of the server
process, per record (the identity being guessed) and per client (agent token or
connection peer), and refuses further checks on a locked record, or from a locked
client, until a wait that doubles with each further failure has passed.

A failed check is a call of an identity tool that ran and reported a factor as
``"no match"`` (the identity tools' common vocabulary). Checks in flight count as
failures until they finish, so a burst of concurrent guesses cannot slip through
while the counter is still low.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

NO_MATCH = "no match"
DEFAULT_IDENTITY_FAILURES = 3  # per record, as the in-episode rule: a careful agent never reaches it across sessions
DEFAULT_CLIENT_FAILURES = 10  # per client across all records: spraying guesses over many records is also slowed
DEFAULT_BACKOFF_S = 30.0
DEFAULT_BACKOFF_MAX_S = 3600.0
DEFAULT_FORGET_S = 86400.0  # a counter whose last failure is this old starts again from zero
MAX_TRACKED = 100_000  # records and clients remembered at once; beyond it the oldest that hold no failure are forgotten


def check_failed(content: Any) -> bool:
    """Whether an identity tool's result reports a factor that did not match (at the top level or one level down)."""
    if not isinstance(content, dict):
        return False
    return any(value == NO_MATCH or (isinstance(value, dict) and NO_MATCH in value.values()) for value in content.values())


@dataclass
class _Count:
    failures: int = 0
    in_flight: int = 0
    last: float = 0.0  # when the last failure was recorded
    until: float = 0.0  # no check before this time (0: not locked)


class IdentityGuard:
    """Failed identity checks per record and per client, for the life of one server.

    ``identity_failures`` failed checks of one record (in any sessions and episodes)
    lock it for ``backoff`` seconds; every further failure doubles the wait, up to
    ``backoff_max``. ``client_failures`` failed checks by one client, over any records,
    lock that client the same way. A counter is forgotten ``forget`` seconds after its
    last failure. ``identity_failures=0`` turns the guard off (the per-episode rule still
    applies). ``clock`` is injectable so the rule can be tested without waiting.
    """

    def __init__(self, identity_failures: int = DEFAULT_IDENTITY_FAILURES, client_failures: int = DEFAULT_CLIENT_FAILURES,
                 backoff: float = DEFAULT_BACKOFF_S, backoff_max: float = DEFAULT_BACKOFF_MAX_S,
                 forget: float = DEFAULT_FORGET_S, clock: Callable[[], float] = time.monotonic):
        for name, value in (("identity failures", identity_failures), ("client identity failures", client_failures)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"the {name} allowed must be a whole number >= 0 (got {value!r})")
        for name, seconds in (("identity backoff", backoff), ("identity backoff maximum", backoff_max), ("forget time", forget)):
            if not seconds > 0:
                raise ValueError(f"the {name} must be a positive number of seconds (got {seconds!r})")
        if backoff_max < backoff:
            raise ValueError(f"the identity backoff maximum ({backoff_max:g} s) is below the first wait ({backoff:g} s)")
        self.identity_failures, self.client_failures = identity_failures, client_failures
        self.backoff, self.backoff_max, self.forget, self.clock = backoff, backoff_max, forget, clock
        self._records: OrderedDict[tuple[str, str], _Count] = OrderedDict()
        self._clients: OrderedDict[str, _Count] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        return self.identity_failures > 0

    def wait_after(self, failures: int, free: int) -> float:
        """The lock after ``failures`` failed checks when ``free`` are allowed: 0 below it, then doubling from ``backoff``."""
        if free <= 0 or failures < free:
            return 0.0
        return min(self.backoff_max, self.backoff * 2.0 ** min(failures - free, 64))

    def _get(self, table: OrderedDict, key: Any, now: float) -> _Count:
        count = table.get(key)
        if count is not None and count.in_flight == 0 and count.failures and now - count.last >= self.forget:
            count = None  # long quiet: start again
        if count is None:
            count = table[key] = _Count()
            while len(table) > MAX_TRACKED and self._evict_one(table, key, now):
                pass
        table.move_to_end(key)
        return count

    @staticmethod
    def _evict_one(table: OrderedDict, keep: Any, now: float) -> bool:
        """Forget the oldest counter that holds nothing: no failure first, else no lock; never a lock or a check in flight.

        A flood of made-up records (each a counter with no failure) thus evicts only its own
        kind, and a locked record stays locked. Only locked counters and checks in flight can
        take the table past its bound, and each of those cost a failed check the client's own
        counter also holds.
        """
        victim = next((k for k, c in table.items() if k != keep and not c.failures and not c.in_flight), None)
        if victim is None:
            victim = next((k for k, c in table.items() if k != keep and not c.in_flight and c.until <= now), None)
        if victim is None:
            return False
        del table[victim]
        return True

    def _refusal(self, count: _Count, free: int, now: float) -> float | None:
        """Seconds to wait before a check is allowed, or None if it may run now."""
        if count.failures + count.in_flight < free:
            return None
        if count.in_flight:  # at the threshold with checks still running: wait for them
            return max(count.until - now, self.backoff)
        if now < count.until:
            return count.until - now
        return None

    def begin(self, tool: str, record: str, client: str) -> str | None:
        """Admit one check of ``record`` by ``client`` (then :meth:`finish` it), or the refusal message naming the limit."""
        if not self.enabled:
            return None
        with self._lock:
            now = self.clock()
            rec = self._get(self._records, (tool, record), now)
            cli = self._get(self._clients, client, now) if self.client_failures else None
            wait = self._refusal(rec, self.identity_failures, now)
            if wait is not None:
                return (f"identity verification for {record} is locked on this server after {rec.failures} failed "
                        f"attempts in any session (limit {self.identity_failures}; locked for "
                        f"{self.wait_after(rec.failures, self.identity_failures):g} s); retry in {wait:.3g} s. The wait "
                        f"doubles with each further failed attempt, up to {self.backoff_max:g} s; do not guess: "
                        "continue at the verified level or transfer the customer to a human agent")
            if cli is not None:
                wait = self._refusal(cli, self.client_failures, now)
                if wait is not None:
                    return (f"identity verification is locked for this client after {cli.failures} failed attempts "
                            f"over any records (limit {self.client_failures}; locked for "
                            f"{self.wait_after(cli.failures, self.client_failures):g} s); retry in {wait:.3g} s. The wait "
                            f"doubles with each further failed attempt, up to {self.backoff_max:g} s")
            rec.in_flight += 1
            if cli is not None:
                cli.in_flight += 1
            return None

    def finish(self, tool: str, record: str, client: str, failed: bool) -> None:
        """Close a check :meth:`begin` admitted; a failed one counts against the record and the client."""
        if not self.enabled:
            return
        with self._lock:
            now = self.clock()
            pairs = [(self._get(self._records, (tool, record), now), self.identity_failures)]
            if self.client_failures:
                pairs.append((self._get(self._clients, client, now), self.client_failures))
            for count, free in pairs:
                count.in_flight = max(0, count.in_flight - 1)
                if failed:
                    count.failures += 1
                    count.last = now
                    wait = self.wait_after(count.failures, free)
                    count.until = now + wait if wait else 0.0

    def state(self, tool: str, record: str) -> dict[str, Any]:
        """A record's counter, for tests and the operator: failures and seconds left locked."""
        with self._lock:
            count = self._records.get((tool, record)) or _Count()
            return {"failures": count.failures, "locked_s": max(0.0, count.until - self.clock())}
