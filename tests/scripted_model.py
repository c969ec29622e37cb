"""A real HTTP server speaking the Chat Completions API, whose "model" follows a script.

A script is a function of the request body that returns what the model does next:
a ``Say`` (text), ``Calls`` (one or several tool calls, possibly with malformed
argument JSON), an HTTP error status (``Status``) or ``Hang`` (no answer until
the client gives up). The turn is read off the request itself (how many assistant
messages it holds), so the server keeps no per-conversation state and serves
concurrent trials. ``GET /v1/models`` lists ``models``; a one-message request
(the preflight ``thinkingbox eval`` sends before a run) is answered "OK" and kept
in ``preflights``, apart from the trials' ``requests``, unless ``preflight_status``
makes it fail. A preflight that carries tools is answered with a call of its first
tool, as a server with tool calling does; ``tools="ignored"`` answers it in text (a server
that drops tools), ``tools="need_choice"`` only when it names ``tool_choice``
(llama-cpp-python's ``chatml-function-calling``).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import thinkingbox_env as tb
from thinkingbox_env.users import DONE_MARKER


@dataclass
class Say:
    text: str
    reasoning: str | None = None


@dataclass
class Calls:
    calls: list[tuple[str, Any]]  # (name, arguments as a dict, or a raw string sent as is)
    reasoning: str | None = None
    content: str | None = None


@dataclass
class Status:
    code: int
    message: str = "scripted failure"
    type: str = "server_error"
    extra: dict[str, Any] | None = None  # more fields of the error object (llama.cpp's n_prompt_tokens, n_ctx)


@dataclass
class Hang:
    seconds: float = 30.0


Reply = Say | Calls | Status | Hang


@dataclass
class Usage:
    prompt: int = 100
    cached: int = 40
    completion: int = 20
    reasoning: int = 5


def turn_of(body: dict) -> int:
    """The number of assistant turns already in the conversation."""
    return sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")


def golden_script(task_id: str, parallel: bool = False, reasoning: str | None = "thinking about the policy",
                  mutate: Callable[[str, dict], dict] | None = None) -> Callable[[dict], Reply]:
    """Plays the task's golden tool calls (one per turn, or all in one turn), then its golden reply.

    ``mutate(name, arguments)`` may change a call's arguments: a model that makes a wrong update.
    """
    spec = tb.load_task(task_id)
    calls = [(c.name, dict(c.arguments)) for c in spec.golden]
    if mutate:
        calls = [(n, mutate(n, a)) for n, a in calls]
    closing = Say(f"{spec.golden_reply} {DONE_MARKER}")

    def script(body: dict) -> Reply:
        turn = turn_of(body)
        if parallel:
            return Calls(calls, reasoning=reasoning) if turn == 0 else closing
        if turn < len(calls):
            return Calls([calls[turn]], reasoning=reasoning)
        return closing

    return script


def malformed_script(task_id: str) -> Callable[[dict], Reply]:
    """First a tool call whose argument JSON does not parse, then a confident closing message."""
    first = tb.load_task(task_id).golden[0].name

    def script(body: dict) -> Reply:
        if turn_of(body) == 0:
            return Calls([(first, '{"email": "broken')])
        return Say(f"All done. {DONE_MARKER}")

    return script


class ScriptedModel:
    """Serves ``/v1/chat/completions`` on 127.0.0.1 from a script.

    ``fail_first`` lists HTTP statuses answered (in order) before the script is consulted.
    """

    def __init__(self, script: Callable[[dict], Reply], fail_first: list[int] | None = None,
                 usage: Usage | None = None, models: list[str] | None = None, preflight_status: int | None = None,
                 tools: str = "called"):
        self.script = script
        self.tools = tools
        self.models = ["scripted"] if models is None else list(models)
        self.preflight_status = preflight_status
        self.preflights: list[dict] = []
        self.failures = list(fail_first or [])
        self.usage = usage or Usage()
        self.requests: list[dict] = []
        self.statuses: list[int] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ids = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, code: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, {"object": "list", "data": [{"id": m, "object": "model", "created": 0, "owned_by": "test"}
                                                                for m in outer.models]})
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if len(body.get("messages", [])) == 1:
                    outer.preflights.append(body)
                    if outer.preflight_status:
                        self._send(outer.preflight_status, {"error": {"message": f"The model `{body.get('model')}` does not exist.",
                                                                      "type": "NotFoundError"}})
                    else:
                        self._send(200, outer.completion(body, outer.preflight_reply(body)))
                    return
                with outer._lock:
                    outer.requests.append(body)
                    failure = outer.failures.pop(0) if outer.failures else None
                if failure is not None:
                    outer.statuses.append(failure)
                    self._send(failure, {"error": {"message": "unavailable", "type": "server_error"}})
                    return
                reply = outer.script(body)
                if isinstance(reply, Hang):
                    outer._stop.wait(reply.seconds)
                    return
                if isinstance(reply, Status):
                    outer.statuses.append(reply.code)
                    self._send(reply.code, {"error": {"message": reply.message, "type": reply.type, **(reply.extra or {})}})
                    return
                outer.statuses.append(200)
                self._send(200, outer.completion(body, reply))

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def preflight_reply(self, body: dict) -> Say | Calls:
        tools = body.get("tools") or []
        calls = self.tools == "called" or (self.tools == "need_choice" and body.get("tool_choice"))
        if tools and calls:
            return Calls([(tools[0]["function"]["name"], {"order_id": "A-1001"})])
        return Say("OK")

    def completion(self, body: dict, reply: Say | Calls) -> dict:
        message: dict[str, Any] = {"role": "assistant"}
        if isinstance(reply, Say):
            message["content"] = reply.text
            finish = "stop"
        else:
            message["content"] = reply.content
            tool_calls = []
            for name, args in reply.calls:
                with self._lock:
                    self._ids += 1
                    cid = f"chatcmpl-tool-{self._ids}"
                tool_calls.append({"id": cid, "type": "function", "function": {
                    "name": name, "arguments": args if isinstance(args, str) else json.dumps(args)}})
            message["tool_calls"] = tool_calls
            finish = "tool_calls"
        if reply.reasoning:
            message["reasoning_content"] = reply.reasoning
        u = self.usage
        return {
            "id": "chatcmpl-scripted", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "scripted"),
            "choices": [{"index": 0, "finish_reason": finish, "message": message}],
            "usage": {"prompt_tokens": u.prompt, "completion_tokens": u.completion,
                      "total_tokens": u.prompt + u.completion,
                      "prompt_tokens_details": {"cached_tokens": u.cached},
                      "completion_tokens_details": {"reasoning_tokens": u.reasoning}},
        }

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> ScriptedModel:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self.server.shutdown()
        self.server.server_close()
