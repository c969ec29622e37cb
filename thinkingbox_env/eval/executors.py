"""Executors: a run's trials on worker threads or as Ray tasks, and ``RunControl``, which stops a run cleanly.

A run is a list of (task, trial index) pairs (:func:`plan_trials`). A run can be stopped
cleanly through a ``RunControl``: no new trial starts, trials in flight give up at their
next model call (their half-done episodes are not rows), and every trial that finished is
still handed over. The same control stops a run after K consecutive system errors, so a
broken endpoint costs a few trials rather than the whole run.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterable
from collections.abc import Set as AbstractSet
from typing import Any

from ..contracts.records import EvalRow
from .config import EvalConfig
from .run_files import RunFileError
from .trial import TrialCancelled, run_trial


def plan_trials(tasks: Iterable[str], trials: int, done: AbstractSet[tuple[str, int]] = frozenset()) -> list[tuple[str, int]]:
    """Trial-major order: every task gets its first trial before any gets a second."""
    tasks = list(tasks)
    return [(t, i) for i in range(trials) for t in tasks if (t, i) not in done]



class RunControl:
    """Stops a run cleanly: on request (a signal) or after ``max_consecutive_errors`` system errors in a row.

    Every executor takes one; ``observe`` is called with each finished row.
    """

    def __init__(self, max_consecutive_errors: int = 0):
        self.event = threading.Event()
        self.max_consecutive_errors = max_consecutive_errors
        self.reason: str | None = None
        self.first_error: dict[str, Any] | None = None  # the first system error of the current streak
        self._streak = 0

    @property
    def stopped(self) -> bool:
        return self.event.is_set()

    def stop(self, reason: str) -> None:
        if not self.event.is_set():
            self.reason = reason
            self.event.set()

    def observe(self, row: EvalRow) -> None:
        if row.status == "ok":
            self._streak = 0
            self.first_error = None
            return
        self._streak += 1
        if self.first_error is None:
            self.first_error = row.system_error or {}
        if self.max_consecutive_errors and self._streak >= self.max_consecutive_errors:
            self.stop("errors")


# --------------------------------------------------------------------------- executors

GRACE_SECONDS = 5.0  # how long a stopped run waits for trials in flight before leaving them


def run_local(config: EvalConfig, plan: list[tuple[str, int]], on_row: Callable[[EvalRow], None],
              concurrency: int = 1, control: RunControl | None = None, grace: float = GRACE_SECONDS) -> None:
    """Trials on worker threads (model calls dominate a trial; the backend is thread-safe).

    At most ``concurrency`` trials are started at a time, so a stopped run launches nothing
    more. Once stopped, trials in flight end at their next turn; those still waiting on a
    model answer after ``grace`` seconds are left behind on daemon threads (their
    requests end with the process), so stopping never waits for a slow endpoint.
    """
    control = control or RunControl()
    todo = list(plan)
    results: queue.Queue[tuple[str, Any]] = queue.Queue()

    def work(task_id: str, trial: int) -> None:
        try:
            results.put(("row", run_trial(config, task_id, trial, control.event)))
        except TrialCancelled:
            results.put(("cancelled", None))
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread, which raises it
            results.put(("crash", exc))

    in_flight = 0
    stopped_at: float | None = None
    while True:
        while todo and in_flight < max(concurrency, 1) and not control.stopped:
            task_id, trial = todo.pop(0)
            threading.Thread(target=work, args=(task_id, trial), daemon=True, name=f"trial {task_id}#{trial}").start()
            in_flight += 1
        if in_flight == 0:
            return
        if control.stopped:
            stopped_at = stopped_at or time.monotonic()
            if time.monotonic() - stopped_at > grace:
                return
        try:
            kind, value = results.get(timeout=0.1)  # short, so signal handlers run on the main thread
        except queue.Empty:
            continue
        in_flight -= 1
        if kind == "crash":
            control.stop("crash")
            raise value
        if kind == "row":
            control.observe(value)
            on_row(value)


def _ray_trial(config: EvalConfig, task_id: str, trial: int) -> EvalRow:
    return run_trial(config, task_id, trial)


def run_ray(config: EvalConfig, plan: list[tuple[str, int]], on_row: Callable[[EvalRow], None],
            address: str | None = None, concurrency: int = 0, control: RunControl | None = None) -> None:
    """Trials as Ray tasks on an existing cluster (``address``) or a local Ray instance; rows come back here.

    A stopped run launches nothing more and cancels the Ray tasks in flight.
    """
    try:
        import ray
    except ImportError as exc:
        raise RunFileError("--ray needs Ray, which is not installed: pip install -e '.[ray]' in the thinkingbox-env checkout "
                           "(or run without --ray: trials then run on local threads)") from exc
    control = control or RunControl()
    if not ray.is_initialized():
        ray.init(address=address, ignore_reinit_error=True, log_to_driver=False,
                 include_dashboard=False, configure_logging=False)
    remote = ray.remote(num_cpus=0.25)(_ray_trial)
    todo = list(plan)
    limit = concurrency if concurrency > 0 else len(todo)
    in_flight: list[Any] = []
    while todo or in_flight:
        if control.stopped:
            for ref in in_flight:
                ray.cancel(ref, force=True)
            return
        while todo and len(in_flight) < limit:
            task_id, trial = todo.pop(0)
            in_flight.append(remote.remote(config, task_id, trial))
        ready, in_flight = ray.wait(in_flight, num_returns=1, timeout=0.2)
        for ref in ready:
            row = ray.get(ref)
            control.observe(row)
            on_row(row)
