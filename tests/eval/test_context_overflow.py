"""A prompt longer than the model's context is the agent's failure (context_overflow), not a system error."""

from __future__ import annotations

import pytest
from scripted_model import Calls, ScriptedModel, Status, turn_of

import thinkingbox_env as tb
from thinkingbox_env.agents.context_overflow import is_context_overflow, overflow_figures
from thinkingbox_env.agents.openai_chat import SamplingConfig
from thinkingbox_env.eval import EvalConfig, evaluate
from thinkingbox_env.eval.config import EndpointConfig
from thinkingbox_env.eval.metrics import summarize
from thinkingbox_env.eval.run_files import read_rows

TASK = "retail/ST030_001"

# what servers answer, in their own words, to a prompt longer than their context
LLAMA_CPP = Status(400, "the request exceeds the available context size, try increasing it", "exceed_context_size_error",
                   {"code": 400, "n_prompt_tokens": 10197, "n_ctx": 8192})
LLAMA_CPP_PYTHON = Status(400, "This model's maximum context length is 8192 tokens. However, you requested 14293 tokens "
                               "(10197 in the messages, 4096 in the completion). Please reduce the length of the messages or "
                               "completion.", "invalid_request_error", {"code": "context_length_exceeded"})
VLLM = Status(400, "'max_tokens' or 'max_completion_tokens' is too large: 4096. This model's maximum context length is 8192 "
                   "tokens and your request has 6130 input tokens (4096 > 8192 - 6130).", "BadRequestError")
VLLM_OLD = Status(400, "This model's maximum context length is 8192 tokens. However, you requested 14293 tokens (10197 in the "
                       "messages, 4096 in the completion). Please reduce the length of the messages or completion.",
                  "BadRequestError")


@pytest.mark.parametrize("message, code, kind", [
    (LLAMA_CPP.message, None, LLAMA_CPP.type),
    ("the request exceeds the available context size", None, None),
    ("request (10197 tokens) exceeds the available context size (8192 tokens), try increasing it", None, None),
    (LLAMA_CPP_PYTHON.message, "context_length_exceeded", "invalid_request_error"),
    (VLLM.message, None, None),
    ("The decoder prompt (length 10197) is longer than the maximum model length of 8192. Make sure that `max_model_len` "
     "is no smaller than the number of text tokens.", None, None),
    ("The input (10197 tokens) is longer than the model's context length (8192 tokens).", None, None),
    ("Input validation error: `inputs` tokens + `max_new_tokens` must be <= 8192. Given: 10197 `inputs` tokens and 4096 "
     "`max_new_tokens`", None, None),
    ("some new wording", "context_length_exceeded", None),  # reworded, but the code says it
])
def test_every_servers_wording_of_an_overflow_is_recognised(message, code, kind):
    assert is_context_overflow(message, code=code, kind=kind)


@pytest.mark.parametrize("message", [
    "The model `gpt-4o-mini` does not exist.", "try later", "Invalid value for 'tool_choice'", "scripted failure",
    "response_format is not supported", "Requested too many tools", "max_tokens must be at least 1",
])
def test_other_refusals_are_not_overflows(message):
    assert not is_context_overflow(message, code="invalid_request_error", kind="BadRequestError")


def test_the_figures_of_a_refusal_are_read_where_it_gives_them():
    f = overflow_figures(LLAMA_CPP_PYTHON.message)
    assert (f.prompt_tokens, f.context) == (10197, 8192)
    f = overflow_figures(LLAMA_CPP.message, {"message": LLAMA_CPP.message, **LLAMA_CPP.extra})
    assert (f.prompt_tokens, f.context) == (10197, 8192)
    f = overflow_figures("The decoder prompt (length 10197) is longer than the maximum model length of 8192.")
    assert (f.prompt_tokens, f.context) == (10197, 8192)


def _overflowing(refusal: Status):
    """One golden tool call, then the conversation no longer fits."""
    first = tb.load_task(TASK).golden[0]

    def script(body: dict):
        return Calls([(first.name, dict(first.arguments))]) if turn_of(body) == 0 else refusal

    return script


def _config(server: ScriptedModel) -> EvalConfig:
    return EvalConfig(agent="openai", agent_endpoint=EndpointConfig(model="m", base_url=server.base_url, api_key="k"),
                      sampling=SamplingConfig(max_tokens=4096), backoff=0.0)


@pytest.mark.parametrize("refusal", [LLAMA_CPP, LLAMA_CPP_PYTHON, VLLM, VLLM_OLD], ids=["llama.cpp", "llama-cpp-python", "vllm",
                                                                                       "vllm-old"])
def test_an_overflow_ends_the_trial_failed_with_its_own_category(tmp_path, refusal):
    out = tmp_path / "run.jsonl"
    with ScriptedModel(_overflowing(refusal)) as server:
        summary = evaluate([TASK], _config(server), out=out)
        assert len(server.requests) == 2 and server.statuses == [200, 400]  # refused once, never retried
    (row,) = read_rows(out)
    assert row["status"] == "ok" and row["system_error"] is None
    assert row["verdict"] == 0.0 and row["outcome"] == "fail" and row["failure_category"] == "context_overflow"
    assert row["finish_reason"] is None  # the conversation did not finish
    assert row["counts"]["tool_calls"] == 1 and row["diff"] is not None  # graded as far as it got
    last = row["model_calls"][-1]
    assert last["ok"] is False and last["context_overflow"] is True and "HTTP 400" in last["error"]
    assert row["context_overflow"]["status"] == 400
    assert summary.system_errors == 0 and summary.valid == 1 and summary.judged == 1 and summary.passed == 0


def test_overflows_are_counted_in_the_rates_and_never_rerun_by_resume(tmp_path):
    out = tmp_path / "run.jsonl"
    with ScriptedModel(_overflowing(LLAMA_CPP)) as server:
        evaluate([TASK], _config(server), out=out, trials=2)
        before = len(server.requests)
        again = evaluate([TASK], _config(server), out=out, trials=2, resume=True)
        assert len(server.requests) == before and again.planned == 0  # nothing to run again: the trials are done
    s = summarize(read_rows(out))
    assert s["pass@1"]["overall"]["trials"] == 2 and s["pass@1"]["overall"]["value"] == 0.0
    assert s["system_errors"]["count"] == 0
    assert s["failure_categories"]["overall"]["context_overflow"] == 1.0


def test_a_figure_of_the_refusal_is_kept_in_the_row(tmp_path):
    out = tmp_path / "run.jsonl"
    with ScriptedModel(_overflowing(LLAMA_CPP)) as server:
        evaluate([TASK], _config(server), out=out)
    (row,) = read_rows(out)
    assert row["context_overflow"]["prompt_tokens"] == 10197 and row["context_overflow"]["context"] == 8192
    from thinkingbox_env.cli.show import render_transcript

    shown = " ".join(render_transcript(row))
    assert "category context_overflow" in shown and "context overflow: HTTP 400: the request exceeds the available" in shown
