"""llama.cpp's OpenAI-compatible server (from ``llama-cpp-python[server]``) serving SmolLM2, for the realmodel tests.

The tests talk to the server over HTTP exactly as ``thinkingbox eval`` talks to any endpoint,
so what they exercise is the wire format a real server returns, not a stand-in's.

Two servers on the same weights, because no one chat format of llama-cpp-python serves both uses:

- the agent's (``TOOLS_FORMAT``): ``chatml-function-calling`` is the one format that returns
  OpenAI tool calls while still letting the model answer in text; it does so only when the
  request sends ``tool_choice`` (``--extra-body '{"tool_choice": "auto"}'``). ``functionary``
  turns every reply into a call (the agent could never ask or close), and the model's own GGUF
  template ignores tools. That format writes the tool list into every system message, and an
  episode opens with two (instructions, policy): the smallest frozen opening (consulting,
  compact tool schemas) is 10,556 tokens, above SmolLM2's trained 8,192, so its context is
  ``TOOLS_N_CTX``; the model's text past 8,192 tokens is worse, which no test grades. It also
  HTML-escapes message text (``"`` becomes ``&#34;``), which is why the others do not use it;
- the simulated user's and the judge's (no tools): the model's own chat template from the
  GGUF, which passes their fenced prompts through as written, at the trained context.

One or two threads each: the CI machine has two cores. Flash attention: on a CPU it reads a
3,000-token prompt in 0.6 of the time (35.6 against 60.4 CPU seconds), and more so for longer ones.

The server runs in its own process group and, on Linux, is killed when the process that
started it dies, so neither a failing test nor a killed pytest leaves it running.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from realmodel import require_module

TOOLS_FORMAT = "chatml-function-calling"
TOOLS_N_CTX = 12288
CHAT_N_CTX = 8192
THREADS = min(2, os.cpu_count() or 1)
START_TIMEOUT_S = 120.0
# the server's own imports (llama-cpp-python's ``server`` extra); llama_cpp alone cannot serve
SERVER_MODULES = ("llama_cpp", "fastapi", "uvicorn", "sse_starlette", "starlette_context", "pydantic_settings")
INSTALL_HINT = 'pip install "llama-cpp-python[server]"'


@dataclass(frozen=True)
class LlamaServer:
    """A running server: where to reach it, the model name it serves, and its log."""

    base_url: str
    model: str
    log: Path
    process: subprocess.Popen

    def alive(self) -> bool:
        return self.process.poll() is None

    def log_tail(self, lines: int = 30) -> str:
        """The end of the server's log, for a failure message (a crashed server says why only there)."""
        text = self.log.read_text(errors="replace").splitlines() if self.log.exists() else []
        return "\n".join(line[:300] for line in text[-lines:])


def require_server() -> None:
    """Skip (or fail under CI) unless llama-cpp-python and its server extra can be imported."""
    for name in SERVER_MODULES:
        require_module(name, INSTALL_HINT)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def server_command(model_path: Path, port: int, n_ctx: int, chat_format: str | None, threads: int = THREADS) -> list[str]:
    """The server's command line; ``chat_format`` None keeps the chat template the GGUF carries."""
    fmt = ["--chat_format", chat_format] if chat_format else []
    return [sys.executable, "-m", "llama_cpp.server", "--model", str(model_path), "--host", "127.0.0.1",
            "--port", str(port), "--n_ctx", str(n_ctx), *fmt,
            "--n_threads", str(threads), "--n_threads_batch", str(threads), "--flash_attn", "True", "--verbose", "False"]


def _die_with_parent() -> None:
    """In the child before exec: SIGKILL when the parent dies (Linux prctl PR_SET_PDEATHSIG).

    SIGKILL, not SIGTERM: on SIGTERM the server first finishes the request it is computing,
    which on a CPU can take minutes, and nothing is left to wait for it.
    """
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)


def _served_model(base_url: str) -> str | None:
    try:
        with urllib.request.urlopen(f"{base_url}/models", timeout=2) as response:
            return json.load(response)["data"][0]["id"]
    except (urllib.error.URLError, OSError, KeyError, IndexError, ValueError):
        return None


def stop(process: subprocess.Popen, grace_s: float = 5.0) -> None:
    """SIGTERM the server's process group, then SIGKILL what is left after ``grace_s``; reap it.

    The server finishes the request in flight before it exits on SIGTERM (a request a failed
    test abandoned can run for minutes), hence the short grace.
    """
    if process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(grace_s)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


@contextlib.contextmanager
def serve(model_path: Path, log: Path, n_ctx: int, chat_format: str | None, threads: int = THREADS,
          timeout_s: float = START_TIMEOUT_S) -> Iterator[LlamaServer]:
    """Start the server on a free port, wait until it lists its model, yield it, and stop it whatever happened."""
    port = free_port()
    base_url = f"http://127.0.0.1:{port}/v1"
    with log.open("wb") as out:
        process = subprocess.Popen(server_command(model_path, port, n_ctx, chat_format, threads), stdout=out,
                                   stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
                                   preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None)
    try:
        deadline = time.monotonic() + timeout_s
        model = None
        while model is None:
            if process.poll() is not None:
                raise RuntimeError(f"the llama.cpp server exited with status {process.returncode}:\n"
                                   + LlamaServer(base_url, "", log, process).log_tail())
            if time.monotonic() > deadline:
                raise RuntimeError(f"the llama.cpp server did not answer within {timeout_s:.0f} s:\n"
                                   + LlamaServer(base_url, "", log, process).log_tail())
            time.sleep(0.25)
            model = _served_model(base_url)
        yield LlamaServer(base_url, model, log, process)
    finally:
        stop(process)
