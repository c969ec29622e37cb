"""``thinkingbox eval`` options for Thinkingbox-bench v1.0: ``--suite``, ``--data-dir``, ``--server-python``, ``--reference-check``."""

from __future__ import annotations

import argparse
import fnmatch
import json
from pathlib import Path
from typing import Any

from .common import console


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of the external tbbench source, shared by every command that can select its tasks."""
    p.add_argument("--suite", help="a named suite of an external task source, e.g. tbbench-v1 (the published "
                                    "Thinkingbox-bench release list); task arguments then filter it")
    p.add_argument("--data-dir", help="tbbench: the folder of your thinkingbox-data clone (or THINKINGBOX_TBBENCH_DIR)")
    p.add_argument("--server-python", help="tbbench: the python of the virtualenv the benchmark's tool servers are "
                                           "installed in (or THINKINGBOX_TBBENCH_PYTHON)")
    p.add_argument("--server-pool", type=int, metavar="N",
                   help="tbbench: warm server processes kept started per server (each serves one episode; "
                        "default 2 or THINKINGBOX_TBBENCH_POOL; 0: start each episode's servers in its reset)")
    p.add_argument("--reference-check", action="store_true",
                   help="tbbench: replay each task's golden tool calls and report how many reproduce the golden hash "
                        "(rows go to --output)")


def uses_tbbench(args: argparse.Namespace) -> bool:
    """Whether the command touches the benchmark source, so runs that do not are spared registering it and reading its settings."""
    patterns = list(args.tasks or []) + list(args.task_patterns or [])
    return bool(args.suite or args.data_dir or args.server_python or args.reference_check
                or any(p.startswith("tbbench/") for p in patterns))


def task_options(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """What every tbbench ``make()`` call of the run receives."""
    if not uses_tbbench(args):
        return {}
    from ..extras import MCP_MODULES, require_extra

    require_extra("mcp", MCP_MODULES, "the published benchmark (tbbench tasks run their domain's MCP servers)")
    from ..tbbench import register_source
    from ..tbbench.source import DATA_DIR_VARIABLE, PYTHON_VARIABLE

    register_source()  # an install whose entry points predate tbbench still finds the namespace
    import os

    data_dir = args.data_dir or os.environ.get(DATA_DIR_VARIABLE)
    python = args.server_python or os.environ.get(PYTHON_VARIABLE)
    out: dict[str, Any] = {"data_dir": str(Path(data_dir).resolve()) if data_dir else None, "server_python": python}
    if getattr(args, "server_pool", None) is not None:
        if args.server_pool < 0:
            raise SystemExit(f"--server-pool {args.server_pool}: must be 0 or more")
        out["pool_size"] = args.server_pool
    return {"tbbench": out}


def select(args: argparse.Namespace, options: dict[str, dict[str, Any]]) -> list[str] | None:
    """The suite's task ids filtered by the task arguments; explicit ``tbbench/`` ids; otherwise None."""
    patterns = list(args.tasks or []) + list(args.task_patterns or [])
    if not args.suite:
        explicit = [p for p in patterns if p.startswith("tbbench/") and not any(ch in p for ch in "*?[")]
        return explicit if explicit and len(explicit) == len(patterns) else None
    from ..envs.registration import suite_tasks

    every = suite_tasks(args.suite, **options.get(args.suite.split("-", 1)[0], {}))
    if not patterns:
        return every
    return [t for t in every if any(fnmatch.fnmatch(t, p) or t == p for p in patterns)]


def reference_check(args: argparse.Namespace, tasks: list[str], options: dict[str, dict[str, Any]]) -> int:
    """Replay the reference calls and record which tasks reproduce their golden hashes, before trusting the servers.

    Tasks run ``-c`` at a time (each in server processes of its own, so they are
    independent); rows are written in task order as they come and the summary
    counts reproduced tasks per scenario.
    """
    from concurrent.futures import ThreadPoolExecutor

    from ..tbbench import reference_check as check

    opts = options.get("tbbench", {})
    workers = max(1, int(getattr(args, "concurrency", 1) or 1))
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    rows = []
    with out.open("w", encoding="utf-8") as fh, ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(check, [task_id], **opts) for task_id in tasks]
        for future in futures:  # in task order, so the rows are deterministic
            row = future.result()[0]
            rows.append(row)
            fh.write(json.dumps(row, default=str) + "\n")
            fh.flush()
            mark = "[green]ok[/]" if row["reproduced"] else f"[red]differs[/] {row.get('error') or row.get('hashes')}"
            console.print(f"{row['task_id']}: {mark}")
    per: dict[str, list[int]] = {}
    for r in rows:
        counts = per.setdefault(str(r.get("scenario") or "?"), [0, 0])
        counts[0] += bool(r["reproduced"])
        counts[1] += 1
    for scenario in sorted(per):
        console.print(f"  {scenario}: {per[scenario][0]} of {per[scenario][1]} reproduce")
    good = sum(1 for r in rows if r["reproduced"])
    console.print(f"{good} of {len(rows)} golden replays reproduce the golden hash -> {out}")
    return 0 if good == len(rows) else 1
