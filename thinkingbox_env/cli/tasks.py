"""``list``, ``run``, ``validate`` and ``freeze``: working with the task set."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.table import Table

from ..agents.baselines import NoopAgent, OracleAgent, run_episode
from ..domain import domain_dirs, load_domain
from ..registry import generate_variant, load_task, make
from ..spec import SpecError, TaskSpec, dump_task
from ..version import __version__
from .common import console, new_progress, select_tasks


def cmd_list(args: argparse.Namespace) -> int:
    table = Table("task", "family", "writes", "description")
    for tid in select_tasks(args.tasks):
        spec = load_task(tid)
        writes = sum(1 for c in spec.golden if load_domain(spec.domain).toolbox[c.name].writes)
        table.add_row(tid, spec.family, str(writes), spec.description)
    console.print(table)
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    agents = {"oracle": OracleAgent, "noop": NoopAgent}
    names = [a.strip() for a in args.agents.split(",") if a.strip()]
    for name in names:
        if name not in agents:
            raise SystemExit(f"unknown agent '{name}'; choose from {', '.join(agents)}")
    tasks = select_tasks(args.tasks)
    results: dict[str, dict[str, Any]] = {}
    with new_progress() as progress:
        bar = progress.add_task("running", total=len(tasks) * len(names))
        for tid in tasks:
            results[tid] = {}
            for name in names:
                env = make(tid, max_actions=args.max_actions)
                try:
                    results[tid][name] = run_episode(env, agents[name](), seed=args.seed)
                finally:
                    env.close()
                progress.advance(bar)
    table = Table("task", *names, title=f"thinkingbox {__version__}: {len(tasks)} tasks, scripted user")
    for tid in tasks:
        cells = []
        for name in names:
            info = results[tid][name]
            cells.append("[green]pass[/]" if info["verdict"] == 1.0 else f"[red]fail[/] ({info['failure_category']})")
        table.add_row(tid, *cells)
    console.print(table)
    for name in names:
        passed = sum(results[t][name]["verdict"] for t in tasks)
        console.print(f"{name}: {int(passed)}/{len(tasks)} passed ({100 * passed / max(len(tasks), 1):.1f}%)")
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    from ..eval.validate import validate_task

    specs: list[TaskSpec] = []
    errors: list[tuple[str, str]] = []
    for tid in select_tasks(args.tasks):
        try:
            specs.append(load_task(tid))
        except SpecError as exc:
            errors.append((tid, str(exc)))
    if args.variants:
        domains = sorted({s.domain for s in specs} or set(domain_dirs()))
        for d in domains:
            for fam in load_domain(d).families.values():
                for seed in range(args.variants):
                    specs.append(generate_variant(d, fam.code, 100_000 + seed))
    rows = []
    with new_progress() as progress:
        bar = progress.add_task("validating", total=len(specs))
        for spec in specs:
            rows.append(validate_task(spec))
            progress.advance(bar)
    failed = [r for r in rows if not r.ok]
    shown = rows if not args.failures_only else failed
    table = Table("task", "reset", "oracle", "noop", "drop", "repeat", "ids", "result", title="thinkingbox validate")
    for r in shown:
        c = r.counts
        table.add_row(r.task_id, c.get("reset", "-"), c.get("oracle", "-"), c.get("noop", "-"), c.get("drop", "-"),
                      c.get("repeat", "-"), c.get("ids", "-"), "[green]ok[/]" if r.ok else "[red]FAIL[/]")
    console.print(table)
    for r in failed:
        for p in r.problems:
            console.print(f"[red]{r.task_id}[/]: {p}")
    for tid, msg in errors:
        console.print(f"[red]{tid}[/]: {msg}")
    total = len(rows) + len(errors)
    console.print(f"{total - len(failed) - len(errors)}/{total} tasks valid")
    return 1 if failed or errors else 0


def cmd_freeze(args: argparse.Namespace) -> int:
    """Write family instances as frozen test specs (seeds 1..count) for review."""
    domain = load_domain(args.domain)
    out_dir = Path(args.out) if args.out else domain.path.parent.parent / "task_specs" / args.domain
    out_dir.mkdir(parents=True, exist_ok=True)
    fams = [domain.family(f) for f in args.family] if args.family else list(domain.families.values())
    written = 0
    for fam in fams:
        for seed in range(1, args.count + 1):
            spec = fam.instance(seed, split="test", number=seed)
            (out_dir / f"{spec.id}.yaml").write_text(dump_task(spec), encoding="utf-8")
            written += 1
    console.print(f"wrote {written} task specs to {out_dir}")
    return 0


def add_task_commands(sub: Any) -> None:
    p = sub.add_parser("list", help="list frozen tasks")
    p.add_argument("tasks", nargs="*", help="task ids, domains or globs")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("run", help="run baseline agents over tasks with the scripted user and print a pass table")
    p.add_argument("tasks", nargs="*", help="task ids, domains or globs (default: all)")
    p.add_argument("--agents", default="oracle,noop", help="comma-separated: oracle, noop")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-actions", type=int, default=50)
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("validate", help="check that tasks are solvable and their checks discriminate")
    p.add_argument("tasks", nargs="*", help="task ids, domains or globs (default: all)")
    p.add_argument("--variants", type=int, default=0, help="also validate N generated train variants per family")
    p.add_argument("--failures-only", action="store_true")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("freeze", help="write family instances as frozen test specs")
    p.add_argument("domain")
    p.add_argument("--family", action="append", help="family code or name (repeatable; default: all)")
    p.add_argument("--count", type=int, default=4, help="instances per family (seeds 1..count)")
    p.add_argument("--out", help="output folder (default: task_specs/<domain>)")
    p.set_defaults(func=cmd_freeze)
