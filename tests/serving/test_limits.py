"""Limits a served backend keeps across its sessions: identity lockout, the per-client share of episodes, the
first-call timeout, and concurrent service of different sessions with one session's calls kept in order.

Every test drives a real `thinkingbox serve` process with the real `mcp` client (raw HTTP only for bare
handshakes). Ordering and overlap are asserted from the events the tools record, never from durations.
"""

from __future__ import annotations

import http.client
import json
import re
import shutil
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_helpers import HttpServer

import thinkingbox_env as tb
from thinkingbox_env.serving.limits import IdentityGuard

TOKEN_A, TOKEN_B = "agent-token-for-tests", "second-agent-token-for-tests"
OPERATOR = "operator-token-for-tests"
LEGACY_VERSION = "2025-06-18"
DATA = Path(__file__).resolve().parents[1] / "data"
# seed customers of the insurance domain, in every task
HARRIET = {"customer_id": "CUS-900001", "date_of_birth": "1971-04-09"}
LUCIA = {"customer_id": "CUS-900003", "date_of_birth": "1993-01-17", "ssn_last4": "0375"}


def _request(server, method, path, body=None, headers=None, token=TOKEN_A):
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    try:
        hdrs = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **(headers or {})}
        if token:
            hdrs["Authorization"] = f"Bearer {token}"
        conn.request(method, path, body=None if body is None else json.dumps(body), headers=hdrs)
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read().decode()
    finally:
        conn.close()


def _operator(server, method, path):
    status, _, text = _request(server, method, path, token=OPERATOR)
    return status, json.loads(text) if text else {}


def _rpc(method, params=None, id_=1):
    return {"jsonrpc": "2.0", "method": method, "params": params or {}, "id": id_}


def _client(server, token=TOKEN_A):
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    return Client(streamable_http_client(server.url, http_client=http), mode="legacy")


def _text(result) -> str:
    return "".join(getattr(b, "text", "") for b in result.content)


async def _verify(server, arguments, token=TOKEN_A):
    """One verify_identity call in a session of its own (a new MCP session, so a new episode)."""
    async with _client(server, token) as client:
        result = await client.call_tool("verify_identity", arguments)
        return result.is_error, json.loads(_text(result))


def _lock_seconds(message: str) -> float:
    found = re.search(r"locked for ([0-9.]+) s", message)
    assert found, message
    return float(found.group(1))


def _retry_in(message: str) -> float:
    found = re.search(r"retry in ([0-9.e-]+) s", message)
    assert found, message
    return float(found.group(1))


# --------------------------------------------------------------------------- identity lockout


@pytest.fixture(scope="module")
def insurance():
    srv = HttpServer("insurance/IN001_001", extra=["--identity-backoff", "5", "--identity-backoff-max", "60",
                                                   "--client-identity-failures", "6", "--token", TOKEN_B])
    yield srv
    srv.close()


def test_identity_lockout_holds_across_sessions_with_growing_backoff_and_spares_other_records(insurance):
    wrong = {**HARRIET, "ssn_last4": "0000"}

    async def main():
        async with _client(insurance) as client:  # three wrong guesses in one session: the episode's own rule answers them
            for attempt in range(3):
                result = await client.call_tool("verify_identity", {**wrong, "ssn_last4": f"000{attempt}"})
                body = json.loads(_text(result))
                assert not result.is_error and body["factors"]["ssn_last4"] == "no match", body
        refused, body = await _verify(insurance, wrong)  # a new session, a new episode: still refused
        assert refused and "locked on this server after 3 failed attempts" in body["error"], body
        refused, body = await _verify(insurance, {**HARRIET, "ssn_last4": "4821"})  # even the right secret waits
        assert refused and "locked on this server" in body["error"]
        locks = [_lock_seconds(body["error"])]
        refused, body = await _verify(insurance, LUCIA, token=TOKEN_B)  # another record's owner is not blocked
        assert not refused and body["verification_level"] == "full", body
        for _ in range(2):  # each further failure, once the lock has passed, doubles the wait
            refused, body = await _verify(insurance, wrong)
            while refused:  # a lock still running (a slow machine): wait it out, never guess a duration
                await anyio.sleep(_retry_in(body["error"]) + 0.05)
                refused, body = await _verify(insurance, wrong)
            assert body["factors"]["ssn_last4"] == "no match"
            refused, body = await _verify(insurance, wrong)
            assert refused, body
            locks.append(_lock_seconds(body["error"]))
        return locks

    assert anyio.run(main) == [5, 10, 20]


def test_a_client_spraying_guesses_over_records_is_locked_but_another_client_is_not(insurance):
    records = ["CUS-900002", "CUS-900004", "CUS-900005"] * 2

    async def main():
        for record in records:  # 6 failures over 3 records (none reaches its own limit of 3): the client's limit
            refused, body = await _verify(insurance, {"customer_id": record, "date_of_birth": "1900-01-01"}, token=TOKEN_B)
            assert not refused and body["factors"]["date_of_birth"] == "no match", body
        refused, body = await _verify(insurance, LUCIA, token=TOKEN_B)
        assert refused and "locked for this client after 6 failed attempts" in body["error"], body
        refused, body = await _verify(insurance, LUCIA, token=TOKEN_A)  # the other token is another client
        assert not refused and body["verification_level"] == "full", body

    anyio.run(main)


def test_the_gymnasium_env_keeps_its_per_episode_rule():
    """In process there is no server: a new episode starts with a clean count, as the conversation's rule says."""
    env = tb.make("insurance/IN001_001")
    try:
        for _ in range(2):
            env.reset(seed=0)
            for attempt in range(3):
                obs, *_ = env.step({"name": "verify_identity", "arguments": {**HARRIET, "ssn_last4": f"000{attempt}"}})
                assert "no match" in obs["messages"][-1]["content"]
            obs, *_ = env.step({"name": "verify_identity", "arguments": {**HARRIET, "ssn_last4": "4821"}})
            assert "locked for this conversation" in obs["messages"][-1]["content"]
    finally:
        env.close()


def test_identity_guard_backoff_is_exponential_capped_and_counts_checks_in_flight():
    now = [0.0]
    guard = IdentityGuard(identity_failures=3, client_failures=0, backoff=10, backoff_max=50, clock=lambda: now[0])
    assert [guard.wait_after(n, 3) for n in range(2, 8)] == [0, 10, 20, 40, 50, 50]
    for _ in range(3):  # three checks admitted at once: a fourth waits for them, it does not slip past the count
        assert guard.begin("verify_identity", "CUS-1", "c") is None
    assert "locked" in (guard.begin("verify_identity", "CUS-1", "c") or "")
    for _ in range(3):
        guard.finish("verify_identity", "CUS-1", "c", failed=True)
    assert guard.state("verify_identity", "CUS-1") == {"failures": 3, "locked_s": 10}
    now[0] = 10.0
    assert guard.begin("verify_identity", "CUS-1", "c") is None
    with pytest.raises(ValueError, match="backoff maximum"):
        IdentityGuard(backoff=10, backoff_max=5)


def test_a_flood_of_made_up_records_never_evicts_a_locked_one(monkeypatch):
    from thinkingbox_env.serving import limits

    monkeypatch.setattr(limits, "MAX_TRACKED", 50)
    now = [0.0]
    guard = IdentityGuard(identity_failures=3, client_failures=0, backoff=10, backoff_max=50, clock=lambda: now[0])
    for _ in range(3):
        assert guard.begin("verify_identity", "CUS-1", "victim") is None
        guard.finish("verify_identity", "CUS-1", "victim", failed=True)
    for i in range(500):  # made-up ids, each checked once: the table stays bounded
        assert guard.begin("verify_identity", f"CUS-FAKE-{i}", "flooder") is None
        guard.finish("verify_identity", f"CUS-FAKE-{i}", "flooder", failed=False)
    assert len(guard._records) <= 50
    assert guard.state("verify_identity", "CUS-1")["failures"] == 3
    assert "locked" in (guard.begin("verify_identity", "CUS-1", "victim") or "")


def _request_from(server, source: str, method, path, body=None, headers=None, token=TOKEN_A):
    """A raw request from another loopback address (the same machine, another peer)."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60, source_address=(source, 0))
    try:
        hdrs = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **(headers or {})}
        hdrs["Authorization"] = f"Bearer {token}"
        conn.request(method, path, body=json.dumps(body) if body is not None else None, headers=hdrs)
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read().decode()
    finally:
        conn.close()


# --------------------------------------------------------------------------- fairness


def _handshake(server, token):
    status, headers, text = _request(server, "POST", "/mcp", _rpc("initialize", {
        "protocolVersion": LEGACY_VERSION, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}), token=token)
    sid = {k.lower(): v for k, v in headers.items()}.get("mcp-session-id")
    return status, sid, text


def _close(server, sid, token):
    _request(server, "DELETE", "/mcp", headers={"mcp-session-id": sid, "mcp-protocol-version": LEGACY_VERSION}, token=token)


def test_one_client_cannot_take_every_episode_slot():
    srv = HttpServer("retail/ST030_001", extra=["--max-episodes", "4", "--token", TOKEN_B])
    held: list[tuple[str, str]] = []
    try:
        for _ in range(2):  # the default share: half of --max-episodes
            status, sid, text = _handshake(srv, TOKEN_A)
            assert status == 200, text
            held.append((sid, TOKEN_A))
        status, sid, text = _handshake(srv, TOKEN_A)
        message = json.loads(text)["error"]["message"]
        assert status == 429 and sid is None and "--max-episodes-per-client 2" in message, text
        for _ in range(2):  # room is left for another client
            status, sid, text = _handshake(srv, TOKEN_B)
            assert status == 200, text
            held.append((sid, TOKEN_B))
        assert {s["client"] for s in _operator(srv, "GET", "/operator/sessions")[1]["sessions"]} == {"token 1", "token 2"}
    finally:
        for sid, token in held:
            _close(srv, sid, token)
        srv.close()


def test_a_client_is_its_token_not_its_peer_address():
    """The same token from another loopback address is the same client: its share is not doubled."""
    srv = HttpServer("retail/ST030_001", extra=["--max-episodes", "6", "--max-episodes-per-client", "2"])
    held: list[str] = []
    try:
        for _ in range(2):
            status, sid, text = _handshake(srv, TOKEN_A)
            assert status == 200, text
            held.append(sid)
        status, headers, text = _request_from(srv, "127.0.0.2", "POST", "/mcp", _rpc("initialize", {
            "protocolVersion": LEGACY_VERSION, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}))
        assert status == 429 and "--max-episodes-per-client 2" in json.loads(text)["error"]["message"], text
        assert {s["client"] for s in _operator(srv, "GET", "/operator/sessions")[1]["sessions"]} == {"token 1"}
    finally:
        for sid in held:
            _close(srv, sid, TOKEN_A)
        srv.close()


def test_a_session_answers_only_its_owner():
    """Another token naming a live session id gets the answer an unknown id gets, and can neither use nor close it."""
    srv = HttpServer("retail/ST030_001", extra=["--max-episodes", "4", "--token", TOKEN_B])
    try:
        status, sid, text = _handshake(srv, TOKEN_A)
        assert status == 200, text
        _request(srv, "POST", "/mcp", _rpc("notifications/initialized", id_=None),
                 {"mcp-session-id": sid, "mcp-protocol-version": LEGACY_VERSION}, token=TOKEN_A)
        call = _rpc("tools/call", {"name": "update_membership", "arguments": {"customer_id": "CUS-3000001", "action": "upgrade"}})
        headers = {"mcp-session-id": sid, "mcp-protocol-version": LEGACY_VERSION}
        made_up = {"mcp-session-id": "x" * len(sid), "mcp-protocol-version": LEGACY_VERSION}
        before = _operator(srv, "GET", f"/operator/sessions/{sid}/diff")[1]
        for method, body in (("POST", call), ("GET", None), ("DELETE", None)):
            theirs = _request(srv, method, "/mcp", body, headers, token=TOKEN_B)
            unknown = _request(srv, method, "/mcp", body, made_up, token=TOKEN_B)
            assert theirs[0] == unknown[0] == 404, (method, theirs)
            assert json.loads(theirs[2])["error"]["message"].replace(sid[:40], "ID") == \
                json.loads(unknown[2])["error"]["message"].replace(("x" * len(sid))[:40], "ID")
        sessions = _operator(srv, "GET", "/operator/sessions")[1]["sessions"]
        assert [s["session"] for s in sessions] == [sid]  # still open, nothing written
        assert _operator(srv, "GET", f"/operator/sessions/{sid}/diff")[1] == before  # the other token's call wrote nothing
        status, _, text = _request(srv, "POST", "/mcp", call, headers, token=TOKEN_A)
        assert status == 200, text  # the owner still works
        _close(srv, sid, TOKEN_A)
    finally:
        srv.close()


def test_a_bare_handshake_session_expires_long_before_the_idle_timeout():
    srv = HttpServer("retail/ST030_001", extra=["--max-episodes", "2", "--max-episodes-per-client", "2",
                                                "--first-call-timeout", "1"])
    try:
        status, bare, _ = _handshake(srv, TOKEN_A)
        assert status == 200

        async def working():
            async with _client(srv) as client:
                await client.call_tool("get_customer_profile", {"customer_id": "CUS-3000001"})
                for _ in range(300):  # until the server has dropped the bare session (each request runs the expiry)
                    listed = {s["session"] for s in _operator(srv, "GET", "/operator/sessions")[1]["sessions"]}
                    if bare not in listed:
                        break
                    await anyio.sleep(0.1)
                await anyio.sleep(1.2)  # longer than the first-call timeout, far below the 30-minute idle timeout
                result = await client.call_tool("get_customer_profile", {"customer_id": "CUS-3000001"})
                return listed, result.is_error

        listed, failed = anyio.run(working)
        assert bare not in listed and not failed  # the session that called survives the same wait
        status, _, text = _request(srv, "POST", "/mcp", _rpc("tools/list"),
                                   {"mcp-session-id": bare, "mcp-protocol-version": LEGACY_VERSION})
        assert status == 404 and "without a tool call" in json.loads(text)["error"]["message"], text
        status, sid, text = _handshake(srv, TOKEN_A)  # its slot is free again
        assert status == 200, text
        _close(srv, sid, TOKEN_A)
    finally:
        srv.close()


# --------------------------------------------------------------------------- concurrency

RENDEZVOUS_TOOL = '''

@tool
def rendezvous(db: ToolContext, name: str, wait_for: str, patience: float) -> dict:
    """Record that this call started, wait up to ``patience`` seconds for another call's start, record the end.

    Args:
        name: This call's name.
        wait_for: The name of the call to wait for.
        patience: Seconds to wait.
    """
    import os
    import time
    from pathlib import Path

    log = Path(os.environ["TB_RENDEZVOUS_LOG"])

    def mark(event: str) -> None:
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(event + "\\n")

    mark(f"{name} start")
    deadline = time.monotonic() + patience
    seen = False
    while time.monotonic() < deadline and not seen:
        seen = f"{wait_for} start" in log.read_text().splitlines()
        time.sleep(0.01)
    mark(f"{name} end")
    return {"name": name, "saw": seen}
'''


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    """The library test domain with one tool that makes calls meet (or fail to), served over HTTP."""
    root = tmp_path_factory.mktemp("tb")
    shutil.copytree(DATA / "domains", root / "domains")
    shutil.copytree(DATA / "task_specs", root / "task_specs")
    tools = root / "domains" / "library" / "tools.py"
    tools.write_text(tools.read_text() + RENDEZVOUS_TOOL)
    log = root / "events.log"
    log.write_text("")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("THINKINGBOX_PATH", str(root))
        mp.setenv("TB_RENDEZVOUS_LOG", str(log))
        srv = HttpServer("library/LB001_001")
    srv.log = log
    yield srv
    srv.close()


def _events(server, names):
    return [e for e in server.log.read_text().splitlines() if e.split()[0] in names]


def test_slow_calls_of_two_sessions_overlap(library):
    async def main():
        results = {}

        async def call(name, other):
            async with _client(library) as client:
                result = await client.call_tool("rendezvous", {"name": name, "wait_for": other, "patience": 60})
                results[name] = json.loads(_text(result))

        async with anyio.create_task_group() as tg:
            tg.start_soon(call, "a", "b")
            tg.start_soon(call, "b", "a")
        return results

    results = anyio.run(main)
    assert results["a"]["saw"] and results["b"]["saw"], results  # each call ran while the other was running
    events = _events(library, ("a", "b"))
    assert events.index("a start") < events.index("b end") and events.index("b start") < events.index("a end"), events


def test_one_sessions_calls_run_one_at_a_time_in_arrival_order(library):
    async def main():
        results = {}
        async with _client(library) as client:

            async def call(name, other):
                result = await client.call_tool("rendezvous", {"name": name, "wait_for": other, "patience": 1.5})
                results[name] = json.loads(_text(result))

            async with anyio.create_task_group() as tg:
                tg.start_soon(call, "first", "second")
                for _ in range(600):  # send the second only once the first is running on the server
                    if "first start" in library.log.read_text():
                        break
                    await anyio.sleep(0.01)
                tg.start_soon(call, "second", "nobody")
        return results

    results = anyio.run(main)
    assert not results["first"]["saw"], results  # the second call did not start while the first ran
    assert _events(library, ("first", "second")) == ["first start", "first end", "second start", "second end"]


def test_an_expired_sessions_open_stream_is_ended_with_it():
    """A session the host lets go (no tool call within the first-call timeout) loses its MCP transport too: the
    server ends it as a client would, with the protocol's DELETE, so the stream the client holds open closes at once
    instead of at the transport's 30-minute idle timeout."""
    import time

    srv = HttpServer("retail/ST030_001", extra=["--first-call-timeout", "1"])
    try:
        status, sid, text = _handshake(srv, TOKEN_A)
        assert status == 200, text
        conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10)
        conn.request("GET", "/mcp", headers={"Accept": "text/event-stream", "Authorization": f"Bearer {TOKEN_A}",
                                             "mcp-session-id": sid, "mcp-protocol-version": LEGACY_VERSION})
        stream = conn.getresponse()
        assert stream.status == 200
        time.sleep(1.5)  # past the first-call timeout
        status, other, text = _handshake(srv, TOKEN_A)  # any request on the endpoint runs the expiry
        assert status == 200, text
        try:
            stream.read()  # returns when the server ends the stream; a stream left open runs into the socket timeout
        except TimeoutError as exc:
            raise AssertionError("the expired session's stream was left open") from exc
        finally:
            conn.close()
        _close(srv, other, TOKEN_A)
    finally:
        srv.close()
