"""Run files: one writer at a time (named when another is refused), and no malformed row is dropped in silence."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest
from scripted_model import Say, ScriptedModel

from thinkingbox_env.eval.run_files import RowWriter, RunFileError, RunLock, read_rows, scan_rows

TASK = "retail/ST030_001"


def _eval(out, *extra, server=None):
    if server is None:
        agent = ["--agent", "oracle"]
    else:
        agent = ["--agent", "openai", "--model", "m", "--base-url", server.base_url, "--api-key", "k", "--backoff", "0.01"]
    return [sys.executable, "-m", "thinkingbox_env.cli", "eval", TASK, *agent, "-o", str(out), *extra]


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "thinkingbox_env.cli", *args], capture_output=True, text=True, timeout=300)


def test_a_second_eval_or_a_resume_on_a_file_being_written_is_refused_naming_the_holder(tmp_path):
    release = threading.Event()

    def script(body):
        release.wait(120)  # the first run stays mid-trial until the test lets it go
        return Say("I cannot help with that. <DONE>")

    out = tmp_path / "run.jsonl"
    with ScriptedModel(script) as server:
        first = subprocess.Popen(_eval(out, "-n", "2", server=server), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            lock = out.with_name(out.name + ".lock")
            for _ in range(600):
                if lock.exists() and lock.read_text():
                    break
                time.sleep(0.1)
            holder = json.loads(lock.read_text())
            assert holder["pid"] == first.pid
            for extra in ((), ("--resume",)):
                second = subprocess.run(_eval(out, "-n", "2", *extra, server=server), capture_output=True, text=True, timeout=300)
                assert second.returncode == 2, second.stderr
                text = " ".join((second.stdout + second.stderr).split())
                assert f"pid {first.pid}" in text and socket.gethostname() in text and "being written" in text, text
        finally:
            release.set()
        assert first.wait(300) == 0, first.stderr.read()
        first.stderr.close()
    rows = read_rows(out)
    assert sorted(r["trial"] for r in rows) == [0, 1]  # the refused runs added nothing


def test_a_resume_through_a_symlink_to_a_file_being_written_is_refused_and_writes_nothing(tmp_path):
    out = tmp_path / "run.jsonl"
    done = subprocess.run(_eval(out), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    before = out.read_bytes()
    link = tmp_path / "elsewhere" / "link.jsonl"
    link.parent.mkdir()
    link.symlink_to(out)
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from thinkingbox_env.eval.run_files import RunLock; "
        f"RunLock({str(out)!r}); print('locked', flush=True); time.sleep(300)")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        resumed = subprocess.run(_eval(link, "-n", "2", "--resume"), capture_output=True, text=True, timeout=300)
        assert resumed.returncode == 2, resumed.stdout + resumed.stderr
        text = " ".join((resumed.stdout + resumed.stderr).split())
        assert "being written" in text and f"pid {holder.pid}" in text and str(out) in text, text
        with pytest.raises(RunFileError, match="being written"):
            RunLock(tmp_path / "elsewhere" / ".." / "elsewhere" / "link.jsonl")
    finally:
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait()
        holder.stdout.close()
    assert out.read_bytes() == before  # nothing written
    assert not (link.parent / "link.jsonl.lock").exists()  # the lock is the real file's, not the link's
    resumed = subprocess.run(_eval(link, "-n", "2", "--resume"), capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert link.is_symlink() and sorted(r["trial"] for r in read_rows(out)) == [0, 1]  # the file named, the link kept


def test_a_killed_writer_leaves_no_stale_lock(tmp_path):
    out = tmp_path / "run.jsonl"
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from thinkingbox_env.eval.run_files import RunLock; "
        f"RunLock({str(out)!r}); print('locked', flush=True); time.sleep(300)")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(RunFileError, match=f"pid {holder.pid} on host"):
            RunLock(out)
    finally:
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait()
        holder.stdout.close()
    done = subprocess.run(_eval(out), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert len(read_rows(out)) == 1


def test_a_row_writer_takes_the_lock_itself_when_not_given_one(tmp_path):
    out = tmp_path / "run.jsonl"
    writer = RowWriter(out)
    with pytest.raises(RunFileError, match=f"pid {os.getpid()}"):
        RowWriter(out)
    writer.close()
    RowWriter(out).close()  # released on close


@pytest.fixture(scope="module")
def corrupted(tmp_path_factory):
    folder = tmp_path_factory.mktemp("runs")
    good = folder / "good.jsonl"
    assert subprocess.run(_eval(good, "-n", "2"), capture_output=True, timeout=300).returncode == 0
    lines = good.read_text().splitlines()
    texts = [ln for ln in lines if '"kind": "text"' in ln]  # the shared system texts rows refer to
    rows = [ln for ln in lines if ln not in texts]
    assert len(texts) == 2 and len(rows) == 2
    bad = folder / "bad.jsonl"
    row = json.loads(rows[1])
    del row["trial"]
    bad.write_text("\n".join([*texts, rows[0], '{"task_id": "retail/ST030_001", "trial": 1, "sta', json.dumps(row), "[1, 2]"]) + "\n")
    return good, bad


def test_scan_names_every_malformed_line(corrupted):
    _, bad = corrupted
    scan = scan_rows(bad)
    assert len(scan.rows) == 1
    assert [(n, why.split(" (")[0]) for n, why in scan.malformed] == [
        (4, "not valid JSON"), (5, "no integer trial"), (6, "a row must be a JSON object, got list")]


@pytest.mark.parametrize("command", ["agg", "compare", "report", "show"])
def test_views_stop_on_malformed_rows_naming_them_unless_told_to_skip(corrupted, tmp_path, command):
    good, bad = corrupted
    args = {"agg": ["agg", str(bad)], "compare": ["compare", str(good), str(bad)],
            "report": ["report", str(bad), "-o", str(tmp_path / "r.html")], "show": ["show", str(bad), "--task", TASK]}[command]
    refused = _cli(*args)
    assert refused.returncode != 0
    err = " ".join(refused.stderr.split())
    assert "3 malformed row(s) found" in err and f"{bad}:4: not valid JSON" in err and f"{bad}:5: no integer trial" in err, err
    assert "--skip-malformed" in refused.stdout + refused.stderr
    skipped = _cli(*args, "--skip-malformed")
    assert skipped.returncode == 0, skipped.stderr
    assert "3 malformed row(s) skipped" in " ".join(skipped.stderr.split())


def test_agg_json_to_stdout_stays_pure_json_when_skipping(corrupted):
    _, bad = corrupted
    out = _cli("agg", str(bad), "--json", "-", "--skip-malformed")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)  # the warnings went to stderr
    assert "malformed" in out.stderr


def test_a_line_longer_than_any_row_is_named_and_skipped_without_reading_it_whole(tmp_path, monkeypatch):
    from thinkingbox_env.cli import main
    from thinkingbox_env.eval import run_files

    out = tmp_path / "run.jsonl"
    assert main(["eval", "retail/ST030_001", "retail/ST030_002", "--agent", "oracle", "-n", "1", "-o", str(out)]) == 0
    lines = out.read_text().splitlines(keepends=True)
    row_lines = [i for i, line in enumerate(lines) if '"task_id"' in line]
    monkeypatch.setattr(run_files, "MAX_ROW_CHARS", max(len(line) for line in lines) + 10)
    lines.insert(row_lines[-1], "x" * (run_files.MAX_ROW_CHARS * 3) + "\n")
    out.write_text("".join(lines))
    scan = run_files.scan_rows(out)
    assert sorted(r["task_id"] for r in scan.rows) == ["retail/ST030_001", "retail/ST030_002"]
    assert [why for _, why in scan.malformed] == [f"longer than {run_files.MAX_ROW_CHARS:,} characters (not a row this package writes); skipped"]
