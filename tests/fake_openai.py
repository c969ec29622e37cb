"""A real HTTP server that speaks enough of the OpenAI Chat Completions API for tests."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeOpenAI:
    """Serves /v1/chat/completions on 127.0.0.1; replies come from ``responder(body)``.

    ``responder`` returns the reply's text, or a dict: the assistant ``message`` (text,
    ``tool_calls``) and optionally ``finish_reason``, ``usage`` and ``status`` plus
    ``error`` (a refusal with that HTTP status and error object).
    ``fail_first`` lists HTTP status codes returned (in order) before any success,
    to exercise retries. ``refuse(body)`` answers a request with an error when it returns
    ``(status, message)``, as a server refuses a parameter it does not take.
    ``get`` maps paths (``/props``, ``/v1/models``) to the JSON a GET of them returns;
    any other GET is a 404.
    """

    def __init__(self, responder: Callable[[dict], str | dict], fail_first: list[int] | None = None,
                 refuse: Callable[[dict], tuple[int, str] | None] | None = None, get: dict[str, Any] | None = None):
        self.requests: list[dict] = []
        self.gets: list[str] = []
        self.responder = responder
        self.failures = list(fail_first or [])
        self.refuse = refuse
        self.routes = dict(get or {})
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def _send(self, code: int, body: dict) -> None:
                payload = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self):
                outer.gets.append(self.path)
                if self.path in outer.routes:
                    self._send(200, outer.routes[self.path])
                else:
                    self._send(404, {"error": {"message": f"File Not Found: {self.path}", "type": "not_found_error"}})

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append(body)
                if outer.failures:
                    code = outer.failures.pop(0)
                    self._send(code, {"error": {"message": "try later", "type": "server_error"}})
                    return
                refusal = outer.refuse(body) if outer.refuse else None
                if refusal is not None:
                    self._send(refusal[0], {"error": {"message": refusal[1], "type": "invalid_request_error"}})
                    return
                reply = outer.responder(body)
                if isinstance(reply, dict) and "status" in reply:
                    self._send(reply["status"], {"error": reply["error"]})
                    return
                if isinstance(reply, dict):
                    message = {"role": "assistant", **reply["message"]}
                    finish = reply.get("finish_reason") or ("tool_calls" if message.get("tool_calls") else "stop")
                    usage = reply.get("usage") or {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
                else:
                    message, finish = {"role": "assistant", "content": reply}, "stop"
                    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
                self._send(200, {
                    "id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": body.get("model", "m"),
                    "choices": [{"index": 0, "finish_reason": finish, "message": message}], "usage": usage,
                })

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> FakeOpenAI:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
