"""A run directory: eval -o runs/NAME/ writes rows, config, summary and report under fixed names; the views take the folder."""

from __future__ import annotations

import json

from thinkingbox_env.cli import main
from thinkingbox_env.eval.metrics import summarize
from thinkingbox_env.eval.run_files import read_rows

TASK = "retail/ST030_001"


def test_eval_into_a_run_directory_and_the_views_that_take_it(tmp_path, capsys):
    runs = tmp_path / "runs"  # not there yet: a run directory is created with its parents
    assert main(["eval", TASK, "--agent", "oracle", "-n", "2", "-o", f"{runs}/oracle/"]) == 0
    assert main(["eval", TASK, "--agent", "noop", "-n", "2", "-o", f"{runs}/noop/"]) == 0
    folder = runs / "oracle"
    rows = read_rows(folder / "rows.jsonl")
    assert len(rows) == 2 and {p.name for p in folder.iterdir()} >= {"rows.jsonl", "config.json", "summary.json", "report.html"}
    assert json.loads((folder / "summary.json").read_text()) == json.loads(json.dumps(summarize(rows)))
    config = json.loads((folder / "config.json").read_text())
    assert config["rows"] == 2 and config["configurations"][0]["agent"]["kind"] == "oracle"
    assert config["configurations"][0]["trials"] == 2 and config["task_set"]["tasks"] == 1
    assert 'id="leaderboard"' in (folder / "report.html").read_text()
    capsys.readouterr()
    assert main(["agg", str(folder)]) == 0 and "pass@1" in capsys.readouterr().out
    assert main(["compare", str(folder), str(runs / "noop")]) == 0
    assert "1 tasks in both runs" in " ".join(capsys.readouterr().out.split())
    assert main(["report", str(folder), str(runs / "noop"), "-o", str(tmp_path / "both.html")]) == 0
    assert main(["submit", "prepare", str(folder), "-o", str(tmp_path / "r.json")]) == 0
    assert json.loads((tmp_path / "r.json").read_text())["agent"]["kind"] == "oracle"


def test_resuming_a_run_directory_keeps_its_rows_and_rewrites_its_files(tmp_path):
    folder = tmp_path / "run"
    assert main(["eval", TASK, "--agent", "oracle", "-n", "1", "-o", f"{folder}/"]) == 0
    assert main(["eval", TASK, "--agent", "oracle", "-n", "2", "-o", str(folder), "--resume"]) == 0  # an existing folder
    assert len(read_rows(folder / "rows.jsonl")) == 2
    assert json.loads((folder / "config.json").read_text())["rows"] == 2
