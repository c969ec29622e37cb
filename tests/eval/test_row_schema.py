"""Run files of schema 2: shared system texts stored once per file, messages rebuilt from the trace, schema 1 still read."""

from __future__ import annotations

import json

from thinkingbox_env.agents.baselines import OracleAgent, run_episode
from thinkingbox_env.envs.registration import make
from thinkingbox_env.eval import EvalConfig, evaluate
from thinkingbox_env.eval.metrics import final_agent_text, row_messages, summarize
from thinkingbox_env.eval.run_files import ROW_SCHEMA_VERSION, prepare_resume, read_rows, scan_rows

TASKS = ["retail/ST030_001", "retail/ST004_001"]


def _lines(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_system_texts_are_stored_once_and_rows_read_back_whole(tmp_path):
    out = tmp_path / "run.jsonl"
    summary = evaluate(TASKS, EvalConfig(agent="oracle"), out=out, trials=2, keep_rows=True)
    lines = _lines(out)
    texts = [ln for ln in lines if ln.get("kind") == "text"]
    stored = [ln for ln in lines if "task_id" in ln]
    assert len(stored) == 4 and ROW_SCHEMA_VERSION == 2 and all(r["schema"] == 2 for r in stored)
    assert len(texts) == 2  # the agent's instructions and the retail policy, once for all four trials
    assert all("messages" not in r for r in stored)
    refs = [e["content_ref"] for r in stored for e in r["trace"] if "content_ref" in e]
    assert len(refs) == 8 and set(refs) == {t["ref"] for t in texts}
    # what a reader gets is the row evaluate() handed over, texts put back
    assert read_rows(out) == [r.to_json() for r in summary.rows]
    assert any(len(e.get("content") or "") > 5000 for e in read_rows(out)[0]["trace"])


def test_messages_rebuilt_from_the_trace_are_the_messages_the_agent_saw(tmp_path):
    evaluate(TASKS[:1], EvalConfig(agent="oracle"), out=tmp_path / "run.jsonl")
    row = read_rows(tmp_path / "run.jsonl")[0]
    env = make(TASKS[0])
    run_episode(env, OracleAgent(), seed=row["seed"])
    assert row_messages(row) == list(env.unwrapped.messages)
    assert row["counts"]["messages"] == len(row_messages(row))
    tool_messages = [m for m in row_messages(row) if m["role"] == "tool"]
    assert tool_messages and all(m["tool_call_id"] and m["name"] for m in tool_messages)
    closing = [m["content"] for m in env.unwrapped.messages if m["role"] == "assistant" and m.get("content")][-1]
    assert final_agent_text(row) == closing and "<DONE>" in closing  # the metrics read the rebuilt messages


def test_a_row_whose_shared_text_is_missing_is_named_not_read_wrong(tmp_path):
    out = tmp_path / "run.jsonl"
    evaluate(TASKS[:1], EvalConfig(agent="oracle"), out=out)
    kept = [ln for ln in out.read_text(encoding="utf-8").splitlines() if '"kind": "text"' not in ln]
    cut = tmp_path / "cut.jsonl"
    cut.write_text("\n".join(kept) + "\n", encoding="utf-8")
    scan = scan_rows(cut)
    assert scan.rows == [] and len(scan.malformed) == 1
    assert "shared text sha256:" in scan.malformed[0][1] and "not in the file" in scan.malformed[0][1]


def test_resume_keeps_the_texts_its_rows_refer_to(tmp_path):
    out = tmp_path / "run.jsonl"
    evaluate(TASKS, EvalConfig(agent="oracle"), out=out)
    before = read_rows(out)
    assert prepare_resume(out, EvalConfig(agent="oracle")) == {(t, 0) for t in TASKS}
    assert read_rows(out) == before and scan_rows(out).malformed == []
    evaluate(TASKS, EvalConfig(agent="oracle"), out=out, trials=2, resume=True)
    assert len(read_rows(out)) == 4 and scan_rows(out).malformed == []


def test_schema_1_rows_are_still_read_with_their_stored_messages(tmp_path):
    evaluate(TASKS[:1], EvalConfig(agent="oracle"), out=tmp_path / "new.jsonl")
    row = read_rows(tmp_path / "new.jsonl")[0]
    old = {**row, "schema": 1, "messages": row_messages(row)}
    old["messages"][-1] = {"role": "assistant", "content": "stored text wins"}
    path = tmp_path / "old.jsonl"
    path.write_text(json.dumps(old) + "\n", encoding="utf-8")
    (again,) = read_rows(path)
    assert row_messages(again) is again["messages"] and final_agent_text(again) == "stored text wins"
    assert summarize([again])["pass@1"]["overall"]["value"] == 1.0


def test_the_optional_fields_are_written_only_where_they_say_something(tmp_path):
    from thinkingbox_env.contracts.records import EvalRow

    evaluate(TASKS[:1], EvalConfig(agent="oracle"), out=tmp_path / "run.jsonl")
    (row,) = read_rows(tmp_path / "run.jsonl")
    assert "user_replies" not in row and "context_overflow" not in row  # a scripted user, no overflow
    flagged = {**row, "user_replies": {"replies": 2, "quoted_prompt": [1], "cut": []},
               "context_overflow": {"message": "HTTP 400: ...", "status": 400, "prompt_tokens": 10197, "context": 8192}}
    record = EvalRow.from_json(flagged)
    assert record.user_replies == flagged["user_replies"] and record.context_overflow["context"] == 8192
    assert record.to_json() == flagged
