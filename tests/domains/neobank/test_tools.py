"""Tidewell tools: what each backend enforces (its invariants), what it leaves to the agent, and policy search."""

from __future__ import annotations

import json

import pytest

import thinkingbox_env as tb
from thinkingbox_env.tasks.domain import load_domain

DOMAIN = load_domain("neobank")


def call(env, tool: str, **arguments):
    """Step one tool call by hand and return its parsed result."""
    obs, *_ = env.step({"name": tool, "arguments": arguments})
    return json.loads(obs["messages"][-1]["content"])


@pytest.fixture
def env():
    e = tb.make("neobank/NB001_002")  # an elevated request: a fresh employee with role defaults, nothing pending
    e.reset(seed=0)
    yield e
    e.close()


def _employee(env) -> dict:
    return env.unwrapped.task.patch.insert["employees"][0]


def test_the_three_systems_have_their_tables_and_tools():
    tools = {n: t for n, t in DOMAIN.toolbox.tools.items() if n != "end_conversation"}
    assert len(DOMAIN.db.tables) == 24
    assert len(tools) == 43 and sum(t.writes for t in tools.values()) == 19  # report_injection included
    for name in ("find_employee", "get_employee", "get_department", "get_application", "list_grants", "get_incident", "list_stock",
                 "get_licence_pool", "search_knowledge_base", "search_tickets"):
        assert not tools[name].writes
    assert DOMAIN.toolbox["create_access_request"].free_text_arguments == {"justification"}


def test_a_second_active_grant_is_refused_and_changes_nothing(env):
    emp = _employee(env)
    held = env.unwrapped.task.patch.insert["access_grants"][0]
    before = call(env, "list_grants", employee_id=emp["id"])
    result = call(env, "provision_access", employee_id=emp["id"], app_id=held["app_id"], level="admin")
    assert "already has active" in result["error"] and held["id"] in result["error"]
    assert call(env, "list_grants", employee_id=emp["id"]) == before


def test_provisioning_waits_for_every_approval(env):
    emp = _employee(env)
    req = call(env, "create_access_request", employee_id=emp["id"], app_id="APP-LEDGER", level="read", kind="new", justification="reports")
    call(env, "request_approval", request_id=req["id"], step="manager", approver_id=emp["manager_id"])
    again = call(env, "request_approval", request_id=req["id"], step="manager", approver_id=emp["manager_id"])
    assert "already been requested" in again["error"]
    refused = call(env, "provision_access", employee_id=emp["id"], app_id="APP-LEDGER", level="read", request_id=req["id"])
    assert "pending_approval" in refused["error"] and "manager" in refused["error"]


def test_the_backend_leaves_policy_to_the_agent(env):
    """A bypassed approval succeeds at the tool level; only the task's checks catch it."""
    emp = _employee(env)
    spec = env.unwrapped.task
    app = next(c.arguments["app_id"] for c in spec.golden if c.name == "create_access_request")
    refused = call(env, "provision_access", employee_id=emp["id"], app_id=app, level="admin")
    assert "approved access request" in refused["error"]  # admin without a request is a data-integrity refusal
    grant = call(env, "provision_access", employee_id=emp["id"], app_id=app, level="write")
    assert grant["source"] == "role_default" and grant["level"] == "write"
    obs, reward, *_, info = env.step("Granted. <DONE>")
    assert reward == 0.0 and info["checks"]["no_collateral"] is False


def test_emergency_access_expires_after_its_hours_and_stays_on_its_application():
    env = tb.make("neobank/NB005_001")
    env.reset(seed=0)
    spec = env.unwrapped.task
    inc = spec.patch.insert["incidents"][0]
    emp = spec.patch.insert["employees"][0]["id"]
    other = next(a for a in ("APP-LEDGER", "APP-PAYHUB", "APP-K8S") if a != inc["app_id"])
    wrong = call(env, "grant_emergency_access", employee_id=emp, app_id=other, incident_id=inc["id"], level="write", hours=2)
    assert f"is on {inc['app_id']}" in wrong["error"]
    too_long = call(env, "grant_emergency_access", employee_id=emp, app_id=inc["app_id"], incident_id=inc["id"], level="write", hours=30)
    assert "error" in too_long
    grant = call(env, "grant_emergency_access", employee_id=emp, app_id=inc["app_id"], incident_id=inc["id"], level="write", hours=8)
    assert grant["expires_at"].startswith("2026-09-14T18:00") and grant["source"] == "emergency"
    env.close()


def test_identity_checks_lock_after_three_failures_and_reveal_no_factor():
    env = tb.make("neobank/NB004_001")
    env.reset(seed=0)
    emp = env.unwrapped.task.patch.insert["employees"][0]
    profile = call(env, "get_employee", employee_id=emp["id"])
    assert "badge_number" not in profile and "date_of_birth" not in profile
    for _ in range(3):
        assert call(env, "verify_identity", employee_id=emp["id"], badge_number="B000000", date_of_birth="1990-01-01")["status"] == "failed"
    locked = call(env, "verify_identity", employee_id=emp["id"], badge_number=emp["badge_number"], date_of_birth=emp["date_of_birth"])
    assert "locked" in locked["error"]
    env.close()


def test_assets_and_licences_keep_their_invariants():
    env = tb.make("neobank/NB008_003")  # a full pool with an idle seat
    env.reset(seed=0)
    spec = env.unwrapped.task
    emp = spec.patch.insert["employees"][0]["id"]
    sw = next(c.arguments["software_id"] for c in spec.golden if c.name == "get_licence_pool")
    full = call(env, "assign_licence", software_id=sw, employee_id=emp)
    assert "no free seat" in full["error"]
    pool = call(env, "get_licence_pool", software_id=sw)
    assert pool["seats_used"] == pool["seats_total"]
    idle = pool["assignments"][0]["id"]  # never or least recently used first
    call(env, "release_licence", assignment_id=idle)
    assert "already released" in call(env, "release_licence", assignment_id=idle)["error"]
    seat = call(env, "assign_licence", software_id=sw, employee_id=emp)
    assert seat["status"] == "active"
    assert "already holds" in call(env, "assign_licence", software_id=sw, employee_id=emp)["error"]
    laptop = call(env, "list_assets", employee_id="EMP-10021")["items"][0]["id"]
    assert "only in-stock assets" in call(env, "assign_asset", asset_id=laptop, employee_id=emp)["error"]
    env.close()


def test_policy_search_reads_this_domains_knowledge_base(env):
    result = call(env, "search_knowledge_base", query="break-glass emergency production access SEV1", top_k=2)
    text = json.dumps(result)
    assert "emergency" in text.lower() and "8 hours" in text
