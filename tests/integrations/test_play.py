"""``thinkingbox play`` through a pseudo-terminal: a person as the agent, and as the customer against a model endpoint."""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

from scripted_model import Calls, Say, ScriptedModel, turn_of

import thinkingbox_env as tb
from thinkingbox_env.eval.run_files import read_rows

ROOT = Path(__file__).resolve().parents[2]
TASK = "retail/ST030_001"


class Terminal:
    """The CLI on a pseudo-terminal: ``expect`` reads until a text appears, ``send`` types a line."""

    def __init__(self, *args: str):
        master, slave = pty.openpty()
        env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""), "COLUMNS": "200"}
        # Ctrl-C as a terminal delivers it: a runner that starts the tests as a background job of a non-interactive
        # shell ignores SIGINT, and a child would inherit that and never see the signal
        self.proc = subprocess.Popen([sys.executable, "-m", "thinkingbox_env.cli", "play", *args], stdin=slave, stdout=slave,
                                     stderr=slave, env=env, close_fds=True,
                                     preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        os.close(slave)
        self.fd = master
        self.seen = ""

    def expect(self, text: str, timeout: float = 30.0) -> str:
        deadline = time.monotonic() + timeout
        while text not in self.seen:
            left = deadline - time.monotonic()
            assert left > 0, f"did not see {text!r}; the terminal shows:\n{self.seen[-3000:]}"
            ready, _, _ = select.select([self.fd], [], [], left)
            if ready:
                try:
                    chunk = os.read(self.fd, 65536).decode(errors="replace")
                except OSError:
                    chunk = ""
                if not chunk:
                    assert text in self.seen, f"the program ended before {text!r}:\n{self.seen[-3000:]}"
                self.seen += chunk.replace("\r\n", "\n")
        head, _, rest = self.seen.partition(text)
        self.seen = rest
        return head + text

    def send(self, line: str) -> None:
        os.write(self.fd, (line + "\n").encode())

    def close(self) -> int:
        try:
            return self.proc.wait(30)
        finally:
            os.close(self.fd)


def test_a_person_as_the_agent_passes_the_task_and_the_row_is_an_eval_row(tmp_path):
    spec = tb.load_task(TASK)
    out = tmp_path / "play.jsonl"
    term = Terminal(TASK, "-o", str(out))
    term.expect("you> ")
    term.send("/tools")
    assert "get_customer_profile(" in term.expect("you> ")
    term.send("Could you give me the email address on your account?")
    answer = term.expect("you> ")
    assert "customer> " in answer
    calls = list(spec.golden)
    # the first call by field prompts, the rest with JSON arguments
    term.send(f"/call {calls[0].name}")
    schema = next(t["function"] for t in tb.make(TASK).tool_schemas if t["function"]["name"] == calls[0].name)
    for field in schema["parameters"]["properties"]:
        term.expect(f"  {field}")
        value = calls[0].arguments.get(field, "")
        term.send(value if isinstance(value, str) else json.dumps(value))
    shown = term.expect("you> ")
    assert f"result[{calls[0].name}]> " in shown
    for call in calls[1:]:
        term.send(f"/call {call.name} {json.dumps(call.arguments)}")
        term.expect("you> ")
    term.send(f"/done {spec.golden_reply}")
    assert "verdict 1" in term.expect("Enter quits")
    term.expect("> ")
    term.send("/checks")
    assert "pass  no_collateral" in term.expect("> ")
    term.send("")
    assert term.close() == 0
    (row,) = read_rows(out)
    assert row["status"] == "ok" and row["verdict"] == 1.0 and row["config"]["agent"]["kind"] == "human"
    show = subprocess.run([sys.executable, "-m", "thinkingbox_env.cli", "show", str(out), "--task", TASK, "--trial", "0"],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert show.returncode == 0 and spec.golden_reply[:30] in show.stdout
    report = subprocess.run([sys.executable, "-m", "thinkingbox_env.cli", "report", str(out), "-o", str(tmp_path / "r.html")],
                            capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert report.returncode == 0 and TASK in (tmp_path / "r.html").read_text()


def test_bad_json_arguments_are_explained_and_the_prompt_comes_back(tmp_path):
    term = Terminal(TASK, "-o", str(tmp_path / "p.jsonl"))
    term.expect("you> ")
    term.send('/call get_customer_profile {"email": ')
    assert "not JSON" in term.expect("you> ")
    term.send("/call no_such_tool {}")
    assert "unknown tool" in term.expect("you> ")
    term.send("/done Bye.")
    assert "verdict 0" in term.expect("Enter quits")
    term.send("")
    assert term.close() == 0


def test_a_person_as_the_customer_against_a_model_agent(tmp_path):
    spec = tb.load_task(TASK)
    calls = [(c.name, dict(c.arguments)) for c in spec.golden]

    def script(body):  # ask the customer first, then the golden calls one per turn, then the golden reply
        turn = turn_of(body)
        if turn == 0:
            return Say("What is the email address on your account?")
        return Calls([calls[turn - 1]]) if turn <= len(calls) else Say(f"{spec.golden_reply} <DONE>")

    out = tmp_path / "customer.jsonl"
    with ScriptedModel(script) as server:
        term = Terminal(TASK, "--as", "customer", "--model", "scripted", "--base-url", server.base_url, "--api-key", "k",
                        "-o", str(out))
        assert spec.user.opening[:40] in term.expect("you (customer)> ", timeout=60)
        term.send(spec.user.facts[0].text)
        before_verdict = term.expect("verdict 1", timeout=60)
        closing = spec.golden_reply.replace("<DONE>", "").strip()
        assert "agent> " + closing[:60] in " ".join(before_verdict.split())  # the closing is shown, though no reply follows it
        term.send("")
        assert term.close() == 0
    (row,) = read_rows(out)
    assert row["status"] == "ok" and row["verdict"] == 1.0 and row["user"] == {"kind": "human"}
    assert row["config"]["agent"]["kind"] == "openai"
    said = [e["content"] for e in row["trace"] if e.get("type") == "message" and e.get("source") == "simulator"]
    assert said == [spec.user.facts[0].text]


def test_deep_json_and_bytes_that_are_not_utf8_are_explained_and_the_prompt_comes_back(tmp_path):
    term = Terminal(TASK, "-o", str(tmp_path / "p.jsonl"))
    term.expect("you> ")
    term.send("/call get_customer_profile " + "[" * 100_000 + "]" * 100_000)
    assert "nested too deep" in term.expect("you> ")
    os.write(term.fd, b"caf\xe9 \xff\xfe hello\n")  # read with surrogate escapes: text UTF-8 cannot encode
    assert "customer>" in term.expect("you> ")
    term.send("/done Bye.")
    assert "verdict 0" in term.expect("Enter quits")
    term.send("")
    assert term.close() == 0
    assert read_rows(tmp_path / "p.jsonl")[0]["status"] == "ok"  # the trial ended as the agent's, not as a harness error


def test_ctrl_c_ends_play_with_a_message_and_no_traceback(tmp_path):
    term = Terminal(TASK, "-o", str(tmp_path / "p.jsonl"))
    term.expect("you> ")
    term.proc.send_signal(signal.SIGINT)
    try:
        code = term.proc.wait(5)
    except subprocess.TimeoutExpired:
        # a signal that lands between the prompt and the read the prompt waits in is handled at the next keypress
        # (CPython's readline checks signals only when its wait is interrupted): press one, as a person would
        os.write(term.fd, b"\n")
        code = term.proc.wait(30)
    assert code == 130
    output = term.seen
    while select.select([term.fd], [], [], 1)[0]:
        try:
            chunk = os.read(term.fd, 65536).decode(errors="replace")
        except OSError:
            break
        if not chunk:
            break
        output += chunk
    term.close()
    assert "interrupted" in output and "Traceback" not in output, output
