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

Over a fixed task list of both domains (``episode_task_list``: the write-heaviest
tasks of each domain plus tasks spread over the rest):

6. CPU per oracle episode (``time.process_time``, one sample per episode:
   ``make`` + ``run_episode(env, OracleAgent())`` + ``close``), median and p95,
   with a per-phase breakdown (make, reset, read steps, write steps, verdict);
7. the first episode of a freshly generated training variant in a warm process
   (the task template, the golden replay and the episode itself; generating the
   spec is timed separately);
8. GRPO-shaped throughput: groups of 8 oracle episodes of one fresh variant;
9. RSS per live episode with N of them held, over that task list;
10. with ``--against PATH``, section 7 in this tree and in the checkout at PATH,
    draw by draw in turn (one warm worker process per tree), with the ratios.

Section 6 is also run with the engine's statement memo restricted to reads of
unwritten tables (``statement_memo("template")``, the earlier engine's memo: a
trajectory that is new from its first write) and turned off (``"off"``, every
statement to DuckDB), and section 9 with it off. An oracle replay repeats one
trajectory, so the default figure is what repeated rollouts of a task cost and the
other two bound what a novel trajectory costs; all are reported.

CPU time rather than wall time is the headline figure because the machine may be
shared: other processes stretch wall time but not this process's CPU time.

Run: ``python benchmarks/bench_env.py [--json results.json]``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:  # the sibling modules, when this file is loaded by path rather than run
    sys.path.insert(0, HERE)

from bench_env_common import (  # noqa: E402
    Task,
    load_average,
    load_tasks,
    oracle_failed,
    percentile,
    play_golden,
    rss_mib,
    summarize,
    versions,
)
from bench_env_fresh import GRPO_GROUP, bench_cold_start, bench_fresh_variants, bench_fresh_variants_against, bench_grpo  # noqa: E402
from bench_env_report import evaluate_targets, print_report  # noqa: E402

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
        if oracle_failed(info):
            failed.append(task.task_id)
        envs[task.task_id] = env
    return {"envs": envs, "seconds": time.perf_counter() - t0, "oracle_failures": failed}


class _ColdTimer:
    """A timer that empties the memoised template reads before every timed step."""

    def __init__(self, domains: set[str]) -> None:
        from thinkingbox_env.tasks.domain import load_domain

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
        if oracle_failed(info):
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


# --------------------------------------------------------------------------- episode CPU, fresh variants, GRPO


def episode_task_list(per_domain_heavy: int = 5, per_domain_spread: int = 5) -> list[str]:
    """The fixed task list: per domain, the write-heaviest tasks and tasks spread over the rest.

    Write-heaviest means the most golden write calls (ties broken by id), because an
    episode's cost grows with its writes and an average over light tasks would hide that.
    """
    import thinkingbox_env
    from thinkingbox_env.tasks.domain import load_domain

    out: list[str] = []
    for domain in ("retail", "insurance"):
        ids = thinkingbox_env.list_tasks(domain)
        box = load_domain(domain).toolbox
        writes = {t: sum(1 for c in thinkingbox_env.load_task(t).golden if c.name in box and box[c.name].writes) for t in ids}
        heavy = sorted(ids, key=lambda t: (-writes[t], t))[:per_domain_heavy]
        rest = [t for t in ids if t not in heavy]
        step = max(1, len(rest) // per_domain_spread)
        out += heavy + rest[::step][:per_domain_spread]
    return out


def task_of(task_id_or_spec: Any) -> Task:
    """The golden calls and closing message of a task id or a generated spec."""
    import thinkingbox_env
    from thinkingbox_env.tasks.domain import load_domain
    from thinkingbox_env.users import DONE_MARKER

    spec = thinkingbox_env.load_task(task_id_or_spec) if isinstance(task_id_or_spec, str) else task_id_or_spec
    box = load_domain(spec.domain).toolbox
    return Task(
        task_id=task_id_or_spec if isinstance(task_id_or_spec, str) else spec.full_id,
        calls=[{"name": c.name, "arguments": dict(c.arguments)} for c in spec.golden],
        writes=[bool(c.name in box and box[c.name].writes) for c in spec.golden],
        closing=f"{spec.golden_reply} {DONE_MARKER}",
    )


@contextmanager
def statement_memo(mode: str) -> Iterator[None]:
    """Set the engine's statement memo for both domains: "on" (the default), "template" or "off".

    "on": an episode that repeats statements an episode in the same state already ran
    gets their answers without DuckDB (repeated rollouts of a task). "template": only
    reads of tables no episode has written are answered from the memo, as in the
    earlier engine, so every write and every read after it goes to DuckDB: what a
    trajectory costs that leaves every other one at its first write. "off": every
    statement goes to DuckDB, as in a process that has never seen the task.
    """
    from thinkingbox_env.tasks.domain import load_domain

    if mode not in ("on", "template", "off"):
        raise ValueError(f"memo mode must be on, template or off, got {mode!r}")
    caches = [load_domain(d).db.read_cache for d in ("retail", "insurance")]
    was = [(c.enabled, c.template_only) for c in caches]
    for c in caches:
        c.enabled, c.template_only = mode != "off", mode == "template"
    try:
        yield
    finally:
        for c, (enabled, template_only) in zip(caches, was):
            c.enabled, c.template_only = enabled, template_only


def bench_episode_cpu(task_ids: list[str], rounds: int, phases_too: bool = True) -> dict[str, Any]:
    """CPU per whole oracle episode (make + run_episode + close), and per phase, interleaved over the tasks.

    The per-phase pass replays the golden calls and the closing message without the
    dialogue, so a task whose process rules want consent asked before a write does not
    reach verdict 1.0 there; that pass only times phases and is not counted as a failure.
    """
    import thinkingbox_env

    clock = time.process_time
    tasks = [task_of(t) for t in task_ids]
    for t in task_ids:  # warm: task templates and golden outcomes built once per process
        env = thinkingbox_env.make(t)
        thinkingbox_env.run_episode(env, thinkingbox_env.OracleAgent(), seed=0)
        env.close()
    episodes: list[float] = []
    per_task: dict[str, list[float]] = {t: [] for t in task_ids}
    phases: dict[str, list[float]] = {"make": [], "reset": [], "read_step": [], "write_step": [], "verdict": [], "close": []}
    failures = dialogue_needed = 0
    gc.collect()
    for r in range(rounds):
        for task in tasks:
            c0 = clock()
            env = thinkingbox_env.make(task.task_id)
            info = thinkingbox_env.run_episode(env, thinkingbox_env.OracleAgent(), seed=r)
            env.close()
            dt = clock() - c0
            episodes.append(dt)
            per_task[task.task_id].append(dt)
            failures += oracle_failed(info)
            if not phases_too:
                continue
            # the same episode again, phase by phase (golden calls and the closing message)
            c0 = clock()
            env = thinkingbox_env.make(task.task_id)
            c1 = clock()
            env.reset(seed=r)
            phases["make"].append(c1 - c0)
            phases["reset"].append(clock() - c1)
            play_golden(env, task, clock, phases["read_step"], phases["write_step"])
            c0 = clock()
            _, reward, *_ = env.step(task.closing)
            c1 = clock()
            env.close()
            phases["verdict"].append(c1 - c0)
            phases["close"].append(clock() - c1)
            dialogue_needed += reward != 1.0
    slowest = sorted(((percentile([x * 1000 for x in v], 50), t) for t, v in per_task.items()), reverse=True)[:5]
    return {
        "rounds": rounds,
        "task_ids": task_ids,
        "episode": summarize(episodes),
        "phases": {k: summarize(v) for k, v in phases.items() if v},
        "slowest_tasks_median_ms": [[t, ms] for ms, t in slowest],
        "oracle_failures": failures,
        "phase_replays_below_1": dialogue_needed,
    }



def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description="Benchmark reset, tool-step and verdict latency, oracle-episode CPU and throughput, "
                    "fresh training variants, GRPO-shaped groups and the memory of live episodes.")
    ap.add_argument("--domain", default="retail", help="domain whose frozen tasks are used for the latency "
                    "and throughput sections (default: retail)")
    ap.add_argument("--rounds", type=int, default=20,
                    help="passes over all tasks for the latency measurements (default: 20)")
    ap.add_argument("--episodes", type=int, default=200,
                    help="oracle episodes for the throughput measurement (default: 200)")
    ap.add_argument("--episode-rounds", type=int, default=10,
                    help="passes over the fixed task list for CPU per episode (default: 10)")
    ap.add_argument("--variants", type=int, default=56,
                    help="fresh training variants for the first-episode measurement (default: 56)")
    ap.add_argument("--groups", type=int, default=28,
                    help="GRPO-shaped groups of 8 episodes of one fresh variant (default: 28)")
    ap.add_argument("--live", type=int, default=1000,
                    help="live episodes for the memory measurement; 0 skips it (default: 1000)")
    ap.add_argument("--cold-starts", type=int, default=5,
                    help="fresh processes for the cold-start measurement; 0 skips it (default: 5)")
    ap.add_argument("--against", metavar="PATH", help="also measure the fresh variants' first episodes in the checkout "
                    "at PATH, draw by draw in turn with this tree (two worker processes), and report the ratios")
    ap.add_argument("--max-tasks", type=int, default=None, help="use only the first N tasks (quick runs)")
    ap.add_argument("--skip-domain-sections", action="store_true",
                    help="skip the per-domain latency and throughput sections (1-4)")
    ap.add_argument("--skip-memo-off", action="store_true",
                    help="skip the CPU-per-episode and memory passes with the statement memo turned off")
    ap.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    ap.add_argument("--strict", action="store_true", help="exit with status 1 if any target is missed")
    args = ap.parse_args(argv)
    if args.against and not os.path.isfile(os.path.join(args.against, "thinkingbox_env", "__init__.py")):
        ap.error(f"--against {args.against}: not a checkout of this project (no thinkingbox_env/ package there)")
    if min(args.rounds, args.episodes, args.episode_rounds) < 1 or min(args.live, args.variants, args.groups) < 0:
        ap.error("--rounds, --episodes and --episode-rounds must be >= 1; --live, --variants, --groups >= 0")

    t_start = time.perf_counter()
    import thinkingbox_env  # noqa: F401  (imported here so --help stays fast)

    res: dict[str, Any] = {
        "domain": args.domain,
        "environment": versions(),
        "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    failures = 0
    values: dict[str, float | None] = {}
    if not args.skip_domain_sections:
        tasks = load_tasks(args.domain, args.max_tasks)
        res["tasks"] = len(tasks)
        res["task_ids"] = [t.task_id for t in tasks]
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
        for env in envs.values():
            env.close()
        lat, th = res["latency"], res["throughput"]
        values.update({
            "reset_ms_median": lat["reset"]["median_ms"],
            "tool_step_ms_median": lat["tool_step"]["median_ms"],
            "read_step_ms_median": lat["read_step"]["median_ms"] if lat["read_step"]["n"] else None,
            "cold_read_step_ms_median": res["latency_cold"]["read_step"]["median_ms"],
            "write_step_ms_median": lat["write_step"]["median_ms"] if lat["write_step"]["n"] else None,
            "verdict_ms_median": lat["verdict"]["median_ms"],
            "oracle_cpu_ms_per_episode": th["cpu_ms_per_episode"],
        })
        failures += len(warm["oracle_failures"]) + lat["oracle_failures"] + th["oracle_failures"]

    episode_ids = episode_task_list()
    print(f"CPU per oracle episode: {args.episode_rounds} rounds over {len(episode_ids)} tasks ...", file=sys.stderr, flush=True)
    res["episode_cpu"] = bench_episode_cpu(episode_ids, args.episode_rounds)
    failures += res["episode_cpu"]["oracle_failures"]
    values["episode_cpu_ms_median"] = res["episode_cpu"]["episode"]["median_ms"]
    values["episode_cpu_ms_p95"] = res["episode_cpu"]["episode"]["p95_ms"]
    if not args.skip_memo_off:
        for mode in ("template", "off"):
            print(f"CPU per oracle episode, statement memo '{mode}': {args.episode_rounds} rounds ...", file=sys.stderr, flush=True)
            with statement_memo(mode):
                res[f"episode_cpu_memo_{mode}"] = bench_episode_cpu(episode_ids, args.episode_rounds, phases_too=True)
            failures += res[f"episode_cpu_memo_{mode}"]["oracle_failures"]
    if args.live:
        print(f"memory: {args.live} live episodes ...", file=sys.stderr, flush=True)
        res["memory"] = bench_memory([task_of(t) for t in episode_ids], args.live)
        values["live_episodes_rss_increase_mib"] = res["memory"]["rss_increase_mib"]
        values["live_episode_kib"] = res["memory"]["kib_per_episode"]
        if not args.skip_memo_off:
            print(f"memory, statement memo off: {args.live} live episodes ...", file=sys.stderr, flush=True)
            with statement_memo("off"):
                res["memory_memo_off"] = bench_memory([task_of(t) for t in episode_ids], args.live)
    if args.variants:
        print(f"fresh variants: {args.variants} ...", file=sys.stderr, flush=True)
        res["fresh_variants"] = bench_fresh_variants(args.variants)
        failures += res["fresh_variants"]["oracle_failures"]
        values["fresh_variant_first_episode_ms_median"] = res["fresh_variants"]["first_episode"]["median_ms"]
    if args.against and args.variants:
        print(f"fresh variants, draw by draw against {args.against}: {args.variants} ...", file=sys.stderr, flush=True)
        res["fresh_variants_against"] = bench_fresh_variants_against(args.against, args.variants)
        failures += res["fresh_variants_against"]["this tree"]["oracle_failures"]
    if args.cold_starts:
        print(f"cold start: {args.cold_starts} fresh processes ...", file=sys.stderr, flush=True)
        res["cold_start"] = bench_cold_start(args.cold_starts)
        failures += res["cold_start"]["oracle_failures"]
    if args.groups:
        print(f"GRPO-shaped groups: {args.groups} x {GRPO_GROUP} ...", file=sys.stderr, flush=True)
        res["grpo"] = bench_grpo(args.groups)
        failures += res["grpo"]["oracle_failures"]

    from thinkingbox_env.state import FAST_PATH_HITS, STATEMENTS

    res["fast_path_hits"] = dict(FAST_PATH_HITS)  # statements answered in Python, per shape, over the whole run
    res["statements"] = dict(STATEMENTS)
    res["targets"] = evaluate_targets(values)
    res["all_targets_met"] = all(r["pass"] is not False for r in res["targets"])
    res["oracle_failures"] = failures
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
