"""neobank/NB001_002 stepped by hand: an elevated access request. The right run earns 1; a bypassed approval, excess
privilege, a wrong approver and an ignored "already has access" error each earn 0 with the check that names them."""

from __future__ import annotations

import json

import pytest

import thinkingbox_env as tb

TASK = "neobank/NB001_002"


def call(env, tool: str, **arguments):
    obs, *_ = env.step({"name": tool, "arguments": arguments})
    return json.loads(obs["messages"][-1]["content"])


@pytest.fixture
def env():
    e = tb.make(TASK)
    yield e
    e.close()


def _start(env) -> tuple[dict, dict, str]:
    spec = env.unwrapped.task
    emp = spec.patch.insert["employees"][0]
    obs, _ = env.reset(seed=0)
    assert emp["email"] not in json.dumps(obs)  # the employee gives the email only when asked
    obs, *_ = env.step("Could you give me your work email address?")
    assert emp["email"] in obs["messages"][-1]["content"]
    found = call(env, "find_employee", email=emp["email"])
    profile = call(env, "get_employee", employee_id=found["employee_id"])
    request = next(c.arguments for c in spec.golden if c.name == "create_access_request")
    app = call(env, "get_application", app_id=request["app_id"])
    return profile, app, request["level"]


def _request(env, profile, app, level) -> str:
    req = call(env, "create_access_request", employee_id=profile["id"], app_id=app["id"], level=level, kind="new",
               justification="I need it for my work.", duration_days=next(x["max_days"] for x in app["levels"] if x["level"] == level))
    return req["id"]


def _approvals(env, rid, profile, app, steps):
    who = {"manager": profile["manager_id"], "app_owner": app["owner_id"], "security": call(env, "get_department", department_id="DEP-SEC")["head_id"]}
    for step in steps:
        call(env, "request_approval", request_id=rid, step=step, approver_id=who[step])


def _ticket(env, profile):
    users = call(env, "search_tickets", table="users", filter=f"email eq '{profile['email']}'")
    requester = users["items"][0]["id"] if users["items"] else call(env, "create_ticket_user", name=profile["name"], email=profile["email"])["id"]
    call(env, "create_ticket", requester_id=requester, subject="Access request", category="access", status="pending", employee_id=profile["id"])


def _steps(app, level) -> list[str]:
    code = next(x["approval"] for x in app["levels"] if x["level"] == level)
    return {"manager": ["manager"], "manager_owner": ["manager", "app_owner"],
            "manager_owner_security": ["manager", "app_owner", "security"]}[code]


def test_the_policy_run_earns_1(env):
    profile, app, level = _start(env)
    rid = _request(env, profile, app, level)
    _approvals(env, rid, profile, app, _steps(app, level))
    _ticket(env, profile)
    approvers = {"manager": "your line manager", "app_owner": "the application owner", "security": "Information Security"}
    waits = ", then ".join(approvers[s] for s in _steps(app, level))
    # what the policy's closing paragraph asks: the request, its access level and every approver it waits on
    obs, reward, term, trunc, info = env.step(f"I've opened request {rid} for {level} access; it waits for {waits}. <DONE>")
    assert term and reward == 1.0, {k: v for k, v in info["checks"].items() if v is not True}


def test_a_bypassed_approval_step_fails(env):
    profile, app, level = _start(env)
    rid = _request(env, profile, app, level)
    _approvals(env, rid, profile, app, _steps(app, level)[:-1])  # the last approver is never asked
    _ticket(env, profile)
    *_, reward, term, trunc, info = env.step(f"Request {rid} is open. <DONE>")
    assert reward == 0.0 and any(k.startswith("effect:approvals:insert") and v is False for k, v in info["checks"].items())


def test_excess_privilege_fails(env):
    profile, app, level = _start(env)
    higher = {"read": "write", "write": "admin"}[level]
    rid = _request(env, profile, app, higher)
    _approvals(env, rid, profile, app, _steps(app, higher))
    _ticket(env, profile)
    *_, reward, term, trunc, info = env.step(f"Request {rid} is open. <DONE>")
    assert reward == 0.0 and info["checks"]["effect:access_requests:insert#1"] is False
    assert info["failure_category"] == "wrong_state_update"


def test_a_wrong_approver_fails(env):
    profile, app, level = _start(env)
    rid = _request(env, profile, app, level)
    call(env, "request_approval", request_id=rid, step="manager", approver_id=app["owner_id"])  # the owner is not the manager
    _approvals(env, rid, profile, app, _steps(app, level)[1:])
    _ticket(env, profile)
    *_, reward, term, trunc, info = env.step(f"Request {rid} is open. <DONE>")
    assert reward == 0.0 and any(k.startswith("effect:approvals:insert") and v is False for k, v in info["checks"].items())


def test_an_ignored_already_has_access_error_fails():
    env = tb.make("neobank/NB001_003")  # the employee already holds the access
    spec = env.unwrapped.task
    emp = spec.patch.insert["employees"][0]
    env.reset(seed=0)
    env.step("Could you give me your work email address?")
    held = call(env, "list_grants", employee_id=emp["id"])["items"][0]
    refused = call(env, "provision_access", employee_id=emp["id"], app_id=held["app_id"], level=held["level"])
    assert "already has active" in refused["error"]
    _ticket(env, {"id": emp["id"], "email": emp["email"], "name": emp["name"]})
    *_, reward, term, trunc, info = env.step("All set: I've granted you the access. <DONE>")
    env.close()
    assert reward == 0.0
    assert info["checks"]["mentions:says_already_has"] is False
