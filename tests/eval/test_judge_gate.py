"""``thinkingbox eval`` refuses tasks with task-authored rubrics and no judge, unless ``--no-judge`` marks the run."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI

from thinkingbox_env.cli import main
from thinkingbox_env.eval.run_files import read_rows

DATA = Path(__file__).resolve().parents[1] / "data"
TASK = "library/LB001_901"  # an id no other test writes: the registry caches specs by id


@pytest.fixture
def rubric_task(tmp_path, monkeypatch):
    """The library test domain with one task that carries a rubric question."""
    root = tmp_path / "tb"
    shutil.copytree(DATA / "domains", root / "domains")
    (root / "task_specs" / "library").mkdir(parents=True)
    spec = (DATA / "task_specs" / "library" / "LB001_001.yaml").read_text()
    with_rubric = spec.replace("id: LB001_001", "id: LB001_901").replace(
        "  rubric: []", "  rubric:\n  - name: courteous\n    question: Was the assistant courteous?")
    assert with_rubric != spec
    (root / "task_specs" / "library" / "LB001_901.yaml").write_text(with_rubric)
    monkeypatch.setenv("THINKINGBOX_PATH", str(root))
    return tmp_path


def test_a_rubric_task_without_a_judge_is_refused_naming_the_task_and_the_flags(rubric_task, capsys):
    run = rubric_task / "r.jsonl"
    assert main(["eval", TASK, "--agent", "oracle", "-o", str(run)]) == 2
    out = capsys.readouterr().out
    assert "rubric checks that need a judge" in out and TASK in out and "--no-judge" in out
    assert not run.exists()


def test_no_judge_runs_and_marks_every_row(rubric_task):
    run = rubric_task / "r.jsonl"
    assert main(["eval", TASK, "--agent", "oracle", "--no-judge", "-o", str(run)]) == 0
    rows = read_rows(run)
    assert rows and all(r["config"]["no_judge"] is True for r in rows)
    assert all(r["unevaluated"] == ["rubric:courteous"] and r["verdict"] == 0.0 for r in rows)


def test_no_judge_with_a_judge_is_a_contradiction(rubric_task, capsys):
    assert main(["eval", TASK, "--agent", "oracle", "--no-judge", "--judge-model", "j", "-o",
                 str(rubric_task / "r.jsonl")]) == 2
    assert "--no-judge contradicts" in capsys.readouterr().out


def test_with_a_judge_the_run_starts_and_grades_the_rubric(rubric_task):
    run = rubric_task / "r.jsonl"
    with FakeOpenAI(lambda body: "VERDICT: YES\nREASON: polite.") as server:
        assert main(["eval", TASK, "--agent", "oracle", "--judge-model", "j", "--judge-base-url", server.base_url,
                     "--judge-api-key", "k", "-o", str(run)]) == 0
    rows = read_rows(run)
    assert rows and all(r["checks"]["rubric:courteous"] is True and "no_judge" not in r["config"] for r in rows)
