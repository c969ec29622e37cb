"""The operator side: a small HTTP API under ``/operator`` (sessions, reset, diff, outcome, verdict).

It is guarded by its own bearer token, never listed as an MCP tool, and no agent-facing tool
can reach it, so the agent cannot read the golden outcome or the checks. Every body is read
in bounded chunks and validated field by field: a bad request is a 4xx naming the field,
never a server error.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..contracts.actions import valid_text
from ..contracts.records import FinishReason
from ..tasks.lookup import UnknownTaskError
from .episodes import EpisodeHost, OperatorError, SessionError
from .gate import bearer_ok

MAX_SEED = 2**32 - 1
FINISH_REASONS = tuple(r.value for r in FinishReason)


def _body_keys(body: dict[str, Any], allowed: tuple[str, ...]) -> None:
    unknown = sorted(set(body) - set(allowed))
    if unknown:
        raise OperatorError(f"unknown field(s) {', '.join(map(repr, unknown))}; this route takes {', '.join(allowed)}")


def _optional_str(body: dict[str, Any], name: str, default: str) -> str:
    value = body.get(name, default)
    if not isinstance(value, str):
        raise OperatorError(f"'{name}' must be a string, got {type(value).__name__}")
    return valid_text(value)


def parse_reset_body(body: dict[str, Any]) -> tuple[str | None, dict[str, Any] | None, int]:
    """Validate a reset request: (task_id, spec, seed), or :class:`OperatorError` naming the bad field."""
    _body_keys(body, ("task_id", "spec", "seed"))
    task_id, spec, seed = body.get("task_id"), body.get("spec"), body.get("seed", 0)
    if task_id is not None and (not isinstance(task_id, str) or not task_id.strip() or len(task_id) > 200):
        raise OperatorError(f"'task_id' must be a task id string such as 'retail/ST030_001', got {type(task_id).__name__}")
    if spec is not None and not isinstance(spec, dict):
        raise OperatorError(f"'spec' must be a JSON object (a task spec), got {type(spec).__name__}")
    if task_id is not None and spec is not None:
        raise OperatorError("give either 'task_id' or 'spec', not both")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise OperatorError(f"'seed' must be an integer from 0 to {MAX_SEED}, got {seed!r:.40}")
    return task_id, spec, seed


def parse_dialogue(value: Any) -> list[dict[str, Any]] | None:
    """The verdict body's optional ``dialogue``: a list of ``{role, content, calls_before}`` objects."""
    if value is None:
        return None
    if not isinstance(value, list):
        raise OperatorError(f"'dialogue' must be a list of messages, got {type(value).__name__}")
    out = []
    for i, m in enumerate(value):
        if not isinstance(m, dict) or m.get("role") not in ("user", "assistant") or not isinstance(m.get("content"), str):
            raise OperatorError(f"'dialogue'[{i}] must be an object with role 'user' or 'assistant' and a string content")
        calls = m.get("calls_before", 0)
        if isinstance(calls, bool) or not isinstance(calls, int) or calls < 0:
            raise OperatorError(f"'dialogue'[{i}].calls_before must be a non-negative integer, got {calls!r:.40}")
        out.append({"role": m["role"], "content": valid_text(m["content"]), "calls_before": calls})
    return out


def parse_verdict_body(body: dict[str, Any]) -> tuple[str, str, str, list[dict[str, Any]] | None]:
    """Validate the operator's verdict request; a bad field is an operator error, not a server crash."""
    _body_keys(body, ("final_message", "transcript", "finish_reason", "dialogue"))
    finish = _optional_str(body, "finish_reason", "done_marker")
    if finish not in FINISH_REASONS:
        raise OperatorError(f"'finish_reason' must be one of {', '.join(FINISH_REASONS)}, got {finish[:40]!r}")
    return (_optional_str(body, "final_message", ""), _optional_str(body, "transcript", ""), finish,
            parse_dialogue(body.get("dialogue")))


MAX_OPERATOR_BODY_BYTES = 4 * 1024 * 1024  # a spec or a dialogue; grading an unbounded body held a worker for minutes


class BodyTooLarge(OperatorError):
    """A request body over :data:`MAX_OPERATOR_BODY_BYTES` (answered 413)."""


async def _bounded_body(request: Request) -> bytes:
    """The request body, refused as soon as it passes :data:`MAX_OPERATOR_BODY_BYTES` (read in chunks, never whole)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > MAX_OPERATOR_BODY_BYTES:
        raise BodyTooLarge(f"the request body is too large ({int(declared):,} bytes; the limit is {MAX_OPERATOR_BODY_BYTES:,})")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_OPERATOR_BODY_BYTES:
            raise BodyTooLarge(f"the request body is too large (over {MAX_OPERATOR_BODY_BYTES:,} bytes)")
        chunks.append(chunk)
    return b"".join(chunks)


def operator_routes(host: EpisodeHost, operator_token: str) -> list[Route]:
    """The operator API (sessions, reset, diff, outcome, verdict), behind a token the agent never sees, so it cannot grade itself."""
    def guarded(handler: Any) -> Any:
        async def endpoint(request: Request) -> Response:
            if not bearer_ok(request, operator_token):
                return JSONResponse({"error": "operator token required"}, status_code=401)
            try:
                raw = await _bounded_body(request) if request.method == "POST" else b""
                try:
                    body = json.loads(raw) if raw.strip() else {}
                except (ValueError, RecursionError) as exc:
                    raise OperatorError(f"the request body is not valid JSON: {str(exc)[:120]}") from exc
                if not isinstance(body, dict):
                    raise OperatorError("the request body must be a JSON object")
                # on a thread: grading or a reset waits for the episode's call in progress, never on the event loop
                answer = await anyio.to_thread.run_sync(handler, request.path_params.get("session", ""), body)
                return JSONResponse(answer)
            except (SessionError, UnknownTaskError) as exc:
                return JSONResponse({"error": str(exc)}, status_code=404)
            except BodyTooLarge as exc:
                return JSONResponse({"error": str(exc)}, status_code=413)
            except ClientDisconnect:  # nobody is left to read an answer; the operator app over stdio has no gate to catch it
                return Response(status_code=400)
            except KeyError as exc:
                return JSONResponse({"error": f"unknown session or task: {exc.args[0]}"}, status_code=404)
            except (OperatorError, ValueError) as exc:
                return JSONResponse({"error": str(exc)}, status_code=400)

        return endpoint

    def reset(session: str, body: dict[str, Any]) -> dict[str, Any]:
        task_id, spec, seed = parse_reset_body(body)
        ep = host.reset(session, task_id, spec, seed)
        return {"session": session, "task_id": ep.task.full_id, "seed": ep.seed}

    def verdict(session: str, body: dict[str, Any]) -> dict[str, Any]:
        return host.verdict(session, *parse_verdict_body(body))

    def no_body(handler: Any) -> Any:
        def run(session: str, body: dict[str, Any]) -> dict[str, Any]:
            _body_keys(body, ())
            return handler(session)

        return run

    return [
        Route("/operator/sessions", guarded(no_body(lambda s: {"sessions": host.sessions()})), methods=["GET"]),
        Route("/operator/sessions/{session}/reset", guarded(reset), methods=["POST"]),
        Route("/operator/sessions/{session}/diff", guarded(no_body(lambda s: {k: v for k, v in host.outcome(s).items() if k in ("diff", "state_hash")})), methods=["GET"]),
        Route("/operator/sessions/{session}/outcome", guarded(no_body(host.outcome)), methods=["GET"]),
        Route("/operator/sessions/{session}/verdict", guarded(verdict), methods=["POST"]),
    ]

def build_operator_app(host: EpisodeHost, operator_token: str) -> Starlette:
    """The operator API alone, for stdio serving where MCP runs over the pipes."""
    return Starlette(routes=operator_routes(host, operator_token))
