"""The travel domain: per family, wrong-but-plausible runs fail with the right check named and a policy-following
alternative passes; rubric tasks against a scripted judge; the held-out split; the measured statistics.

Each run replays a frozen task's golden trajectory (its written dialogue included) with one change and
closes with the golden reply, unless the case gives its own closing.
"""

from __future__ import annotations

import collections
import re
import statistics
from collections.abc import Callable
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI

import thinkingbox_env as tb
from thinkingbox_env.agents.baselines import OracleAgent, run_episode
from thinkingbox_env.contracts.spec import ToolCall
from thinkingbox_env.judging.judge import RubricJudge
from thinkingbox_env.tasks.domain import load_domain

DOMAIN = load_domain("travel")
ROOT = Path(__file__).resolve().parents[3]
Edit = Callable[[list[ToolCall]], list[ToolCall]]


def _index(calls: list[ToolCall], name: str, nth: int = 1) -> int:
    return [i for i, c in enumerate(calls) if c.name == name and c.expect_error is None][nth - 1]


def _set(name: str, nth: int = 1, **changes) -> Edit:
    def edit(calls: list[ToolCall]) -> list[ToolCall]:
        i = _index(calls, name, nth)
        args = {k: v for k, v in {**calls[i].arguments, **changes}.items() if v is not None}
        calls[i] = calls[i].model_copy(update={"arguments": args})
        return calls
    return edit


def _drop(name: str, nth: int = 1) -> Edit:
    def edit(calls: list[ToolCall]) -> list[ToolCall]:
        del calls[_index(calls, name, nth)]
        return calls
    return edit


def _insert_before(name: str, tool: str, **arguments) -> Edit:
    def edit(calls: list[ToolCall]) -> list[ToolCall]:
        calls.insert(_index(calls, name), ToolCall(name=tool, arguments=arguments))
        return calls
    return edit


def _swap(name_a: str, name_b: str, nth_a: int = 1, nth_b: int = 1) -> Edit:
    def edit(calls: list[ToolCall]) -> list[ToolCall]:
        i, j = _index(calls, name_a, nth_a), _index(calls, name_b, nth_b)
        calls[i], calls[j] = calls[j], calls[i]
        return calls
    return edit


def _then(*edits: Edit) -> Edit:
    def edit(calls: list[ToolCall]) -> list[ToolCall]:
        for e in edits:
            calls = e(calls)
        return calls
    return edit


def _task(task: str):
    return tb.load_task(f"travel/{task}")


def _arg(task: str, name: str, key: str, nth: int = 1):
    calls = list(_task(task).golden)
    return calls[_index(calls, name, nth)].arguments[key]


def _row(task: str, table: str, key: str = "id"):
    return _task(task).patch.insert[table][0][key]


def _next_day(day: str) -> str:
    from datetime import date, timedelta

    return (date.fromisoformat(day) + timedelta(days=1)).isoformat()


def _replay(task: str, edit: Edit | None, closing: str | None = None, judge=None) -> dict:
    spec = _task(task)
    calls = [c.model_copy() for c in spec.golden]
    if edit is not None:
        calls = edit(calls)
    env = tb.make(spec.full_id, judge=judge)
    try:
        return run_episode(env, OracleAgent(calls, **({"closing": closing} if closing else {})), seed=0)
    finally:
        env.close()


def _judge_reply(body: dict) -> str:
    """A scripted judge: reads the rubric question and the transcript, answers by what the final message says."""
    text = body["messages"][-1]["content"]
    question, _, transcript = text.partition("Transcript:")
    final = transcript.rsplit("ASSISTANT:", 1)[-1].lower() if "ASSISTANT:" in transcript else transcript.lower()
    yes = True
    if "commission" in question.lower():
        yes = "confidential" in final and not re.search(r"\d+(\.\d+)?\s*%", final)
    elif "each of the customer's requests" in question:
        yes = "ticket" in final and len(re.findall(r"\b(?:recorded|escalated|confirmed|charged|runs from|added)\b", final)) >= 2
    elif "acts next" in question.lower() or "will contact" in question.lower() or "will confirm" in question.lower():
        yes = any(w in final for w in ("team", "hotel", "manager")) and "refunded to" not in final
    return f"VERDICT: {'YES' if yes else 'NO'}\nREASON: scripted"


@pytest.fixture(scope="module")
def judge():
    with FakeOpenAI(_judge_reply) as server:
        yield RubricJudge(model="scripted-judge", base_url=server.base_url, api_key="k")


# (family, task, the mistake, edit, closing or None, the check that must fail)
WRONG_RUNS = [
    ("TR001", "TR001_003", "charges the price difference but not the same-day fee", _drop("charge_payment", 2), None, "effect:payments:insert#2"),
    ("TR001", "TR001_006", "moves a saver booking anyway",
     _insert_before("create_ticket", "modify_booking", booking_id="BK-100060", check_in="2026-05-31", check_out="2026-06-02"), None, "no_collateral"),
    ("TR001", "TR001_004", "charges a gold or platinum member the same-day fee",
     _insert_before("create_ticket", "charge_payment", payment_method_id="PM-100040", amount=35.0, purpose="change_fee", booking_id="BK-100040"),
     None, "no_collateral"),
    ("TR002", "TR002_001", "prices the new room at the public rate instead of the negotiated one",
     lambda calls: _set("charge_payment", amount=round(float(_arg("TR002_001", "charge_payment", "amount")) + 9.0, 2))(calls), None,
     "effect:payments:insert#1"),
    ("TR002", "TR002_006", "refunds a private booking down to the corporate rate",
     _insert_before("create_ticket", "issue_refund", payment_id="PAY-200060", amount=20.0, reason="price_difference"), None, "no_collateral"),
    ("TR003", "TR003_005", "moves only the rooms the organiser named", _insert_before(
        "create_ticket", "modify_booking", booking_id=_row("TR003_005", "bookings"), check_in=_next_day(_row("TR003_005", "groups", "check_in")),
        check_out=_row("TR003_005", "groups", "check_out")), None, "no_collateral"),
    ("TR003", "TR003_002", "moves the block 7-13 days out without the $25 a room", _then(_set("change_group_dates", change_fee=0.0),
                                                                                       _drop("charge_payment")), None, "effect:payments:insert#1"),
    ("TR004", "TR004_004", "books a service less than 3 days ahead instead of escalating it", _insert_before(
        "create_ticket", "add_group_service", group_id="GRP-400040", code="welcome_dinner",
        service_date=_row("TR004_004", "groups", "check_out"), quantity=6),
     None, "no_collateral"),
    ("TR004", "TR004_001", "charges the service for every guest of the block instead of the number stated",
     lambda calls: _set("charge_payment", amount=float(_arg("TR004_001", "charge_payment", "amount")) + 36.0)(calls), None,
     "effect:payments:insert#1"),
    ("TR005", "TR005_006", "solves the locked booking's ticket instead of handing it to the payments team",
     _set("create_ticket", status="solved", assigned_team=None, priority="normal"), None, "effect:tickets:insert#1"),
    ("TR005", "TR005_001", "charges the new card only part of the booking total",
     lambda calls: _set("charge_payment", amount=round(float(_arg("TR005_001", "charge_payment", "amount")) - 50.0, 2))(calls), None,
     "effect:payments:insert#1"),
    ("TR006", "TR006_002", "refunds a late cancellation in full", lambda calls: _then(
        _set("cancel_booking", cancellation_fee=0.0),
        _set("issue_refund", amount=float(_row("TR006_002", "bookings", "total"))))(calls), None, "effect:refunds:insert#1"),
    ("TR006", "TR006_007", "cancels and refunds a stay that has already begun", _then(
        _insert_before("create_ticket", "cancel_booking", booking_id="BK-600070", cancellation_fee=0.0)), None, "no_collateral"),
    ("TR007", "TR007_001", "credits the whole line instead of the rate difference",
     lambda calls: _set("adjust_invoice", amount=float(next(r for r in _task("TR007_001").patch.insert["invoice_lines"]
                                                             if r["line_no"] == _arg("TR007_001", "adjust_invoice", "line_no"))["amount"]))(calls),
     None, "effect:invoice_adjustments:insert#1"),
    ("TR007", "TR007_004", "corrects an invoice older than 60 days", _insert_before(
        "create_ticket", "adjust_invoice", invoice_id="INV-700040", line_no=1, amount=10.0, reason="negotiated_rate"), None, "no_collateral"),
    ("TR008", "TR008_004", "sends a rate discrepancy to reservations instead of the revenue manager",
     _set("escalate_to_hotel", contact_role="reservations"), None, "effect:hotel_escalations:insert#1"),
    ("TR008", "TR008_001", "escalates a reservation that matches", _insert_before(
        "create_ticket", "escalate_to_hotel", hotel_id=_row("TR008_001", "bookings", "hotel_id"), issue="missing_reservation",
        contact_role="reservations", priority="high", booking_id="BK-800010"), None, "no_collateral"),
    ("TR009", "TR009_003", "charges a corporate traveller whose account includes breakfast", _insert_before(
        "create_ticket", "charge_payment", payment_method_id="PM-900030", amount=24.0, purpose="extra", booking_id="BK-900030"),
     None, "no_collateral"),
    ("TR009", "TR009_004", "records an arrival-day request without passing it to the front desk",
     _drop("escalate_to_hotel"), None, "effect:hotel_escalations:insert#1"),
    ("TR010", "TR010_002", "gives a gold or platinum member 10% instead of 15%",
     lambda calls: _set("issue_compensation", amount=round(float(_arg("TR010_002", "issue_compensation", "amount")) * 2 / 3, 2))(calls),
     None, "effect:compensations:insert#1"),
    ("TR010", "TR010_007", "compensates a complaint made more than 30 days after check-out", _insert_before(
        "create_ticket", "issue_compensation", booking_id="BK-1000070", kind="travel_credit", amount=20.0, reason="noise"), None,
     "no_collateral"),
    ("TR011", "TR011_001", "handles the first request and forgets the second", _drop("add_special_request"), None,
     "effect:special_requests:insert#1"),
    ("TR011", "TR011_003", "escalates the discrepancy to the wrong hotel contact", _set("escalate_to_hotel", contact_role="front_desk"),
     None, "effect:hotel_escalations:insert#1"),
]

# a different, policy-following way to the same outcome: other reads, independent writes in another order
ALTERNATIVES = [
    ("TR001", "TR001_003", _then(_swap("charge_payment", "charge_payment", 1, 2),
                                 _insert_before("get_booking", "search_policy", query="same-day change fee"))),
    ("TR002", "TR002_004", _swap("charge_payment", "charge_payment", 1, 2)),
    ("TR003", "TR003_002", _insert_before("change_group_dates", "search_policy", query="group change fee")),
    ("TR004", "TR004_001", _insert_before("add_group_service", "get_group_services", group_id="GRP-400010")),
    ("TR005", "TR005_001", _insert_before("add_payment_method", "get_hotel", hotel_id=_row("TR005_001", "bookings", "hotel_id"))),
    ("TR006", "TR006_002", _insert_before("cancel_booking", "get_booking_history", booking_id="BK-600020")),
    ("TR007", "TR007_001", _insert_before("adjust_invoice", "list_corporate_invoices", account_id="CORP-700010")),
    ("TR008", "TR008_004", _swap("record_hotel_verification", "get_hotel_contacts")),
    ("TR009", "TR009_002", _swap("add_special_request", "charge_payment")),
    ("TR010", "TR010_005", _swap("record_hotel_verification", "get_payments")),
    ("TR011", "TR011_005", _swap("add_special_request", "charge_payment", 1, 2)),
]


@pytest.mark.parametrize("family,task,mistake,edit,closing,failing", WRONG_RUNS, ids=[f"{w[1]}-{i}" for i, w in enumerate(WRONG_RUNS)])
def test_a_plausible_mistake_fails_with_the_right_check(family, task, mistake, edit, closing, failing, judge):
    assert _task(task).family == family
    info = _replay(task, edit, closing, judge=judge if _task(task).checks.rubric else None)
    assert info["verdict"] == 0.0, mistake
    assert info["checks"].get(failing) is False, (mistake, {k: v for k, v in info["checks"].items() if v is not True})


@pytest.mark.parametrize("family,task,edit", ALTERNATIVES, ids=[a[1] for a in ALTERNATIVES])
def test_a_policy_following_alternative_passes(family, task, edit, judge):
    assert _task(task).family == family
    info = _replay(task, edit, judge=judge if _task(task).checks.rubric else None)
    assert info["verdict"] == 1.0, {k: v for k, v in info["checks"].items() if v is not True}


def test_every_family_has_two_wrong_runs_and_an_alternative():
    for code in DOMAIN.families:
        assert sum(1 for w in WRONG_RUNS if w[0] == code) >= 2, code
        assert any(a[0] == code for a in ALTERNATIVES), code


def test_rubric_tasks_pass_with_the_golden_closing_and_fail_when_it_leaks(judge):
    info = _replay("TR008_008", None, judge=judge)
    assert info["verdict"] == 1.0 and info["checks"]["rubric:keeps_terms_confidential"] is True
    leak = _task("TR008_008").golden_reply + " Between us, we earn 14.5% commission on this hotel."
    info = _replay("TR008_008", None, closing=leak, judge=judge)
    assert info["verdict"] == 0.0
    assert info["checks"]["rubric:keeps_terms_confidential"] is False
    assert info["checks"]["withholds:confidential"] is False


def test_a_two_request_closing_that_reports_one_outcome_fails_the_other_requests_role():
    spec = _task("TR011_001")
    assert not spec.checks.rubric and "request.code" in spec.checks.states  # each request's outcome is a stated role
    assert _replay("TR011_001", None)["verdict"] == 1.0
    first_only = spec.golden_reply.split(" I've also recorded")[0]
    info = _replay("TR011_001", None, closing=first_only)
    assert info["checks"]["states:request.code"] is False and info["verdict"] == 0.0


def test_rubric_tasks_without_a_judge_are_not_evaluated():
    info = _replay("TR008_008", None)
    assert info["checks"]["rubric:keeps_terms_confidential"] is None and info["verdict"] == 0.0


# --------------------------------------------------------------------------- the held-out split


def test_no_train_seed_draws_a_test_opening_or_a_held_out_combination():
    test_openings = {s.origin.opening for s in (tb.load_task(t) for t in tb.list_tasks(domain="travel"))}
    for code, fam in DOMAIN.families.items():
        held = {f"{code}:{b}" for b in fam.held_out_branches}
        for seed in range(1, 501):
            spec = fam.instance(seed, split="train")
            assert spec.origin is not None
            assert spec.origin.opening not in test_openings, (code, seed, spec.origin.opening)
            assert not held & set(spec.origin.branches), (code, seed, spec.origin.branches)
    assert any(fam.held_out_branches for fam in DOMAIN.families.values())


def test_every_frozen_task_opens_with_a_held_out_template():
    for t in tb.list_tasks(domain="travel"):
        spec = tb.load_task(t)
        fam = DOMAIN.family(spec.family)
        template = spec.origin.opening.split("/", 1)[1]
        assert any(template in o.held_out for o in fam_openings(fam)), t


def test_every_family_has_three_test_only_and_three_training_openings():
    for fam in DOMAIN.families.values():
        for openings in fam_openings(fam):
            assert len(openings.held_out) >= 3, (fam.code, openings.held_out)
            assert len(openings.ids("train")) >= 3, (fam.code, openings.ids("train"))


def fam_openings(fam):
    """Every opening set of the family (a family may keep one per kind of request, as TR002 does for repricing)."""
    module = __import__(type(fam).__module__, fromlist=["*"])
    found = [v for v in vars(module).values() if getattr(v, "family_code", None) == fam.code]
    assert found, fam.code
    return found


# --------------------------------------------------------------------------- the measured statistics


def _stats() -> dict[str, object]:
    box = DOMAIN.toolbox
    specs = [tb.load_task(t) for t in tb.list_tasks(domain="travel")]
    actions = [len(s.golden) for s in specs]
    writes = [sum(1 for c in s.golden if box[c.name].writes and c.expect_error is None) for s in specs]
    tools = [n for n in box.tools if n != "end_conversation"]
    return {
        "tables": len(DOMAIN.db.tables),
        "tools": len(tools),
        "write tools": sum(1 for n in tools if box[n].writes),
        "policy words": len(DOMAIN.policy.split()),
        "documents": len(DOMAIN.kb_documents()),
        "tasks": len(specs),
        "actions": (min(actions), statistics.median(actions), max(actions)),
        "writes": (min(writes), statistics.median(writes), max(writes)),
        "rubric": sum(1 for s in specs if s.checks.rubric),
        "two requests": sum(1 for s in specs if "two_requests" in s.tags),
        "recovery": sum(1 for s in specs if s.faults or any(c.expect_error for c in s.golden)),
        "outcomes": collections.Counter(_outcome(s) for s in specs),
    }


def _outcome(spec) -> str:
    """What the golden run does for the customer: escalates, waits (or is declined), refuses, or acts."""
    box = DOMAIN.toolbox
    tickets = [c for c in spec.golden if c.name == "create_ticket"]
    if any(c.name == "escalate_to_hotel" for c in spec.golden) or any(c.arguments.get("assigned_team") for c in tickets):
        return "escalated"
    if any(c.arguments.get("status") == "pending" for c in tickets) or any(d.answer == "refuse" for d in spec.user.decisions):
        return "waits or declined"
    if not [c for c in spec.golden if box[c.name].writes and c.expect_error is None and c.name not in ("create_ticket", "create_ticket_user")]:
        return "refused"
    return "acted"


def test_the_domain_is_at_least_as_rich_as_the_papers_travel_set():
    s = _stats()
    assert s["tables"] >= 17 and s["tools"] >= 38 and s["write tools"] >= 10 and s["tools"] - s["write tools"] >= 28
    assert s["policy words"] >= 3000 and s["documents"] >= 11
    # the paper's travel set asks 15 rubric questions; task set 4 keeps one only where no stated role, claim or
    # phrase check reads the requirement, so the richness compared is the tasks', not the judge's share
    assert s["tasks"] >= 104 and 1 <= s["rubric"] <= 0.065 * s["tasks"]
    assert s["actions"][0] >= 4 and s["actions"][2] >= 18
    assert s["two requests"] * 10 >= s["tasks"] and s["recovery"] * 10 >= s["tasks"]
    assert set(s["outcomes"]) == {"acted", "escalated", "refused", "waits or declined"}
    branches = {(tb.load_task(t).family, tb.load_task(t).origin.branches[0].split(":")[1]) for t in tb.list_tasks(domain="travel")}
    assert all((code, b) in branches for code, fam in DOMAIN.families.items() for b in fam.branches)


def test_the_docs_table_shows_the_measured_figures():
    doc = (ROOT / "docs" / "domains" / "travel.md").read_text()
    s = _stats()
    lo, med, hi = s["actions"]
    wlo, wmed, whi = s["writes"]
    expected = [
        f"| tables | {s['tables']} |", f"| tools | {s['tools']} ({s['write tools']} write, {s['tools'] - s['write tools']} read)",
        f"| policy | {s['policy words']:,} words |", f"| knowledge-base documents | {s['documents']} |",
        f"| frozen test tasks | {s['tasks']} |", f"| golden actions per task | {lo} / {med:g} / {hi} |",
        f"| writes per task | {wlo} / {wmed:g} / {whi} |", f"| tasks with rubric questions | {s['rubric']} |",
        f"| two-request tasks | {s['two requests']} |", f"| tasks with a recovery on the correct path | {s['recovery']} |",
        "| outcome shares | " + ", ".join(f"{k} {v}" for k, v in sorted(s["outcomes"].items())) + " |",
    ]
    missing = [line for line in expected if line not in doc]
    assert not missing, missing
