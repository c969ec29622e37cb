"""pass@k and pass^k for a run without a judge over tasks with rubric checks: ``--skip-rubric``, or over the judged tasks."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from thinkingbox_env.cli import main
from thinkingbox_env.eval.metrics import summarize
from thinkingbox_env.eval.report import build_report
from thinkingbox_env.eval.run_files import read_rows

DATA = Path(__file__).resolve().parents[1] / "data"
PLAIN = "library/LB001_001"
RUBRIC = "library/LB001_902"  # an id no other test writes: the registry caches specs by id


@pytest.fixture
def library(tmp_path, monkeypatch):
    """The library test domain with its plain task and one that carries a rubric question."""
    root = tmp_path / "tb"
    shutil.copytree(DATA / "domains", root / "domains")
    (root / "task_specs" / "library").mkdir(parents=True)
    spec = (DATA / "task_specs" / "library" / "LB001_001.yaml").read_text()
    (root / "task_specs" / "library" / "LB001_001.yaml").write_text(spec)
    with_rubric = spec.replace("id: LB001_001", "id: LB001_902").replace(
        "  rubric: []", "  rubric:\n  - name: courteous\n    question: Was the assistant courteous?")
    assert with_rubric != spec
    (root / "task_specs" / "library" / "LB001_902.yaml").write_text(with_rubric)
    monkeypatch.setenv("THINKINGBOX_PATH", str(root))
    return tmp_path


def _no_judge_run(library) -> list[dict]:
    """Three oracle trials per task without a judge, the rubric task's first trial made a failure (an agent's mistake).

    The rubric task then counts one trial (its other two are unjudged) and the plain task three.
    """
    run = library / "r.jsonl"
    assert main(["eval", PLAIN, RUBRIC, "--agent", "oracle", "-n", "3", "--no-judge", "-o", str(run)]) == 0
    rows = read_rows(run)
    for row in rows:
        if row["task_id"] == RUBRIC and row["trial"] == 0:
            row.update(outcome="fail", verdict=0.0)
    return rows


def test_a_no_judge_run_gets_pass_k_over_the_judged_tasks_and_names_the_rest(library):
    s = summarize(_no_judge_run(library))
    assert s["pass_k_tasks_left_out"] == [RUBRIC] and s["trials_per_task"] == 3 and "pass_k_refused" not in s
    assert s["pass_k"]["pass@k"] == {"1": 1.0, "2": 1.0, "3": 1.0} and s["pass_k"]["pass^k"]["3"] == 1.0


def test_agg_and_report_say_which_tasks_the_reliability_metrics_leave_out(library, capsys):
    rows = _no_judge_run(library)
    run = library / "mixed.jsonl"
    run.write_text("".join(json.dumps(r) + "\n" for r in rows))
    capsys.readouterr()
    assert main(["agg", str(run)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "repeated trials" in out and "not computed" not in out
    assert "pass@k / pass^k are over the 1 tasks whose every trial was judged: 1 task(s) with unjudged trials left out" in out
    html = build_report({"mixed": rows})
    assert "not shown for" not in html and f"1 task(s) with unjudged trials left out ({RUBRIC})" in html


def test_skip_rubric_runs_only_the_tasks_without_rubric_checks(library, capsys):
    run = library / "s.jsonl"
    assert main(["eval", PLAIN, RUBRIC, "--agent", "oracle", "-n", "2", "--skip-rubric", "-o", str(run)]) == 0
    assert "left out 1 of 2 selected task(s) with rubric checks" in " ".join(capsys.readouterr().out.split())
    rows = read_rows(run)
    assert {r["task_id"] for r in rows} == {PLAIN} and len(rows) == 2  # no --no-judge needed: nothing left needs a judge
    s = summarize(rows)
    assert s["pass_k"]["pass^k"]["2"] == 1.0 and s["pass_k_tasks_left_out"] == []


def test_skip_rubric_over_rubric_tasks_only_is_refused(library, capsys):
    run = library / "none.jsonl"
    assert main(["eval", RUBRIC, "--agent", "oracle", "--skip-rubric", "-o", str(run)]) == 2
    assert "leaves nothing to run" in capsys.readouterr().out and not run.exists()


def test_compare_names_a_task_all_unjudged_on_one_side_as_not_compared_not_as_only_in_one_run(library, capsys):
    judged = library / "judged.jsonl"
    unjudged = library / "unjudged.jsonl"
    assert main(["eval", PLAIN, RUBRIC, "--agent", "oracle", "--no-judge", "-o", str(unjudged)]) == 0
    rows = read_rows(unjudged)
    for row in rows:  # the same trials as a judge would have passed them
        row.update(outcome="pass", verdict=1.0)
    judged.write_text("".join(json.dumps(r) + "\n" for r in rows))
    from thinkingbox_env.eval.metrics import compare_runs

    result = compare_runs(read_rows(judged), read_rows(unjudged))
    assert result["only_in_a"] == [] and result["only_in_b"] == [] and result["not_compared"] == [RUBRIC]
    capsys.readouterr()
    assert main(["compare", str(judged), str(unjudged)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "only in a" not in out and "1 tasks in both runs not compared" in out
