"""The ``thinkingbox`` command: list, run, validate and freeze tasks."""

from __future__ import annotations

import argparse
import fnmatch
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from . import __version__
from .agents import NoopAgent, OracleAgent, run_episode
from .domain import domain_dirs, load_domain
from .registry import UnknownTaskError, generate_variant, list_tasks, load_task, make
from .spec import SpecError, TaskSpec, dump_task

console = Console()


def select_tasks(patterns: Sequence[str]) -> list[str]:
    """Task ids from ids, domain names and glob patterns (``retail/ST030_*``); all tasks if none."""
    every = list_tasks()
    if not patterns:
        return every
    chosen: list[str] = []
    for pat in patterns:
        if pat in domain_dirs():
            matched = [t for t in every if t.startswith(pat + "/")]
        elif any(ch in pat for ch in "*?["):
            matched = fnmatch.filter(every, pat)
        else:
            load_task(pat)  # raises with suggestions when unknown
            matched = [pat]
        if not matched:
            raise UnknownTaskError(f"no task matches '{pat}'")
        chosen += [t for t in matched if t not in chosen]
    return chosen


def _progress() -> Progress:
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console, transient=True)


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
    with _progress() as progress:
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
    from .validate import validate_task

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
    with _progress() as progress:
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


def cmd_serve(args: argparse.Namespace) -> int:
    from .mcp_server import OperatorError, serve_http, serve_stdio

    try:
        if args.transport == "http":
            serve_http(args.target, args.host, args.port, args.token, args.operator_token, args.idle_timeout)
        else:
            serve_stdio(args.target, args.operator_socket, args.operator_port, args.operator_token)
    except OperatorError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="thinkingbox", description="Stateful business-workflow tasks for LLM agents.")
    parser.add_argument("--version", action="version", version=f"thinkingbox-env {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log at INFO level")
    sub = parser.add_subparsers(dest="command", required=True)

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

    p = sub.add_parser("serve", help="serve a task's (or a domain's) tools over MCP")
    p.add_argument("target", help="a task id (retail/ST030_001) or a domain (retail)")
    p.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    p.add_argument("--host", default="127.0.0.1", help="http: address to bind (anything but loopback needs --token)")
    p.add_argument("--port", type=int, default=8765, help="http: port")
    p.add_argument("--token", help="http: bearer token the agent side must send (or THINKINGBOX_MCP_TOKEN)")
    p.add_argument("--operator-token", help="token of the operator API (or THINKINGBOX_OPERATOR_TOKEN; printed if generated)")
    p.add_argument("--idle-timeout", type=float, default=1800.0, help="http: seconds after which an idle session's episode is dropped")
    p.add_argument("--operator-socket", help="stdio: serve the operator API on this Unix socket")
    p.add_argument("--operator-port", type=int, help="stdio: serve the operator API on this loopback port")
    p.set_defaults(func=cmd_serve)

    from .eval_cli import add_eval_commands

    add_eval_commands(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        return int(args.func(args) or 0)
    except (UnknownTaskError, SpecError, KeyError) as exc:
        console.print(f"[red]error:[/] {exc.args[0] if isinstance(exc, KeyError) and exc.args else exc}")
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
