#!/usr/bin/env python
"""What one benchmark episode costs in process start-up, with the test server of ``tests/data/tbbench``.

Thinkingbox-bench isolates episodes by process: every episode starts its own
tool-server process, initialises it, and tears it down. This measures, over N
episodes of the tiny test task (the servers' own work is negligible there):

1. reset: spawn, MCP handshake, ``__reserved__init`` (median and p90 seconds);
2. one domain tool call over MCP (median);
3. the verdict: ``__reserved__geteffects`` (median);
4. close: ``__reserved__teardown`` and process exit (median).

Run: ``python benchmarks/bench_tbbench.py [--episodes 10] [--json results.json]``.
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
from thinkingbox_env.tbbench.source import task_source  # noqa: E402

TASK = "dataset/tests/toy_shop_tasks.py:test_cancel_pending"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--episodes", type=int, default=10)
    ap.add_argument("--data-dir", default=str(ROOT / "tests" / "data" / "tbbench"))
    ap.add_argument("--server-python", default=sys.executable)
    ap.add_argument("--task", default=TASK)
    ap.add_argument("--json")
    args = ap.parse_args()
    register_source()
    env = task_source().make(args.task, data_dir=args.data_dir, server_python=args.server_python)
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
    result = {
        "machine": {"platform": platform.platform(), "python": platform.python_version(), "cpus": os.cpu_count()},
        "date": time.strftime("%Y-%m-%d"),
        "episodes": args.episodes,
        "reset_median_s": statistics.median(reset),
        "reset_p90_s": sorted(reset)[int(0.9 * (len(reset) - 1))],
        "tool_call_median_s": statistics.median(call),
        "geteffects_median_s": statistics.median(verdict),
        "close_median_s": statistics.median(close),
    }
    print(json.dumps(result, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
