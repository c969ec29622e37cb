"""Preflight: an endpoint that returns no tool call is refused before the first trial, saying what to fix."""

from __future__ import annotations

import time

from scripted_model import Say, ScriptedModel

from thinkingbox_env.cli import main
from thinkingbox_env.eval.run_files import read_rows

TASK = "retail/ST030_001"


def _closing(body: dict) -> Say:
    time.sleep(0.05)
    return Say("I cannot help with that. <DONE>")


def _eval(server: ScriptedModel, out, *extra: str) -> int:
    return main(["eval", TASK, "--agent", "openai", "--model", "m", "--base-url", server.base_url, "--api-key", "k",
                 "-o", str(out), *extra])


def test_the_preflight_carries_a_tool_and_a_server_that_calls_it_runs(tmp_path):
    out = tmp_path / "run.jsonl"
    with ScriptedModel(_closing) as server:
        assert _eval(server, out) == 0
    (probe,) = server.preflights
    assert [t["function"]["name"] for t in probe["tools"]] == ["get_order_status"] and "tool_choice" not in probe
    assert probe["max_tokens"] <= 256
    assert len(read_rows(out)) == 1


def test_a_server_that_ignores_tools_is_refused_before_any_trial(tmp_path, capsys):
    out = tmp_path / "run.jsonl"
    with ScriptedModel(_closing, tools="ignored") as server:
        assert _eval(server, out) == 2
    text = " ".join(capsys.readouterr().out.split())
    assert "ignored the tools" in text and "answered 'OK'" in text
    assert "--enable-auto-tool-choice --tool-call-parser" in text and "--jinja" in text and "--no-tool-check" in text
    assert not server.requests and not out.exists()
    assert len(server.preflights) == 2 and server.preflights[1]["tool_choice"] == "auto"  # it tried tool_choice too


def test_a_server_that_needs_tool_choice_is_named_with_the_flag_that_sends_it(tmp_path, capsys):
    out = tmp_path / "run.jsonl"
    with ScriptedModel(_closing, tools="need_choice") as server:
        assert _eval(server, out, "--extra-body", '{"top_k": 20}') == 2
    text = " ".join(capsys.readouterr().out.split())
    assert "only when the request names tool_choice" in text
    assert """--extra-body '{"top_k": 20, "tool_choice": "auto"}'""" in text
    assert not server.requests


def test_sending_tool_choice_as_advised_passes_the_check(tmp_path):
    out = tmp_path / "run.jsonl"
    with ScriptedModel(_closing, tools="need_choice") as server:
        assert _eval(server, out, "--extra-body", '{"tool_choice": "auto"}') == 0
    assert len(server.preflights) == 1 and server.preflights[0]["tool_choice"] == "auto"


def test_no_tool_check_goes_on_anyway_with_a_plain_test_request(tmp_path):
    out = tmp_path / "run.jsonl"
    with ScriptedModel(_closing, tools="ignored") as server:
        assert _eval(server, out, "--no-tool-check") == 0
    (probe,) = server.preflights
    assert "tools" not in probe and probe["max_tokens"] == 16
    assert len(read_rows(out)) == 1
