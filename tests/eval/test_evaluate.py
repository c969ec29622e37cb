"""``evaluate()``: the library call behind ``thinkingbox eval`` and the training script's final evaluation."""

from __future__ import annotations

import json

import pytest

from thinkingbox_env.contracts.records import EvalRow
from thinkingbox_env.eval import EvalConfig, evaluate, select_tasks
from thinkingbox_env.eval.config import EndpointConfig
from thinkingbox_env.eval.executors import RunControl
from thinkingbox_env.eval.run_files import ROW_SCHEMA_VERSION, RunFileError, RunLock, read_rows
from thinkingbox_env.tasks.lookup import UnknownTaskError

TASKS = ["retail/ST030_001", "retail/ST004_001"]


def test_evaluate_writes_one_typed_row_per_trial_and_resumes(tmp_path):
    out = tmp_path / "runs" / "oracle.jsonl"
    seen = []
    summary = evaluate(TASKS, EvalConfig(agent="oracle"), out=out, trials=2, on_row=seen.append)
    assert (summary.planned, summary.kept, summary.valid, summary.passed, summary.system_errors) == (4, 0, 4, 4, 0)
    assert summary.pass_rate == 1.0
    rows = read_rows(out)
    assert [(r["task_id"], r["trial"]) for r in rows] == [(t, i) for i in range(2) for t in TASKS]
    assert [r.task_id for r in seen] == [r["task_id"] for r in rows]
    for row in rows:
        typed = EvalRow.model_validate(row)
        assert typed.schema_ == ROW_SCHEMA_VERSION and typed.finish_reason == "done_marker"
        assert typed.counts.actions == row["counts"]["actions"] > 0
    with pytest.raises(RunFileError, match="exists; pass resume=True"):
        evaluate(TASKS, EvalConfig(agent="oracle"), out=out)
    again = evaluate(TASKS, EvalConfig(agent="oracle"), out=out, trials=3, resume=True, keep_rows=True)
    assert (again.kept, again.planned) == (4, 2) and {r.trial for r in again.rows} == {2}
    assert len(read_rows(out)) == 6
    with pytest.raises(RunFileError, match="different configuration"):
        evaluate(TASKS, EvalConfig(agent="noop"), out=out, resume=True)


def test_evaluate_refuses_bad_input_by_name(tmp_path):
    with pytest.raises(ValueError, match="no tasks"):
        evaluate([], out=tmp_path / "x.jsonl")
    with pytest.raises(ValueError, match="trials must be >= 1"):
        evaluate(TASKS, out=tmp_path / "x.jsonl", trials=0)
    with pytest.raises(UnknownTaskError, match=r"not task ids: \['retail/\*', 'retail'\]"):
        evaluate(["retail/*", "retail"], out=tmp_path / "x.jsonl")
    assert not (tmp_path / "x.jsonl").exists()


def test_select_tasks_takes_ids_domains_globs_and_a_split():
    every_retail = select_tasks(["retail"])
    assert every_retail and all(t.startswith("retail/") for t in every_retail)
    assert select_tasks(["retail/ST030_00[12]"]) == ["retail/ST030_001", "retail/ST030_002"]
    assert select_tasks(["retail"], split="train") == []  # frozen tasks are test tasks
    assert select_tasks(["retail/ST030_001", "retail/ST030_*"])[0] == "retail/ST030_001"
    with pytest.raises(UnknownTaskError, match=r"no task matches 'retail/ZZ\*'"):
        select_tasks(["retail/ZZ*"])
    with pytest.raises(ValueError, match="split must be 'test' or 'train'"):
        select_tasks(["retail"], split="dev")


def test_the_training_script_evaluates_with_the_command_lines_configuration(grpo_script):
    """So that a run file the training script wrote can be resumed (and aggregated) from the command line."""
    from thinkingbox_env.cli.eval_options import eval_config
    from thinkingbox_env.cli.main import build_parser

    args = grpo_script.ThinkingboxArguments(eval_tasks=["retail/ST004_*"], eval_max_new_tokens=256, include_policy=False)
    ours = grpo_script.eval_config(args, "/ckpt/final", seed=7)
    cli = build_parser().parse_args(["eval", "retail/ST004_*", "--split", "test", "--agent", "transformers", "--model",
                                     "/ckpt/final", "--protocol", "customer-tool", "-n", "1", "-c", "1", "--seed", "7",
                                     "--max-tokens", "256", "--no-policy", "-o", "x.jsonl"])
    assert json.dumps(ours.public(), sort_keys=True) == json.dumps(eval_config(cli).public(), sort_keys=True)


def test_evaluate_stops_through_its_run_control_and_keeps_what_finished(tmp_path):
    out = tmp_path / "run.jsonl"
    control = RunControl()
    summary = evaluate(TASKS, EvalConfig(agent="oracle"), out=out, trials=3, control=control, label="base",
                       on_row=lambda row: control.stop("SIGTERM"))
    assert summary.stop_reason == "SIGTERM" and (summary.saved, summary.total) == (1, 6)
    assert [r["label"] for r in read_rows(out)] == ["base"]
    resumed = evaluate(TASKS, EvalConfig(agent="oracle"), out=out, trials=3, resume=True)
    assert resumed.stop_reason is None and (resumed.kept, resumed.saved) == (1, 6)


def test_evaluate_stops_after_consecutive_system_errors_naming_the_first(tmp_path):
    dead = EndpointConfig(model="m", base_url="http://127.0.0.1:9/v1", api_key="k", timeout=2.0, max_retries=0)
    summary = evaluate(TASKS, EvalConfig(agent="openai", agent_endpoint=dead), out=tmp_path / "run.jsonl", trials=4,
                       control=RunControl(max_consecutive_errors=2))
    assert summary.stop_reason == "errors" and summary.valid == 0 and 2 <= summary.system_errors < 8
    assert summary.first_error["where"] == "agent"


def test_evaluate_holds_the_run_file_lock(tmp_path):
    out = tmp_path / "run.jsonl"
    with RunLock(out), pytest.raises(RunFileError, match="being written by pid"):
        evaluate(TASKS, EvalConfig(agent="oracle"), out=out)
    assert evaluate(TASKS, EvalConfig(agent="oracle"), out=out).saved == 2  # released by the refusal too
