"""``submit prepare`` / ``submit validate``: a run's results in the versioned form a leaderboard takes."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .common import UserError, add_command, console


def cmd_submit_prepare(args: argparse.Namespace) -> int:
    """Write the result of one run file (``-o FILE``, or standard output)."""
    from ..eval.submission import SubmissionError, prepare
    from .runs import load_runs

    try:
        result = prepare(load_runs([args.run]))
    except SubmissionError as exc:
        raise UserError(f"{args.run}: {exc}") from exc
    text = result.model_dump_json(indent=1) + "\n"
    if args.output in (None, "-"):
        sys.stdout.write(text)
    else:
        Path(args.output).write_text(text, encoding="utf-8")
        s = result.summary["pass@1"]
        console.print(f"wrote {args.output}: {result.model or result.agent.get('kind')} on {result.task_set.tasks} tasks "
                      f"(task set {result.task_set.content_hash[:12]}), pass@1 {s['value']:.3f} over {s['trials']} trials",
                      highlight=False)
    return 0


def _installed_hashes(task_ids: list[str]) -> dict[str, str | None]:
    from ..tasks.lookup import UnknownTaskError, load_task

    out: dict[str, str | None] = {}
    for task_id in task_ids:
        try:
            out[task_id] = load_task(task_id).content_key()
        except (UnknownTaskError, KeyError, ValueError):
            out[task_id] = None
    return out


def cmd_submit_validate(args: argparse.Namespace) -> int:
    """Check a result file: its fields, its own hashes, and (unless ``--no-tasks``) its tasks against the installed ones."""
    from ..eval.submission import SubmissionError, check, load

    path = Path(args.result)
    if not path.is_file():
        raise UserError(f"no such result file: {path}; thinkingbox submit prepare RUN.jsonl -o FILE writes one")
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UserError(f"{path} is not JSON ({exc}); thinkingbox submit prepare writes a result as JSON") from exc
    try:
        result = load(data)
    except SubmissionError as exc:
        raise UserError(f"{path}: {exc}") from exc
    problems = check(result, None if args.no_tasks else _installed_hashes(sorted(result.tasks)))
    for problem in problems:
        console.print(f"[red]invalid:[/] {problem}", highlight=False)
    if problems:
        return 1
    console.print(f"{path}: valid thinkingbox result (format {result.format_version}), {result.task_set.tasks} tasks, "
                  f"task set {result.task_set.content_hash[:12]}", highlight=False)
    return 0


def add_submit_command(sub: Any) -> None:
    """Declare ``submit prepare`` and ``submit validate``."""
    p = add_command(sub, "submit", "a run's results in the versioned form a leaderboard takes",
                    "prepare: the result of one run file (thinkingbox-result, format 1): the agent's model and endpoint, "
                    "the user and judge, the package version, the date, the task set (each task's content hash and one "
                    "hash over them) and every task's trials. validate: check a result's fields and hashes and that its "
                    "tasks are the ones installed here (results are comparable when their task set hashes agree).",
                    ["thinkingbox submit prepare runs/qwen.jsonl -o qwen.result.json",
                     "thinkingbox submit validate qwen.result.json"])
    actions = p.add_subparsers(dest="submit_action", required=True)
    prep = actions.add_parser("prepare", help="write the result of one run file")
    prep.add_argument("run", help="a run file thinkingbox eval -o wrote (one configuration)")
    prep.add_argument("-o", "--output", help="the result file to write (default: standard output)")
    prep.set_defaults(func=cmd_submit_prepare)
    val = actions.add_parser("validate", help="check a result file")
    val.add_argument("result", help="a result file submit prepare wrote")
    val.add_argument("--no-tasks", action="store_true", help="do not compare its tasks with the ones installed here")
    val.set_defaults(func=cmd_submit_validate)
