"""MCP sessions cannot be chosen, shared, hijacked or silently replaced; operator input never causes a 500.

Every test drives a real `thinkingbox serve` process on 127.0.0.1 with the real
`mcp` client (or raw HTTP where the point is a request a well-behaved client
would never send).
"""

from __future__ import annotations

import http.client
import json
import socket
import subprocess
import sys
import time

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_helpers import HttpServer

AGENT, OPERATOR = "agent-token-for-tests", "operator-token-for-tests"
UPGRADE = {"customer_id": "CUS-3000001", "action": "upgrade"}
LEGACY_VERSION = "2025-06-18"
MODERN_VERSION = "2026-07-28"


@pytest.fixture(scope="module")
def server():
    srv = HttpServer("retail/ST030_001", extra=["--max-episodes", "6", "--max-episodes-per-client", "6"])
    yield srv
    srv.close()


def _client(server, mode="legacy"):
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {AGENT}"})
    return Client(streamable_http_client(server.url, http_client=http), mode=mode)


def _request(server, method, path, body=None, headers=None, token=AGENT):
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        hdrs = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **(headers or {})}
        if token:
            hdrs["Authorization"] = f"Bearer {token}"
        payload = body if isinstance(body, (bytes, str)) or body is None else json.dumps(body)
        conn.request(method, path, body=payload, headers=hdrs)
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read().decode()
    finally:
        conn.close()


def _operator(server, method, path, body=None):
    status, _, text = _request(server, method, path, body, token=OPERATOR)
    return status, json.loads(text) if text else {}


def _sessions(server):
    return {s["session"]: s for s in _operator(server, "GET", "/operator/sessions")[1]["sessions"]}


def _rpc(method, params=None, id_=1):
    msg = {"jsonrpc": "2.0", "method": method, "params": params or {}}
    if id_ is not None:
        msg["id"] = id_
    return msg


def _open_raw_session(server):
    """The legacy handshake by hand: returns the id the server issued."""
    status, headers, _ = _request(server, "POST", "/mcp", _rpc("initialize", {
        "protocolVersion": LEGACY_VERSION, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}))
    assert status == 200
    sid = {k.lower(): v for k, v in headers.items()}["mcp-session-id"]
    status, _, _ = _request(server, "POST", "/mcp", _rpc("notifications/initialized", id_=None),
                            {"mcp-session-id": sid, "mcp-protocol-version": LEGACY_VERSION})
    assert status == 202
    return sid


def _messages(exc: BaseException) -> list[str]:
    if getattr(exc, "exceptions", None):  # an exception group
        return [m for e in exc.exceptions for m in _messages(e)]
    return [f"{type(exc).__name__}: {exc}"]


def _fails_with(main, text: str) -> None:
    """Run ``main`` under anyio and require an MCPError carrying ``text`` (the client wraps it in exception groups)."""
    try:
        anyio.run(main)
    except BaseException as exc:  # noqa: BLE001 - inspected below
        messages = _messages(exc)
        assert any(m.startswith("MCPError") and text in m for m in messages), messages
        return
    raise AssertionError(f"expected an MCPError mentioning {text!r}")


def _call(name, arguments, id_=2):
    return _rpc("tools/call", {"name": name, "arguments": arguments}, id_)


# --------------------------------------------------------------------------- ids


def test_a_session_id_the_server_did_not_issue_is_refused_and_creates_nothing(server):
    before = set(_sessions(server))
    for sid in ("default", "victim-session", "0" * 32, "x" * 300):
        status, _, text = _request(server, "POST", "/mcp", _call("update_membership", UPGRADE),
                                   {"mcp-session-id": sid, "mcp-protocol-version": LEGACY_VERSION})
        assert status == 404, (sid, status, text)
        assert "unknown session" in json.loads(text)["error"]["message"]
    assert set(_sessions(server)) == before  # no episode was minted for a client-chosen id


def test_stateless_era_requests_are_refused_even_when_they_name_a_live_session(server):
    victim = _open_raw_session(server)
    for headers in ({"mcp-protocol-version": MODERN_VERSION},
                    {"mcp-protocol-version": MODERN_VERSION, "mcp-session-id": victim},
                    {"mcp-protocol-version": MODERN_VERSION, "mcp-session-id": "default"}):
        status, _, text = _request(server, "POST", "/mcp", _call("update_membership", UPGRADE), headers)
        assert status == 400, text
        assert "--single-episode" in json.loads(text)["error"]["message"]
    status, outcome = _operator(server, "GET", f"/operator/sessions/{victim}/diff")
    assert status == 200 and outcome["diff"] == {}  # nobody wrote into the victim's episode
    assert _request(server, "DELETE", "/mcp", headers={"mcp-session-id": victim})[0] == 200


def test_default_mode_clients_each_get_their_own_episode(server):
    """The SDK's default ("auto") client probes the stateless era, is refused, and falls back to a session of its own."""

    async def one(i):
        async with _client(server, mode="auto") as client:
            await client.call_tool("create_ticket", {"requester_id": 3000001, "subject": f"client {i}", "category": "general"})
            seen = await client.call_tool("search_tickets", {"table": "tickets", "filter": "requester_id eq 3000001"})
            return [t["subject"] for t in json.loads(seen.content[0].text)["items"]]

    async def main():
        results = {}

        async def run(i):
            results[i] = await one(i)

        async with anyio.create_task_group() as tg:
            for i in range(4):
                tg.start_soon(run, i)
        return results

    results = anyio.run(main)
    assert results == {i: [f"client {i}"] for i in range(4)}  # 0 cross-reads out of 4 x 4


def test_a_client_pinned_to_the_stateless_era_is_told_why(server):
    async def main():
        async with _client(server, mode=MODERN_VERSION) as client:
            await client.call_tool("get_customer_profile", {"customer_id": "CUS-3000001"})

    _fails_with(main, "--single-episode")


# --------------------------------------------------------------------------- lifetime


def test_closed_sessions_are_refused_with_the_reason(server):
    sid = _open_raw_session(server)
    assert sid in _sessions(server)
    assert _request(server, "DELETE", "/mcp", headers={"mcp-session-id": sid, "mcp-protocol-version": LEGACY_VERSION})[0] == 200
    status, _, text = _request(server, "POST", "/mcp", _call("update_membership", UPGRADE),
                               {"mcp-session-id": sid, "mcp-protocol-version": LEGACY_VERSION})
    assert status == 404 and "closed by its client" in json.loads(text)["error"]["message"]
    status, body = _operator(server, "GET", f"/operator/sessions/{sid}/outcome")
    assert status == 404 and "closed by its client" in body["error"]
    assert sid not in _sessions(server)


def test_idle_expiry_refuses_the_next_call_instead_of_running_it_on_a_fresh_state():
    srv = HttpServer("retail/ST030_001", extra=["--idle-timeout", "1"])
    try:
        async def main():
            async with _client(srv) as client:
                first = await client.call_tool("update_membership", UPGRADE)
                assert not first.is_error
                await anyio.sleep(2.5)
                await client.call_tool("get_membership", {"customer_id": "CUS-3000001"})

        _fails_with(main, "expired after 1 s idle")
        assert _sessions(srv) == {}
    finally:
        srv.close()


def test_live_episodes_are_capped_with_a_clear_error(server):
    held = [_open_raw_session(server) for _ in range(6 - len(_sessions(server)))]
    try:
        status, _, text = _request(server, "POST", "/mcp", _rpc("initialize", {
            "protocolVersion": LEGACY_VERSION, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}))
        assert status == 503 and "maximum of 6 live episodes" in json.loads(text)["error"]["message"]

        async def main():
            async with _client(server) as client:
                await client.list_tools()

        _fails_with(main, "maximum of 6 live episodes")
        assert len(_sessions(server)) == 6
    finally:
        for sid in held:
            _request(server, "DELETE", "/mcp", headers={"mcp-session-id": sid, "mcp-protocol-version": LEGACY_VERSION})
    sid = _open_raw_session(server)  # room again once sessions close
    _request(server, "DELETE", "/mcp", headers={"mcp-session-id": sid, "mcp-protocol-version": LEGACY_VERSION})


def test_a_dropped_clients_write_is_all_or_nothing_and_the_operator_sees_which(server):
    """Decided behaviour: a call whose client hangs up either ran completely before the server noticed (and stays,
    like a request a real backend committed before the connection dropped) or never ran; the operator's diff,
    the call count and what the session reads back always agree, and the episode stays live for its session."""
    sid = _open_raw_session(server)
    body = json.dumps(_call("update_membership", UPGRADE)).encode()
    raw = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {AGENT}\r\n"
           f"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
           f"mcp-session-id: {sid}\r\nmcp-protocol-version: {LEGACY_VERSION}\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        sock.sendall(raw)  # and hang up without reading the answer
    for _ in range(30):  # give a started call the chance to finish; a cancelled one never shows up
        if _sessions(server)[sid]["tool_calls"]:
            break
        time.sleep(0.1)
    status, _, text = _request(server, "POST", "/mcp", _call("get_membership", {"customer_id": "CUS-3000001"}, id_=3),
                               {"mcp-session-id": sid, "mcp-protocol-version": LEGACY_VERSION})
    assert status == 200, text
    calls = _sessions(server)[sid]["tool_calls"] - 1  # less the read just made
    status, diff = _operator(server, "GET", f"/operator/sessions/{sid}/diff")
    inserted = len(diff["diff"].get("memberships", {}).get("inserted", []))
    assert calls in (0, 1) and inserted == calls
    assert ("plus" in text.lower()) == (calls == 1)  # what the session reads back is what the operator grades
    _request(server, "DELETE", "/mcp", headers={"mcp-session-id": sid, "mcp-protocol-version": LEGACY_VERSION})
    assert _operator(server, "GET", f"/operator/sessions/{sid}/diff")[0] == 404  # closed: gone with its session


# --------------------------------------------------------------------------- single-episode mode and stdio


def test_single_episode_mode_serves_stateless_clients_one_shared_episode():
    srv = HttpServer("retail/ST030_001", extra=["--single-episode"])
    try:
        async def main():
            async with _client(srv, mode=MODERN_VERSION) as modern, _client(srv) as legacy:
                await modern.call_tool("update_membership", UPGRADE)
                seen = await legacy.call_tool("get_membership", {"customer_id": "CUS-3000001"})
                return json.loads(seen.content[0].text)

        membership = anyio.run(main)
        assert "plus" in json.dumps(membership).lower()
        status, diff = _operator(srv, "GET", "/operator/sessions/default/diff")
        assert status == 200 and len(diff["diff"]["memberships"]["inserted"]) == 1
        assert list(_sessions(srv)) == ["default"]
    finally:
        srv.close()


def test_stdio_serves_a_default_mode_client_on_its_one_episode(tmp_path):
    sock = str(tmp_path / "op.sock")
    params = StdioServerParameters(command=sys.executable, args=["-m", "thinkingbox_env.cli", "serve", "retail/ST030_001",
                                   "--transport", "stdio", "--operator-socket", sock],
                                   env={**__import__("os").environ, "THINKINGBOX_OPERATOR_TOKEN": OPERATOR})
    from thinkingbox_env.serving.backend import OperatorClient

    async def main():
        async with Client(params) as client:  # the SDK's default mode
            result = await client.call_tool("update_membership", UPGRADE)
            assert not result.is_error
            return OperatorClient(OPERATOR, socket_path=sock).request("GET", "/operator/sessions/default/diff")

    diff = anyio.run(main)
    assert len(diff["diff"]["memberships"]["inserted"]) == 1


# --------------------------------------------------------------------------- tokens and operator input


@pytest.mark.parametrize("flag,value", [("--token", " "), ("--token", "short-token"), ("--operator-token", "x" * 15),
                                        ("--token", "sixteen chars ok")])
def test_weak_tokens_are_refused_at_start(flag, value):
    args = [sys.executable, "-m", "thinkingbox_env.cli", "serve", "retail", "--transport", "http", "--port", "1", flag, value]
    if flag == "--token":
        args += ["--operator-token", OPERATOR]
    out = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert out.returncode == 2, out.stderr
    assert ("at least 16 characters" in out.stderr) or ("without spaces" in out.stderr), out.stderr


BAD_OPERATOR_REQUESTS = [
    ("POST", "reset", {"task_id": 5}, 400, "'task_id' must be a task id string"),
    ("POST", "reset", {"task_id": ""}, 400, "'task_id'"),
    ("POST", "reset", {"task_id": ["retail/ST030_001"]}, 400, "'task_id'"),
    ("POST", "reset", {"seed": "1"}, 400, "'seed' must be an integer"),
    ("POST", "reset", {"seed": True}, 400, "'seed' must be an integer"),
    ("POST", "reset", {"seed": -1}, 400, "'seed' must be an integer"),
    ("POST", "reset", {"seed": 2**70}, 400, "'seed' must be an integer"),
    ("POST", "reset", {"spec": []}, 400, "'spec' must be a JSON object"),
    ("POST", "reset", {"spec": {}}, 400, ""),
    ("POST", "reset", {"spec": {"id": 5}}, 400, ""),
    ("POST", "reset", {"task_id": "retail/ST030_001", "spec": {}}, 400, "not both"),
    ("POST", "reset", {"task": "retail/ST030_001"}, 400, "unknown field(s) 'task'"),
    ("POST", "reset", {"task_id": "retail/NOPE_001"}, 404, "unknown task"),
    ("POST", "reset", {"task_id": "insurance/IN001_001"}, 400, "serves the 'retail' tools"),
    ("POST", "reset", "[1, 2]", 400, "must be a JSON object"),
    ("POST", "reset", "{not json", 400, "not valid JSON"),
    ("POST", "reset", "[" * 100_000 + "]" * 100_000, 400, "not valid JSON"),
    ("POST", "reset", '{"seed": 1e999}', 400, "'seed'"),
    ("POST", "verdict", {"final_message": 5}, 400, "'final_message' must be a string"),
    ("POST", "verdict", {"transcript": {"a": 1}}, 400, "'transcript' must be a string"),
    ("POST", "verdict", {"finish_reason": "because"}, 400, "'finish_reason' must be one of"),
    ("POST", "verdict", {"verdict": 1}, 400, "unknown field(s)"),
    ("POST", "verdict", '{"final_message": "' + "closing words " * 400_000 + '"}', 413, "too large"),
]


@pytest.mark.parametrize("method,route,body,status,expected", BAD_OPERATOR_REQUESTS,
                         ids=[f"{r[1]}-{i}" for i, r in enumerate(BAD_OPERATOR_REQUESTS)])
def test_bad_operator_input_is_a_4xx_naming_the_field(server, method, route, body, status, expected):
    sid = _open_raw_session(server)
    try:
        got, text = _operator(server, method, f"/operator/sessions/{sid}/{route}", body)
        assert got == status, text
        assert expected in text["error"]
        assert _operator(server, "GET", f"/operator/sessions/{sid}/outcome")[0] == 200  # the session survived
    finally:
        _request(server, "DELETE", "/mcp", headers={"mcp-session-id": sid, "mcp-protocol-version": LEGACY_VERSION})


def test_a_verdict_over_text_with_lone_surrogates_and_line_separators_is_graded(server):
    sid = _open_raw_session(server)
    try:
        body = '{"final_message": "Done \\ud800 \\u2028 \\u0085 \\u202e \\u0000 end", "transcript": "AGENT: \\udfff"}'
        status, text = _operator(server, "POST", f"/operator/sessions/{sid}/verdict", body)
        assert status == 200, text
        assert text["verdict"] == 0.0, text  # graded: nothing was done
    finally:
        _request(server, "DELETE", "/mcp", headers={"mcp-session-id": sid, "mcp-protocol-version": LEGACY_VERSION})


def test_operator_routes_on_an_unknown_session_are_404(server):
    for method, route, body in (("POST", "reset", {}), ("GET", "diff", None), ("GET", "outcome", None), ("POST", "verdict", {})):
        status, text = _operator(server, method, f"/operator/sessions/made-up/{route}", body)
        assert status == 404 and "unknown session" in text["error"], (route, text)


def test_an_operator_reset_with_a_spec_that_reads_host_files_is_refused_without_their_content(server, tmp_path):
    import thinkingbox_env as tb

    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-4417")
    spec = tb.load_task("retail/ST030_001").model_dump(mode="json")
    spec["checks"]["sql"].append({"name": "peek", "query": f"SELECT content LIKE 'TOP%' FROM read_text('{secret}')"})
    sid = _open_raw_session(server)
    try:
        status, body = _operator(server, "POST", f"/operator/sessions/{sid}/reset", {"spec": spec})
        assert status == 400 and "checks.sql." in body["error"] and "TOP-SECRET-4417" not in json.dumps(body)
        status, outcome = _operator(server, "GET", f"/operator/sessions/{sid}/outcome")
        assert status == 200 and "TOP-SECRET-4417" not in json.dumps(outcome)
    finally:
        _request(server, "DELETE", "/mcp", headers={"mcp-session-id": sid, "mcp-protocol-version": LEGACY_VERSION})


def test_clients_that_leave_mid_request_leave_no_traceback_in_the_server_log():
    srv = HttpServer("retail/ST030_001")
    try:
        for path, token in (("/mcp", AGENT), ("/operator/sessions/x/verdict", OPERATOR), ("/mcp", "wrong-token-wrong-token")):
            for _ in range(3):
                sock = socket.create_connection(("127.0.0.1", srv.port))
                sock.sendall(f"POST {path} HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\n"
                             "Accept: application/json, text/event-stream\r\nContent-Length: 5000\r\n\r\n".encode()
                             + b'{"jsonrpc": "2.0", "method": "initialize"')
                time.sleep(0.1)
                sock.close()
        time.sleep(0.5)
        assert _request(srv, "GET", "/operator/sessions", token=OPERATOR)[0] == 200  # still serving
    finally:
        srv.proc.terminate()
        srv.proc.wait(30)
        log = srv.proc.stderr.read()
        srv.proc.stderr.close()
    assert "Traceback" not in log and "ClientDisconnect" not in log, log[-2000:]
