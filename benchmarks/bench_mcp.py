"""Latency of one tool call in-process, over MCP stdio and over MCP streamable HTTP.

The same read tool (get_customer_profile) and write tool (update_ticket) are called
through ``env.step`` with each tool backend; the difference is the cost of the MCP
transport. Run: ``python benchmarks/bench_mcp.py [--calls N] [--json PATH]``.

``--sessions N`` times the other question a served environment raises: N MCP
sessions open at once on one HTTP server, each making its calls back to back (a
read and a write in turn, on its own episode), so the figures are the latency a
client sees while N-1 others keep the server busy. The clients run in
``--client-procs`` processes of their own, so the client side is not one event loop.
``--server-arg`` passes a flag to ``thinkingbox serve`` (repeat it).
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
from multiprocessing import get_context

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


def _percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1)))]


def _client_worker(url: str, token: str, sessions: int, calls: int, start_at: float, queue) -> None:
    """One client process: ``sessions`` MCP sessions at once, each timing its own calls; the samples go back on ``queue``."""
    import anyio
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    samples: list[float] = []
    failures: list[str] = []

    async def one() -> None:
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
        async with Client(streamable_http_client(url, http_client=http), mode="legacy", read_timeout_seconds=300) as client:
            await client.call_tool(READ["name"], READ["arguments"])  # warm this session
            while time.time() < start_at:  # every session of every process starts timing together
                await anyio.sleep(0.01)
            for i in range(calls):
                action = READ if i % 2 == 0 else WRITE
                t0 = time.perf_counter()
                result = await client.call_tool(action["name"], action["arguments"])
                samples.append(time.perf_counter() - t0)
                if result.is_error:
                    failures.append(str(result.content)[:200])

    async def run_all() -> None:
        async with anyio.create_task_group() as tg:
            for _ in range(sessions):
                tg.start_soon(one)

    try:
        anyio.run(run_all)
    except BaseException as exc:  # noqa: BLE001 - reported by the parent
        failures.append(repr(exc)[:500])
    queue.put((samples, failures))


def wait_for_port(port: int, server: subprocess.Popen, attempts: int = 300) -> None:
    """Return once ``server`` accepts connections on ``port`` (about 30 s at most), so timing starts on a live server;
    a server that exits first (a refused flag) stops the benchmark with its exit status instead of a connection error."""
    for _ in range(attempts):
        if server.poll() is not None:
            raise SystemExit(f"thinkingbox serve exited with status {server.returncode} before listening on port {port}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.1)


def measure_sessions(sessions: int, calls: int, procs: int, server_args: list[str]) -> dict[str, float]:
    """p50/p95 of one tool call while ``sessions`` sessions call at once, over one HTTP server."""
    port = free_port()
    token = "bench-agent-token-0123456789"
    server = subprocess.Popen([sys.executable, "-m", "thinkingbox_env.cli", "serve", TASK, "--transport", "http",
                               "--port", str(port), "--token", token, "--operator-token", "bench-operator-token-0123",
                               "--max-episodes", str(sessions), *server_args], stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port, server)
        ctx = get_context("spawn")
        queue = ctx.Queue()
        share = [sessions // procs + (1 if i < sessions % procs else 0) for i in range(procs)]
        start_at = time.time() + 10.0 + sessions * 0.05
        workers = [ctx.Process(target=_client_worker, args=(f"http://127.0.0.1:{port}/mcp", token, n, calls, start_at, queue))
                   for n in share if n]
        t0 = time.perf_counter()
        for w in workers:
            w.start()
        samples: list[float] = []
        failures: list[str] = []
        for _ in workers:
            got, failed = queue.get(timeout=1800)
            samples += got
            failures += failed
        for w in workers:
            w.join()
        wall = time.perf_counter() - t0
    finally:
        server.terminate()
        server.wait()
    if failures:
        raise SystemExit(f"{len(failures)} failures, first: {failures[0]}")
    return {"sessions": sessions, "calls": len(samples), "p50_ms": 1000 * statistics.median(samples),
            "p95_ms": 1000 * _percentile(samples, 0.95), "max_ms": 1000 * max(samples), "wall_s": wall}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=300, help="timed calls per backend and tool (default 300)")
    ap.add_argument("--json", metavar="PATH", help="also write the numbers as JSON")
    ap.add_argument("--sessions", type=int, default=0, help="time N concurrent HTTP sessions instead (e.g. 64)")
    ap.add_argument("--client-procs", type=int, default=4, help="client processes sharing the --sessions (default 4)")
    ap.add_argument("--server-arg", action="append", default=None, metavar="FLAG",
                    help="a flag for thinkingbox serve in --sessions mode (repeat; default: --max-episodes-per-client N)")
    args = ap.parse_args()
    if args.sessions:
        server_args = args.server_arg if args.server_arg is not None else ["--max-episodes-per-client", str(args.sessions)]
        server_args = [a for a in server_args if a]
        r = measure_sessions(args.sessions, args.calls, max(1, args.client_procs), server_args)
        print(f"tool-call latency with {r['sessions']} concurrent MCP HTTP sessions, {TASK}, read and write in turn; "
              f"python {platform.python_version()}, {os.cpu_count()} CPUs")
        print(f"  {r['calls']} calls: p50 {r['p50_ms']:.1f} ms, p95 {r['p95_ms']:.1f} ms, max {r['max_ms']:.1f} ms; "
              f"{r['wall_s']:.1f} s wall (clients included)")
        if args.json:
            with open(args.json, "w", encoding="utf-8") as fh:
                json.dump(r, fh, indent=2)
        return 0
    results: dict[str, dict[str, dict[str, float]]] = {}

    env = tb.make(TASK, max_actions=10 * args.calls)
    results["in-process"] = {"read": measure(env, READ, args.calls), "write": measure(env, WRITE, args.calls)}
    env.close()

    env = tb.make(TASK, max_actions=10 * args.calls, tool_backend=MCPToolBackend.stdio(TASK))
    results["mcp stdio"] = {"read": measure(env, READ, args.calls), "write": measure(env, WRITE, args.calls)}
    env.close()

    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "thinkingbox_env.cli", "serve", TASK, "--transport", "http",
                               "--port", str(port), "--operator-token", "bench-operator-token-0123"], stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port, server)
        backend = MCPToolBackend.http(f"http://127.0.0.1:{port}/mcp", operator_token="bench-operator-token-0123")
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
