"""Trials left open only by rubric questions no judge answered are "unjudged": neither passed nor failed, counted apart."""

from __future__ import annotations

import json

import pytest
from fake_openai import FakeOpenAI

from thinkingbox_env.cli import main
from thinkingbox_env.eval import evaluate
from thinkingbox_env.eval.config import EndpointConfig, EvalConfig
from thinkingbox_env.eval.metrics import compare_runs, row_outcome, summarize
from thinkingbox_env.eval.report import build_report
from thinkingbox_env.eval.run_files import read_rows
from thinkingbox_env.judging.judge import JUDGE_PROMPT_VERSION

RUBRIC_TASK = "retail/ST005_004"  # carries a rubric question; the oracle passes everything else
PLAIN_TASK = "retail/ST005_001"


@pytest.fixture(scope="module")
def no_judge_rows(tmp_path_factory):
    out = tmp_path_factory.mktemp("runs") / "oracle.jsonl"
    summary = evaluate([RUBRIC_TASK, PLAIN_TASK], EvalConfig(agent="oracle", no_judge=True), out=out, trials=2)
    assert summary.unjudged == 2 and summary.judged == 2 and summary.pass_rate == 1.0
    return read_rows(out)


def test_rows_say_unjudged_and_old_rows_without_the_field_read_the_same(no_judge_rows):
    by_task = {r["task_id"]: r for r in no_judge_rows}
    assert by_task[RUBRIC_TASK]["outcome"] == "unjudged" and by_task[RUBRIC_TASK]["verdict"] == 0.0
    assert by_task[PLAIN_TASK]["outcome"] == "pass"
    old = {k: v for k, v in by_task[RUBRIC_TASK].items() if k != "outcome"}  # a row written before the field
    assert row_outcome(old) == "unjudged"
    assert by_task[RUBRIC_TASK]["judge"] is None


def test_agg_counts_unjudged_trials_apart_from_the_rates_and_pass_k(no_judge_rows):
    s = summarize(no_judge_rows)
    assert s["pass@1"]["overall"]["value"] == 1.0 and s["pass@1"]["overall"]["trials"] == 2
    assert s["unjudged"] == {"count": 2, "tasks": [RUBRIC_TASK], "no_judge": True}
    assert s["pass_k"]["pass@k"]["2"] == 1.0 and s["tasks_never_passed"] == 0
    assert s["failure_categories"]["failed_trials"] == 0 and not s["failing_checks"]
    rubric = next(v for k, v in s["checks"].items() if k.startswith("rubric:"))
    assert rubric["total"] == 0 and rubric["unevaluated"] == 2  # not "0% passed"


def test_agg_and_compare_print_the_unjudged_count(no_judge_rows, tmp_path, capsys):
    path = tmp_path / "a.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in no_judge_rows), encoding="utf-8")
    assert main(["agg", str(path)]) == 0
    text = capsys.readouterr().out
    assert "unjudged: 2 trials of 1 tasks" in text and "--no-judge" in text
    assert main(["compare", str(path), str(path)]) == 0
    assert "unjudged trials left out of both sides: A 2, B 2" in capsys.readouterr().out
    result = compare_runs(no_judge_rows, no_judge_rows)
    assert result["tasks"] == 1 and result["unjudged"] == {"a": 2, "b": 2}


def test_the_report_shows_unjudged_and_its_plots_come_before_the_task_table(no_judge_rows):
    html = build_report({"oracle": no_judge_rows})
    assert html.index('id="pass-at-k"') < html.index('id="task-by-run"')
    assert html.index('id="failure-heatmap"') < html.index('id="task-by-run"')
    table = html[html.index('id="task-by-run"'):]
    assert '<td class="unj">unjudged</td>' in table[:table.index("</table>")]
    assert "(unjudged)</summary>" in html and "unevaluated check rubric:" in html


def test_thinkingbox_run_reports_unjudged_tasks_apart(capsys):
    assert main(["run", RUBRIC_TASK, PLAIN_TASK, "--agents", "oracle"]) == 0
    text = capsys.readouterr().out
    assert "oracle: 1/1 passed (100.0%); 1 unjudged" in text and "--judge-model" in text


def test_unparsed_judge_answers_are_counted_in_the_summary_and_agg(tmp_path, capsys):
    out = tmp_path / "judged.jsonl"
    with FakeOpenAI(lambda body: "Hmm, hard to say. VERDICT: YES maybe") as server:
        config = EvalConfig(agent="oracle", judge_endpoint=EndpointConfig(model="judge-m", base_url=server.base_url,
                                                                           api_key="k", max_retries=0))
        summary = evaluate([RUBRIC_TASK], config, out=out)
    assert summary.unjudged == 1 and summary.judge_unparsed >= 1 and summary.passed == 0
    row = read_rows(out)[0]
    assert row["outcome"] == "unjudged" and row["status"] == "ok"
    assert row["judge"] == {"model": "judge-m", "host": server.base_url.split("/")[2], "prompt_version": JUDGE_PROMPT_VERSION}
    assert all(c["answer"] is None and c["parsed"] is False for c in row["judge_calls"])
    s = summarize(read_rows(out))
    assert s["judge"]["unparsed"] == len(row["judge_calls"]) and s["unjudged"]["count"] == 1
    assert main(["agg", str(out)]) == 0
    assert f"{len(row['judge_calls'])} did not parse" in capsys.readouterr().out


def test_validate_reports_a_task_whose_judge_answers_do_not_parse_as_unjudged_not_invalid(capsys):
    from thinkingbox_env.eval.validate import validate_task
    from thinkingbox_env.judging.judge import RubricJudge
    from thinkingbox_env.tasks.lookup import load_task

    with FakeOpenAI(lambda body: "I cannot decide.") as server:
        judge = RubricJudge(model="judge", base_url=server.base_url, api_key="k", max_retries=0)
        result = validate_task(load_task(RUBRIC_TASK), judge)
        assert result.counts["oracle"] == "unjudged" and result.counts["rubric"] == "unjudged"
        assert result.ok, result.problems
        assert main(["validate", RUBRIC_TASK, "--judge-base-url", server.base_url, "--judge-model", "judge"]) == 0
    text = capsys.readouterr().out
    assert "1 task(s) with rubric questions are unjudged" in text and "did not parse" in text
