"""Results a leaderboard can take: ``submit prepare`` / ``validate`` and the report's task-set flag."""

from __future__ import annotations

import json

import pytest

import thinkingbox_env as tb
from thinkingbox_env.cli import main
from thinkingbox_env.eval.report import build_report
from thinkingbox_env.eval.run_files import read_rows
from thinkingbox_env.eval.submission import FORMAT, SubmissionError, prepare, task_set_hash

TASKS = ["retail/ST030_001", "retail/ST004_001"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Two trials of the oracle and of the noop agent on two tasks, and the oracle on another task alone."""
    folder = tmp_path_factory.mktemp("runs")
    for agent in ("oracle", "noop"):
        assert main(["eval", *TASKS, "--agent", agent, "-n", "2", "-o", str(folder / f"{agent}.jsonl")]) == 0
    assert main(["eval", "retail/ST004_002", "--agent", "oracle", "-o", str(folder / "other.jsonl")]) == 0
    return folder


def test_prepare_writes_a_versioned_result_that_validates(runs, tmp_path, capsys):
    out = tmp_path / "oracle.result.json"
    assert main(["submit", "prepare", str(runs / "oracle.jsonl"), "-o", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["format"] == FORMAT and data["format_version"] == 1 and data["package_version"] == tb.__version__
    assert data["agent"]["kind"] == "oracle" and data["user"]["kind"] == "scripted" and data["judge"] is None
    assert data["created"].endswith("+00:00") and data["task_set"]["versions"] == {"retail": 4}
    installed = {t: tb.load_task(t).content_key() for t in TASKS}
    assert data["task_set"]["content_hash"] == task_set_hash(installed) and data["task_set"]["tasks"] == 2
    assert [t["outcome"] for t in data["tasks"]["retail/ST030_001"]["trials"]] == ["pass", "pass"]
    assert data["summary"]["pass@1"]["value"] == 1.0 and data["summary"]["pass_k"]["pass^k"]["2"] == 1.0
    capsys.readouterr()
    assert main(["submit", "validate", str(out)]) == 0
    assert "valid thinkingbox result" in capsys.readouterr().out


@pytest.mark.parametrize(("edit", "message"), [
    (lambda d: d["tasks"]["retail/ST030_001"].update(task_hash="0" * 64),
     "differ from the ones installed here (another task set version): retail/ST030_001"),
    (lambda d: d["task_set"].update(tasks=3), "task_set.tasks is 3 but the result holds 2 tasks"),
    (lambda d: d["tasks"]["retail/ST030_001"]["trials"].append({"trial": 0, "outcome": "pass", "verdict": 1.0}),
     "trials [0, 1, 0] are not distinct and in order"),
])
def test_validate_names_what_does_not_hold(runs, tmp_path, capsys, edit, message):
    data = prepare(read_rows(runs / "oracle.jsonl")).model_dump()
    edit(data)
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data))
    capsys.readouterr()
    assert main(["submit", "validate", str(path)]) == 1
    assert message in " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize(("edit", "message"), [
    (lambda d: d.update(format_version=2), "format_version 2 is not one this package reads"),
    (lambda d: d.pop("task_set"), "task_set: Field required"),
    (lambda d: d["tasks"]["retail/ST030_001"]["trials"][0].update(outcome="won"), "tasks.retail/ST030_001.trials.0.outcome"),
])
def test_a_malformed_result_is_refused_naming_the_field(runs, tmp_path, capsys, edit, message):
    data = prepare(read_rows(runs / "oracle.jsonl")).model_dump()
    edit(data)
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data))
    capsys.readouterr()
    assert main(["submit", "validate", str(path)]) == 2
    assert message in " ".join(capsys.readouterr().out.split())


def test_prepare_refuses_rows_of_two_configurations(runs):
    rows = read_rows(runs / "oracle.jsonl") + read_rows(runs / "noop.jsonl")
    with pytest.raises(SubmissionError, match="2 configurations"):
        prepare(rows)


def test_the_report_flags_runs_over_different_task_sets(runs):
    same = build_report({"oracle": read_rows(runs / "oracle.jsonl"), "noop": read_rows(runs / "noop.jsonl")})
    assert 'id="task-sets"' not in same
    mixed = build_report({"oracle": read_rows(runs / "oracle.jsonl"), "other": read_rows(runs / "other.jsonl")})
    assert 'id="task-sets"' in mixed and "their rates are not comparable" in mixed
    other = task_set_hash({"retail/ST004_002": tb.load_task("retail/ST004_002").content_key()})
    assert f"task set {other[:12]}: other" in mixed
