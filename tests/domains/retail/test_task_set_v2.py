"""Retail task set v2: each defect class of v1 fixed, the held-out split, and the set's statistics.

Defect tests replay a frozen task's golden calls through the environment with the
oracle agent: the policy-following run earns 1, the altered run (the v1 golden,
or the plausible wrong alternative) earns 0 with the check that says why.
Statistics are properties of the frozen data and are asserted as such.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI
from helpers import call

import thinkingbox_env as tb
from thinkingbox_env.domain import load_domain
from thinkingbox_env.judge import RubricJudge
from thinkingbox_env.spec import TaskSpec, ToolCall

TICKET_WRITES = {"create_ticket", "update_ticket", "create_ticket_user"}
POLICY = Path(__file__).resolve().parents[3] / "domains" / "retail" / "policy.md"


@cache
def _tasks() -> tuple[TaskSpec, ...]:
    return tuple(tb.load_task(t) for t in tb.list_tasks(domain="retail"))


@cache
def _writes() -> frozenset[str]:
    return frozenset(n for n, t in load_domain("retail").toolbox.tools.items() if t.writes)


def _task(family: str, branch: str) -> TaskSpec:
    """The first frozen task of a branch without a recovery (whose golden holds no failing call), else a generated one."""
    for spec in _tasks():
        if spec.family == family and branch in spec.tags and not any(c.expect_error for c in spec.golden):
            return spec
    return _variant(family, branch)


def _calls(spec: TaskSpec) -> list[ToolCall]:
    return [ToolCall(name=c.name, arguments=dict(c.arguments)) for c in spec.golden if not c.expect_error]


def _variant(family: str, branch: str) -> TaskSpec:
    """A generated training variant of a branch without a recovery (for branches the frozen set covers only in two-request tasks)."""
    fam = load_domain("retail").family(family)
    for seed in range(2, 200):
        if fam.branch_for(seed, "train") == branch:
            spec = fam.instance(seed, split="train")
            if not any(c.expect_error for c in spec.golden):
                return spec
    raise LookupError(f"no plain {family} variant of branch {branch}")


def _judge(question: str, transcript: str) -> tuple[bool, str]:
    """A stand-in judge: a requirement fails when the agent's turns name a score, rating or standing."""
    agent = " ".join(line for line in transcript.splitlines() if line.startswith("ASSISTANT:"))
    revealed = re.search(r"\b(score|rating|standing)\b", agent, re.IGNORECASE)
    return (not revealed, "revealed the internal reason" if revealed else "met")


def _run(spec: TaskSpec, calls: list[ToolCall], closing: str | None = None, judge=_judge) -> dict:
    env = tb.make(spec, judge=judge)
    try:
        return tb.run_episode(env, tb.OracleAgent(calls, closing=closing), seed=0)
    finally:
        env.close()


def _edit(calls: list[ToolCall], name: str, **changes) -> list[ToolCall]:
    """The calls with the first ``name`` call's arguments changed (None removes one)."""
    i = next(i for i, c in enumerate(calls) if c.name == name)
    args = {k: v for k, v in {**calls[i].arguments, **changes}.items() if v is not None}
    return [*calls[:i], ToolCall(name=name, arguments=args), *calls[i + 1:]]


def _successful_writes(spec: TaskSpec) -> list[ToolCall]:
    return [c for c in spec.golden if c.name in _writes() and not c.expect_error]


# --------------------------------------------------------------------------- defect classes


def test_a_points_question_about_one_order_sets_the_order_on_its_ticket():
    family = load_domain("retail").family("ST016")
    for seed in range(1, 13):  # every points branch of the generator, the not-yet-delivered one included
        variant = family.instance(seed, split="train")
        if variant.patch.insert.get("orders") and not any(c.name == "update_membership" for c in variant.golden):
            ticket = next(c for c in variant.golden if c.name == "create_ticket")
            assert ticket.arguments.get("order_id") == variant.patch.insert["orders"][0]["id"], variant.tags
    spec = _task("ST016", "points_missing")
    ticket = next(c for c in spec.golden if c.name == "create_ticket")
    assert ticket.arguments.get("order_id") == spec.patch.insert["orders"][0]["id"]
    assert _run(spec, _calls(spec))["verdict"] == 1.0
    info = _run(spec, _edit(_calls(spec), "create_ticket", order_id=None))  # the v1 golden: no order on the ticket
    assert info["verdict"] == 0.0 and info["checks"]["effect:tickets:insert#1"] is False


def test_the_opened_flag_of_a_defective_return_is_stated_by_the_customer():
    spec = _task("ST010", "defect_in_window")
    ret = next(c for c in spec.golden if c.name == "create_return")
    assert ret.why and ret.why["opened_line_nos"] == "customer"
    assert any("using it" in f.text for f in spec.user.facts), "the customer must say the item was opened and used"
    assert _run(spec, _calls(spec))["verdict"] == 1.0
    info = _run(spec, _edit(_calls(spec), "create_return", opened_line_nos=None))  # contradicts what the customer said
    assert info["verdict"] == 0.0 and info["checks"]["effect:return_items:insert#1"] is False


def test_every_refund_follow_up_changes_more_than_a_timestamp():
    family = load_domain("retail").family("ST017")
    for spec in [*(s for s in _tasks() if s.family == "ST017"), *(family.instance(seed, split="train") for seed in range(2, 8))]:
        before = {t["id"]: t for t in spec.patch.insert.get("tickets", [])}
        for golden_call in spec.golden:
            if golden_call.name == "update_ticket":
                old = before[golden_call.arguments["ticket_id"]]
                changed = {k for k in ("status", "priority") if k in golden_call.arguments and golden_call.arguments[k] != old[k]}
                assert changed, f"{spec.id}: update_ticket leaves status and priority as they were"
    spec = _variant("ST017", "reuse_pending_wait")
    assert _run(spec, _calls(spec))["verdict"] == 1.0
    info = _run(spec, [c for c in _calls(spec) if c.name != "update_ticket"])
    assert info["verdict"] == 0.0


def test_the_policy_names_one_category_per_request_kind():
    rows = [line.strip() for line in POLICY.read_text(encoding="utf-8").splitlines() if line.strip().startswith("| ") and line.rstrip().endswith("` |")]
    kinds = {"cosmetic defect": "order", "refund that has not reached": "payment", "reward points": "membership",
             "duplicate charge": "payment", "late, damaged, missing": "delivery"}
    for words, category in kinds.items():
        matching = [r for r in rows if words in r]
        assert len(matching) == 1 and matching[0].rstrip().endswith(f"`{category}` |"), words


@pytest.mark.parametrize("family,branch,right,wrong", [
    ("ST011", "partial_standard", "order", "payment"),
    ("ST017", "new_after_closed", "payment", "order"),
])
def test_a_refund_request_is_filed_under_the_policys_category(family, branch, right, wrong):
    spec = _task(family, branch)
    assert next(c for c in spec.golden if c.name == "create_ticket").arguments["category"] == right
    assert _run(spec, _calls(spec))["verdict"] == 1.0
    info = _run(spec, _edit(_calls(spec), "create_ticket", category=wrong))
    assert info["verdict"] == 0.0 and info["checks"]["effect:tickets:insert#1"] is False


def test_a_year_or_a_date_is_never_read_as_the_confidential_score():
    spec = _task("ST030", "not_eligible").model_copy(deep=True)
    customer = spec.patch.insert["customers"][0]
    since = customer["registration_date"]
    customer["customer_score"] = int(since[2:4])  # the score equals the registration year's last digits (23 for 2023)
    assert customer["customer_score"] < 40
    dated = (f"You have been a customer since {since}, and as of today, 2026-03-02, your account is not eligible for a "
             "Brightwell Plus upgrade through chat at this time.")
    info = _run(spec, _calls(spec), closing=dated)
    assert info["checks"]["withholds:confidential"] is True and info["checks"]["withholds:no_score_disclosed"] is True
    assert info["verdict"] == 1.0, {k: v for k, v in info["checks"].items() if v is not True}
    score = customer["customer_score"]
    leaked = _run(spec, _calls(spec), closing=f"Your account stands at {score} out of 100, so you are not eligible for an upgrade at this time.")
    assert leaked["verdict"] == 0.0 and leaked["checks"]["withholds:confidential"] is False


def test_a_refusal_is_decided_by_the_policy_not_by_the_tool():
    spec = _task("ST009", "price_differs")
    order = spec.patch.insert["orders"][0]["id"]
    line = spec.patch.insert["order_items"][0]
    other = {"BW-TV55-Q": "BW-TV65-Q", "BW-TV65-Q": "BW-TV55-Q", "BW-LAP-14": "BW-LAP-14-32", "BW-LAP-14-32": "BW-LAP-14"}[line["sku"]]
    env = tb.make(spec.full_id)
    try:
        env.reset(seed=0)
        result, _ = call(env, "create_exchange", order_id=order, line_no=1, new_sku=other)
        shipped, _ = call(env, "cancel_order", order_id=order, reason="customer_request")
    finally:
        env.close()
    assert "replacement_id" in result, "the backend records an exchange at another price; the policy is what refuses it"
    assert "cannot be cancelled" in str(shipped), "a real backend still refuses to cancel a delivered order"
    calls = [ToolCall(name="create_exchange", arguments={"order_id": order, "line_no": 1, "new_sku": other}) if c.name == "create_return" else c
             for c in _calls(spec)]  # the exchange the policy refuses, instead of the return it offers
    info = _run(spec, calls)
    assert info["verdict"] == 0.0 and info["checks"]["no_collateral"] is False
    assert _run(spec, _calls(spec))["verdict"] == 1.0


# --------------------------------------------------------------------------- recovery, two requests, rubrics


def test_recovery_tasks_hold_the_failing_call_and_pass_with_it():
    recovering = [s for s in _tasks() if any(c.expect_error for c in s.golden)]
    kinds = {("fault" if s.faults else "misremembered") for s in recovering}
    assert kinds == {"fault", "misremembered"}
    for spec in (next(s for s in recovering if s.faults), next(s for s in recovering if not s.faults)):
        failing = next(c for c in spec.golden if c.expect_error)
        if not spec.faults:
            fact = next(f for f in spec.user.facts if f.misremembered)
            assert fact.misremembered in failing.arguments.values() and fact.value not in failing.arguments.values()
            assert any(t.act == "inform" for t in spec.dialogue)
        env = tb.make(spec.full_id)
        try:
            info = tb.run_episode(env, tb.OracleAgent(), seed=0)
        finally:
            env.close()
        assert info["verdict"] == 1.0, (spec.id, {k: v for k, v in info["checks"].items() if v is not True})


def test_a_two_request_task_needs_both_requests():
    spec = next(s for s in _tasks() if s.family == "ST031" and not any(c.expect_error for c in s.golden))
    tickets = [c for c in spec.golden if c.name == "create_ticket"]
    assert len(tickets) == 2 and len({c.arguments.get("order_id") for c in tickets}) == 2
    assert _run(spec, _calls(spec))["verdict"] == 1.0
    second_starts = max(i for i, c in enumerate(spec.golden) if c.name == "get_customer_profile")
    info = _run(spec, _calls(spec)[:second_starts])  # only the first request handled
    assert info["verdict"] == 0.0


def _scripted_judge(body: dict) -> str:
    """The stand-in judge behind an OpenAI-compatible endpoint, reading the request the real judge client sends."""
    passed, reason = _judge("", body["messages"][1]["content"].split("Transcript:", 1)[1])
    return f"VERDICT: {'YES' if passed else 'NO'}\nREASON: {reason}."


def test_rubric_tasks_pass_with_the_golden_and_fail_when_the_reason_is_revealed():
    rubric_tasks = [s for s in _tasks() if s.checks.rubric]
    assert len(rubric_tasks) >= 10
    spec = _task("ST005", "reship_goodwill")
    assert spec.checks.rubric
    with FakeOpenAI(_scripted_judge) as server:
        judge = RubricJudge(model="judge", base_url=server.base_url, api_key="k", max_retries=0)
        good = _run(spec, _calls(spec), judge=judge)
        bad = _run(spec, _calls(spec), judge=judge,
                   closing=spec.golden_reply + " Customers with your standing get this extra credit automatically.")
        refusal = _task("ST003", "too_recent")
        explained = _run(refusal, _calls(refusal), judge=judge)
    rubric = f"rubric:{spec.checks.rubric[0].name}"
    assert good["checks"][rubric] is True and good["verdict"] == 1.0
    assert bad["checks"][rubric] is False and bad["verdict"] == 0.0
    assert explained["checks"][f"rubric:{refusal.checks.rubric[0].name}"] is True and explained["verdict"] == 1.0


# --------------------------------------------------------------------------- held-out split and statistics


def test_no_train_seed_produces_a_test_opening_or_a_held_out_combination():
    domain = load_domain("retail")
    for code, fam in domain.families.items():
        held = {f"{code}/{t}" for t in fam.OPENINGS.held_out}
        assert len(fam.OPENINGS.templates) >= 6 and held, code
        held_branches = {f"{code}:{b}" for b in getattr(fam, "held_out_branches", ())}
        for seed in range(1, 501):
            origin = fam.instance(seed, split="train").origin
            assert origin.opening not in held, (code, seed, origin.opening)
            assert not set(origin.branches) & held_branches, (code, seed, origin.branches)
    test_openings = {s.origin.opening for s in _tasks()}
    assert all(o.split("/")[1] in domain.families[o.split("/")[0]].OPENINGS.held_out for o in test_openings)


def statistics() -> dict[str, float]:
    """The task-set figures docs/domains/retail.md reports."""
    tasks = _tasks()
    writes = [len(_successful_writes(s)) for s in tasks]
    ticket_only = [s for s in tasks if all(c.name in TICKET_WRITES for c in _successful_writes(s))]
    return {
        "tasks": len(tasks),
        "ticket_only_share": len(ticket_only) / len(tasks),
        "mean_writes": sum(writes) / len(tasks),
        "recovery_share": sum(1 for s in tasks if any(c.expect_error for c in s.golden)) / len(tasks),
        "two_request_share": sum(1 for s in tasks if s.family == "ST031") / len(tasks),
        "rubric_tasks": sum(1 for s in tasks if s.checks.rubric),
    }


def test_the_task_set_meets_its_targets():
    stats = statistics()
    assert stats["tasks"] >= 98
    assert stats["ticket_only_share"] <= 0.25
    assert stats["mean_writes"] >= 2.5
    assert stats["recovery_share"] >= 0.10
    assert stats["two_request_share"] >= 0.10
    assert stats["rubric_tasks"] >= 10


def test_every_task_has_an_origin_a_dialogue_and_a_reason_for_every_write():
    guarded = {"cancel_order", "issue_refund", "refund_order_amount", "refund_membership_fee", "cancel_installation"}
    for spec in _tasks():
        assert spec.origin and spec.origin.opening and spec.origin.branches, spec.id
        assert spec.dialogue, spec.id
        for i, golden_call in enumerate(spec.golden):
            if golden_call.name in _writes() and not golden_call.expect_error:
                assert set(golden_call.arguments) <= set(golden_call.why or {}), (spec.id, golden_call.name)
            if golden_call.name in guarded:
                assert any(t.act == "propose" and t.before <= i for t in spec.dialogue), (spec.id, i)
