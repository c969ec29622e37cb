"""What every command group shares: the console, user errors, help formatting, task selection and progress bars."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

console = Console(soft_wrap=True)  # messages stay on one line, so logs and greps see them whole


class UserError(Exception):
    """A mistake in what the user asked for; ``main`` prints the message (which says what to do) and exits 2."""


class HelpFormatter(argparse.HelpFormatter):
    """Shows each option's default (when it has a meaningful one) and keeps examples as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith("examples:"):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if "%(default)" in text or default is None or default is False or default == argparse.SUPPRESS or default == []:
            return text
        if action.option_strings or action.nargs in (argparse.OPTIONAL, argparse.ZERO_OR_MORE):
            return text + " (default: %(default)s)"
        return text


def add_command(sub: argparse._SubParsersAction, name: str, summary: str, description: str,
                examples: Sequence[str]) -> argparse.ArgumentParser:
    """A subcommand with a one-line summary (for ``thinkingbox --help``), a description and examples."""
    epilog = "examples:\n" + "\n".join(f"  {e}" for e in examples)
    return sub.add_parser(name, help=summary, description=description, epilog=epilog, formatter_class=HelpFormatter)


def select_tasks(patterns: Sequence[str]) -> list[str]:
    """Task ids from ids, domain names and glob patterns (``retail/ST030_*``); all tasks if none."""
    from ..eval.api import select_tasks as select  # the evaluation stack loads only for commands that select tasks

    return select(patterns)


def new_progress(transient: bool = True) -> Progress:
    """A bar with the count, elapsed time and an estimate of the time left.

    It stays on screen when ``transient`` is false and the output is a terminal (a log file gets no
    repainted bars).
    """
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    TextColumn("ETA"), TimeRemainingColumn(), console=console,
                    transient=transient or not sys.stderr.isatty())
