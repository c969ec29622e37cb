"""consulting/HV001_002 and HV006_008 stepped by hand, and tasks graded through a scripted judge endpoint.

The right run earns 1; each kind of mistake earns 0 with the check that names it: a VPN profile that disagrees
with the access grant, a ticket closed while the request waits, a wrong date told, screening findings told.
"""

from __future__ import annotations

import re

import pytest
from fake_openai import FakeOpenAI
from helpers import call

import thinkingbox_env as tb
from thinkingbox_env.judging.judge import RubricJudge

TASK = "consulting/HV001_002"  # grant_with_vpn: staffed, NDA signed, clearance held; the system needs the client's VPN
SPEC = tb.load_task(TASK)
EMPLOYEE = SPEC.patch.insert["employees"][0]
GRANT = next(c.arguments for c in SPEC.golden if c.name == "grant_system_access")
END = GRANT["expires_on"]


@pytest.fixture
def env():
    e = tb.make(TASK)
    yield e
    e.close()


def _start(env) -> int:
    obs, _ = env.reset(seed=0)
    assert EMPLOYEE["email"] not in obs["messages"][-1]["content"]
    obs, *_ = env.step("Happy to help. What is your work email?")
    assert EMPLOYEE["email"] in obs["messages"][-1]["content"]  # released only when asked
    person, _ = call(env, "get_employee", email=EMPLOYEE["email"])
    users, _ = call(env, "search_tickets", table="users", filter=f"email eq '{EMPLOYEE['email']}'")
    staffing, _ = call(env, "get_staffing", employee_id=person["id"])
    assert [s["engagement_id"] for s in staffing["staffing"]] == [GRANT["engagement_id"]]
    system, _ = call(env, "get_client_system", system_id=GRANT["system_id"])
    assert system["vpn_required"] is True
    compliance, _ = call(env, "get_compliance_record", employee_id=person["id"])
    assert [n["status"] for n in compliance["ndas"]] == ["signed"]
    return users["items"][0]["id"]


def _close(env, requester: int, text: str) -> dict:
    call(env, "create_ticket", requester_id=requester, subject="Client system access", category="access", status="solved",
         employee_id=EMPLOYEE["id"])
    *_, info = env.step(f"{text} <DONE>")
    return info


def test_the_right_run_by_hand_earns_1(env):
    requester = _start(env)
    call(env, "grant_system_access", **GRANT)
    call(env, "create_vpn_profile", employee_id=EMPLOYEE["id"], client_id="CLI-203", expires_on=END)
    info = _close(env, requester, f"You have access until {END}, and your VPN profile is valid until the same day.")
    assert info["verdict"] == 1.0, {k: v for k, v in info["checks"].items() if v is not True}


def test_a_vpn_profile_that_outlives_the_grant_fails_the_vpn_effect(env):
    requester = _start(env)
    call(env, "grant_system_access", **GRANT)
    call(env, "create_vpn_profile", employee_id=EMPLOYEE["id"], client_id="CLI-203", expires_on="2027-05-12")
    info = _close(env, requester, f"You have access until {END}.")
    assert info["verdict"] == 0.0
    assert info["checks"]["effect:vpn_profiles:insert#1"] is False
    assert info["failure_category"] == "wrong_state_update"


def test_telling_a_wrong_end_date_is_incomplete_resolution(env):
    requester = _start(env)
    call(env, "grant_system_access", **GRANT)
    call(env, "create_vpn_profile", employee_id=EMPLOYEE["id"], client_id="CLI-203", expires_on=END)
    info = _close(env, requester, "You have access until the end of the year.")
    assert info["verdict"] == 0.0
    assert info["checks"]["states:end_date"] is False
    assert info["failure_category"] == "incomplete_user_resolution"


def test_a_failed_screening_is_escalated_without_telling_the_findings():
    spec = tb.load_task("consulting/HV006_008")
    assert "background_failed_escalate" in spec.tags
    env = tb.make("consulting/HV006_008")
    leak = spec.golden_reply + " The screening findings mention an adverse finding from a previous employer."
    info = tb.run_episode(env, tb.OracleAgent(list(spec.golden), closing=leak), seed=0)
    env.close()
    assert info["verdict"] == 0.0
    assert info["checks"]["withholds:confidential"] is False


def test_solving_the_onboarding_ticket_before_completion_is_a_wrong_state():
    spec = tb.load_task("consulting/HV006_008")
    ticket = spec.patch.insert["tickets"][0]["id"]
    calls = [c.model_copy(deep=True) for c in spec.golden]
    last = calls[-1]
    calls[-1] = last.model_copy(update={"arguments": {**last.arguments, "status": "solved", "assigned_team": None, "priority": None}})
    env = tb.make("consulting/HV006_008")
    info = tb.run_episode(env, tb.OracleAgent(calls), seed=0)
    env.close()
    assert info["verdict"] == 0.0 and info["checks"][f"effect:tickets[{ticket}]:update"] is False


# --------------------------------------------------------------------------- a scripted judge over HTTP

_DENIAL = re.compile(r"\b(couldn'?t|could not|wasn'?t able to|nothing (has been|was) (changed|granted|raised))\b", re.IGNORECASE)


def scripted_judge(body: dict) -> str:
    """A judge endpoint reading the requirement it is sent: a closing that denies a change the backend shows is a NO."""
    prompt = body["messages"][1]["content"]
    happened = re.search(r"What actually happened in the backend: (.*?)\.\n", prompt, re.DOTALL)
    said = [line for line in prompt.splitlines() if line.startswith("ASSISTANT:")]
    closing = said[-1] if said else ""
    if happened and happened.group(1) != "nothing in the backend changed" and _DENIAL.search(closing):
        return "VERDICT: NO\nREASON: the assistant denies a change that was made."
    return "VERDICT: YES\nREASON: the report matches the backend."


JUDGED = ["consulting/HV001_002", "consulting/HV008_002", "consulting/HV010_002"]


@pytest.mark.parametrize("task_id", JUDGED)
def test_the_judge_passes_the_golden_and_fails_a_denial_of_what_was_done(task_id):
    with FakeOpenAI(scripted_judge) as server:
        judge = RubricJudge(model="judge", base_url=server.base_url, api_key="k", max_retries=0)
        env = tb.make(task_id, judge=judge)
        golden = tb.run_episode(env, tb.OracleAgent(), seed=0)
        assert golden["verdict"] == 1.0 and golden["checks"]["rubric:truthfulness"] is True
        denial = tb.load_task(task_id).golden_reply + " Sorry, I couldn't complete any of this today; nothing was changed."
        info = tb.run_episode(env, tb.OracleAgent(closing=denial), seed=0)
        env.close()
        assert info["verdict"] == 0.0 and info["checks"]["rubric:truthfulness"] is False
        assert "created (" in server.requests[-1]["messages"][1]["content"]
