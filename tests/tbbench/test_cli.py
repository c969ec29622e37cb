"""``thinkingbox eval --suite tbbench-v1``: rows like our own tasks, readable by ``agg``; ``--reference-check``."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI

from thinkingbox_env.cli import main
from thinkingbox_env.eval.run_files import read_rows

DATA = Path(__file__).resolve().parents[1] / "data" / "tbbench"
CANCEL = "tbbench/dataset/tests/toy_shop_tasks.py:test_cancel_pending"
LOOKUP = "tbbench/dataset/tests/toy_shop_tasks.py:test_lookup_shipped"
BENCH = ["--data-dir", str(DATA), "--server-python", sys.executable]


def test_reference_check_reports_reproduced_golden_hashes(tmp_path, capsys):
    out = tmp_path / "reference.jsonl"
    assert main(["eval", "--suite", "tbbench-v1", *BENCH, "--reference-check", "-o", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["task_id"] for r in rows] == [CANCEL, LOOKUP]
    assert all(r["reproduced"] and not r["failed_calls"] for r in rows)
    assert rows[0]["hashes"]["shop"]["result"] == rows[0]["hashes"]["shop"]["golden"] and rows[0]["golden_calls"] == 2
    assert "2 of 2 golden replays reproduce the golden hash" in capsys.readouterr().out


def test_reference_check_reports_a_task_that_cannot_start_and_filters_the_suite(tmp_path, capsys):
    clone = tmp_path / "clone"
    shutil.copytree(DATA, clone, ignore=shutil.ignore_patterns("__pycache__"))
    task_file = clone / "dataset/tests/toy_shop_tasks.py"
    # the lookup task's golden call now names an order the server does not hold: its init is refused
    task_file.write_text(task_file.read_text().replace("arguments: {order_id: O2}", "arguments: {order_id: O9}"))
    bench = ["--suite", "tbbench-v1", "--data-dir", str(clone), "--server-python", sys.executable, "--reference-check"]
    out = tmp_path / "cancel.jsonl"
    assert main(["eval", *bench, "-o", str(out), "tbbench/*cancel*"]) == 0  # the filter kept the intact task only
    assert [json.loads(line)["task_id"] for line in out.read_text().splitlines()] == [CANCEL]
    out = tmp_path / "lookup.jsonl"
    assert main(["eval", *bench, "-o", str(out), "tbbench/*lookup*"]) == 1
    (row,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert row["reproduced"] is False
    assert "server 'shop' refused __reserved__init" in row["error"] and "no order O9" in row["error"]
    assert "0 of 1 golden replays reproduce the golden hash" in capsys.readouterr().out
    # an explicit task id needs no --suite
    out = tmp_path / "explicit.jsonl"
    assert main(["eval", CANCEL, *bench[2:], "-o", str(out)]) == 0
    assert [json.loads(line)["task_id"] for line in out.read_text().splitlines()] == [CANCEL]


def test_eval_rows_are_namespaced_and_agg_reads_them(tmp_path, capsys):
    def judge(body: dict) -> str:
        return "VERDICT: NO\nREASON: the reply does not say so"

    out = tmp_path / "run.jsonl"
    with FakeOpenAI(judge) as server:
        code = main(["eval", "--suite", "tbbench-v1", *BENCH, "--agent", "oracle", "--judge-base-url", server.base_url,
                     "--judge-model", "judge", "--judge-api-key", "k", "-c", "1", "-o", str(out)])
    assert code == 0
    rows = {r["task_id"]: r for r in read_rows(out)}
    assert set(rows) == {CANCEL, LOOKUP}
    cancel, lookup = rows[CANCEL], rows[LOOKUP]
    assert cancel["status"] == "ok" and cancel["domain"] == "tbbench" and cancel["family"] == "toy_shop"
    assert cancel["checks"] == {"db_hash:shop": True, "rubric:1": False} and cancel["verdict"] == 0.0
    assert cancel["failure_category"] == "incomplete_user_resolution" and len(cancel["judge_calls"]) == 1
    assert lookup["verdict"] == 1.0 and lookup["finish_reason"] == "done_marker"
    assert cancel["config"]["task_options"]["tbbench"]["data_dir"] == str(DATA)
    assert cancel["counts"]["tool_calls"] == 2 and cancel["counts"]["write_calls"] == 1
    capsys.readouterr()
    assert main(["agg", str(out), "--json", "-"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["pass@1"]["by_domain"]["tbbench"]["value"] == 0.5
    assert set(summary["pass@1"]["by_domain"]) == {"tbbench"}  # never mixed with our own domains


def test_server_pool_option_reaches_the_clone_and_the_rows(tmp_path, capsys):
    out = tmp_path / "run.jsonl"
    assert main(["eval", "--suite", "tbbench-v1", *BENCH, "--server-pool", "0", "--agent", "oracle", "--no-judge",
                 "-c", "2", "-o", str(out), "--no-preflight"]) == 0
    rows = [r for r in read_rows(out) if "task_id" in r]
    assert sorted(r["task_id"] for r in rows) == [CANCEL, LOOKUP]
    assert all(r["outcome"] in ("pass", "unjudged") and r["checks"]["db_hash:shop"] for r in rows)
    assert all(r["config"]["task_options"]["tbbench"]["pool_size"] == 0 for r in rows)
    from thinkingbox_env.tbbench.pool import bench_pool
    from thinkingbox_env.tbbench.source import task_source
    pool = bench_pool(task_source().bench(DATA, sys.executable))
    assert pool.size == 0 and pool.started >= 2  # each episode started its own process in its reset
    with pytest.raises(SystemExit, match="--server-pool -1: must be 0 or more"):
        main(["eval", "--suite", "tbbench-v1", *BENCH, "--server-pool", "-1", "--reference-check", "-o", str(tmp_path / "x.jsonl")])
