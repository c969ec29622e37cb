"""``list``, ``run``, ``validate`` and ``freeze``: working with the task set."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.table import Table

from ..agents.baselines import NoopAgent, OracleAgent, run_episode
from ..checks import trial_outcome
from ..contracts.spec import GoldenTurn, SpecError, TaskSpec, dump_task, interleave
from ..envs.registration import make
from ..tasks.domain import domain_dirs, load_domain
from ..tasks.lookup import generate_variant, load_task
from ..tasks.runtime import runtime_for
from ..version import __version__
from .common import UserError, add_command, console, new_progress, select_tasks


def cmd_list(args: argparse.Namespace) -> int:
    """``thinkingbox list``: what tasks and domains this install can see, including those added through THINKINGBOX_PATH."""
    if args.stats:
        from ..tasks.lookup import task_set_versions
        from ..tasks.stats import markdown_table, task_set_statistics

        domains = args.tasks or list(domain_dirs())
        unknown = [d for d in domains if d not in domain_dirs()]
        if unknown:
            raise UserError(f"--stats takes domain names; unknown: {', '.join(unknown)} (domains: {', '.join(domain_dirs())})")
        rows = [task_set_statistics(d, v) for d in domains for v in reversed(task_set_versions(d))]
        print(markdown_table(rows))
        return 0
    if args.domains:
        from ..tasks.lookup import list_tasks

        table = Table("domain", "tasks", "families", "folder")
        for name, path in domain_dirs().items():
            table.add_row(name, str(len(list_tasks(name))), str(len(load_domain(name).families)), str(path))
        console.print(table)
        return 0
    table = Table("task", "family", "writes", "description")
    for tid in select_tasks(args.tasks):
        spec = load_task(tid)
        writes = sum(1 for c in spec.golden if load_domain(spec.domain).toolbox[c.name].writes)
        table.add_row(tid, spec.family, str(writes), spec.description)
    console.print(table)
    return 0


def _judge(args: argparse.Namespace) -> Any:
    """The rubric judge the options ask for, or None (rubric questions are then unjudged, never failed)."""
    if not (args.judge_model or args.judge_base_url):
        return None
    from ..judging.judge import RubricJudge

    return RubricJudge(model=args.judge_model, base_url=args.judge_base_url, api_key=getattr(args, "judge_api_key", None))


def cmd_run(args: argparse.Namespace) -> int:
    """``thinkingbox run``: play tasks with the offline baselines, a smoke test that needs no model endpoint."""
    agents = {"oracle": OracleAgent, "noop": NoopAgent}
    names = [a.strip() for a in args.agents.split(",") if a.strip()]
    for name in names:
        if name not in agents:
            raise SystemExit(f"unknown agent '{name}'; choose from {', '.join(agents)}")
    tasks = select_tasks(args.tasks)
    judge = _judge(args)
    results: dict[str, dict[str, Any]] = {}
    with new_progress() as progress:
        bar = progress.add_task("running", total=len(tasks) * len(names))
        for tid in tasks:
            results[tid] = {}
            for name in names:
                env = make(tid, max_actions=args.max_actions, judge=judge)
                try:
                    results[tid][name] = run_episode(env, agents[name](), seed=args.seed)
                finally:
                    env.close()
                progress.advance(bar)
    judged = "a judge" if judge is not None else "no judge"
    table = Table("task", *names, title=f"thinkingbox {__version__}: {len(tasks)} tasks, scripted user, {judged}")
    outcomes = {t: {n: trial_outcome(results[t][n]["verdict"], results[t][n]["check_details"]) for n in names} for t in tasks}
    for tid in tasks:
        cells = []
        for name in names:
            outcome = outcomes[tid][name]
            cells.append({"pass": "[green]pass[/]", "unjudged": "[yellow]unjudged[/]"}.get(
                outcome, f"[red]fail[/] ({results[tid][name]['failure_category']})"))
        table.add_row(tid, *cells)
    console.print(table)
    for name in names:
        passed = sum(1 for t in tasks if outcomes[t][name] == "pass")
        unjudged = sum(1 for t in tasks if outcomes[t][name] == "unjudged")
        judged_n = len(tasks) - unjudged
        line = f"{name}: {passed}/{judged_n} passed ({100 * passed / max(judged_n, 1):.1f}%)"
        if unjudged:
            line += f"; {unjudged} unjudged (rubric questions need a judge), neither passed nor failed"
        console.print(line, highlight=False)
    if any(o == "unjudged" for per in outcomes.values() for o in per.values()):
        console.print("to judge the rubric questions too: --judge-model NAME --judge-base-url URL (any OpenAI-compatible "
                      "endpoint)", highlight=False)
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    """``thinkingbox validate``: check that each task is solvable by its golden calls and not solved by doing nothing."""
    from ..eval.validate import validate_task

    judge = _judge(args)
    specs: list[TaskSpec] = []
    errors: list[tuple[str, str]] = []
    for tid in select_tasks(args.tasks):
        try:
            specs.append(load_task(tid))
        except SpecError as exc:
            errors.append((tid, str(exc)))
    variants: list[tuple[str, str, int]] = []
    if args.variants:
        domains = sorted({s.domain for s in specs} or set(domain_dirs()))
        variants = [(d, fam.code, 100_000 + seed) for d in domains for fam in load_domain(d).families.values()
                    for seed in range(args.variants)]
        console.print(f"validating {len(specs)} frozen tasks and {len(variants)} generated variants; "
                      "the bar shows the time left", highlight=False)
    rows = []
    with new_progress(transient=False) as progress:
        bar = progress.add_task("validating", total=len(specs) + len(variants))
        for spec in specs:
            rows.append(validate_task(spec, judge))
            progress.advance(bar)
        for d, code, seed in variants:
            rows.append(validate_task(generate_variant(d, code, seed), judge))
            progress.advance(bar)
    failed = [r for r in rows if not r.ok]
    shown = rows if not args.failures_only else failed
    table = Table("task", "reset", "oracle", "noop", "drop", "repeat", "ids", "value", "process", "rubric", "result",
                  title="thinkingbox validate")
    for r in shown:
        c = r.counts
        table.add_row(r.task_id, c.get("reset", "-"), c.get("oracle", "-"), c.get("noop", "-"), c.get("drop", "-"),
                      c.get("repeat", "-"), c.get("ids", "-"), c.get("value", "-"), c.get("process", "-"),
                      c.get("rubric", "-"), "[green]ok[/]" if r.ok else "[red]FAIL[/]")
    console.print(table)
    for r in failed:
        for p in r.problems:
            console.print(f"[red]{r.task_id}[/]: {p}")
    for tid, msg in errors:
        console.print(f"[red]{tid}[/]: {msg}")
    total = len(rows) + len(errors)
    console.print(f"{total - len(failed) - len(errors)}/{total} tasks valid")
    unjudged = sum(1 for r in rows if r.counts.get("rubric") == "unjudged")
    if unjudged:
        how = ("the judge left them unevaluated (it failed, or its answers did not parse)" if judge is not None
               else "pass --judge-model or --judge-base-url to validate the rubrics too")
        console.print(f"{unjudged} task(s) with rubric questions are unjudged: validated without their rubrics; {how}",
                      highlight=False)
    return 1 if failed or errors else 0


def _freeze_folder(domain_name: str, domain_path: Path, out: str | None) -> Path:
    """Where frozen specs go: ``--out``, else the checkout the domain comes from; never an installed package."""
    if out:
        return Path(out)
    checkout = domain_path.parent.parent
    if (checkout / "pyproject.toml").is_file() and "site-packages" not in checkout.parts:
        return checkout / "task_specs" / domain_name
    raise UserError(f"the {domain_name} domain is read from an installed package ({domain_path}), not a checkout; "
                    "pass --out FOLDER, or work in a checkout installed with pip install -e .")


def cmd_freeze(args: argparse.Namespace) -> int:
    """Write family instances as frozen test specs (seeds 1..count) for review."""
    domain = load_domain(args.domain)
    out_dir = _freeze_folder(args.domain, domain.path, args.out)
    fams = [domain.family(f) for f in args.family] if args.family else list(domain.families.values())
    targets = [(fam, seed) for fam in fams for seed in range(1, (args.count or fam.test_count or 4) + 1)]
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    with new_progress() as progress:
        bar = progress.add_task("freezing", total=len(targets))
        specs = []
        for fam, seed in targets:
            spec = fam.instance(seed, split="test", number=seed)
            try:  # the load-time checks, golden replay included: a broken instance is never written
                runtime_for(spec)
            except SpecError as exc:
                raise UserError(f"not freezing: {exc}") from exc
            specs.append(spec)
            progress.advance(bar)
    existing = [out_dir / f"{spec.id}.yaml" for spec in specs if (out_dir / f"{spec.id}.yaml").exists()]
    if existing and not args.force:
        raise UserError(f"{len(existing)} of the {len(specs)} specs already exist in {out_dir} (e.g. {existing[0].name}); "
                        "pass --force to overwrite them, or --out to write elsewhere")
    for spec in specs:
        path = out_dir / f"{spec.id}.yaml"
        path.write_text(dump_task(spec), encoding="utf-8")
        written.append(path)
    console.print(f"wrote {len(written)} task specs to {out_dir}", highlight=False)
    return 0


def render_task(spec: TaskSpec) -> list[str]:
    """A frozen task as a reviewer reads it.

    Opening and facts, the golden turns and calls with the source of each written value, the
    closing and the checks: what a reviewer needs to judge whether the golden is fair.
    """
    box = load_domain(spec.domain).toolbox if spec.domain in domain_dirs() else None
    lines = [f"[bold]{spec.full_id}[/] ({spec.family}, {spec.split}){'  ' + spec.description if spec.description else ''}"]
    if spec.origin is not None:
        lines.append(f"origin: opening {spec.origin.opening}; branches {', '.join(spec.origin.branches) or '-'}")
    lines.append(f"[bold]customer:[/] {spec.user.opening}")
    for fact in spec.user.facts:
        wrong = f"  (first says {fact.misremembered})" if fact.misremembered else ""
        lines.append(f"  fact: {fact.text}{wrong}")
    for fault in spec.faults:
        lines.append(f"  fault: call {fault.call} of {fault.tool} fails: {fault.error}")
    i = -1
    for step in interleave(list(spec.dialogue), list(spec.golden)):
        if isinstance(step, GoldenTurn):
            lines.append(f"  [cyan]agent ({step.act}):[/] {step.say}")
            continue
        i, call = i + 1, step
        writes = box is not None and call.name in box and box[call.name].writes
        args = ", ".join(f"{a}={v!r}" for a, v in call.arguments.items())
        failing = f"  [yellow]-> fails: {call.expect_error}[/]" if call.expect_error else ""
        lines.append(f"  {i:>2} {'[bold]write[/]' if writes else 'read '} {call.name}({args}){failing}")
        for arg, source in call.why.items():
            lines.append(f"       {arg} <- {source}")
    lines.append(f"[bold]closing:[/] {spec.golden_reply}")
    from ..checks import kinds

    runtime = runtime_for(spec)
    checks = [line for k in kinds() for line in k.describe_task(spec, runtime)]
    if checks:
        lines.append("checks: " + "; ".join(checks))
    return lines


def show_task(task_id: str) -> int:
    """``thinkingbox show TASK`` without a run file: the task itself, for review."""
    try:
        spec = load_task(task_id)
    except (KeyError, SpecError) as exc:
        raise UserError(str(exc.args[0] if exc.args else exc)) from exc
    for line in render_task(spec):
        console.print(line, soft_wrap=True, highlight=False)
    return 0


def add_task_commands(sub: Any) -> None:
    """Declare the commands that work on frozen tasks (list, run, validate, freeze); they need no model endpoint."""
    p = add_command(sub, "list", "list frozen tasks, or the domains", "List frozen tasks with their family, number of "
                    "golden writes and description; with --domains, the domains and how many tasks each has.",
                    ["thinkingbox list --domains", "thinkingbox list retail", "thinkingbox list 'retail/ST030_*'",
                     "thinkingbox list --stats retail"])
    p.add_argument("tasks", nargs="*", help="task ids, domains or globs, with @v<N> for an earlier task set (retail@v2); default: all")
    p.add_argument("--domains", action="store_true", help="list the domains instead of tasks")
    p.add_argument("--stats", action="store_true",
                   help="print each domain's task-set statistics (every loadable version) as a markdown table")
    p.set_defaults(func=cmd_list)

    p = add_command(sub, "run", "run baseline agents over tasks with the scripted user and print a pass table",
                    "Run the oracle (golden trajectory) and no-op agents over tasks with the scripted user: the oracle "
                    "should pass every task and the no-op agent fail those that need a change.",
                    ["thinkingbox run 'retail/ST030_*'", "thinkingbox run insurance --agents oracle"])
    p.add_argument("tasks", nargs="*", help="task ids, domains or globs, with @v<N> for an earlier task set (retail@v2); default: all")
    p.add_argument("--agents", default="oracle,noop", help="comma-separated: oracle, noop")
    p.add_argument("--seed", type=int, default=0, help="episode seed")
    p.add_argument("--max-actions", type=int, default=50, help="actions before an episode is truncated")
    p.add_argument("--judge-model", help="rubric judge model; without a judge, tasks with rubric questions are unjudged")
    p.add_argument("--judge-base-url", help="rubric judge endpoint (OpenAI-compatible)")
    p.add_argument("--judge-api-key", help="rubric judge API key")
    p.set_defaults(func=cmd_run)

    p = add_command(sub, "validate", "check that tasks are solvable and their checks discriminate",
                    "Validate tasks: the oracle passes, doing nothing fails, dropping or repeating a golden write fails, "
                    "reset is deterministic and every id resolves. Rubric questions are validated with a judge only "
                    "(--judge-model/--judge-base-url). Generated variants (--variants) take about a second "
                    "each; the progress bar estimates the time left.",
                    ["thinkingbox validate 'retail/ST004_*'", "thinkingbox validate retail --variants 2 --failures-only",
                     "thinkingbox validate retail@v2"])
    p.add_argument("tasks", nargs="*", help="task ids, domains or globs, with @v<N> for an earlier task set (retail@v2); default: all")
    p.add_argument("--variants", type=int, default=0, help="also validate N generated train variants per family")
    p.add_argument("--failures-only", action="store_true", help="show only the tasks that fail")
    p.add_argument("--judge-model", help="rubric judge model; without a judge, rubric questions are set aside")
    p.add_argument("--judge-base-url", help="rubric judge endpoint (OpenAI-compatible)")
    p.set_defaults(func=cmd_validate)

    p = add_command(sub, "freeze", "write family instances as frozen test specs",
                    "Write family instances (seeds 1..count) as frozen test specs for review, into the checkout's "
                    "task_specs/<domain> (or --out). Existing specs are kept unless --force.",
                    ["thinkingbox freeze retail --family ST004 --count 2 --out /tmp/specs",
                     "thinkingbox freeze retail --force"])
    p.add_argument("domain", help="domain name (thinkingbox list --domains)")
    p.add_argument("--family", action="append", help="family code or name (repeatable; default: all)")
    p.add_argument("--count", type=int, help="instances per family (seeds 1..count; default: the family's test_count, else 4)")
    p.add_argument("--out", help="output folder (default: the checkout's task_specs/<domain>)")
    p.add_argument("--force", action="store_true", help="overwrite specs that already exist")
    p.set_defaults(func=cmd_freeze)
