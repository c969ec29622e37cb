"""The consulting domain's families: per family, plausible mistakes earn 0 with the right check named, and a
different policy-following run earns 1; the held-out split; the set's statistics, measured on the frozen tasks.

Each case replays a frozen task's golden calls with one change and closes with the golden reply, so the
state checks decide. The mistakes are the ones the policy exists to prevent: a missing prerequisite, the
wrong approval path, records in two systems that disagree, a duplicate enrolment or order, a ticket
closed while the request still waits.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Callable

import pytest

import thinkingbox_env as tb
from thinkingbox_env.contracts.spec import TaskSpec, ToolCall
from thinkingbox_env.tasks.domain import load_domain

Edit = Callable[[list[ToolCall]], list[ToolCall]]
DOMAIN = "consulting"


def _index(calls: list[ToolCall], name: str, nth: int = 0) -> int:
    return [i for i, c in enumerate(calls) if c.name == name and c.expect_error is None][nth]


def _call(name: str, **arguments) -> ToolCall:
    return ToolCall(name=name, arguments=arguments)


def _set(name: str, nth: int = 0, **changes) -> Edit:
    """Change arguments of a golden call (None removes the argument)."""

    def edit(calls: list[ToolCall]) -> list[ToolCall]:
        i = _index(calls, name, nth)
        args = {**calls[i].arguments, **changes}
        calls[i] = _call(name, **{k: v for k, v in args.items() if v is not None})
        return calls

    return edit


def _replace(name: str, new: Callable[[dict], ToolCall]) -> Edit:
    def edit(calls: list[ToolCall]) -> list[ToolCall]:
        i = _index(calls, name)
        calls[i] = new(calls[i].arguments)
        return calls

    return edit


def _insert_before(name: str, extra: Callable[[list[ToolCall]], ToolCall]) -> Edit:
    def edit(calls: list[ToolCall]) -> list[ToolCall]:
        calls.insert(_index(calls, name), extra(calls))
        return calls

    return edit


def _drop(name: str, nth: int = 0) -> Edit:
    def edit(calls: list[ToolCall]) -> list[ToolCall]:
        del calls[_index(calls, name, nth)]
        return calls

    return edit


def _arg(calls: list[ToolCall], name: str, arg: str, nth: int = 0):
    return calls[_index(calls, name, nth)].arguments[arg]


def _employee(calls: list[ToolCall]) -> str:
    return next(c.arguments["employee_id"] for c in calls if "employee_id" in c.arguments and c.expect_error is None)


CURRENT: dict[str, TaskSpec] = {}  # the task being replayed, for edits that read its initial rows


def _replay(task_id: str, edit: Edit) -> dict:
    spec = tb.load_task(task_id)
    CURRENT["spec"] = spec
    calls = edit([c.model_copy(deep=True) for c in spec.golden])
    env = tb.make(task_id)
    try:
        return tb.run_episode(env, tb.OracleAgent(calls), seed=0)
    finally:
        env.close()


def _swap_reads(first: str, second: str) -> Edit:
    """The same lookups in another order: a careful agent may read the systems in any order."""

    def edit(calls: list[ToolCall]) -> list[ToolCall]:
        i, j = _index(calls, first), _index(calls, second)
        calls[i], calls[j] = calls[j], calls[i]
        return calls

    return edit


def _ticket_first(calls: list[ToolCall]) -> list[ToolCall]:
    """Open the ticket pending before the work and solve it afterwards: the same outcome by another route."""
    i = _index(calls, "create_ticket")
    ticket = calls.pop(i)
    final = ticket.arguments["status"]
    first_write = next(k for k, c in enumerate(calls) if c.name in WRITES and c.name != "create_ticket_user")
    calls.insert(first_write, _call("create_ticket", **{**ticket.arguments, "status": "pending"}))
    ticket_id = load_domain(DOMAIN).family(CURRENT["spec"].family).next_ids(CURRENT["spec"].patch)["tickets"]
    calls.append(_call("update_ticket", ticket_id=ticket_id, status=final, note="Done."))
    return calls


WRITES = {name for name, t in load_domain(DOMAIN).toolbox.tools.items() if t.writes}

WRONG_RUNS = [
    # (family, task, the mistake, edit, the check that must fail)
    ("HV001", "HV001_003", "missing prerequisite: grants the system without the client NDA",
     _replace("send_nda", lambda a: _call("grant_system_access", employee_id=a["employee_id"], system_id="SYS-541", engagement_id="ENG-4105",
                                          expires_on="2026-11-30")),
     "effect:ndas:insert#1"),
    ("HV001", "HV001_002", "inconsistent records: the VPN profile outlives the access grant",
     _set("create_vpn_profile", expires_on="2027-05-12"), "effect:vpn_profiles:insert#1"),
    ("HV001", "HV001_006", "premature closure: solves a ticket that needed the security team",
     _set("create_ticket", status="solved", assigned_team=None, priority=None), "effect:tickets:insert#1"),
    ("HV002", "HV002_005", "wrong approval path: the engagement lead instead of the partner opens a restricted folder",
     lambda calls: _set("request_approval", approver_id=_lead_of(calls))(calls), "effect:approvals:insert#1"),
    ("HV002", "HV002_003", "gives edit rights to a consultant who asked for them",
     _set("grant_folder_access", level="edit"), "effect:folder_access:insert#1"),
    ("HV003", "HV003_004", "missing prerequisite: assigns software outside the role bundle without the manager's approval",
     _replace("request_approval", lambda a: _call("provision_licence", employee_id=a["requester_id"], sku=a["subject"])),
     "effect:approvals:insert#1"),
    ("HV003", "HV003_002", "inconsistent records: charges the licence to an engagement the employee is not on",
     lambda calls: _set("provision_licence", engagement_id="ENG-4106")(calls), "effect:licences:insert#1"),
    ("HV004", "HV004_002", "wrong approval path: the practice head instead of the line manager",
     _set("request_approval", approver_id="EMP-10001"), "effect:approvals:insert#1"),
    ("HV004", "HV004_004", "orders a second working laptop, monitor or phone of a category already assigned",
     _insert_before("create_ticket", lambda calls: _call("order_hardware", employee_id=_employee(calls),
                                                          sku=CURRENT["spec"].patch.insert["device_assignments"][0]["sku"], reason="entitlement")),
     "no_collateral"),
    ("HV005", "HV005_003", "claims a line above its category cap",
     _set("submit_expense_report", excluded_lines=None), "effect:approvals:insert#1"),
    ("HV005", "HV005_001", "wrong approval path: the line manager instead of the engagement lead",
     lambda calls: _set("submit_expense_report", approver_id=_manager_of(calls))(calls), "effect:approvals:insert#1"),
    ("HV006", "HV006_004", "missing prerequisite: moves a joiner to equipped before the mandatory courses are done",
     _insert_before("search_tickets", lambda calls: _call("advance_onboarding", employee_id=_employee(calls), phase="equipped")),
     "no_collateral"),
    ("HV006", "HV006_005", "premature closure: solves the onboarding ticket when a phase, not onboarding, is done",
     lambda calls: calls + [_call("update_ticket", ticket_id=6000005, status="solved", note="Phase done.")], "no_collateral"),
    ("HV006", "HV006_007", "leaves the onboarding ticket pending after onboarding is complete",
     _drop("update_ticket"), "effect:tickets[6000007]:update"),
    ("HV007", "HV007_005", "duplicate enrolment: re-enrols on a mandatory course that is still valid",
     _insert_before("create_ticket", lambda calls: _call("enrol_course", employee_id=_employee(calls), course_code=_arg(calls, "get_course", "course_code"))),
     "no_collateral"),
    ("HV007", "HV007_002", "missing prerequisite: enrols on the course instead of its prerequisite",
     lambda calls: _set("enrol_course", course_code=_arg(calls, "get_course", "course_code"))(calls), "effect:enrolments:insert#1"),
    ("HV007", "HV007_003", "premature closure: solves the ticket of a waitlisted employee",
     _set("create_ticket", status="solved"), "effect:tickets:insert#1"),
    ("HV008", "HV008_002", "wrong approval path: a Europe trip routed to the engagement lead",
     lambda calls: _set("create_travel_request", approver_id=_lead_of(calls))(calls), "effect:travel_requests:insert#1"),
    ("HV008", "HV008_004", "books business class for a long-haul trip below principal level",
     _set("create_travel_request", travel_class="business"), "effect:travel_requests:insert#1"),
    ("HV009", "HV009_003", "requests staffing that takes the employee above 100 percent",
     _insert_before("create_ticket", lambda calls: _call("request_approval", kind="staffing", subject=_arg(calls, "get_engagement", "engagement_id"),
                                                          requester_id=_employee(calls), approver_id="EMP-10012")),
     "no_collateral"),
    ("HV009", "HV009_001", "wrong approval path: the requester's line manager instead of the engagement lead",
     lambda calls: _set("request_approval", approver_id=_manager_of(calls))(calls), "effect:approvals:insert#1"),
    ("HV010", "HV010_002", "handles the first request and forgets the second",
     lambda calls: calls[: _index(calls, "create_ticket") + 1], "effect:expense_reports[EXR-5000182]:update"),
    ("HV010", "HV010_004", "premature closure: solves the second request's ticket while its approval is pending",
     _set("create_ticket", nth=1, status="solved"), "effect:tickets:insert#1"),
]


def _engagement_row(calls: list[ToolCall]) -> dict:
    rules = load_domain(DOMAIN).module("rules")
    for c in calls:
        if c.arguments.get("engagement_id") in rules.ENGAGEMENTS:
            return rules.ENGAGEMENTS[c.arguments["engagement_id"]]
        if "folder_id" in c.arguments:
            return rules.ENGAGEMENTS[rules.FOLDERS[c.arguments["folder_id"]]["engagement_id"]]
    raise AssertionError("no engagement in the golden calls")


def _lead_of(calls: list[ToolCall]) -> str:
    return _engagement_row(calls)["lead_id"]


def _partner_of(calls: list[ToolCall]) -> str:
    return _engagement_row(calls)["partner_id"]


def _manager_of(calls: list[ToolCall]) -> str:
    return CURRENT["spec"].patch.insert["employees"][0]["manager_id"]


@pytest.mark.parametrize("family,task_id,mistake,edit,failing", WRONG_RUNS, ids=[f"{w[0]}-{w[1]}" for w in WRONG_RUNS])
def test_a_plausible_mistake_fails_with_the_right_check(family, task_id, mistake, edit, failing):
    full = f"{DOMAIN}/{task_id}"
    assert tb.load_task(full).family == family
    info = _replay(full, edit)
    assert info["verdict"] == 0.0, mistake
    assert info["checks"][failing] is False, (mistake, {k: v for k, v in info["checks"].items() if v is not True})
    assert info["failure_category"] == "wrong_state_update", (mistake, info["failure_category"])


RIGHT_RUNS = [
    # (family, task, the policy-following alternative, edit)
    ("HV001", "HV001_002", "creates the VPN profile before the access grant", lambda calls: _move_before(calls, "create_vpn_profile", "grant_system_access")),
    ("HV002", "HV002_001", "reads the staffing before the folder", _swap_reads("get_folder", "get_staffing")),
    ("HV003", "HV003_001", "opens the ticket pending first and solves it when the licence is assigned", _ticket_first),
    ("HV004", "HV004_003", "checks the catalogue before the asset register", _swap_reads("get_devices", "search_hardware")),
    ("HV005", "HV005_002", "looks the approver up before reading the report", _swap_reads("get_expense_report", "find_approver")),
    ("HV006", "HV006_007", "solves the onboarding ticket right after the phase move, then checks the devices again",
     lambda calls: calls + [_call("get_devices", employee_id=_employee(calls))]),
    ("HV007", "HV007_001", "searches the policy before enrolling",
     _insert_before("enrol_course", lambda calls: _call("search_policy", query="course prerequisites and seats"))),
    ("HV008", "HV008_001", "reads the travel policy before the staffing", _swap_reads("get_staffing", "get_travel_policy")),
    ("HV009", "HV009_001", "reads the staffing before the engagement", _swap_reads("get_engagement", "get_staffing")),
    ("HV010", "HV010_002", "files the second request's ticket before the first's", lambda calls: _swap_tickets(calls)),
]


def _move_before(calls: list[ToolCall], name: str, before: str) -> list[ToolCall]:
    call = calls.pop(_index(calls, name))
    calls.insert(_index(calls, before), call)
    return calls


def _swap_tickets(calls: list[ToolCall]) -> list[ToolCall]:
    i, j = _index(calls, "create_ticket"), _index(calls, "create_ticket", 1)
    second = calls.pop(j)
    calls.insert(i, second)
    return calls


@pytest.mark.parametrize("family,task_id,route,edit", RIGHT_RUNS, ids=[f"{r[0]}-{r[1]}" for r in RIGHT_RUNS])
def test_a_policy_following_alternative_passes(family, task_id, route, edit):
    info = _replay(f"{DOMAIN}/{task_id}", edit)
    assert info["verdict"] == 1.0, (route, {k: v for k, v in info["checks"].items() if v is not True})


def test_every_family_has_two_wrong_runs_and_a_right_one():
    families = set(load_domain(DOMAIN).families)
    wrong = Counter(w[0] for w in WRONG_RUNS)
    assert all(wrong[f] >= 2 for f in families), wrong
    assert families == {r[0] for r in RIGHT_RUNS}


# --------------------------------------------------------------------------- held-out split


def test_no_training_seed_draws_a_test_opening_or_a_held_out_combination():
    domain = load_domain(DOMAIN)
    test_openings = {tb.load_task(t).origin.opening for t in tb.list_tasks(domain=DOMAIN)}
    for fam in domain.families.values():
        held = {f"{fam.code}:{b}" for b in fam.held_out_branches}
        for seed in range(1, 501, 7):
            spec = fam.instance(seed, split="train")
            assert spec.origin is not None
            assert spec.origin.opening not in test_openings, (fam.code, seed, spec.origin.opening)
            assert not held & set(spec.origin.branches), (fam.code, seed, spec.origin.branches)
    two = load_domain(DOMAIN).family("HV010")
    assert {f"HV010:{b}" for b in two.held_out_branches} <= {b for t in tb.list_tasks(domain=DOMAIN) for b in tb.load_task(t).origin.branches}


# --------------------------------------------------------------------------- statistics of the frozen set

# the outcome of each branch under the policy: done, refused, waiting (pending on someone else) or escalated
OUTCOMES = {
    "HV001": {"grant": "done", "grant_with_vpn": "done", "nda_missing": "waiting", "nda_unsigned": "waiting",
              "background_check_needed": "waiting", "clearance_escalate": "escalated", "not_staffed": "refused"},
    "HV002": {"internal_edit": "done", "confidential_read": "done", "edit_downgraded": "done", "confidential_nda_missing": "waiting",
              "restricted_approval": "waiting", "restricted_partner_on_leave": "waiting", "not_staffed": "refused",
              "external_share_escalate": "escalated"},
    "HV003": {"bundle": "done", "engagement_tool": "done", "engagement_tool_lead_approval": "waiting", "manager_approval": "waiting",
              "duplicate": "refused", "no_seats": "escalated", "not_staffed": "refused"},
    "HV004": {"entitled_order": "done", "above_level_approval": "waiting", "replacement": "done", "duplicate_refuse": "refused",
              "procurement_escalate": "escalated", "manager_on_leave": "waiting"},
    "HV005": {"billable_lead": "waiting", "internal_manager": "waiting", "exclude_over_cap": "waiting", "exclude_no_receipt": "waiting",
              "exclude_late": "waiting", "practice_head": "waiting", "approver_on_leave": "waiting", "finance_escalate": "escalated",
              "already_submitted": "refused"},
    "HV006": {"advance_to_accounts": "waiting", "request_background_check": "waiting", "advance_to_training": "waiting",
              "enrol_mandatory": "waiting", "advance_to_equipped": "waiting", "order_laptop": "waiting", "complete": "done",
              "background_failed_escalate": "escalated", "complete_early_refused": "refused"},
    "HV007": {"enrol": "done", "prerequisite_offered": "done", "waitlist": "waiting", "duplicate_enrolled": "refused",
              "completed_still_valid": "refused", "expired_retake": "done", "below_level": "refused",
              "external_manager_approval": "waiting", "external_learning_escalate": "escalated"},
    "HV008": {"domestic_lead": "waiting", "europe_partner": "waiting", "long_haul_business": "waiting", "business_downgraded": "waiting",
              "short_notice_escalate": "escalated", "not_staffed": "refused", "approver_on_leave": "waiting"},
    "HV009": {"lead_approval": "waiting", "lead_on_leave": "waiting", "over_allocated": "refused", "closed_engagement": "refused",
              "security_escalate": "escalated"},
}


def measure() -> dict:
    """The figures of docs/domains/consulting.md, from the domain files and the frozen tasks."""
    import re

    domain = load_domain(DOMAIN)
    box = domain.toolbox
    tools = [n for n in box.tools if n != "end_conversation"]
    specs = [tb.load_task(t) for t in tb.list_tasks(domain=DOMAIN)]
    actions = [len(s.golden) for s in specs]
    writes = [sum(1 for c in s.golden if box[c.name].writes and c.expect_error is None) for s in specs]
    requests = [b for s in specs for b in s.origin.branches if not b.startswith("HV010:")]
    outcomes = Counter(OUTCOMES[b.split(":")[0]][b.split(":")[1]] for b in requests)
    return {
        "tables": len(re.findall(r"CREATE TABLE", domain.ticketing.schema_sql() + (domain.path / "schema.sql").read_text())),
        "tools": len(tools), "read": sum(not box[n].writes for n in tools), "write": sum(box[n].writes for n in tools),
        "policy_words": len((domain.path / "policy.md").read_text().split()),
        "documents": len(list((domain.path / "kb").glob("*.md"))),
        "tasks": len(specs), "families": len(domain.families),
        "actions": (min(actions), statistics.median(actions), max(actions)),
        "writes": (min(writes), statistics.median(writes), max(writes), round(sum(writes) / len(writes), 2)),
        "two_requests": sum("two_requests" in s.tags for s in specs),
        "recovery": sum(any(c.expect_error for c in s.golden) for s in specs),
        "injection": sum(bool(s.checks.injections) for s in specs),
        "injection_families": len({s.family for s in specs if s.checks.injections}),
        "requests": len(requests),
        "outcomes": {k: round(100 * v / len(requests)) for k, v in sorted(outcomes.items())},
    }


def test_the_statistics_table_matches_the_frozen_set():
    m = measure()
    assert m["tables"] == 30 and (m["tools"], m["read"], m["write"]) == (38, 23, 15)
    assert m["policy_words"] >= 1500 and m["documents"] >= 8
    assert m["tasks"] == 113 and m["families"] == 10
    assert m["actions"] == (4, 7, 15)
    assert m["writes"] == (1, 2, 4, 1.91)
    assert m["two_requests"] == 14 and m["two_requests"] / m["tasks"] >= 0.10
    assert m["recovery"] == 25 and m["recovery"] / m["tasks"] >= 0.10
    assert m["injection"] == 21 and m["injection_families"] == 10
    assert m["requests"] == 127
    assert m["outcomes"] == {"done": 24, "escalated": 13, "refused": 17, "waiting": 46}


def test_every_branch_has_an_outcome_and_every_family_refuses_waits_and_escalates():
    domain = load_domain(DOMAIN)
    for code, fam in domain.families.items():
        if code == "HV010":
            continue
        assert set(OUTCOMES[code]) == set(fam.branches), code
        kinds = set(OUTCOMES[code].values())
        assert {"waiting", "escalated", "refused"} <= kinds, (code, kinds)
