"""``export-dataset``: the frozen task sets as a Hugging Face dataset (a ``save_to_disk`` folder) or JSONL rows."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from .common import UserError, add_command, console


def cmd_export_dataset(args: argparse.Namespace) -> int:
    """Write one row per task: a dataset folder (``datasets``, the train extra), or JSONL when OUT ends in .jsonl."""
    from ..integrations.hf_datasets import task_dataset, task_rows
    from ..tasks.lookup import UnknownTaskError

    out = Path(args.output)
    try:
        if out.suffix == ".jsonl":
            count = 0
            with out.open("w", encoding="utf-8") as fh:
                for row in task_rows(args.domains):
                    fh.write(json.dumps(row) + "\n")
                    count += 1
        else:
            if out.exists() and any(out.iterdir()):
                raise UserError(f"{out} is not empty; name a new folder (or a .jsonl file)")
            dataset = task_dataset(args.domains)
            dataset.save_to_disk(str(out))
            count = len(dataset)
    except UnknownTaskError as exc:
        raise UserError(str(exc)) from exc
    console.print(f"wrote {count} tasks to {out}", highlight=False)
    return 0


def add_export_command(sub: Any) -> None:
    """Declare ``export-dataset``."""
    p = add_command(sub, "export-dataset", "the frozen task sets as a Hugging Face dataset, one row per task",
                    "One row per frozen task: task_id, domain, family, split, task_set_version, task_hash, has_rubric, "
                    "prompt (the episode's first messages), tools and spec (JSON text). OUT ending in .jsonl gets JSON "
                    "lines (datasets.load_dataset('json', data_files=OUT) reads them); any other OUT a dataset folder "
                    "(datasets.load_from_disk(OUT); needs the train extra's datasets).",
                    ["thinkingbox export-dataset -o tasks.jsonl", "thinkingbox export-dataset retail insurance -o tb-tasks"])
    p.add_argument("domains", nargs="*", help="domains to export (default: every domain)")
    p.add_argument("-o", "--output", required=True, help="a .jsonl file, or a folder for datasets.save_to_disk")
    p.set_defaults(func=cmd_export_dataset)
