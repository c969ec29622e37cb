"""The eval examples of ``--help`` and docs/users.md run as written: none is refused by the judge gate."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from thinkingbox_env.cli.common import select_tasks
from thinkingbox_env.cli.main import build_parser
from thinkingbox_env.tasks.lookup import load_task

ROOT = Path(__file__).resolve().parents[2]


def _eval_examples() -> list[str]:
    parser = build_parser()
    texts = [parser.epilog or ""]
    for action in parser._subparsers._group_actions:  # the subcommands' own epilogs
        texts += [sub.epilog or "" for sub in action.choices.values()]
    users = re.sub(r"\\\n\s*", " ", (ROOT / "docs" / "users.md").read_text())
    found = [line.strip() for text in texts for line in text.splitlines() if line.strip().startswith("thinkingbox eval ")]
    return found + [line.strip() for line in users.splitlines() if line.strip().startswith("thinkingbox eval ")]


@pytest.mark.parametrize("example", _eval_examples())
def test_an_eval_example_over_rubric_tasks_says_how_they_are_judged(example):
    args = build_parser().parse_args(shlex.split(example)[1:])
    tasks = select_tasks(list(args.tasks or []) + list(args.task_patterns or []))
    judged = args.judge_model or args.judge_base_url or args.no_judge or args.skip_rubric
    with_rubric = [t for t in tasks if load_task(t).checks.rubric]
    assert judged or not with_rubric, f"`{example}` is refused: {len(with_rubric)} tasks with rubric checks and no judge"
