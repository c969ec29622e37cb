"""``report``: one self-contained HTML page of one or more run files, with a distinct name for each run."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .common import UserError, add_command, console
from .runs import load_runs


def run_labels(paths: list[str], runs: list[list[dict[str, Any]]]) -> list[str]:
    """A distinct name per run: the label given at eval time, else the file name, else its folder.

    ``runs/base/eval.jsonl`` and ``runs/trained/eval.jsonl`` become ``base`` and ``trained``.
    """
    stems = [Path(p).stem for p in paths]
    out = []
    for p, stem, rows in zip(paths, stems, runs):
        given = next((r["label"] for r in rows if r.get("label")), None)
        if given:
            out.append(str(given))
        elif stems.count(stem) > 1:
            parent = Path(p).resolve().parent.name
            out.append(parent if parent else stem)
        else:
            out.append(stem)
    return out


def cmd_report(args: argparse.Namespace) -> int:
    """``thinkingbox report``: one self-contained HTML page comparing run files, to share without the tool installed."""
    from ..eval.report import build_report

    if args.label and len(args.label) != len(args.runs):
        raise UserError(f"{len(args.label)} --label for {len(args.runs)} runs; give one --label per run file, in order")
    loaded = [load_runs([p], args.skip_malformed) for p in args.runs]
    runs = {}
    for name, rows in zip(args.label or run_labels(args.runs, loaded), loaded):
        while name in runs:
            name += "'"
        runs[name] = rows
    out = Path(args.output)
    if not out.parent.is_dir():
        raise UserError(f"the folder of -o {out} does not exist; create it (mkdir -p {out.parent}) or choose another path")
    html = build_report(runs, title=args.title)
    out.write_text(html, encoding="utf-8")
    console.print(f"wrote {args.output} ({len(html) // 1024} KiB, {len(runs)} runs)")
    return 0


def add_report_command(sub: Any) -> None:
    """Register ``report``."""
    p = add_command(sub, "report", "one self-contained HTML report of one or more runs",
                    "Write one self-contained HTML file with plots and tables of one or more runs, a task x run pass "
                    "table and every trial's transcript.",
                    ["thinkingbox report runs/base.jsonl runs/trained.jsonl -o report.html",
                     "thinkingbox report runs/*/eval.jsonl --label base --label trained -o report.html"])
    p.add_argument("runs", nargs="+", help="run files (JSONL)")
    p.add_argument("-o", "--output", default="report.html", help="the HTML file to write")
    p.add_argument("--title", default="thinkingbox evaluation report", help="the report's title")
    p.add_argument("--label", action="append", help="a name for each run, in order (repeatable; default: from the file names)")
    p.add_argument("--skip-malformed", action="store_true", help="leave out (and name) lines that are not rows instead of stopping")
    p.set_defaults(func=cmd_report)
