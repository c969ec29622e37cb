"""``render_trace``: the one walk over a trace that ``thinkingbox show`` and the HTML report both print."""

from __future__ import annotations

from thinkingbox_env.contracts.events import invalid_action_event, message_event, tool_call_event
from thinkingbox_env.contracts.records import EvalRow
from thinkingbox_env.eval.config import EvalConfig
from thinkingbox_env.eval.transcript import TranscriptLine, render_trace
from thinkingbox_env.eval.trial import run_trial

STORED_KEYS = ["schema", "task_id", "domain", "family", "trial", "seed", "status", "system_error", "verdict", "checks",
               "check_details", "reward_vector", "unevaluated", "outcome", "unverified", "diff", "state_hash", "finish_reason",
               "failure_category", "counts", "usage", "judge_usage", "timings", "trace", "model_calls", "judge_calls",
               "judge", "worker", "package_version", "task_set_version", "task_hash", "config", "user"]


def test_the_walk_skips_instructions_and_tool_messages_and_names_the_speakers():
    trace = [
        message_event("system", "You are an agent.", "env"),
        message_event("user", "I need help.", "task"),
        {**message_event("assistant", "Looking.", "agent"), "reasoning": "think"},
        tool_call_event(call_id="c1", name="get_order", arguments={"id": 1}, result={"ok": True}, ok=True, writes=False,
                        error_kind=None),
        message_event("tool", '{"ok": true}', "tool"),
        invalid_action_event("bad"),
        message_event("system", '{"error": "bad"}', "env"),
        message_event("assistant", "x" * 30, "operator"),
    ]
    lines = render_trace(trace, width=20)
    assert [(t.kind, t.speaker) for t in lines] == [
        ("said", "USER"), ("reasoning", ""), ("said", "ASSISTANT"), ("call", ""), ("result", ""), ("call", ""), ("result", ""),
        ("said", "SYSTEM"), ("said", "ASSISTANT")]
    assert lines[3] == TranscriptLine("call", '{"id": 1}', name="get_order")
    assert lines[5].name == "<invalid action>" and lines[5].error == "malformed"
    assert lines[-1].text == "x" * 20 + " ..."  # cut to the width, marked


def test_a_trial_is_an_eval_row_stored_with_the_keys_in_their_order():
    row = run_trial(EvalConfig(agent="noop"), "retail/ST030_001", trial=0)
    assert isinstance(row, EvalRow) and row.status == "ok" and row.finish_reason == "done_marker"
    stored = row.to_json()
    assert list(stored) == STORED_KEYS  # what the writer stores; "messages" (schema 1 only) is never written
    assert type(stored["finish_reason"]) is str and EvalRow.from_json(stored).to_json() == stored
