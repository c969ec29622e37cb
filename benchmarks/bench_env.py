#!/usr/bin/env python
"""Latency, throughput and memory benchmark of the thinkingbox environment.

Measured over the frozen tasks of one domain (``retail`` by default), each built
with ``thinkingbox_env.make(task_id)``:

1. reset latency: ``env.reset(seed=...)`` on an env that has already been reset
   (steady state: the previous episode's schema is dropped inside the reset);
2. tool-step latency: one ``env.step({"name", "arguments"})`` per golden tool
   call, split into read tools and write tools;
3. verdict latency: the final ``"<golden reply> <DONE>"`` step, which runs the
   checks;
4. whole oracle episodes (``run_episode(env, OracleAgent())``): episodes per
   second (wall clock) and CPU time per episode (``time.process_time``);
5. resident memory of N live episodes (default 1,000): envs created round-robin
   over the tasks, reset and played through their golden calls, all kept alive;
   the VmRSS increase over a warm baseline (one episode per task played first,
   so per-process domain and task templates are not counted).

Run: ``python benchmarks/bench_env.py [--json results.json]``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# Targets: (key, label, unit, limit). Every target is an upper bound.
TARGETS: list[tuple[str, str, str, float]] = [
    ("reset_ms_median", "reset latency (median)", "ms", 10.0),
    ("tool_step_ms_median", "any tool step (median)", "ms", 2.0),
    ("read_step_ms_median", "read tool step (median)", "ms", 2.0),
    ("cold_read_step_ms_median", "read tool step, cold (median)", "ms", 2.0),
    ("write_step_ms_median", "write tool step (median)", "ms", 2.0),
    ("verdict_ms_median", "verdict step (median)", "ms", 10.0),
    ("oracle_cpu_ms_per_episode", "oracle episode CPU time", "ms", 50.0),
    ("live_episodes_rss_increase_mib", "RSS increase, live episodes", "MiB", 2048.0),
]


# --------------------------------------------------------------------------- helpers


def rss_mib() -> float | None:
    """Current resident set size (VmRSS) of this process in MiB, or None off Linux."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0  # value is in kB
    except OSError:
        pass
    return None


def percentile(values: list[float], q: float) -> float:
    """Linear-interpolated percentile (q in [0, 100]) of a non-empty list."""
    xs = sorted(values)
    if not xs:
        return float("nan")
    if len(xs) == 1:
        return xs[0]
    pos = (len(xs) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def summarize(samples_s: list[float]) -> dict[str, float]:
    ms = [s * 1000.0 for s in samples_s]
    return {
        "n": len(ms),
        "median_ms": percentile(ms, 50),
        "p95_ms": percentile(ms, 95),
        "mean_ms": sum(ms) / len(ms) if ms else float("nan"),
        "max_ms": max(ms) if ms else float("nan"),
    }


def cpu_model() -> str:
    proc = platform.processor()
    if proc:
        return proc
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.machine() or "unknown"


def load_average() -> list[float] | None:
    """1, 5 and 15 minute load averages (other processes competing for the CPUs), if available."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def versions() -> dict[str, Any]:
    import duckdb
    import gymnasium

    import thinkingbox_env

    return {
        "python": platform.python_version(),
        "duckdb": duckdb.__version__,
        "gymnasium": gymnasium.__version__,
        "thinkingbox_env": getattr(thinkingbox_env, "__version__", "unknown"),
        "platform": platform.platform(),
        "processor": platform.processor(),
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "loadavg_at_start": load_average(),
    }


@dataclass
class Task:
    task_id: str
    calls: list[dict[str, Any]]  # golden calls as step actions
    writes: list[bool]  # parallel to calls
    closing: str  # the final text action, ending with " <DONE>"


def load_tasks(domain: str, limit: int | None) -> list[Task]:
    import thinkingbox_env
    from thinkingbox_env.users import DONE_MARKER

    ids = thinkingbox_env.list_tasks(domain)
    if limit:
        ids = ids[:limit]
    if not ids:
        raise SystemExit(f"no frozen tasks found for domain '{domain}'")
    tasks = []
    for task_id in ids:
        env = thinkingbox_env.make(task_id)
        base = env.unwrapped
        box = base.toolbox
        golden = base.task.golden
        tasks.append(Task(
            task_id=task_id,
            calls=[{"name": c.name, "arguments": dict(c.arguments)} for c in golden],
            writes=[bool(c.name in box and box[c.name].writes) for c in golden],
            closing=f"{base.task.golden_reply} {DONE_MARKER}",
        ))
        env.close()
    return tasks


def play_golden(env: Any, task: Task, timer: Callable[[], float] | None = None,
                reads: list[float] | None = None, writes: list[float] | None = None) -> None:
    """Step through the golden tool calls of an env that has just been reset."""
    for call, is_write in zip(task.calls, task.writes):
        action = {"name": call["name"], "arguments": dict(call["arguments"])}
        if timer is None:
            _, _, term, trunc, _ = env.step(action)
        else:
            t0 = timer()
            _, _, term, trunc, _ = env.step(action)
            dt = timer() - t0
            (writes if is_write else reads).append(dt)  # type: ignore[union-attr]
        if term or trunc:
            raise RuntimeError(f"{task.task_id}: episode ended during the golden calls")


# --------------------------------------------------------------------------- phases


def warm_up(tasks: list[Task]) -> dict[str, Any]:
    """One oracle episode per task on its own env: builds domain/task templates and golden caches."""
    import thinkingbox_env

    envs = {}
    failed = []
    t0 = time.perf_counter()
    for task in tasks:
        env = thinkingbox_env.make(task.task_id)
        info = thinkingbox_env.run_episode(env, thinkingbox_env.OracleAgent(), seed=0)
        if info.get("verdict") != 1.0:
            failed.append(task.task_id)
        envs[task.task_id] = env
    return {"envs": envs, "seconds": time.perf_counter() - t0, "oracle_failures": failed}


class _ColdTimer:
    """A timer that empties the memoised template reads before every timed step."""

    def __init__(self, domains: set[str]) -> None:
        from thinkingbox_env.domain import load_domain

        self.caches = [load_domain(d).db.read_cache for d in sorted(domains)]
        self.armed = True

    def __call__(self) -> float:
        if self.armed:
            for cache in self.caches:
                cache.clear()
        self.armed = not self.armed
        return time.perf_counter()


def bench_latency(tasks: list[Task], envs: dict[str, Any], rounds: int, cold: bool = False) -> dict[str, Any]:
    """Reset, per-tool-step and verdict latencies over `rounds` passes through every task.

    With ``cold`` the memoised reads of template data are dropped before each timed
    step, so every read goes to DuckDB: the cost of a task seen for the first time.
    """
    domains = {t.task_id.split("/", 1)[0] for t in tasks}
    timer: Callable[[], float] = _ColdTimer(domains) if cold else time.perf_counter
    resets: list[float] = []
    reads: list[float] = []
    writes: list[float] = []
    verdicts: list[float] = []
    failures = 0
    for r in range(rounds):
        for task in tasks:
            env = envs[task.task_id]  # already reset once (by the warm-up episode)
            t0 = timer()
            env.reset(seed=1000 + r)
            resets.append(timer() - t0)
            play_golden(env, task, timer, reads, writes)
            t0 = timer()
            _, reward, term, trunc, info = env.step(task.closing)
            verdicts.append(timer() - t0)
            if not (term or trunc):
                raise RuntimeError(f"{task.task_id}: the closing message did not end the episode")
            if reward != 1.0:
                failures += 1
    return {
        "rounds": rounds,
        "reset": summarize(resets),
        "read_step": summarize(reads),
        "write_step": summarize(writes),
        "tool_step": summarize(reads + writes),
        "verdict": summarize(verdicts),
        "oracle_failures": failures,
    }


def bench_throughput(tasks: list[Task], envs: dict[str, Any], episodes: int) -> dict[str, Any]:
    """Whole oracle episodes, round-robin over the tasks on their warm envs."""
    import thinkingbox_env

    order = [tasks[i % len(tasks)] for i in range(episodes)]
    failures = 0
    gc.collect()
    w0, c0 = time.perf_counter(), time.process_time()
    for i, task in enumerate(order):
        info = thinkingbox_env.run_episode(envs[task.task_id], thinkingbox_env.OracleAgent(), seed=i)
        if info.get("verdict") != 1.0:
            failures += 1
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    return {
        "episodes": episodes,
        "wall_s": wall,
        "cpu_s": cpu,
        "episodes_per_s": episodes / wall if wall > 0 else float("inf"),
        "wall_ms_per_episode": 1000.0 * wall / episodes,
        "cpu_ms_per_episode": 1000.0 * cpu / episodes,
        "oracle_failures": failures,
    }


def bench_memory(tasks: list[Task], n: int) -> dict[str, Any]:
    """RSS increase of n live episodes, each reset and played through its golden calls."""
    import thinkingbox_env

    gc.collect()
    before = rss_mib()
    live = []
    t0 = time.perf_counter()
    for i in range(n):
        task = tasks[i % len(tasks)]
        env = thinkingbox_env.make(task.task_id)
        env.reset(seed=i)
        play_golden(env, task)
        live.append(env)
    build_s = time.perf_counter() - t0
    gc.collect()
    after = rss_mib()
    out: dict[str, Any] = {"episodes": n, "build_s": build_s, "baseline_rss_mib": before, "rss_after_mib": after}
    if before is not None and after is not None:
        out["rss_increase_mib"] = after - before
        out["kib_per_episode"] = (after - before) * 1024.0 / n
    else:
        out["rss_increase_mib"] = None
        out["kib_per_episode"] = None
    for env in live:
        env.close()
    del live
    gc.collect()
    out["rss_after_close_mib"] = rss_mib()
    return out


# --------------------------------------------------------------------------- report


def evaluate_targets(values: dict[str, float | None]) -> list[dict[str, Any]]:
    rows = []
    for key, label, unit, limit in TARGETS:
        v = values.get(key)
        rows.append({
            "key": key, "label": label, "unit": unit, "target": limit, "value": v,
            "pass": None if v is None else bool(v <= limit),
        })
    return rows


def fmt(v: float | None, digits: int = 2) -> str:
    return "n/a" if v is None else f"{v:.{digits}f}"


def print_report(res: dict[str, Any]) -> None:
    env = res["environment"]
    print()
    print(f"thinkingbox_env benchmark: domain '{res['domain']}', {res['tasks']} tasks")
    print(f"python {env['python']} | duckdb {env['duckdb']} | gymnasium {env['gymnasium']} | "
          f"thinkingbox_env {env['thinkingbox_env']}")
    print(f"platform.processor() = {env['processor']!r} | CPU model: {env['cpu_model']} | "
          f"os.cpu_count() = {env['cpu_count']}")
    print(f"load average at start: {env['loadavg_at_start']} | at end: {res.get('loadavg_at_end')}")
    print()

    for section, title in (("latency", "Latencies"), ("latency_cold", "Latencies with a cold read cache")):
        if section not in res:
            continue
        lat = res[section]
        print(f"{title} ({lat['rounds']} rounds over the tasks, time.perf_counter)")
        print(f"  {'operation':<22}{'n':>7}{'median ms':>12}{'p95 ms':>10}{'mean ms':>10}{'max ms':>10}")
        for key, label in (("reset", "reset (steady state)"), ("read_step", "read tool step"),
                           ("write_step", "write tool step"), ("tool_step", "any tool step"), ("verdict", "verdict step")):
            s = lat[key]
            print(f"  {label:<22}{s['n']:>7}{fmt(s['median_ms'], 3):>12}{fmt(s['p95_ms'], 3):>10}"
                  f"{fmt(s['mean_ms'], 3):>10}{fmt(s['max_ms'], 3):>10}")
        print()
    if "throughput" in res:
        th = res["throughput"]
        print(f"Oracle episodes ({th['episodes']} episodes, run_episode + OracleAgent)")
        print(f"  episodes per second      {th['episodes_per_s']:.1f}")
        print(f"  wall time per episode    {th['wall_ms_per_episode']:.2f} ms")
        print(f"  CPU time per episode     {th['cpu_ms_per_episode']:.2f} ms")
        print()
    if "memory" in res:
        mem = res["memory"]
        print(f"Memory ({mem['episodes']} live episodes, VmRSS)")
        print(f"  RSS after warm-up        {fmt(res.get('warmup', {}).get('rss_mib'), 1)} MiB")
        print(f"  baseline RSS             {fmt(mem['baseline_rss_mib'], 1)} MiB")
        print(f"  RSS with episodes live   {fmt(mem['rss_after_mib'], 1)} MiB")
        print(f"  increase                 {fmt(mem['rss_increase_mib'], 1)} MiB "
              f"({fmt(mem['kib_per_episode'], 1)} KiB per episode)")
        print(f"  RSS after closing them   {fmt(mem['rss_after_close_mib'], 1)} MiB")
        print(f"  time to build them       {mem['build_s']:.1f} s")
        print()

    print("Targets")
    print(f"  {'metric':<32}{'measured':>12}{'target':>14}  result")
    for row in res["targets"]:
        status = "n/a" if row["pass"] is None else ("PASS" if row["pass"] else "FAIL")
        target = f"<= {row['target']:g} {row['unit']}"
        print(f"  {row['label']:<32}{fmt(row['value']) + ' ' + row['unit']:>12}{target:>14}  {status}")
    bad = res["oracle_failures"]
    if bad:
        print(f"\nWARNING: {bad} oracle episode(s) did not reach verdict 1.0")
    print(f"\nTotal run time {res['total_s']:.1f} s")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description="Benchmark reset, tool-step and verdict latency, oracle-episode throughput and "
                    "the memory of live episodes over the frozen tasks of a domain.")
    ap.add_argument("--domain", default="retail", help="domain whose frozen tasks are used (default: retail)")
    ap.add_argument("--rounds", type=int, default=20,
                    help="passes over all tasks for the latency measurements (default: 20)")
    ap.add_argument("--episodes", type=int, default=200,
                    help="oracle episodes for the throughput measurement (default: 200)")
    ap.add_argument("--live", type=int, default=1000,
                    help="live episodes for the memory measurement; 0 skips it (default: 1000)")
    ap.add_argument("--max-tasks", type=int, default=None, help="use only the first N tasks (quick runs)")
    ap.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    ap.add_argument("--strict", action="store_true", help="exit with status 1 if any target is missed")
    args = ap.parse_args(argv)
    if args.rounds < 1 or args.episodes < 1 or args.live < 0:
        ap.error("--rounds and --episodes must be >= 1, --live >= 0")

    t_start = time.perf_counter()
    import thinkingbox_env  # noqa: F401  (imported here so --help stays fast)

    tasks = load_tasks(args.domain, args.max_tasks)
    res: dict[str, Any] = {
        "domain": args.domain,
        "tasks": len(tasks),
        "task_ids": [t.task_id for t in tasks],
        "environment": versions(),
        "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    print(f"warming up: one oracle episode on each of {len(tasks)} tasks ...", file=sys.stderr, flush=True)
    warm = warm_up(tasks)
    gc.collect()
    res["warmup"] = {"seconds": warm["seconds"], "rss_mib": rss_mib(), "oracle_failures": warm["oracle_failures"]}
    envs = warm["envs"]

    print(f"latency: {args.rounds} rounds ...", file=sys.stderr, flush=True)
    res["latency"] = bench_latency(tasks, envs, args.rounds)
    cold_rounds = max(2, args.rounds // 4)
    print(f"latency, cold read cache: {cold_rounds} rounds ...", file=sys.stderr, flush=True)
    res["latency_cold"] = bench_latency(tasks, envs, cold_rounds, cold=True)
    print(f"throughput: {args.episodes} oracle episodes ...", file=sys.stderr, flush=True)
    res["throughput"] = bench_throughput(tasks, envs, args.episodes)
    if args.live:
        print(f"memory: {args.live} live episodes ...", file=sys.stderr, flush=True)
        res["memory"] = bench_memory(tasks, args.live)
    for env in envs.values():
        env.close()

    lat, th, mem = res["latency"], res["throughput"], res.get("memory", {})
    values = {
        "reset_ms_median": lat["reset"]["median_ms"],
        "tool_step_ms_median": lat["tool_step"]["median_ms"],
        "read_step_ms_median": lat["read_step"]["median_ms"] if lat["read_step"]["n"] else None,
        "cold_read_step_ms_median": res["latency_cold"]["read_step"]["median_ms"],
        "write_step_ms_median": lat["write_step"]["median_ms"] if lat["write_step"]["n"] else None,
        "verdict_ms_median": lat["verdict"]["median_ms"],
        "oracle_cpu_ms_per_episode": th["cpu_ms_per_episode"],
        "live_episodes_rss_increase_mib": mem.get("rss_increase_mib"),
    }
    res["targets"] = evaluate_targets(values)
    res["all_targets_met"] = all(r["pass"] is not False for r in res["targets"])
    res["oracle_failures"] = len(warm["oracle_failures"]) + lat["oracle_failures"] + th["oracle_failures"]
    res["total_s"] = time.perf_counter() - t_start
    res["loadavg_at_end"] = load_average()

    print_report(res)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(res, fh, indent=2, default=str)
            fh.write("\n")
        print(f"results written to {args.json}")
    return 1 if (args.strict and not res["all_targets_met"]) else 0


if __name__ == "__main__":
    sys.exit(main())
