"""A `thinkingbox serve --transport http` subprocess for tests, on a free loopback port."""

from __future__ import annotations

import socket
import subprocess
import sys
import time


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class HttpServer:
    def __init__(self, target: str = "retail", token: str | None = "agent-token-for-tests", operator_token: str = "operator-token-for-tests",
                 extra: list[str] | None = None):
        self.port = free_port()
        self.token, self.operator_token = token, operator_token
        args = [sys.executable, "-m", "thinkingbox_env.cli", "serve", target, "--transport", "http",
                "--port", str(self.port), "--operator-token", operator_token, *(extra or [])]
        if token:
            args += ["--token", token]
        self.proc = subprocess.Popen(args, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited: {self.proc.stderr.read()}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("server did not start")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)
        self.proc.stderr.close()
