"""Consulting tools: what each system of record refuses, what a write changes in the systems it touches, and what the
agent reads. A refusal names the problem and leaves the state exactly as it was."""

from __future__ import annotations

import pytest
from helpers import call, state_hash

import thinkingbox_env as tb
from thinkingbox_env.tasks.domain import load_domain
from thinkingbox_env.toolkit.kb import search_documents

DOMAIN = load_domain("consulting")
EMP = "EMP-1000001"  # HV001_001: staffed on ENG-4102 (Caldera Bank), signed NDA, a VPN profile for CLI-202


@pytest.fixture
def env():
    e = tb.make("consulting/HV001_001")
    e.reset(seed=0)
    yield e
    e.close()


def _refused(env, tool: str, arguments: dict, expected: str) -> None:
    before = state_hash(env)
    obs, *_ = env.step({"name": tool, "arguments": arguments})
    content = obs["messages"][-1]["content"]
    assert "error" in content and expected in content, content
    assert state_hash(env) == before


REFUSALS = [
    ("an unknown employee", "get_employee", {"employee_id": "EMP-999"}, "no employee found"),
    ("access to a system of another client than the engagement's", "grant_system_access",
     {"employee_id": EMP, "system_id": "SYS-501", "engagement_id": "ENG-4102", "expires_on": "2026-07-31"}, "belongs to client CLI-201"),
    ("access that expired before today", "grant_system_access",
     {"employee_id": EMP, "system_id": "SYS-512", "engagement_id": "ENG-4102", "expires_on": "2026-01-31"}, "before today"),
    ("a second VPN profile for the same client", "create_vpn_profile",
     {"employee_id": EMP, "client_id": "CLI-202", "expires_on": "2026-07-31"}, "already has active VPN profile"),
    ("a second NDA while one is signed", "send_nda", {"employee_id": EMP, "client_id": "CLI-202"}, "already has NDA"),
    ("an approval from the requester themselves", "request_approval",
     {"kind": "software", "subject": "SW-IDE", "requester_id": EMP, "approver_id": EMP}, "cannot approve their own"),
    ("an approval for an amount beyond any record", "request_approval",
     {"kind": "software", "subject": "SW-IDE", "requester_id": EMP, "approver_id": "EMP-10011", "amount": 1e9}, "above the limit"),
    ("a licence for engagement-only software without the engagement", "provision_licence", {"employee_id": EMP, "sku": "SW-MODELER"},
     "licensed per engagement"),
    ("a replacement of an asset the employee does not hold", "order_hardware",
     {"employee_id": EMP, "sku": "HW-LAP-STD", "reason": "replacement", "replaces_asset": "AST-1"}, "not assigned to"),
    ("a replacement that names no asset", "order_hardware", {"employee_id": EMP, "sku": "HW-LAP-STD", "reason": "replacement"},
     "names the asset"),
    ("a phase move for someone not onboarding", "advance_onboarding", {"employee_id": EMP, "phase": "accounts"}, "no onboarding record"),
    ("a waitlist entry on a course with seats", "enrol_course", {"employee_id": EMP, "course_code": "CRS-210", "waitlist": True},
     "has free seats"),
    ("a trip that returns before it leaves", "create_travel_request",
     {"employee_id": EMP, "engagement_id": "ENG-4102", "destination": "Lyon", "region": "europe", "depart_on": "2026-06-10",
      "return_on": "2026-06-08", "travel_class": "economy", "estimated_cost": 900.0, "approver_id": "EMP-10001"}, "before depart_on"),
    ("a trip in the past", "create_travel_request",
     {"employee_id": EMP, "engagement_id": "ENG-4102", "destination": "Lyon", "region": "europe", "depart_on": "2026-05-01",
      "return_on": "2026-05-03", "travel_class": "economy", "estimated_cost": 900.0, "approver_id": "EMP-10001"}, "before today"),
    ("a destination with control characters", "create_travel_request",
     {"employee_id": EMP, "engagement_id": "ENG-4102", "destination": "Ly\x1bon", "region": "europe", "depart_on": "2026-06-10",
      "return_on": "2026-06-12", "travel_class": "economy", "estimated_cost": 900.0, "approver_id": "EMP-10001"}, "control characters"),
]


@pytest.mark.parametrize("what, tool, arguments, expected", REFUSALS, ids=[r[0] for r in REFUSALS])
def test_the_backend_refuses_and_changes_nothing(env, what, tool, arguments, expected):
    _refused(env, tool, arguments, expected)


def test_an_approver_on_leave_receives_nothing():
    env = tb.make("consulting/HV004_006")  # the requester's line manager is on leave
    env.reset(seed=0)
    manager = env.unwrapped.task.patch.update[0].key["id"]
    employee = env.unwrapped.task.patch.insert["employees"][0]["id"]
    _refused(env, "request_approval", {"kind": "hardware", "subject": "HW-PHN", "requester_id": employee, "approver_id": manager}, "on leave")
    lookup, _ = call(env, "find_approver", employee_id=employee)
    assert lookup["line_manager"]["status"] == "leave" and lookup["line_manager"]["delegate_id"]
    env.close()


def test_a_grant_and_its_vpn_profile_name_the_same_engagement_end(env):
    grant, _ = call(env, "grant_system_access", employee_id=EMP, system_id="SYS-512", engagement_id="ENG-4102", expires_on="2026-07-31")
    assert grant["status"] == "active" and str(grant["expires_on"]) == "2026-07-31"
    _refused(env, "grant_system_access", {"employee_id": EMP, "system_id": "SYS-512", "engagement_id": "ENG-4102", "expires_on": "2026-07-31"},
             "already has active access")
    access, _ = call(env, "get_access", employee_id=EMP)
    assert [g["system_id"] for g in access["system_grants"]] == ["SYS-512"]
    assert [str(v["expires_on"]) for v in access["vpn_profiles"]] == ["2026-07-31"]


def test_a_folder_grant_is_written_to_the_access_log(env):
    call(env, "grant_folder_access", folder_id="FLD-41021", employee_id=EMP, level="read")
    rows = env.unwrapped.state.rows("access_logs")
    assert [(r["folder_id"], r["employee_id"], r["action"]) for r in rows] == [("FLD-41021", EMP, "grant_read")]
    _refused(env, "grant_folder_access", {"folder_id": "FLD-41021", "employee_id": EMP, "level": "read"}, "already has read access")


def test_a_licence_takes_a_seat_and_a_full_catalogue_refuses():
    env = tb.make("consulting/HV003_006")  # SW-BIVIS has no free seat
    env.reset(seed=0)
    employee = env.unwrapped.task.patch.insert["employees"][0]["id"]
    _refused(env, "provision_licence", {"employee_id": employee, "sku": "SW-BIVIS"}, "no free seats")
    before = call(env, "search_software", query="SW-IDE")[0]["items"][0]["seats_used"]
    call(env, "provision_licence", employee_id=employee, sku="SW-IDE")
    assert call(env, "search_software", query="SW-IDE")[0]["items"][0]["seats_used"] == before + 1
    _refused(env, "provision_licence", {"employee_id": employee, "sku": "SW-IDE"}, "already holds licence")
    env.close()


def test_a_full_course_takes_only_waitlist_entries_and_no_second_enrolment():
    env = tb.make("consulting/HV007_003")  # CRS-320 is full
    env.reset(seed=0)
    employee = env.unwrapped.task.patch.insert["employees"][0]["id"]
    _refused(env, "enrol_course", {"employee_id": employee, "course_code": "CRS-320"}, "is full")
    entry, _ = call(env, "enrol_course", employee_id=employee, course_code="CRS-320", waitlist=True)
    assert entry["status"] == "waitlisted"
    _refused(env, "enrol_course", {"employee_id": employee, "course_code": "CRS-320", "waitlist": True}, "already waitlisted")
    env.close()


def test_an_expense_submission_updates_report_lines_and_approvals_together():
    env = tb.make("consulting/HV005_003")  # the last line is above its cap
    env.reset(seed=0)
    report = env.unwrapped.task.patch.insert["expense_reports"][0]["id"]
    last = len(env.unwrapped.task.patch.insert["expenses"])
    kept = list(range(1, last))
    _refused(env, "submit_expense_report", {"report_id": report, "approver_id": "EMP-10015", "excluded_lines": [9]}, "has no line 9")
    _refused(env, "submit_expense_report", {"report_id": report, "approver_id": "EMP-10015", "excluded_lines": [*kept, last]}, "nothing to submit")
    done, _ = call(env, "submit_expense_report", report_id=report, approver_id="EMP-10015", excluded_lines=[last])
    lines = {r["line_no"]: r for r in env.unwrapped.state.rows("expenses")}
    assert [lines[n]["status"] for n in sorted(lines)] == ["claimed"] * len(kept) + ["excluded"]
    assert float(done["claimed_total"]) == pytest.approx(sum(float(lines[n]["amount"]) for n in kept))
    approval = next(r for r in env.unwrapped.state.rows("approvals") if r["id"] == done["approval_id"])
    assert (approval["kind"], approval["subject"], approval["approver_id"], approval["status"]) == ("expense", report, "EMP-10015", "pending")
    _refused(env, "submit_expense_report", {"report_id": report, "approver_id": "EMP-10015"}, "not a draft")
    env.close()


def test_onboarding_moves_one_phase_and_completion_activates_the_employee():
    env = tb.make("consulting/HV006_007")  # phase equipped, laptop assigned
    env.reset(seed=0)
    employee = env.unwrapped.task.patch.insert["employees"][0]["id"]
    _refused(env, "advance_onboarding", {"employee_id": employee, "phase": "training"}, "the next phase is complete")
    call(env, "advance_onboarding", employee_id=employee, phase="complete")
    assert call(env, "get_employee", employee_id=employee)[0]["status"] == "active"
    _refused(env, "advance_onboarding", {"employee_id": employee, "phase": "complete"}, "onboarding is complete")
    env.close()


def test_a_travel_request_and_its_approval_agree(env):
    trip, _ = call(env, "create_travel_request", employee_id=EMP, engagement_id="ENG-4102", destination="Lyon", region="europe",
                   depart_on="2026-06-10", return_on="2026-06-12", travel_class="economy", estimated_cost=860.0, approver_id="EMP-10001")
    approval = next(r for r in env.unwrapped.state.rows("approvals") if r["subject"] == trip["id"])
    assert (approval["kind"], approval["approver_id"], float(approval["amount"])) == ("travel", "EMP-10001", 860.0)


def test_a_scheduled_timeout_fails_once_and_changes_nothing():
    spec = tb.load_task("consulting/HV003_009")
    assert spec.faults and spec.golden[[c.name for c in spec.golden].index("provision_licence")].expect_error
    env = tb.make("consulting/HV003_009")
    env.reset(seed=0)
    args = next(c.arguments for c in spec.golden if c.name == "provision_licence")
    before = state_hash(env)
    obs, *_ = env.step({"name": "provision_licence", "arguments": args})
    assert "timed out" in obs["messages"][-1]["content"] and state_hash(env) == before
    licence, _ = call(env, "provision_licence", **args)
    assert licence["status"] == "active"
    env.close()


def test_policy_search_finds_the_prerequisites_and_the_limits():
    assert search_documents(load_domain("consulting").path / "kb", "NDA clearance background check before client system access", 3)[0]["source"] == "access_prerequisites.md"
    assert search_documents(load_domain("consulting").path / "kb", "taxi receipt cap per line", 3)[0]["source"] == "expenses.md"
    assert search_documents(load_domain("consulting").path / "kb", "hotel cap per night long-haul business class", 3)[0]["source"] == "travel.md"


def test_the_tools_cover_every_system_of_record():
    tools = {n for n in DOMAIN.toolbox.tools if n != "end_conversation"}
    writes = {n for n in tools if DOMAIN.toolbox[n].writes}
    assert len(tools) >= 27 and len(writes) >= 13
    assert {"grant_system_access", "create_vpn_profile", "send_nda", "request_background_check", "grant_folder_access", "provision_licence",
            "order_hardware", "submit_expense_report", "enrol_course", "request_approval", "create_travel_request", "advance_onboarding",
            "create_ticket"} <= writes
    assert "note" in DOMAIN.toolbox["request_approval"].free_text_arguments
