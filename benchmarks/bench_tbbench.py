#!/usr/bin/env python
"""What one benchmark episode costs in process start-up, with the test server of ``tests/data/tbbench``.

Thinkingbox-bench isolates episodes by process: every episode starts its own
tool-server process, initialises it, and tears it down. This measures, over N
episodes of the tiny test task (the servers' own work is negligible there):

0. the first ``make()`` of the task file in a fresh process (parsing the clone's files,
   listing the servers' tools by a process of their own);
1. reset: a server process for the episode (taken from the pool of warm ones, or spawned
   and handshaken when there is none), ``__reserved__init`` (median, p95, p90 seconds);
2. one domain tool call over MCP (median);
3. the verdict: ``__reserved__geteffects`` (median);
4. close: ``__reserved__teardown``; the process is stopped off the caller's thread (median).

``--pool-size 0`` measures without warm processes (every reset spawns its own).
``--gap`` waits that many seconds after each episode, standing in for the agent's
time: a pool is refilled in the background while episodes run, so it hides the
start-up only when an episode lasts at least as long as a start (back to back,
``--gap 0``, the resets wait for processes still starting).

Run: ``python benchmarks/bench_tbbench.py [--episodes 10] [--pool-size 2] [--gap 3] [--json results.json]``.
Real benchmark servers import more than the test server, so their start-up is
longer; run this with ``--data-dir``/``--server-python`` of a clone to see it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from thinkingbox_env.tbbench import register_source  # noqa: E402
from thinkingbox_env.tbbench.pool import bench_pool  # noqa: E402
from thinkingbox_env.tbbench.source import task_source  # noqa: E402

TASK = "dataset/tests/toy_shop_tasks.py:test_cancel_pending"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--episodes", type=int, default=10)
    ap.add_argument("--data-dir", default=str(ROOT / "tests" / "data" / "tbbench"))
    ap.add_argument("--server-python", default=sys.executable)
    ap.add_argument("--task", default=TASK)
    ap.add_argument("--pool-size", type=int, default=None, help="warm server processes per command (default: the package's)")
    ap.add_argument("--gap", type=float, default=0.0, help="seconds to wait after each episode (the agent's time)")
    ap.add_argument("--json")
    args = ap.parse_args()
    register_source()
    t = time.perf_counter()
    env = task_source().make(args.task, data_dir=args.data_dir, server_python=args.server_python, pool_size=args.pool_size)
    first_make = time.perf_counter() - t
    first = env.task.golden[0]
    reset, call, verdict, close = [], [], [], []
    for i in range(args.episodes):
        t = time.perf_counter()
        env.reset(seed=i)
        reset.append(time.perf_counter() - t)
        t = time.perf_counter()
        env.step({"name": first.name, "arguments": dict(first.arguments)})
        call.append(time.perf_counter() - t)
        t = time.perf_counter()
        env.state.effects()
        verdict.append(time.perf_counter() - t)
        t = time.perf_counter()
        env.close()
        close.append(time.perf_counter() - t)
        time.sleep(args.gap)
    pool = bench_pool(env.bench)
    reset.sort()
    result = {
        "machine": {"platform": platform.platform(), "python": platform.python_version(), "cpus": os.cpu_count()},
        "date": time.strftime("%Y-%m-%d"),
        "load_average_1min": os.getloadavg()[0],
        "episodes": args.episodes,
        "pool_size": pool.size,
        "gap_s": args.gap,
        "first_make_s": first_make,
        "reset_median_s": statistics.median(reset),
        "reset_p95_s": reset[min(len(reset) - 1, round(0.95 * (len(reset) - 1)))],
        "reset_p90_s": reset[int(0.9 * (len(reset) - 1))],
        "tool_call_median_s": statistics.median(call),
        "geteffects_median_s": statistics.median(verdict),
        "close_median_s": statistics.median(close),
    }
    result["processes_started"], result["processes_handed_out"] = pool.started, pool.handed_out
    print(json.dumps(result, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
