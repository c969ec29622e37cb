"""bench_env.py's fresh measurements: new training variants (sections 7, 8, 10) and new processes (cold start).

Section 7 is the first episode of a freshly generated variant in a warm process, section 8
GRPO-shaped groups of one fresh variant, section 10 (``--against PATH``) section 7 in this tree
and another checkout draw by draw; the cold start is a fresh interpreter's first episode.
"""

from __future__ import annotations

import gc
import importlib.util
import json
import os
import statistics
import sys
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:  # the sibling modules, when this file is loaded by path rather than run
    sys.path.insert(0, HERE)

from bench_env_common import oracle_failed, summarize  # noqa: E402

GRPO_GROUP = 8  # rollouts per prompt in the GRPO-shaped measurement


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
