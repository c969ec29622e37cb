"""The frozen task sets as a Hugging Face dataset: one row per task, tied to its spec by its content hash."""

from __future__ import annotations

import json

import pytest

import thinkingbox_env as tb
from thinkingbox_env.cli import main
from thinkingbox_env.integrations.hf_datasets import COLUMNS, task_rows
from thinkingbox_env.tasks.lookup import current_task_set_version


def test_one_row_per_frozen_task_with_its_split_version_and_hash():
    rows = list(task_rows(["retail"]))
    assert [r["task_id"] for r in rows] == tb.list_tasks("retail") and all(tuple(r) == COLUMNS for r in rows)
    version = current_task_set_version("retail")
    for row in rows[:20]:
        spec = tb.load_task(row["task_id"])
        assert row["split"] == "test" and row["task_set_version"] == version and row["task_hash"] == spec.content_key()
        assert row["has_rubric"] == bool(spec.checks.rubric) and row["family"] == spec.family
        env = tb.make(row["task_id"])
        obs, _ = env.reset(seed=0)
        env.close()
        assert row["prompt"][-1]["content"] == obs["messages"][-1]["content"]  # the customer's opening
        assert {t["function"]["name"] for t in json.loads(row["tools"])} == {t["function"]["name"] for t in obs["tools"]}


def test_export_dataset_writes_rows_datasets_reads(tmp_path, capsys):
    datasets = pytest.importorskip("datasets", reason="the train extra's datasets reads the export")
    out = tmp_path / "tasks.jsonl"
    assert main(["export-dataset", "retail", "-o", str(out)]) == 0
    from_json = datasets.load_dataset("json", data_files=str(out), split="train")
    assert from_json.num_rows == len(tb.list_tasks("retail")) and set(COLUMNS) <= set(from_json.column_names)
    folder = tmp_path / "tb-tasks"
    assert main(["export-dataset", "retail", "-o", str(folder)]) == 0
    saved = datasets.load_from_disk(str(folder))
    assert saved["task_hash"] == from_json["task_hash"] and saved[0]["prompt"] == from_json[0]["prompt"]


def test_an_unknown_domain_is_refused_by_name(tmp_path, capsys):
    assert main(["export-dataset", "nodomain", "-o", str(tmp_path / "x.jsonl")]) == 2
    assert "unknown domain 'nodomain'" in capsys.readouterr().out
