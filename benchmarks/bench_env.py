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
import importlib.util
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
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
    ("episode_cpu_ms_median", "CPU per oracle episode (median)", "ms", 6.0),
    ("episode_cpu_ms_p95", "CPU per oracle episode (p95)", "ms", 9.0),
    ("fresh_variant_first_episode_ms_median", "first episode, fresh variant", "ms", 15.0),
    ("live_episode_kib", "RSS per live episode", "KiB", 200.0),
]

GRPO_GROUP = 8  # rollouts per prompt in the GRPO-shaped measurement



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


def oracle_failed(info: dict[str, Any]) -> bool:
    """Whether an oracle episode failed a check it could grade; rubric questions left unjudged (no judge here) do not count."""
    if info.get("verdict") == 1.0:
        return False
    failed = {name for name, passed in (info.get("checks") or {}).items() if not passed}
    return not failed or bool(failed - set(info.get("unevaluated") or ()))


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


def _fresh_variants(n: int, seed_base: int) -> list[tuple[str, str, int]]:
    """(domain, family, seed) triples, round-robin over every family of both domains, never drawn before."""
    from thinkingbox_env.tasks.domain import load_domain

    fams = [(d, code) for d in ("retail", "insurance") for code in load_domain(d).families]
    return [(fams[i % len(fams)][0], fams[i % len(fams)][1], seed_base + i) for i in range(n)]


def bench_fresh_variants(n: int) -> dict[str, Any]:
    """First oracle episode of a freshly generated variant in a warm process.

    Every family is drawn once first (imports, domain templates, the test-task
    guard), then ``n`` new variants: generating the spec and playing the first
    episode (task template, golden replay, the episode) are timed apart.
    """
    import thinkingbox_env

    clock = time.process_time
    from thinkingbox_env.tasks.domain import load_domain

    n_families = sum(len(load_domain(d).families) for d in ("retail", "insurance"))
    for domain, family, seed in _fresh_variants(n_families, 7_000_000):
        spec = thinkingbox_env.generate_variant(domain, family, seed)
        env = thinkingbox_env.make(spec)
        thinkingbox_env.run_episode(env, thinkingbox_env.OracleAgent(), seed=0)
        env.close()
    gen: list[float] = []
    first: list[float] = []
    failures = 0
    gc.collect()
    for domain, family, seed in _fresh_variants(n, 8_000_000):
        c0 = clock()
        spec = thinkingbox_env.generate_variant(domain, family, seed)
        c1 = clock()
        env = thinkingbox_env.make(spec)
        info = thinkingbox_env.run_episode(env, thinkingbox_env.OracleAgent(), seed=0)
        env.close()
        c2 = clock()
        gen.append(c1 - c0)
        first.append(c2 - c1)
        failures += oracle_failed(info)
    return {"variants": n, "generate": summarize(gen), "first_episode": summarize(first), "oracle_failures": failures}


def bench_grpo(groups: int) -> dict[str, Any]:
    """Groups of GRPO_GROUP oracle episodes of one fresh variant each: generation, 8 envs, 8 episodes."""
    import thinkingbox_env

    clock = time.process_time
    failures = 0
    per_group: list[float] = []
    gc.collect()
    w0, c0 = time.perf_counter(), clock()
    for domain, family, seed in _fresh_variants(groups, 9_000_000):
        g0 = clock()
        spec = thinkingbox_env.generate_variant(domain, family, seed)
        envs = [thinkingbox_env.make(spec) for _ in range(GRPO_GROUP)]
        for k, env in enumerate(envs):
            info = thinkingbox_env.run_episode(env, thinkingbox_env.OracleAgent(), seed=k)
            failures += oracle_failed(info)
        for env in envs:
            env.close()
        per_group.append(clock() - g0)
    wall, cpu = time.perf_counter() - w0, clock() - c0
    return {
        "groups": groups,
        "group_size": GRPO_GROUP,
        "cpu_s": cpu,
        "wall_s": wall,
        "group": summarize(per_group),
        "cpu_ms_per_episode": 1000.0 * cpu / (groups * GRPO_GROUP),
        "groups_per_cpu_s": groups / cpu if cpu > 0 else float("inf"),
        "episodes_per_cpu_s": groups * GRPO_GROUP / cpu if cpu > 0 else float("inf"),
        "oracle_failures": failures,
    }


# --------------------------------------------------------------------------- report


# What a fresh process pays before and during its first episode (a Ray worker, a CLI run, a test process).
_COLD_START_SCRIPT = """
import json, sys, time
t0 = time.perf_counter()
import thinkingbox_env as tb
from thinkingbox_env.agents.baselines import OracleAgent, run_episode
t1 = time.perf_counter()
env = tb.make(sys.argv[1])
t2 = time.perf_counter()
info = run_episode(env, OracleAgent(), seed=0)
t3 = time.perf_counter()
other = run_episode(tb.make(sys.argv[2]), OracleAgent(), seed=0)
t4 = time.perf_counter()
print(json.dumps({"import_ms": 1000 * (t1 - t0), "make_ms": 1000 * (t2 - t1), "first_episode_ms": 1000 * (t3 - t2),
                  "second_task_ms": 1000 * (t4 - t3), "torch_loaded": "torch" in sys.modules,
                  "oracle_failed": info["verdict"] != 1.0 or other["verdict"] != 1.0}))
"""


def bench_cold_start(runs: int, task_id: str = "retail/ST030_001", other_id: str = "retail/ST030_002") -> dict[str, Any]:
    """Medians over ``runs`` fresh interpreters: import, first make(), first oracle episode, then a second task."""
    import subprocess

    samples: list[dict[str, Any]] = []
    for _ in range(runs):
        proc = subprocess.run([sys.executable, "-c", _COLD_START_SCRIPT, task_id, other_id],
                              capture_output=True, text=True, timeout=600, check=True)
        samples.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    out: dict[str, Any] = {"runs": runs, "task": task_id, "second_task": other_id,
                           "torch_installed": importlib.util.find_spec("torch") is not None,
                           "torch_loaded": any(s["torch_loaded"] for s in samples),
                           "oracle_failures": sum(bool(s["oracle_failed"]) for s in samples)}
    for key in ("import_ms", "make_ms", "first_episode_ms", "second_task_ms"):
        values = sorted(s[key] for s in samples)
        out[key] = {"median": statistics.median(values), "max": values[-1]}
    return out


# One tree's worker for the interleaved comparison: told the warm-up draws, then one draw per line; answers CPU ms.
_FRESH_VARIANT_WORKER = """
import gc, json, sys, time
import thinkingbox_env as tb
from thinkingbox_env.agents.baselines import OracleAgent, run_episode

def play(domain, family, seed):
    spec = tb.generate_variant(domain, family, seed)
    c0 = time.process_time()
    env = tb.make(spec)
    info = run_episode(env, OracleAgent(), seed=0)
    env.close()
    return 1000 * (time.process_time() - c0), info

for domain, family, seed in json.loads(sys.stdin.readline()):
    play(domain, family, seed)
gc.collect()
print("ready", flush=True)
for line in sys.stdin:
    ms, info = play(*json.loads(line))
    checks = info.get("checks") or {}
    failed = {k for k, ok in checks.items() if not ok} - set(info.get("unevaluated") or ())
    print(json.dumps([ms, info.get("verdict") != 1.0 and (bool(failed) or not checks)]), flush=True)
"""


def bench_fresh_variants_against(other: str, n: int) -> dict[str, Any]:
    """The first episode of ``n`` fresh variants in this tree and in the checkout at ``other``, draw by draw.

    Two warm worker processes, one per tree, each asked in turn for the same draw (the
    order swapped every draw), so that the machine's drift, which on a shared virtual
    machine moves one run's figures by a third within minutes, falls on both alike.
    """
    import subprocess

    from thinkingbox_env.tasks.domain import load_domain

    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    trees = {"this tree": here, "other": os.path.abspath(other)}
    n_families = sum(len(load_domain(d).families) for d in ("retail", "insurance"))
    warm = _fresh_variants(n_families, 7_000_000)
    workers = {}
    for name, root in trees.items():
        env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
        proc = subprocess.Popen([sys.executable, "-c", _FRESH_VARIANT_WORKER], cwd=root, env=env, text=True,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps(warm) + "\n")
        proc.stdin.flush()
        workers[name] = proc
    for name, proc in workers.items():
        if proc.stdout.readline().strip() != "ready":  # type: ignore[union-attr]
            raise RuntimeError(f"the worker of {trees[name]} did not start")
    samples: dict[str, list[float]] = {name: [] for name in trees}
    failures = {name: 0 for name in trees}
    for i, draw in enumerate(_fresh_variants(n, 8_000_000)):
        for name in (list(trees) if i % 2 == 0 else list(trees)[::-1]):
            proc = workers[name]
            proc.stdin.write(json.dumps(draw) + "\n")  # type: ignore[union-attr]
            proc.stdin.flush()  # type: ignore[union-attr]
            answer = proc.stdout.readline()  # type: ignore[union-attr]
            if not answer:
                raise RuntimeError(f"the worker of {trees[name]} stopped at draw {draw} (its error is printed above)")
            ms, failed = json.loads(answer)
            samples[name].append(ms / 1000.0)
            failures[name] += bool(failed)
    for proc in workers.values():
        proc.stdin.close()  # type: ignore[union-attr]
        proc.wait(timeout=60)
    out: dict[str, Any] = {"variants": n, "other_tree": trees["other"]}
    for name in trees:
        out[name] = {"first_episode": summarize(samples[name]), "oracle_failures": failures[name]}
    mine, theirs = out["this tree"]["first_episode"], out["other"]["first_episode"]
    out["other_over_this"] = {"median": theirs["median_ms"] / mine["median_ms"], "p95": theirs["p95_ms"] / mine["p95_ms"]}
    return out


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
    print(f"thinkingbox_env benchmark: domain '{res['domain']}', {res.get('tasks', 0)} tasks in sections 1-4")
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
    if res.get("fast_path_hits"):
        st = res.get("statements", {})
        print(f"Statements answered in Python (the fast path), per shape, over the whole run "
              f"({st.get('read', 0)} reads, {st.get('write', 0)} writes asked)")
        for shape, n in sorted(res["fast_path_hits"].items(), key=lambda kv: -kv[1]):
            base = st.get("read" if shape.startswith("read") else "write", 0)
            share = f"{100 * n / base:5.1f}% of {'reads' if shape.startswith('read') else 'writes'}" if base else ""
            print(f"  {shape:<22}{n:>9}   {share}")
        print()
    if "cold_start" in res:
        cs = res["cold_start"]
        print(f"Cold start ({cs['runs']} fresh processes; torch installed: {cs['torch_installed']}, "
              f"loaded by the episode: {cs['torch_loaded']})")
        for key, label in (("import_ms", "import thinkingbox_env"), ("make_ms", "first make()"),
                           ("first_episode_ms", "first oracle episode"), ("second_task_ms", "second task (make + episode)")):
            print(f"  {label:<30} median {cs[key]['median']:8.1f} ms   max {cs[key]['max']:8.1f} ms")
        print()
    if "throughput" in res:
        th = res["throughput"]
        print(f"Oracle episodes ({th['episodes']} episodes, run_episode + OracleAgent)")
        print(f"  episodes per second      {th['episodes_per_s']:.1f}")
        print(f"  wall time per episode    {th['wall_ms_per_episode']:.2f} ms")
        print(f"  CPU time per episode     {th['cpu_ms_per_episode']:.2f} ms")
        print()
    if "episode_cpu" in res:
        ec = res["episode_cpu"]
        print(f"CPU per oracle episode ({ec['rounds']} rounds over {len(ec['task_ids'])} tasks, time.process_time)")
        print(f"  tasks: {', '.join(ec['task_ids'])}")
        print(f"  {'phase':<22}{'n':>7}{'median ms':>12}{'p95 ms':>10}{'mean ms':>10}{'max ms':>10}")
        rows = [("whole episode", ec["episode"])] + [(k, v) for k, v in ec["phases"].items()]
        for label, s in rows:
            print(f"  {label:<22}{s['n']:>7}{fmt(s['median_ms'], 3):>12}{fmt(s['p95_ms'], 3):>10}"
                  f"{fmt(s['mean_ms'], 3):>10}{fmt(s['max_ms'], 3):>10}")
        print("  slowest tasks (median ms): " + ", ".join(f"{t} {ms:.2f}" for t, ms in ec["slowest_tasks_median_ms"]))
        if ec.get("phase_replays_below_1"):
            print(f"  ({ec['phase_replays_below_1']} phase-by-phase replays below verdict 1.0: they skip the dialogue "
                  "that process rules ask for; not oracle failures)")
        print()
    for mode, title in (("template", "only template reads memoised (a trajectory that is new from its first write)"),
                        ("off", "the statement memo off (every statement to DuckDB)")):
        if f"episode_cpu_memo_{mode}" not in res:
            continue
        ec = res[f"episode_cpu_memo_{mode}"]
        print(f"CPU per oracle episode with {title}")
        print(f"  {'phase':<22}{'n':>7}{'median ms':>12}{'p95 ms':>10}{'mean ms':>10}{'max ms':>10}")
        for label, s in [("whole episode", ec["episode"])] + [(k, v) for k, v in ec["phases"].items()]:
            print(f"  {label:<22}{s['n']:>7}{fmt(s['median_ms'], 3):>12}{fmt(s['p95_ms'], 3):>10}"
                  f"{fmt(s['mean_ms'], 3):>10}{fmt(s['max_ms'], 3):>10}")
        print()
    if "fresh_variants" in res:
        fv = res["fresh_variants"]
        print(f"Fresh training variants ({fv['variants']}, warm process, time.process_time)")
        for key, label in (("generate", "generate the spec"), ("first_episode", "first episode")):
            s = fv[key]
            print(f"  {label:<22}median {fmt(s['median_ms'], 2)} ms   p95 {fmt(s['p95_ms'], 2)} ms   max {fmt(s['max_ms'], 2)} ms")
        print()
    if "fresh_variants_against" in res:
        fa = res["fresh_variants_against"]
        print(f"Fresh training variants, draw by draw against {fa['other_tree']} ({fa['variants']}, process CPU time)")
        for name in ("this tree", "other"):
            s = fa[name]["first_episode"]
            print(f"  {name:<12}first episode median {fmt(s['median_ms'], 2)} ms   p95 {fmt(s['p95_ms'], 2)} ms   "
                  f"max {fmt(s['max_ms'], 2)} ms   oracle failures {fa[name]['oracle_failures']}")
        r = fa["other_over_this"]
        print(f"  other / this tree: median {r['median']:.2f}x, p95 {r['p95']:.2f}x")
        print()
    if "grpo" in res:
        g = res["grpo"]
        print(f"GRPO-shaped groups ({g['groups']} groups of {g['group_size']} episodes of one fresh variant)")
        print(f"  CPU per group            median {fmt(g['group']['median_ms'], 1)} ms, p95 {fmt(g['group']['p95_ms'], 1)} ms")
        print(f"  CPU per episode          {fmt(g['cpu_ms_per_episode'], 2)} ms (spec generation included)")
        print(f"  episodes per CPU second  {fmt(g['episodes_per_cpu_s'], 1)}")
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
        if "memory_memo_off" in res:
            off = res["memory_memo_off"]
            print(f"  with the statement memo off: {fmt(off['rss_increase_mib'], 1)} MiB "
                  f"({fmt(off['kib_per_episode'], 1)} KiB per episode)")
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
