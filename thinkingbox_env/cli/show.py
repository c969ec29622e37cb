"""``show``: one recorded trial as a readable transcript, a run's trials of a task, or (without a run) the task itself."""

from __future__ import annotations

import argparse
import json
from typing import Any

from .common import add_command, console
from .runs import load_runs


def render_transcript(row: dict[str, Any], width: int = 2000) -> list[str]:
    """The trial as readable lines (rich markup): dialogue, tool calls and results, diff and failed checks."""
    from rich.markup import escape

    from ..eval.metrics import row_outcome
    from ..eval.transcript import render_trace

    status = {"pass": "PASS", "fail": "FAIL", "unjudged": "UNJUDGED", "system_error": "SYSTEM ERROR"}[row_outcome(row)]
    from ..eval.metrics import row_unverified

    unverified = row_unverified(row)
    lines = [f"[b]{row['task_id']}[/] trial {row['trial']} (seed {row['seed']}): [b]{status}[/]"
             + (" [yellow](dialogue unverified)[/]" if unverified else "")
             + f"  finish {row.get('finish_reason')}  category {row.get('failure_category')}"]
    for t in render_trace(row.get("trace") or [], width):
        text = escape(t.text)
        if t.kind == "reasoning":
            lines.append(f"[dim]  (reasoning) {text}[/]")
        elif t.kind == "said":
            lines.append(f"[b]{t.speaker}:[/] {text}")
        elif t.kind == "call":
            mark = "" if t.error is None else f" [red]({escape(t.error)})[/]"
            lines.append(f"[cyan]  call[/] {escape(t.name)}({text}){mark}")
        else:
            lines.append(f"[dim]  result[/] {text}")
    if row.get("system_error"):
        lines.append(f"[red]system error ({row['system_error'].get('where')}): {escape(row['system_error'].get('message', ''))}[/]")
    if row.get("context_overflow"):
        lines.append(f"[red]context overflow: {escape(str(row['context_overflow'].get('message', '')))}[/]")
    replies = row.get("user_replies") or {}
    if replies.get("quoted_prompt") or replies.get("cut"):
        lines.append(f"[yellow]simulated user: of {replies.get('replies')} replies, {replies.get('quoted_prompt')} quoted its "
                     f"prompt and {replies.get('cut')} were cut at its token cap (0-based)[/]")
    if row.get("diff") is not None:
        lines.append("[b]final diff:[/] " + (escape(json.dumps(row["diff"], indent=1, default=str)) if row["diff"] else "no changes"))
    for d in row.get("check_details") or []:
        if d["passed"] is not True:
            what = ("[red]failed check[/]" if d["passed"] is False else "[yellow]undetermined check[/]" if d.get("undetermined")
                    else "[yellow]unevaluated check[/]")
            lines.append(f"{what} {escape(d['name'])}: {escape(str(d.get('detail', '')))}")
    if row.get("judge_calls"):
        for j in row["judge_calls"]:
            lines.append(f"[magenta]judge[/] {escape(j['question'])} -> {j.get('answer')} ({escape(str(j.get('reason', j.get('error'))))})")
    return lines


def cmd_show(args: argparse.Namespace) -> int:
    """``thinkingbox show``: replay one recorded trial's dialogue and checks, to read why it failed (or, without a run, show the task)."""
    if args.run is None:
        from .tasks import show_task

        return show_task(args.task)
    rows = [r for r in load_runs([args.run], args.skip_malformed) if r["task_id"] == args.task]
    if not rows:
        console.print(f"[red]error:[/] no trials of '{args.task}' in {args.run}")
        return 2
    if args.trial is None:
        from ..eval.metrics import row_outcome, row_unverified

        for r in sorted(rows, key=lambda r: r["trial"]):
            outcome = row_outcome(r)
            status = f"fail ({r.get('failure_category')})" if outcome == "fail" else outcome.replace("_", " ")
            if row_unverified(r):
                status += ", dialogue unverified"
            console.print(f"trial {r['trial']}: {status}")
        return 0
    chosen = [r for r in rows if r["trial"] == args.trial]
    if not chosen:
        console.print(f"[red]error:[/] {args.task} has no trial {args.trial}; trials: {sorted(r['trial'] for r in rows)}")
        return 2
    for line in render_transcript(chosen[-1]):
        console.print(line, soft_wrap=True)
    return 0


def add_show_command(sub: Any) -> None:
    """Register ``show``."""
    p = add_command(sub, "show", "a readable transcript of one trial, or a task's golden trajectory",
                    "Print one trial as a readable transcript: dialogue, tool calls and results, the final diff and "
                    "the failed checks; without --trial, list the task's trials. Without a run file, print the task: "
                    "its golden turns and calls, with the policy source of every written value.",
                    ["thinkingbox show runs/qwen.jsonl --task retail/ST030_001", "thinkingbox show runs/qwen.jsonl --task retail/ST030_001 --trial 0",
                     "thinkingbox show --task retail/ST030_001"])
    p.add_argument("run", nargs="?", help="run file (JSONL); leave out to show the task itself")
    p.add_argument("--task", required=True, help="task id, e.g. retail/ST030_001")
    p.add_argument("--trial", type=int, help="trial index (default: list the task's trials)")
    p.add_argument("--skip-malformed", action="store_true", help="leave out (and name) lines that are not rows instead of stopping")
    p.set_defaults(func=cmd_show)
