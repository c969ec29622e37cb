"""The rows of run files, read for the commands that view a run (``agg``, ``compare``, ``report``, ``show``, ``submit``).

One reader so that every view names a line that is not a row the same way, and stops on it
unless ``--skip-malformed`` was given.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console

from .common import UserError

err_console = Console(stderr=True)  # diagnostics stay off stdout, which may carry --json -


def load_runs(paths: list[str], skip_malformed: bool = False) -> list[dict[str, Any]]:
    """The rows of run files; a line that is not a row is named, and stops the command unless skipping was asked for."""
    from ..eval.run_files import scan_rows

    rows: list[dict[str, Any]] = []
    bad: list[str] = []
    count = 0
    from ..eval.run_dir import rows_path

    for p in [str(rows_path(q)) for q in paths]:  # a run directory stands for its rows.jsonl
        if not Path(p).is_file():
            raise UserError(f"no such run file: {p}; pass a file that thinkingbox eval -o wrote")
        scan = scan_rows(p)
        if not scan.rows:
            json_lines = any(not why.startswith(("not valid JSON", "torn")) for _, why in scan.malformed)
            what = "holds JSON, but no eval rows (no task_id or status)" if json_lines else "has no JSON lines"
            raise UserError(f"{p} is not a run file: it {what}; pass a JSONL file that thinkingbox eval -o wrote")
        rows += scan.rows
        count += len(scan.malformed)
        bad += scan.describe()
    if count:
        verb = "skipped" if skip_malformed else "found"
        err_console.print(f"{'warning' if skip_malformed else 'error'}: {count} malformed row(s) {verb}:")
        for line in bad:
            err_console.print(f"  {line}", markup=False, highlight=False, soft_wrap=True)
        if not skip_malformed:
            raise UserError("the figures would leave these rows out: repair the file(s), or pass --skip-malformed to skip them")
    return rows

