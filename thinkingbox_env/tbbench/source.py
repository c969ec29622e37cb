"""The ``tbbench`` task namespace: ``make("tbbench/<file.py>:<test>")``, the ``tbbench-v1`` suite, the reference check.

The clone and the servers' interpreter are given per call (``data_dir=``,
``server_python=``) or by ``THINKINGBOX_TBBENCH_DIR`` and
``THINKINGBOX_TBBENCH_PYTHON``, so ``gymnasium``-style ``make`` calls with a task
id alone work too once the variables are set.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path
from typing import Any

from ..contracts.events import is_tool_call
from .clone import TBBench
from .env import TBBenchEnv
from .format import NAMESPACE, TBBenchFormatError
from .pool import set_pool_size

log = logging.getLogger(__name__)

SUITE = "tbbench-v1"
DATA_DIR_VARIABLE = "THINKINGBOX_TBBENCH_DIR"
PYTHON_VARIABLE = "THINKINGBOX_TBBENCH_PYTHON"


class TBBenchSource:
    """A task source for the registry; one parsed clone is kept per (data dir, interpreter)."""

    namespace = NAMESPACE

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._benches: dict[tuple[str, str], TBBench] = {}

    def bench(self, data_dir: str | Path | None = None, server_python: str | None = None) -> TBBench:
        data_dir = data_dir or os.environ.get(DATA_DIR_VARIABLE)
        server_python = server_python or os.environ.get(PYTHON_VARIABLE)
        if not data_dir:
            raise TBBenchFormatError(f"tbbench tasks need data_dir= (or {DATA_DIR_VARIABLE}): the folder of a thinkingbox-data clone")
        if not server_python:
            raise TBBenchFormatError(f"tbbench tasks need server_python= (or {PYTHON_VARIABLE}): "
                                     "the python of the virtualenv the benchmark servers are installed in")
        key = (str(Path(data_dir).expanduser().resolve()), str(server_python))
        with self._lock:
            if key not in self._benches:
                self._benches[key] = TBBench(*key)
            return self._benches[key]

    def make(self, name: str, data_dir: str | Path | None = None, server_python: str | None = None,
             pool_size: int | None = None, **kwargs: Any) -> TBBenchEnv:
        """An env for one task; ``pool_size`` sets the clone's warm server processes per server command (see ``tbbench.pool``)."""
        bench = self.bench(data_dir, server_python)
        if pool_size is not None:
            set_pool_size(bench, pool_size)
        return TBBenchEnv(bench.task(name), bench, **kwargs)

    def suites(self) -> list[str]:
        return [SUITE]

    def suite_tasks(self, suite: str, data_dir: str | Path | None = None, server_python: str | None = None,
                    pool_size: int | None = None, **unknown: Any) -> list[str]:
        # TaskSource lets the caller pass any suite option; refuse the ones this source does not take.
        # (pool_size is a make() option the CLI passes to both; listing tasks starts no server.)
        if unknown:
            raise TypeError(f"unknown tbbench suite options {sorted(unknown)}; supported: data_dir, server_python, pool_size")
        if suite != SUITE:
            raise TBBenchFormatError(f"unknown suite '{suite}'; the tbbench source provides: {SUITE}")
        return [f"{NAMESPACE}/{t}" for t in self.bench(data_dir, server_python).release_tasks()]


_SOURCE = TBBenchSource()


def task_source() -> TBBenchSource:
    """The entry point of the ``thinkingbox_env.task_sources`` group."""
    return _SOURCE


def register_source() -> TBBenchSource:
    """Register the namespace directly (for an install whose entry points were not refreshed)."""
    from ..envs.registration import register_task_source

    register_task_source(NAMESPACE, _SOURCE)
    return _SOURCE


def reference_check(task_ids: list[str], data_dir: str | Path | None = None, server_python: str | None = None,
                    timeout: float = 60.0, pool_size: int | None = None) -> list[dict[str, Any]]:
    """Replay each task's golden tool interactions through the env; does the result hash equal the golden hash?

    One row per task: ``reproduced`` (bool), the hashes per server, and the golden
    calls that returned an error. A task that cannot even start is a row with ``error``.
    """
    rows = []
    for task_id in task_ids:
        row: dict[str, Any] = {"task_id": task_id if task_id.startswith(NAMESPACE + "/") else f"{NAMESPACE}/{task_id}"}
        env = None
        try:
            env = _SOURCE.make(task_id, data_dir=data_dir, server_python=server_python, timeout=timeout, pool_size=pool_size)
            row["scenario"] = env.task.scenario
            env.reset(seed=0)
            failed = []
            for i, call in enumerate(env.task.golden):
                env.step({"name": call.name, "arguments": dict(call.arguments)})
                event = next(e for e in reversed(env.trace) if is_tool_call(e))
                if not event.get("ok"):
                    failed.append({"index": i, "name": call.name, "result": event.get("result")})
            assert env.state is not None  # reset() started the server episode
            effects = env.state.effects()
            row.update(
                reproduced=all(bool(e.get("result_db_hash")) and e.get("result_db_hash") == e.get("golden_db_hash")
                               for e in effects.values()),
                hashes={s: {"result": e.get("result_db_hash"), "golden": e.get("golden_db_hash")} for s, e in effects.items()},
                golden_calls=len(env.task.golden),
                failed_calls=failed,
            )
        except Exception as exc:  # noqa: BLE001 - one broken task must not hide the others
            log.warning("reference check of %s failed: %s", task_id, exc)
            row.update(reproduced=False, error=f"{type(exc).__name__}: {exc}")
        finally:
            if env is not None:
                env.close()
        rows.append(row)
    return rows
