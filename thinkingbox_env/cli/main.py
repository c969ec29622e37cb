"""The ``thinkingbox`` command: list, run, validate and freeze tasks."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from rich.markup import escape

from ..contracts.spec import SpecError
from ..extras import MissingExtraError
from ..tasks.lookup import UnknownTaskError
from ..version import __version__
from .common import HelpFormatter, UserError, console
from .eval import add_eval_commands
from .export import add_export_command
from .judgecheck import add_judge_check_command
from .new_domain import add_new_command
from .play import add_play_command
from .serve import add_serve_command
from .submit import add_submit_command
from .tasks import add_task_commands


def build_parser() -> argparse.ArgumentParser:
    """Assemble every command group's parser; kept separate from ``main`` so tests and docs can inspect the commands."""
    parser = argparse.ArgumentParser(
        prog="thinkingbox", formatter_class=HelpFormatter,
        description="Stateful business-workflow tasks for LLM agents: list, run, validate and freeze tasks, serve them "
                    "over MCP, evaluate a model and read the results.",
        epilog="examples:\n  thinkingbox list --domains\n  thinkingbox run 'retail/ST030_*'\n"
               "  thinkingbox eval retail --base-url http://localhost:8000/v1 -n 4 --skip-rubric -o runs/qwen.jsonl\n"
               "  thinkingbox agg runs/qwen.jsonl\n\n'thinkingbox COMMAND --help' shows a command's options and examples.")
    parser.add_argument("--version", action="version", version=f"thinkingbox-env {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log at INFO level")
    sub = parser.add_subparsers(dest="command", required=True)
    add_task_commands(sub)
    add_serve_command(sub)
    add_eval_commands(sub)
    add_play_command(sub)
    add_judge_check_command(sub)
    add_submit_command(sub)
    add_export_command(sub)
    add_new_command(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """The console entry point: user errors become a one-line message and an exit status, not a traceback."""
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        return int(args.func(args) or 0)
    except (UserError, MissingExtraError) as exc:  # a part whose extra is absent says which extra to install
        console.print(f"[red]error:[/] {escape(str(exc))}", highlight=False)
        return 2
    except KeyboardInterrupt:  # Ctrl-C: a command that handles it itself (eval) has already stopped cleanly
        console.print("interrupted", highlight=False)
        return 130
    except (UnknownTaskError, SpecError, KeyError) as exc:
        console.print(f"[red]error:[/] {exc.args[0] if isinstance(exc, KeyError) and exc.args else exc}")
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
