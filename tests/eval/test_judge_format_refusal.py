"""The judge falls back from ``response_format`` on any refusal of it; ``judge-check`` fails loudly when nothing was judged."""

from __future__ import annotations

import json

import pytest
from fake_openai import FakeOpenAI

from thinkingbox_env.cli import main
from thinkingbox_env.judging.judge import RubricJudge

QUESTION = "Does the assistant thank the customer?"
DIALOGUE = [{"role": "assistant", "content": "Thanks for waiting!"}]
FINAL_LINE = 'I read the transcript.\n{"verdict": "yes", "reason": "it thanks the customer"}'


def _preflight(body: dict) -> bool:
    return body["messages"][-1]["content"] == "Reply with OK."


@pytest.mark.parametrize("status, message", [
    (400, "response_format is not supported by this model"),           # OpenAI-style
    (422, "Input should be 'text' or 'json_object' (response_format.type)"),  # a FastAPI server's validation
    (500, "Unsupported response_format type: json_schema"),           # llama-cpp-python
    (501, "json_schema response formats are not implemented"),
])
def test_any_refusal_of_the_response_format_falls_back_to_a_final_line(status, message):
    with FakeOpenAI(lambda b: FINAL_LINE, refuse=lambda b: (status, message) if "response_format" in b else None) as server:
        judge = RubricJudge(model="judge", base_url=server.base_url, api_key="k", max_retries=3)
        assert judge(QUESTION, "", dialogue=DIALOGUE) == (True, "it thanks the customer")
        assert judge.structured is False
        assert judge(QUESTION, "", dialogue=DIALOGUE)[0] is True
        with_format = [r for r in server.requests if "response_format" in r]
    assert len(with_format) == 1  # refused once, not retried as an outage, and not asked again
    assert len(server.requests) == 3 and "final line" in server.requests[1]["messages"][1]["content"]


def test_a_passing_outage_is_retried_with_the_format_not_taken_for_a_refusal():
    reply = '{"verdict": "no", "reason": "no thanks"}'
    with FakeOpenAI(lambda b: reply, fail_first=[503]) as server:
        judge = RubricJudge(model="judge", base_url=server.base_url, api_key="k", max_retries=2)
        assert judge(QUESTION, "", dialogue=DIALOGUE) == (False, "no thanks")
        assert judge.structured is True and all("response_format" in r for r in server.requests)


def test_a_refusal_that_is_not_about_the_format_is_raised_and_the_format_kept():
    import openai

    with FakeOpenAI(lambda b: FINAL_LINE, refuse=lambda b: (400, "The model `judge` does not exist.")) as server:
        judge = RubricJudge(model="judge", base_url=server.base_url, api_key="k", max_retries=0)
        with pytest.raises(openai.BadRequestError, match="does not exist"):
            judge(QUESTION, "", dialogue=DIALOGUE)
        assert judge.structured is True


def _judge_check(capsys, tmp_path, **server):
    with FakeOpenAI(lambda b: "OK" if _preflight(b) else '{"verdict": "yes", "reason": "fine"}', **server) as fake:
        rc = main(["judge-check", "--judge-model", "judge-m", "--judge-base-url", fake.base_url, "--limit", "12",
                   "--workers", "2", "--max-retries", "0", "--json", str(tmp_path / "out.json")])
    return rc, capsys.readouterr().out, json.loads((tmp_path / "out.json").read_text())


def test_judge_check_measures_a_server_that_refuses_the_format_with_500(capsys, tmp_path):
    rc, out, data = _judge_check(capsys, tmp_path, refuse=lambda b: (500, "json_schema is not supported") if "response_format" in b
                                 else None)
    assert rc == 0, out
    assert data["overall"]["judged"] == 12 and data["overall"]["failed"] == 0


def test_judge_check_that_judged_nothing_exits_non_zero_naming_the_first_error(capsys, tmp_path):
    why = "llama_decode returned -1: the grammar could not be built"
    rc, out, data = _judge_check(capsys, tmp_path, refuse=lambda b: None if _preflight(b) else (500, why))
    assert rc == 1
    assert data["overall"]["judged"] == 0 and data["overall"]["failed"] == 12
    flat = " ".join(out.split())
    assert "nothing was judged" in flat and "12 of 12 requests failed" in flat and f"HTTP 500: {why}" in flat
