"""`thinkingbox eval` against a real endpoint: preflight, the model to use, stopping on a signal or on errors."""

from __future__ import annotations

import fnmatch
import re
import signal
import socket
import subprocess
import sys
import time

from scripted_model import Say, ScriptedModel, Status

import thinkingbox_env as tb
from thinkingbox_env.cli import main
from thinkingbox_env.eval.config import EndpointConfig
from thinkingbox_env.eval.preflight import PREFLIGHT_CONNECT_SECONDS, preflight_timeout
from thinkingbox_env.eval.run_files import read_rows

TASK = "retail/ST030_001"


def _closing(body: dict) -> Say:
    time.sleep(0.3)
    return Say("I cannot help with that. <DONE>")  # one turn per trial


def test_sigint_stops_launching_keeps_every_finished_trial_and_exits_130(tmp_path):
    out = tmp_path / "run.jsonl"
    tasks = fnmatch.filter(tb.list_tasks(), "retail/*")
    with ScriptedModel(_closing) as server:
        cmd = [sys.executable, "-m", "thinkingbox_env.cli", "eval", "retail", "--agent", "openai", "--model", "m",
               "--base-url", server.base_url, "--api-key", "k", "-n", "4", "-c", "3", "-o", str(out), "--no-judge"]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and (not out.exists() or out.read_text().count('"task_id"') < 4):
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        at_signal = len(server.requests)
        output, _ = proc.communicate(timeout=120)
        after = len(server.requests)
    assert proc.returncode == 130, output
    assert "Traceback" not in output
    rows = read_rows(out)
    total = len(tasks) * 4
    assert 4 <= len(rows) < total
    assert f"{len(rows)} of {total} trials saved; rerun with --resume" in output
    assert after - at_signal <= 3  # nothing launched after the signal beyond requests already on their way
    assert len(rows) == after  # every trial that reached the model finished its one turn and was kept


def test_sigterm_is_a_clean_stop_too(tmp_path):
    out = tmp_path / "run.jsonl"
    with ScriptedModel(_closing) as server:
        cmd = [sys.executable, "-m", "thinkingbox_env.cli", "eval", "retail", "--agent", "openai", "--model", "m",
               "--base-url", server.base_url, "-n", "2", "-c", "2", "-o", str(out), "--no-judge"]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and (not out.exists() or out.read_text().count("\n") < 2):
            time.sleep(0.02)
        proc.send_signal(signal.SIGTERM)
        output, _ = proc.communicate(timeout=120)
    assert proc.returncode == 130 and "SIGTERM" in output and "rerun with --resume" in output
    assert len(read_rows(out)) >= 2


def test_without_model_the_only_served_model_is_used_and_recorded(tmp_path):
    out = tmp_path / "run.jsonl"
    with ScriptedModel(_closing, models=["Qwen/Qwen3-8B"]) as server:
        assert main(["eval", TASK, "--agent", "openai", "--base-url", server.base_url, "-o", str(out)]) == 0
    assert len(server.preflights) == 1 and server.preflights[0]["model"] == "Qwen/Qwen3-8B"
    assert all(r["model"] == "Qwen/Qwen3-8B" for r in server.requests)
    row = read_rows(out)[0]
    assert row["config"]["agent"]["model"] == "Qwen/Qwen3-8B" and row["model_calls"][0]["model"] == "Qwen/Qwen3-8B"


def test_without_model_several_served_models_are_listed_and_nothing_runs(tmp_path, capsys):
    out = tmp_path / "run.jsonl"
    with ScriptedModel(_closing, models=["a-model", "b-model"]) as server:
        assert main(["eval", TASK, "--agent", "openai", "--base-url", server.base_url, "-o", str(out)]) == 2
    text = capsys.readouterr().out
    assert "a-model, b-model" in text and "--model" in text
    assert not server.requests and not out.exists()


def test_a_refused_preflight_stops_with_the_endpoints_own_error(tmp_path, capsys):
    out = tmp_path / "run.jsonl"
    with ScriptedModel(_closing, preflight_status=404) as server:
        assert main(["eval", TASK, "--agent", "openai", "--model", "gpt-4o-mini", "--base-url", server.base_url,
                     "-o", str(out)]) == 2
    text = capsys.readouterr().out
    assert "HTTP 404" in text and "The model `gpt-4o-mini` does not exist." in text
    assert not server.requests and not out.exists()


def test_a_dead_endpoint_is_reported_before_any_trial(tmp_path, capsys):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    out = tmp_path / "run.jsonl"
    assert main(["eval", TASK, "--agent", "openai", "--model", "m", "--base-url", f"http://127.0.0.1:{port}/v1",
                 "-o", str(out)]) == 2
    assert "connection failed" in capsys.readouterr().out and not out.exists()


def test_a_dead_endpoint_is_reported_in_seconds_and_leaves_no_lock_file(tmp_path, capsys):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = tmp_path / "run.jsonl"
    started = time.monotonic()
    assert main(["eval", TASK, "--agent", "openai", "--base-url", f"http://127.0.0.1:{port}/v1", "-o", str(out)]) == 2
    assert time.monotonic() - started < 5.0  # no model given: the listing is tried once, without retries
    assert "could not be listed" in capsys.readouterr().out
    assert list(tmp_path.iterdir()) == []  # neither the run file nor a stray run.jsonl.lock
    ep = EndpointConfig(timeout=600.0)
    assert preflight_timeout(ep).connect == PREFLIGHT_CONNECT_SECONDS <= 5.0


def test_a_refused_model_name_lists_the_models_the_endpoint_serves(tmp_path, capsys):
    out = tmp_path / "run.jsonl"
    with ScriptedModel(_closing, models=["qwen-a", "qwen-b"], preflight_status=404) as server:
        assert main(["eval", TASK, "--agent", "openai", "--model", "qwen-c", "--base-url", server.base_url,
                     "-o", str(out)]) == 2
    text = capsys.readouterr().out
    assert "it serves qwen-a, qwen-b: pass one of them with --model" in text
    assert not (tmp_path / "run.jsonl.lock").exists()


def test_k_consecutive_system_errors_stop_the_run_and_print_the_first(tmp_path, capsys):
    out = tmp_path / "run.jsonl"
    with ScriptedModel(lambda body: Status(500)) as server:
        code = main(["eval", "retail/ST030_*", "--agent", "openai", "--model", "m", "--base-url", server.base_url,
                     "-c", "1", "--max-consecutive-errors", "3", "-o", str(out)])
    text = capsys.readouterr().out
    assert code == 1
    assert "stopped after 3 system errors in a row" in text and "HTTP 500" in text and "scripted failure" in text
    assert len(read_rows(out)) == 3 and len(server.requests) == 3
    assert re.search(r"3 of \d+ trials saved", text)


def test_a_run_without_any_valid_trial_exits_non_zero(tmp_path, capsys):
    out = tmp_path / "run.jsonl"
    with ScriptedModel(lambda body: Status(500)) as server:
        code = main(["eval", TASK, "--agent", "openai", "--model", "m", "--base-url", server.base_url, "-n", "2",
                     "-o", str(out)])
    assert code == 1
    assert "no trial was valid" in capsys.readouterr().out
    assert [r["status"] for r in read_rows(out)] == ["system_error", "system_error"]


def test_resume_refusal_names_the_option_that_changed(tmp_path, capsys):
    out = tmp_path / "run.jsonl"
    assert main(["eval", TASK, "--agent", "noop", "-o", str(out)]) == 0
    assert main(["eval", TASK, "--agent", "noop", "--max-actions", "7", "-o", str(out), "--resume"]) == 2
    text = capsys.readouterr().out
    assert "--max-actions was 50 in the file, 7 now" in text
    assert '"user"' not in text  # the stored configuration is not dumped


def test_a_judge_endpoint_that_refuses_its_model_stops_the_run_before_any_trial(tmp_path, capsys):
    out = tmp_path / "run.jsonl"
    with ScriptedModel(_closing) as agent, ScriptedModel(_closing, preflight_status=404) as judge:
        assert main(["eval", TASK, "--agent", "openai", "--model", "scripted", "--base-url", agent.base_url,
                     "--judge-model", "judge-x", "--judge-base-url", judge.base_url, "-o", str(out)]) == 2
    text = " ".join(capsys.readouterr().out.split())
    assert "judge endpoint" in text and "judge-x" in text and "HTTP 404" in text and "--judge-model" in text
    assert judge.preflights and judge.preflights[0]["model"] == "judge-x"
    assert not agent.requests and not judge.requests and list(tmp_path.iterdir()) == []


def test_a_dead_user_endpoint_is_named_before_any_trial_whatever_the_agent(tmp_path, capsys):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    out = tmp_path / "run.jsonl"
    assert main(["eval", TASK, "--agent", "oracle", "--user", "llm", "--user-model", "u",
                 "--user-base-url", f"http://127.0.0.1:{port}/v1", "-o", str(out)]) == 2
    text = " ".join(capsys.readouterr().out.split())
    assert "user endpoint" in text and "connection failed" in text and "--user-base-url" in text
    assert list(tmp_path.iterdir()) == []


def test_working_user_and_reader_endpoints_are_each_asked_once_and_the_run_goes_on(tmp_path):
    out = tmp_path / "run.jsonl"
    with ScriptedModel(_closing) as user, ScriptedModel(_closing) as reader:
        assert main(["eval", TASK, "--agent", "oracle", "--user", "llm", "--user-model", "u", "--user-base-url",
                     user.base_url, "--reader-model", "r", "--reader-base-url", reader.base_url, "-o", str(out)]) in (0, 1)
    assert [p["model"] for p in user.preflights] == ["u"] and [p["model"] for p in reader.preflights] == ["r"]
    assert len(read_rows(out)) == 1


def test_without_preflight_no_role_endpoint_is_asked(tmp_path):
    out = tmp_path / "run.jsonl"
    with ScriptedModel(_closing, preflight_status=404) as judge:
        main(["eval", TASK, "--agent", "oracle", "--judge-model", "j", "--judge-base-url", judge.base_url,
              "--no-preflight", "-o", str(out)])
    assert not judge.preflights and len(read_rows(out)) == 1
