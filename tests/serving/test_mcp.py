"""The MCP server and the MCP tool backend, with the real `mcp` client over stdio and HTTP."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import urllib.error
import urllib.request

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_helpers import HttpServer

import thinkingbox_env as tb
from thinkingbox_env.serving.backend import MCPBackendError, MCPToolBackend, OperatorClient
from thinkingbox_env.tasks.runtime import runtime_for


@pytest.fixture(scope="module")
def server():
    srv = HttpServer("retail/ST030_001", extra=["--max-episodes-per-client", "64"])
    yield srv
    srv.close()


def _stdio_params(target="retail/ST030_001"):
    return StdioServerParameters(command=sys.executable, args=["-m", "thinkingbox_env.cli", "serve", target, "--transport", "stdio"])


def _http_client(server, token="agent-token-for-tests"):
    headers = {"Authorization": f"Bearer {token}"} if token else None
    return Client(streamable_http_client(server.url, http_client=create_mcp_http_client(headers=headers)), mode="legacy")


async def _exercise(client):
    listed = await client.list_tools()
    ok = await client.call_tool("get_customer_profile", {"customer_id": "CUS-3000001"})
    bad = await client.call_tool("get_ticket", {"ticket_id": "not a number"})
    unknown = await client.call_tool("drop_everything", {})
    return listed, ok, bad, unknown


def _check_exercise(listed, ok, bad, unknown):
    env = tb.make("retail/ST030_001")
    expected = {s["function"]["name"]: s["function"] for s in env.tool_schemas}
    assert {t.name for t in listed.tools} == set(expected)
    for t in listed.tools:
        assert t.description == expected[t.name]["description"]
        assert t.input_schema == expected[t.name]["parameters"]
    assert not ok.is_error and json.loads(ok.content[0].text)["name"] == "Anders Achterberg"
    assert bad.is_error and "argument 'ticket_id'" in json.loads(bad.content[0].text)["error"]
    assert unknown.is_error and "unknown tool 'drop_everything'" in json.loads(unknown.content[0].text)["error"]


def test_stdio_list_call_and_error_with_the_real_client():
    async def main():
        async with Client(_stdio_params(), mode="legacy") as client:
            return await _exercise(client)

    _check_exercise(*anyio.run(main))


def test_http_list_call_and_error_with_the_real_client(server):
    async def main():
        async with _http_client(server) as client:
            return await _exercise(client)

    _check_exercise(*anyio.run(main))


def test_operator_tools_are_never_listed_to_the_agent(server):
    async def main():
        async with _http_client(server) as client:
            return [t.name for t in (await client.list_tools()).tools]

    names = anyio.run(main)
    assert not any(word in n for n in names for word in ("reset", "verdict", "diff", "golden", "operator", "check"))


def _get(url, token=None):
    req = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def test_requests_without_the_agent_token_are_refused(server):
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}).encode()
    req = urllib.request.Request(server.url, data=body, headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(req, timeout=10)
    assert err.value.code == 401

    async def main():
        async with _http_client(server, token="wrong-token") as client:
            await client.list_tools()

    with pytest.raises(Exception):  # noqa: B017 - the client wraps the 401 in a transport-specific error
        anyio.run(main)


def test_operator_api_needs_the_operator_token(server):
    assert _get(server.base + "/operator/sessions")[0] == 401
    assert _get(server.base + "/operator/sessions", token="agent-token-for-tests")[0] == 401  # the agent's token opens nothing here
    status, body = _get(server.base + "/operator/sessions", token="operator-token-for-tests")
    assert status == 200 and "sessions" in body


def test_binding_beyond_loopback_requires_a_token():
    out = subprocess.run([sys.executable, "-m", "thinkingbox_env.cli", "serve", "retail", "--transport", "http", "--host", "0.0.0.0"],
                         capture_output=True, text=True, timeout=60, env={**__import__("os").environ, "THINKINGBOX_MCP_TOKEN": ""})
    assert out.returncode == 2
    assert "--token" in out.stderr


def test_32_concurrent_sessions_never_see_each_others_writes(server):
    results, errors = {}, []

    def worker(i):
        try:
            backend = MCPToolBackend.http(server.url, operator_token="operator-token-for-tests", token="agent-token-for-tests")
            env = tb.make("retail/ST030_001", tool_backend=backend)
            env.reset(seed=i)
            created = json.loads(env.step({"name": "create_ticket", "arguments": {"requester_id": 3000001, "subject": f"session {i}", "category": "general"}})[0]["messages"][-1]["content"])
            env.step({"name": "update_membership", "arguments": {"customer_id": "CUS-3000001", "action": "upgrade"}})
            seen = json.loads(env.step({"name": "search_tickets", "arguments": {"table": "tickets", "filter": "requester_id eq 3000001"}})[0]["messages"][-1]["content"])
            outcome = backend.outcome()
            results[i] = (created["id"], [t["subject"] for t in seen["items"]], outcome.diff)
            env.close()
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(32)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:3]
    assert len(results) == 32
    first_id = {r[0] for r in results.values()}
    assert len(first_id) == 1  # every session minted the same first ticket id: nobody saw another's insert
    for i, (_, subjects, diff) in results.items():
        assert subjects == [f"session {i}"]
        assert len(diff["tickets"]["inserted"]) == 1 and diff["tickets"]["inserted"][0]["subject"] == f"session {i}"
        assert len(diff["memberships"]["inserted"]) == 1


def test_oracle_through_serve_matches_in_process_on_every_retail_task():
    backend = MCPToolBackend.stdio("retail")
    remote = tb.make("retail/ST030_001", tool_backend=backend)
    try:
        for task_id in tb.list_tasks("retail"):
            spec = tb.load_task(task_id)
            remote.task, remote.runtime = spec, runtime_for(spec)
            local = tb.make(task_id)
            a = tb.run_episode(remote, tb.OracleAgent(), seed=0)
            b = tb.run_episode(local, tb.OracleAgent(), seed=0)
            local.close()
            for key in ("verdict", "checks", "diff", "state_hash", "trace", "failure_category"):
                assert a[key] == b[key], (task_id, key)
            judged = [n for n in a["checks"] if n.startswith("rubric:")] if spec.checks.rubric else []
            assert a["verdict"] == 1.0 or (judged and all(a["checks"][n] is None for n in judged)), task_id
    finally:
        remote.close()


def test_bad_actions_through_mcp_match_in_process():
    backend = MCPToolBackend.stdio("retail/ST030_001")
    remote, local = tb.make("retail/ST030_001", tool_backend=backend), tb.make("retail/ST030_001")
    try:
        actions = [
            {"name": "get_order", "arguments": '{"order_id": '},
            {"name": "nope", "arguments": {}},
            {"name": 7, "arguments": {}},
            {"name": "get_order", "arguments": {"order_id": ["x"]}},
            {"name": "cancel_order", "arguments": {"order_id": "ORD-20001", "reason": "customer_request"}},
            {"name": "search_tickets", "arguments": {"table": "users", "filter": "email eq 'x' or 1=1"}},
        ]
        remote.reset(seed=0)
        local.reset(seed=0)
        for action in actions:
            assert remote.step(action)[0] == local.step(action)[0], action
    finally:
        remote.close()
        local.close()


ADVERSARIAL = [
    "' OR 1=1 --", "../../task_specs/retail/ST030_001.yaml", "golden", "*", "%", "'; SELECT * FROM information_schema.tables; --",
    "d_retail.tickets", "$(cat /etc/passwd)", "no_collateral", "x" * 5000, "\u0000", "{{golden_reply}}", "1e309",
]


def test_no_agent_facing_tool_reveals_the_golden_outcome_or_the_checks(server):
    spec = tb.load_task("retail/ST030_001")
    golden = runtime_for(spec).golden
    # things only the golden run, the checks or the spec know (none of them appears in the inputs)
    secrets = [golden.hash, spec.golden_reply, "effect:memberships", "effect:tickets", spec.description, *spec.idempotent_writes.values()]
    env = tb.make("retail/ST030_001")
    outputs = []

    async def main():
        async with _http_client(server) as client:
            for schema in env.tool_schemas:
                fn = schema["function"]
                props = fn["parameters"].get("properties", {})
                for bad in ADVERSARIAL:
                    args = {}
                    for name, prop in props.items():
                        text = json.dumps(prop)
                        args[name] = bad if '"string"' in text or not text.strip("{}") else (prop.get("enum", [1])[0] if "enum" in prop else 1)
                    result = await client.call_tool(fn["name"], args)
                    outputs.append(result.content[0].text)

    anyio.run(main)
    assert len(outputs) == len(env.tool_schemas) * len(ADVERSARIAL)
    blob = "\n".join(outputs)
    for secret in secrets:
        assert secret not in blob, secret


def test_operator_client_reports_bad_requests(server):
    op = OperatorClient("operator-token-for-tests", base_url=server.base)
    with pytest.raises(MCPBackendError, match="404"):
        op.outcome("no-such-session")
    with pytest.raises(MCPBackendError, match="unknown task"):
        op.reset("some-session", {"task_id": "retail/NOPE_001"})


def test_idle_sessions_expire():
    import time

    srv = HttpServer("retail/ST030_001", extra=["--idle-timeout", "1"])
    try:
        backend = MCPToolBackend.http(srv.url, operator_token="operator-token-for-tests", token="agent-token-for-tests")
        env = tb.make("retail/ST030_001", tool_backend=backend)
        env.reset(seed=0)
        env.step({"name": "update_membership", "arguments": {"customer_id": "CUS-3000001", "action": "upgrade"}})
        op = OperatorClient("operator-token-for-tests", base_url=srv.base)
        assert [s["session"] for s in op.request("GET", "/operator/sessions")["sessions"]] == [backend.session]
        time.sleep(2.5)
        assert op.request("GET", "/operator/sessions")["sessions"] == []
        with pytest.raises(MCPBackendError, match="404"):
            op.outcome(backend.session)
        env.close()
    finally:
        srv.close()


def test_mcp_client_example_solves_st030_001():
    from pathlib import Path

    example = Path(__file__).resolve().parents[2] / "examples" / "mcp_client.py"
    out = subprocess.run([sys.executable, str(example)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "verdict: 1.0" in out.stdout
    assert "FAIL" not in out.stdout
