"""A run directory: one folder per run with fixed file names, so runs are found and compared by folder alone.

``thinkingbox eval ... -o runs/qwen3-8b/`` (a folder: an existing directory, or a path ending in
``/``) writes the rows to ``rows.jsonl`` as they arrive and, when the run ends, ``config.json``
(each configuration the rows were run with, and the task set), ``summary.json`` (what
``thinkingbox agg --json`` writes) and ``report.html`` (the run's report). ``agg``, ``compare``,
``report``, ``show`` and ``submit prepare`` take the folder wherever they take a run file.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

ROWS = "rows.jsonl"
CONFIG = "config.json"
SUMMARY = "summary.json"
REPORT = "report.html"


def is_run_dir(path: str | Path) -> bool:
    """A folder given as a run: an existing directory, or a path written with a trailing slash."""
    return str(path).endswith("/") or Path(path).is_dir()


def rows_path(path: str | Path) -> Path:
    """The rows file of a run given as a folder or as a run file."""
    return Path(path) / ROWS if is_run_dir(path) else Path(path)


def write_run_files(folder: str | Path, rows: list[dict[str, Any]], name: str | None = None) -> list[Path]:
    """Write ``config.json``, ``summary.json`` and ``report.html`` of the rows of the run in ``folder``; their paths."""
    from .metrics import summarize
    from .report import build_report
    from .submission import run_task_set

    out = Path(folder)
    rows = [r for r in rows if "task_id" in r]
    configs = Counter(json.dumps({k: v for k, v in (r.get("config") or {}).items() if k != "seed"}, sort_keys=True)
                      for r in rows)
    config = {"rows": len(rows), "package_versions": sorted({str(r.get("package_version")) for r in rows}),
              "task_set": {"tasks": len({r["task_id"] for r in rows}), "content_hash": run_task_set(rows),
                           "versions": {d: v for d, v in sorted({(r["domain"], r.get("task_set_version")) for r in rows})}},
              "configurations": [{"trials": n, **json.loads(c)} for c, n in configs.most_common()]}
    written = [out / CONFIG, out / SUMMARY, out / REPORT]
    written[0].write_text(json.dumps(config, indent=1) + "\n", encoding="utf-8")
    written[1].write_text(json.dumps(summarize(rows), indent=2), encoding="utf-8")  # as agg --json writes it
    written[2].write_text(build_report({name or out.resolve().name: rows}), encoding="utf-8")
    return written
