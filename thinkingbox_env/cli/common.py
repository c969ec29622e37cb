"""What every command group shares: the console, task selection and progress bars."""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ..domain import domain_dirs
from ..registry import UnknownTaskError, list_tasks, load_task

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


def new_progress() -> Progress:
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console, transient=True)
