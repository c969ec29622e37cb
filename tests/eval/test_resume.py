"""`thinkingbox eval` as a process: JSONL rows, SIGKILL mid-run, resume, system-error retries."""

from __future__ import annotations

import fnmatch
import os
import signal
import subprocess
import sys
import time
from collections import Counter

from scripted_model import Say, ScriptedModel, Status

import thinkingbox_env as tb
from thinkingbox_env.cli import main
from thinkingbox_env.eval.run_files import read_rows

PATTERN = "retail/ST030_*"
TRIALS = 4


def _eval_cmd(server, out, *extra):
    return [sys.executable, "-m", "thinkingbox_env.cli", "eval", PATTERN, "--agent", "openai", "--model", "m",
            "--base-url", server.base_url, "--api-key", "k", "-n", str(TRIALS), "-c", "2", "--backoff", "0.01",
            "-o", str(out), *extra]


def test_sigkill_mid_run_then_resume_gives_each_trial_exactly_once(tmp_path):
    tasks = fnmatch.filter(tb.list_tasks(), PATTERN)
    broken = {"on": True}
    broken_opening = tb.load_task(tasks[0]).user.opening

    def script(body):
        time.sleep(0.05)
        opening = body["messages"][2]["content"]
        if broken["on"] and opening == broken_opening:
            return Status(500)  # not retried: these trials end as system errors
        return Say("I cannot help with that. <DONE>")

    out = tmp_path / "run.jsonl"
    with ScriptedModel(script) as server:
        proc = subprocess.Popen(_eval_cmd(server, out), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and (not out.exists() or out.read_text().count('"task_id"') < 5):
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        before = read_rows(out)
        assert 5 <= len(before) < len(tasks) * TRIALS, "the run was not killed mid-way"
        with open(out, "a") as fh:
            fh.write('{"task_id": "retail/ST030_00')  # a torn last line, as a kill during a write leaves
        assert any(r["status"] == "system_error" and r["task_id"] == tasks[0] for r in before)

        broken["on"] = False
        done = subprocess.run(_eval_cmd(server, out, "--resume"), capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr

    rows = read_rows(out)
    keys = Counter((r["task_id"], r["trial"]) for r in rows)
    assert len(rows) == len(tasks) * TRIALS
    assert set(keys) == {(t, i) for t in tasks for i in range(TRIALS)} and max(keys.values()) == 1
    assert all(r["status"] == "ok" for r in rows)  # the system errors were run again
    assert out.read_text().endswith("\n") and all(line for line in out.read_text().split("\n")[:-1])
    kept = {(r["task_id"], r["trial"]): r["timings"]["started_at"] for r in before if r["status"] == "ok"}
    assert all(r["timings"]["started_at"] == kept[(r["task_id"], r["trial"])] for r in rows
               if (r["task_id"], r["trial"]) in kept)  # finished trials were kept, not rerun


def test_existing_file_needs_resume_and_resume_needs_the_same_configuration(tmp_path, capsys):
    out = tmp_path / "run.jsonl"
    assert main(["eval", "retail/ST030_001", "--agent", "noop", "-n", "2", "-o", str(out)]) == 0
    assert len(read_rows(out)) == 2
    assert main(["eval", "retail/ST030_001", "--agent", "noop", "-n", "2", "-o", str(out)]) == 2
    assert "--resume" in capsys.readouterr().out
    assert main(["eval", "retail/ST030_001", "--agent", "oracle", "-n", "2", "-o", str(out), "--resume"]) == 2
    assert "different configuration" in capsys.readouterr().out
    assert main(["eval", "retail/ST030_001", "--agent", "noop", "-n", "3", "-o", str(out), "--resume"]) == 0
    assert sorted(r["trial"] for r in read_rows(out)) == [0, 1, 2]


def test_oracle_passes_and_noop_fails_one_task_of_every_retail_family(tmp_path):
    """The whole domain is checked by `thinkingbox validate`; one task per family keeps this test fast."""
    firsts: dict[str, str] = {}
    for t in tb.list_tasks("retail"):
        firsts.setdefault(tb.load_task(t).family, t)
    task_file = tmp_path / "tasks.txt"
    task_file.write_text("# one task per family\n" + "\n".join(firsts.values()) + "\n")
    oracle, noop = tmp_path / "oracle.jsonl", tmp_path / "noop.jsonl"
    assert main(["eval", "--task-file", str(task_file), "--agent", "oracle", "--user", "scripted", "-n", "3", "-o", str(oracle)]) == 0
    assert main(["eval", "--task-file", str(task_file), "--agent", "noop", "-n", "1", "-o", str(noop)]) == 0  # deterministic
    rows = read_rows(oracle)
    assert len(rows) == 3 * len(firsts) and all(r["verdict"] == 1.0 for r in rows)
    for r in read_rows(noop):
        if any(d["kind"] == "effect" for d in r["check_details"]):  # the task requires a change
            assert r["verdict"] == 0.0 and r["failure_category"] == "no_state_changing_action"
    assert read_rows(oracle)[0]["config"]["agent"] == {"kind": "oracle", "facts": "golden"}  # the golden values, not the ones heard
