"""bench_env.py's measuring helpers: clocks, percentiles, the machine's description, and the tasks it plays."""

from __future__ import annotations

import os
import platform
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


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
