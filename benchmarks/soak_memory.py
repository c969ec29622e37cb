"""Memory over a long run of episodes: does the process's resident set level off?

Cycles every frozen task (a fresh env per episode, the oracle's trajectory, the verdict, then
``close()``), as an evaluation or a trainer that walks the task list does, and prints VmRSS every
``--every`` episodes with the growth per 1,000 over the second half of the run (after warm-up:
every task's template and runtime built once). ``--trace`` also prints the object types whose
live count grew most over the second half (``gc``'s view, cheap enough for a long run), to find
what holds memory.
"""

from __future__ import annotations

import argparse
import gc
import json
import time
from collections import Counter
from pathlib import Path

import thinkingbox_env as tb
from thinkingbox_env.agents.baselines import OracleAgent, run_episode


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _type_counts() -> Counter[str]:
    gc.collect()
    return Counter(f"{type(o).__module__}.{type(o).__qualname__}" for o in gc.get_objects())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=50_000)
    parser.add_argument("--every", type=int, default=1_000)
    parser.add_argument("--trace", action="store_true", help="report the allocation sites that grew most")
    parser.add_argument("--json", help="write the samples here")
    args = parser.parse_args()
    tasks = tb.list_tasks()
    samples: list[tuple[int, float]] = []
    counts: Counter[str] | None = None
    start = time.monotonic()
    for i in range(args.episodes):
        env = tb.make(tasks[i % len(tasks)])
        try:
            run_episode(env, OracleAgent(), seed=i)
        finally:
            env.close()
        if (i + 1) % args.every == 0:
            gc.collect()
            samples.append((i + 1, rss_mib()))
            print(f"{i + 1:>7} episodes  RSS {samples[-1][1]:8.1f} MiB  {time.monotonic() - start:7.0f} s", flush=True)
            if args.trace and i + 1 == args.episodes // 2:
                counts = _type_counts()
    half = [s for s in samples if s[0] > args.episodes // 2]
    growth = (half[-1][1] - half[0][1]) / max(1, (half[-1][0] - half[0][0])) * 1000 if len(half) > 1 else float("nan")
    print(f"growth over the second half: {growth:.2f} MiB per 1,000 episodes")
    if args.trace and counts is not None:
        grown = _type_counts()
        grown.subtract(counts)
        for name, n in grown.most_common(12):
            print(f"  {n:+8d}  {name}")
    if args.json:
        Path(args.json).write_text(json.dumps({"episodes": args.episodes, "samples": samples, "growth_mib_per_1000": growth}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
