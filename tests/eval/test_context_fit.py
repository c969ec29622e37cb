"""Before the run, each task's opening is measured against the served context; tasks that cannot fit are named, not scored."""

from __future__ import annotations

import json

import pytest
from fake_openai import FakeOpenAI

import thinkingbox_env as tb
from thinkingbox_env.agents.openai_chat import SamplingConfig
from thinkingbox_env.cli import main
from thinkingbox_env.eval import EvalConfig, evaluate
from thinkingbox_env.eval.api import ContextTooShortError
from thinkingbox_env.eval.config import EndpointConfig
from thinkingbox_env.eval.context_fit import check_context, request_chars, served_context
from thinkingbox_env.eval.opening import opening_request
from thinkingbox_env.eval.run_files import read_rows

RETAIL = ["retail/ST030_001", "retail/ST004_001"]
CONSULTING = tb.list_tasks("consulting")[:2]


def tokens_of(body: dict) -> int:
    """The stand-in server's tokenizer: four characters a token."""
    return request_chars(body) // 4


def serving(n_ctx: int):
    """A llama.cpp-like server: refuses a prompt longer than n_ctx, calls the preflight's tool, closes every trial at once."""
    def respond(body: dict):
        tokens = tokens_of(body)
        if tokens > n_ctx:
            return {"status": 400, "error": {"code": 400, "message": "the request exceeds the available context size, try "
                                             "increasing it", "type": "exceed_context_size_error",
                                             "n_prompt_tokens": tokens, "n_ctx": n_ctx}}
        usage = {"prompt_tokens": tokens, "completion_tokens": 1, "total_tokens": tokens + 1}
        if [t["function"]["name"] for t in body.get("tools") or []] == ["get_order_status"]:
            return {"message": {"content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {
                "name": "get_order_status", "arguments": '{"order_id": "A-1001"}'}}]}}
        if body.get("max_tokens") == 1:
            return {"message": {"content": "I"}, "finish_reason": "length", "usage": usage}
        return {"message": {"content": "I cannot help with that. <DONE>"}, "usage": usage}
    return respond


def props(n_ctx: int) -> dict:
    return {"/props": {"default_generation_settings": {"n_ctx": n_ctx, "params": {}}, "total_slots": 1}}


def size(task_id: str, max_tokens: int = 4096, compact: bool = False) -> int:
    config = EvalConfig(agent="openai", agent_endpoint=EndpointConfig(model="m", base_url="http://127.0.0.1:9/v1", api_key="k"),
                        sampling=SamplingConfig(max_tokens=max_tokens), compact_tools=compact)
    return tokens_of(opening_request(config, task_id))


def _eval(server: FakeOpenAI, out, *tasks_and_flags: str) -> int:
    return main(["eval", *tasks_and_flags, "--agent", "openai", "--model", "m", "--base-url", server.base_url,
                 "--api-key", "k", "-o", str(out), "--no-judge"])


# --------------------------------------------------------------------------- what the server states


@pytest.mark.parametrize("routes, expected", [
    (props(8192), (8192, "the server's /props n_ctx")),                                                    # llama.cpp
    ({"/props": {"n_ctx": 4096}}, (4096, "the server's /props n_ctx")),
    ({"/v1/models": {"data": [{"id": "m", "max_model_len": 32768}]}}, (32768, "the server's /v1/models max_model_len")),  # vLLM
    ({"/v1/models": {"data": [{"id": "m", "meta": {"n_ctx_train": 8192}}]}}, (8192, "the server's /v1/models meta.n_ctx_train")),
    ({"/v1/models": {"data": [{"id": "other", "max_model_len": 1}, {"id": "m"}]}}, None),  # says nothing of this model
    ({"/v1/models": {"data": [{"id": "m", "owned_by": "me"}]}}, None),                     # llama-cpp-python: states none
    ({}, None),
])
def test_the_served_context_is_read_where_the_server_states_it(routes, expected):
    with FakeOpenAI(lambda b: "OK", get=routes) as server:
        found = served_context(server.base_url, "m", "k")
    assert (None if found is None else (found.tokens, found.source)) == expected


# --------------------------------------------------------------------------- before the run


def test_tasks_whose_opening_cannot_fit_are_named_with_their_figures_and_nothing_runs(tmp_path, capsys):
    longest = max(size(t) for t in RETAIL)
    n_ctx = longest + 1000  # the prompts fit; with --max-tokens 4096 they do not
    with FakeOpenAI(serving(n_ctx), get=props(n_ctx)) as server:
        assert _eval(server, tmp_path / "run.jsonl", *RETAIL) == 2
        trials = [r for r in server.requests if r.get("max_tokens") == 4096]
    text = capsys.readouterr().out
    flat = " ".join(text.split())
    assert f"2 of 2 selected task(s) cannot fit their opening in the served context of {n_ctx:,} tokens" in flat
    assert "(the server's /props n_ctx)" in flat
    for t in RETAIL:
        assert f"{t}: {size(t):,} prompt tokens + 4,096 (--max-tokens) = {size(t) + 4096:,} > {n_ctx:,}" in flat
    assert "--compact-tools" in flat and "--on-overflow skip" in flat and "-c N" in flat
    assert not trials and not (tmp_path / "run.jsonl").exists()


def test_a_prompt_the_server_refuses_is_reported_with_the_size_it_gave(tmp_path, capsys):
    with FakeOpenAI(serving(2000), get=props(2000)) as server:
        assert _eval(server, tmp_path / "run.jsonl", RETAIL[0]) == 2
    flat = " ".join(capsys.readouterr().out.split())
    assert f"{RETAIL[0]}: {size(RETAIL[0]):,} prompt tokens + 4,096" in flat  # the figure llama.cpp's refusal gives


def test_openings_that_fit_run_and_the_figures_are_printed(tmp_path, capsys):
    n_ctx = 65536
    with FakeOpenAI(serving(n_ctx), get=props(n_ctx)) as server:
        assert _eval(server, tmp_path / "run.jsonl", *RETAIL) == 0
        probes = [r for r in server.requests if r.get("max_tokens") == 1]
    assert len(probes) == 1  # the domain's longest opening answers for the shorter ones
    flat = " ".join(capsys.readouterr().out.split())
    longest = max(size(t) for t in RETAIL)
    assert f"served context of 65,536 tokens (the server's /props n_ctx): 2 of 2 tasks fit, the longest opening {longest:,}" in flat
    assert len(read_rows(tmp_path / "run.jsonl")) == 2


def test_skip_leaves_out_the_tasks_that_cannot_fit_and_runs_the_rest(tmp_path, capsys):
    retail, consulting = min(size(t) for t in RETAIL), max(size(t) for t in CONSULTING)
    assert consulting < retail  # consulting's policy and tools are the shorter
    n_ctx = (retail + consulting) // 2 + 100
    with FakeOpenAI(serving(n_ctx), get=props(n_ctx)) as server:
        assert _eval(server, tmp_path / "run.jsonl", *RETAIL, *CONSULTING, "--max-tokens", "100", "--on-overflow", "skip") == 0
    rows = read_rows(tmp_path / "run.jsonl")
    assert sorted(r["task_id"] for r in rows) == sorted(CONSULTING)
    flat = " ".join(capsys.readouterr().out.split())
    assert f"left out, their opening cannot fit the context: {', '.join(RETAIL)}" in flat


def test_run_scores_them_as_context_overflow_failures(tmp_path):
    n_ctx = max(size(t) for t in RETAIL) - 10
    with FakeOpenAI(serving(n_ctx), get=props(n_ctx)) as server:
        assert _eval(server, tmp_path / "run.jsonl", *RETAIL, "--on-overflow", "run") == 0
    rows = read_rows(tmp_path / "run.jsonl")
    assert len(rows) == 2 and all(r["status"] == "ok" for r in rows)
    assert any(r["failure_category"] == "context_overflow" for r in rows)


def test_context_length_states_what_the_server_does_not(tmp_path, capsys):
    with FakeOpenAI(serving(10**6)) as server:  # llama-cpp-python: no /props, no context in /v1/models
        assert _eval(server, tmp_path / "a.jsonl", RETAIL[0]) == 0
        assert "does not state its context" in " ".join(capsys.readouterr().out.split())
        assert _eval(server, tmp_path / "b.jsonl", RETAIL[0], "--context-length", "8192") == 2
        flat = " ".join(capsys.readouterr().out.split())
        assert "served context of 8,192 tokens (--context-length)" in flat and RETAIL[0] in flat
        assert _eval(server, tmp_path / "c.jsonl", RETAIL[0], "--context-length", "0") == 2
        assert "--context-length must be a positive number of tokens, not 0" in capsys.readouterr().out


def test_a_domain_split_by_the_limit_is_measured_task_by_task():
    tasks = tb.list_tasks("retail")[:12]
    sizes = {t: size(t, max_tokens=0) for t in tasks}
    assert len(set(sizes.values())) > 2
    n_ctx = sorted(sizes.values())[len(sizes) // 2]
    with FakeOpenAI(serving(10**6), get=props(n_ctx)) as server:
        config = EvalConfig(agent="openai", agent_endpoint=EndpointConfig(model="m", base_url=server.base_url, api_key="k"),
                            sampling=SamplingConfig(max_tokens=None))
        fit = check_context(config, tasks)
    assert fit is not None and fit.budget == 0
    assert {o.task_id: o.fits for o in fit.openings} == {t: s <= n_ctx for t, s in sizes.items()}
    assert {o.task_id: o.prompt_tokens for o in fit.openings} == sizes
    assert [o.task_id for o in fit.openings] == tasks


def test_the_library_refuses_with_the_figures_and_checks_its_arguments(tmp_path):
    with FakeOpenAI(serving(10**6), get=props(1000)) as server:
        config = EvalConfig(agent="openai", agent_endpoint=EndpointConfig(model="m", base_url=server.base_url, api_key="k"))
        with pytest.raises(ContextTooShortError) as err:
            evaluate(RETAIL[:1], config, out=tmp_path / "run.jsonl", check_endpoint=True)
        assert err.value.fit.overflowing[0].task_id == RETAIL[0]
        with pytest.raises(ValueError, match="on_overflow must be one of stop, skip, run"):
            evaluate(RETAIL[:1], config, out=tmp_path / "run.jsonl", check_endpoint=True, on_overflow="ignore")
        with pytest.raises(ValueError, match="context_length must be a positive number of tokens"):
            evaluate(RETAIL[:1], config, out=tmp_path / "run.jsonl", check_endpoint=True, context_length=-5)
    assert not (tmp_path / "run.jsonl").exists()


# --------------------------------------------------------------------------- compact tool schemas


def test_compact_tools_are_what_the_agent_sends_recorded_and_their_saving_printed(tmp_path, capsys):
    n_ctx = 65536
    with FakeOpenAI(serving(n_ctx), get=props(n_ctx)) as server:
        assert _eval(server, tmp_path / "run.jsonl", RETAIL[0], "--compact-tools") == 0
        trial = [r for r in server.requests if r.get("max_tokens") == 4096][0]
    full, compact = size(RETAIL[0]), size(RETAIL[0], compact=True)
    assert compact < full
    assert tokens_of(trial) == compact and "additionalProperties" not in json.dumps(trial["tools"])
    flat = " ".join(capsys.readouterr().out.split())
    assert f"compact tool schemas, retail's longest opening ({RETAIL[0]}): characters" in flat
    assert f"tokens {full:,} -> {compact:,} (-{full - compact:,}," in flat
    (row,) = read_rows(tmp_path / "run.jsonl")
    assert row["config"]["agent"]["compact_tools"] is True
    with FakeOpenAI(serving(n_ctx), get=props(n_ctx)) as server:  # a resume must show the agent the same schemas
        assert _eval(server, tmp_path / "run.jsonl", RETAIL[0], "-n", "2", "--resume") == 2
    assert "--compact-tools was true in the file" in " ".join(capsys.readouterr().out.split())


def test_what_compact_tools_save_is_printed_even_when_the_openings_cannot_fit(tmp_path, capsys):
    with FakeOpenAI(serving(10**6), get=props(2000)) as server:
        assert _eval(server, tmp_path / "run.jsonl", RETAIL[0], "--compact-tools") == 2
    flat = " ".join(capsys.readouterr().out.split())
    full, compact = size(RETAIL[0]), size(RETAIL[0], compact=True)
    assert f"tokens {full:,} -> {compact:,}" in flat and "cannot fit their opening" in flat
    assert "show compact tool schemas" not in flat  # it is on already


def test_a_measuring_request_that_fails_is_a_message_naming_the_task_and_the_endpoints_error(tmp_path, capsys):
    def respond(body: dict):
        if body.get("max_tokens") == 1:
            return {"status": 500, "error": {"message": "llama_decode failed", "type": "server_error"}}
        return serving(10**6)(body)

    with FakeOpenAI(respond, get=props(65536)) as server:
        assert _eval(server, tmp_path / "run.jsonl", RETAIL[0]) == 2
    flat = " ".join(capsys.readouterr().out.split())
    assert f"failed the request that measures the opening of {RETAIL[0]}" in flat and "HTTP 500" in flat
    assert "llama_decode failed" in flat and "--no-preflight" in flat and "Traceback" not in flat
    assert not (tmp_path / "run.jsonl").exists()
