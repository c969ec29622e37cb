"""The llama.cpp server the realmodel tests start leaves no process behind: not after a failing test, not after a killed pytest."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from realmodel import smollm2_gguf
from realmodel_server import CHAT_N_CTX, require_server, serve

pytestmark = pytest.mark.realmodel

TESTS = Path(__file__).resolve().parents[1]


def _gone(pid: int, within_s: float = 30.0) -> bool:
    """Whether process ``pid`` has exited (or is a zombie nobody reaps, which holds no port or memory) within ``within_s``."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as fh:
                if fh.read().split(")")[-1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.2)
    return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_failing_test_inside_the_server_context_stops_the_server(tmp_path):
    require_server()
    with pytest.raises(RuntimeError, match="a test failed"), serve(smollm2_gguf(), tmp_path / "server.log", CHAT_N_CTX, None) as server:
        pid = server.process.pid
        assert server.alive()
        raise RuntimeError("a test failed")
    assert _gone(pid), f"the server {pid} outlived its context"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc and uses PR_SET_PDEATHSIG")
def test_a_killed_test_process_takes_its_server_with_it(tmp_path):
    require_server()
    script = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from realmodel import smollm2_gguf\n"
        "from realmodel_server import CHAT_N_CTX, serve\n"
        f"with serve(smollm2_gguf(), Path({str(tmp_path / 'server.log')!r}), CHAT_N_CTX, None) as server:\n"
        "    print(server.process.pid, flush=True)\n"
        "    time.sleep(600)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(TESTS) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    holder = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=env)
    try:
        line = holder.stdout.readline()
        assert line.strip().isdigit(), f"the holder printed {line!r}"
        pid = int(line)
        assert not _gone(pid, within_s=0.5)
    finally:
        holder.kill()  # SIGKILL: no teardown of any kind runs in the holder
        holder.wait()
    assert _gone(pid), f"the server {pid} outlived the process that started it"
