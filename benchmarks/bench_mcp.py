"""Latency of one tool call in-process, over MCP stdio and over MCP streamable HTTP.

The same read tool (get_customer_profile) and write tool (update_ticket) are called
through ``env.step`` with each tool backend; the difference is the cost of the MCP
transport. Run: ``python benchmarks/bench_mcp.py [--calls N] [--json PATH]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import time

import thinkingbox_env as tb
from thinkingbox_env.serving.backend import MCPToolBackend

TASK = "retail/ST030_001"
READ = {"name": "get_customer_profile", "arguments": {"customer_id": "CUS-3000001"}}
WRITE = {"name": "update_ticket", "arguments": {"ticket_id": 50001, "status": "solved", "note": "checked"}}


def measure(env, action, calls: int) -> dict[str, float]:
    env.reset(seed=0)
    env.step(action)  # warm: connection, memo, first-write copy
    samples = []
    for _ in range(calls):
        t0 = time.perf_counter()
        env.step(action)
        samples.append(time.perf_counter() - t0)
    samples.sort()
    return {"median_ms": 1000 * statistics.median(samples), "p95_ms": 1000 * samples[int(0.95 * (len(samples) - 1))], "n": calls}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=300, help="timed calls per backend and tool (default 300)")
    ap.add_argument("--json", metavar="PATH", help="also write the numbers as JSON")
    args = ap.parse_args()
    results: dict[str, dict[str, dict[str, float]]] = {}

    env = tb.make(TASK, max_actions=10 * args.calls)
    results["in-process"] = {"read": measure(env, READ, args.calls), "write": measure(env, WRITE, args.calls)}
    env.close()

    env = tb.make(TASK, max_actions=10 * args.calls, tool_backend=MCPToolBackend.stdio(TASK))
    results["mcp stdio"] = {"read": measure(env, READ, args.calls), "write": measure(env, WRITE, args.calls)}
    env.close()

    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "thinkingbox_env.cli", "serve", TASK, "--transport", "http",
                               "--port", str(port), "--operator-token", "bench-operator"], stderr=subprocess.DEVNULL)
    try:
        for _ in range(300):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        backend = MCPToolBackend.http(f"http://127.0.0.1:{port}/mcp", operator_token="bench-operator")
        env = tb.make(TASK, max_actions=10 * args.calls, tool_backend=backend)
        results["mcp http"] = {"read": measure(env, READ, args.calls), "write": measure(env, WRITE, args.calls)}
        env.close()
    finally:
        server.terminate()
        server.wait()

    print(f"tool-call latency through env.step, {TASK}; python {platform.python_version()}, {os.cpu_count()} CPUs")
    print(f"  {'backend':<12}{'read median':>14}{'read p95':>11}{'write median':>15}{'write p95':>12}")
    for name, r in results.items():
        print(f"  {name:<12}{r['read']['median_ms']:>11.2f} ms{r['read']['p95_ms']:>8.2f} ms"
              f"{r['write']['median_ms']:>12.2f} ms{r['write']['p95_ms']:>9.2f} ms")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(results, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
