"""Auto-insurance domain: its size, a sample of its tasks validating, and task set v2 defect by defect.

The wrong trajectories are the ones the paper reports for this domain: every tool call succeeds,
and only the checks over the final state tell that the policy forbade the change.

For task set v2 each defect class of the first set is shown gone, by a replay and by a property.
A replay runs a frozen task through the environment with the oracle agent, once as the policy
reads (it must pass) and once with the golden altered to the wrong-but-plausible move (it must
fail). A property draws 500 variants of a family and checks what every variant must hold, so the
generator, not only the frozen sample, is shown to be fixed.
"""

from __future__ import annotations

import importlib
import json
import re
from datetime import date, datetime, timedelta
from functools import cache
from typing import Any

import pytest
from fake_openai import FakeOpenAI

import thinkingbox_env as tb
from thinkingbox_env.contracts.spec import TaskSpec, ToolCall
from thinkingbox_env.eval.validate import validate_task
from thinkingbox_env.judging.judge import RubricJudge
from thinkingbox_env.tasks.domain import load_domain

DOMAIN = load_domain("insurance")
TOOLS = DOMAIN.tools_module

def test_the_domain_is_at_least_as_rich_as_the_papers():
    tools = [t for name, t in DOMAIN.toolbox.tools.items() if name != "end_conversation"]
    writes = [t for t in tools if t.writes]
    assert len(DOMAIN.db.tables) >= 14
    assert len(tools) >= 30 and len(writes) >= 13 and len(tools) - len(writes) >= 14
    assert len(DOMAIN.kb_documents()) >= 8
    assert len(DOMAIN.policy.split()) >= 2000
    tasks = tb.list_tasks(domain="insurance")
    families = {tb.load_task(t).family for t in tasks}
    assert len(tasks) >= 100 and len(families) >= 8
    assert families == set(DOMAIN.families)
    branches = {(tb.load_task(t).family, tb.load_task(t).tags[1]) for t in tasks}
    # every family whose requests need full verification has the branch where the customer cannot reach it; a first
    # notice of loss needs only partial verification, and two requests are verified once, together
    full = [code for code, fam in DOMAIN.families.items() if getattr(fam, "LEVEL", "full") == "full" and code != "IN011"]
    assert all(any(b.startswith("partial_verification") for f, b in branches if f == code) for code in full)
    assert all((code, b) in branches for code, fam in DOMAIN.families.items() for b in fam.branches)




SAMPLE = [f"insurance/{code}_{n:03d}" for code, n in
          [("IN001", 1), ("IN002", 3), ("IN003", 3), ("IN004", 4), ("IN005", 5), ("IN006", 1), ("IN007", 2), ("IN008", 3),
           ("IN009", 3), ("IN010", 5)]]  # tasks without a rubric: those need a judge (see test_task_set_v2)


@pytest.mark.parametrize("task_id", SAMPLE)
def test_sample_tasks_validate(task_id):
    result = validate_task(tb.load_task(task_id))
    assert result.ok, result.problems


def test_train_variants_are_fresh_and_solvable():
    for code in DOMAIN.families:
        seed = 4242
        while (spec := tb.generate_variant("insurance", code, seed)).checks.rubric:  # a rubric needs a judge
            seed += 1
        assert spec.split == "train"
        info = tb.run_episode(tb.ThinkingboxEnv(spec), tb.OracleAgent())
        assert info["verdict"] == 1.0, (code, json.dumps(info["checks"]))


# =========================================================================== task set v2

WRITES = {name for name, t in DOMAIN.toolbox.tools.items() if t.writes}
VARIANTS = 500


@cache
def frozen() -> tuple[TaskSpec, ...]:
    return tuple(tb.load_task(t) for t in tb.list_tasks(domain="insurance"))


def of(code: str, *tags: str, plain: bool = True) -> list[TaskSpec]:
    """Frozen tasks of a family with all ``tags``; ``plain`` ones have no recovery step on their golden path."""
    return [s for s in frozen() if s.family == code and set(tags) <= set(s.tags)
            and (not plain or (not s.faults and not any(c.expect_error for c in s.golden)))]


@pytest.fixture(scope="module", autouse=True)
def _judge_server():
    """A local endpoint standing in for an OpenAI-compatible judge, shared by the module's runs of rubric tasks."""
    with FakeOpenAI(scripted_judge) as server:
        JUDGE["default"] = RubricJudge(model="judge", base_url=server.base_url, api_key="k", max_retries=0)
        yield
        JUDGE.clear()


JUDGE: dict[str, RubricJudge] = {}


def run(spec: TaskSpec, calls: list[ToolCall] | None = None, closing: str | None = None, judge: Any = None) -> dict[str, Any]:
    """One episode with the oracle playing ``calls`` (default the golden); a task with a rubric is graded by the judge."""
    if judge is None and spec.checks.rubric:
        judge = JUDGE["default"]
    env = tb.ThinkingboxEnv(spec, judge=judge, max_actions=200)
    try:
        return tb.run_episode(env, tb.OracleAgent(calls, closing=closing), seed=0)
    finally:
        env.close()


@cache
def _variants(code: str, n: int) -> tuple[dict[str, Any], ...]:
    fam = DOMAIN.families[code]
    return tuple(fam.instance(seed, split="train").model_dump(mode="json") for seed in range(1, n + 1))


def variants(code: str, n: int = VARIANTS) -> tuple[dict[str, Any], ...]:
    """``n`` training variants of a family (seeds 1..n), as plain data; built once per test session."""
    return _variants(code, n)


def texts(body: dict[str, Any]) -> list[str]:
    return [body["user"]["opening"], body["golden_reply"], *(f["text"] for f in body["user"]["facts"])]


# --------------------------------------------------------------------------- identity to the level the request needs


def test_a_first_notice_of_loss_is_verified_to_partial_and_verifying_more_is_not_required():
    spec = of("IN008", "collision_minor")[0] if of("IN008", "collision_minor") else next(
        s for s in of("IN008") if any(c.name == "file_claim" for c in s.golden))
    for s in of("IN008", plain=False):
        verify = next(c for c in s.golden if c.name == "verify_identity")
        assert set(verify.arguments) == {"customer_id", "date_of_birth"}, s.id  # the policy: partial is enough, ask only for that
    info = run(spec)
    assert info["verdict"] == 1.0, info["checks"]
    level = next(e["result"]["verification_level"] for e in info["trace"] if e.get("type") == "tool_call" and e["name"] == "verify_identity")
    assert level == "partial"
    # the first set's golden: full verification with the policy number the policy says not to ask for
    over = [ToolCall(name=c.name, arguments={**c.arguments, "policy_number": spec.patch.insert["policies"][0]["id"]})
            if c.name == "verify_identity" else c for c in spec.golden]
    assert run(spec, over)["verdict"] == 0.0


def test_full_level_requests_verify_with_exactly_one_secondary_factor():
    for s in frozen():
        if s.family == "IN008":
            continue
        verify = [c for c in s.golden if c.name == "verify_identity"]
        assert len(verify) == 1, s.id
        secondary = set(verify[0].arguments) & {"policy_number", "security_answer", "ssn_last4"}
        assert len(secondary) == (0 if "partial_verification" in s.tags else 1), s.id


# --------------------------------------------------------------------------- the opening and the deciding facts agree


def test_the_loss_story_names_whoever_was_driving():
    fam = DOMAIN.families["IN008"]
    for body in variants("IN008"):
        opening = body["user"]["opening"]
        driving = next(f["text"] for f in body["user"]["facts"] if f["text"].endswith("was driving."))
        if body["origin"]["opening"].split("/")[1].startswith("vague"):
            continue
        if driving == "I was driving.":
            others = [d["full_name"].split()[0] for d in body["patch"]["insert"]["drivers"] if d["relationship"] != "self"]
            assert not any(re.search(rf"\b{o}\b", opening) for o in others), opening
        else:
            first = driving.split()[2]
            assert first in opening, (opening, driving)
            assert not re.search(r"\bI (rear-ended|scraped|clipped|got hit|hit)\b", opening), opening
    assert fam.OPENINGS is not None


def test_a_claim_for_an_excluded_driver_is_escalated_and_filing_it_fails():
    spec = of("IN008", "excluded_driver")[0]
    excluded = next(d for d in spec.patch.insert["drivers"] if d["status"] == "excluded")
    first = excluded["full_name"].split()[0]
    if not spec.origin.opening.split("/")[1].startswith("vague"):
        assert first in spec.user.opening  # the story is told about the one who was driving
    assert run(spec)["verdict"] == 1.0
    vehicle = next(c.arguments["vehicle_id"] for c in spec.golden if c.name == "get_claims_by_vehicle")
    self_id = next(d["id"] for d in spec.patch.insert["drivers"] if d["relationship"] == "self")
    i = next(i for i, c in enumerate(spec.golden) if c.name == "create_ticket")
    wrong = [*spec.golden[:i], ToolCall(name="file_claim", arguments={
        "policy_id": spec.patch.insert["policies"][0]["id"], "vehicle_id": vehicle, "date_of_loss": "2026-05-18",
        "loss_type": "collision", "severity": "minor", "injuries": False, "drivable": True, "description": "Rear-ended a car.",
        "driver_id": self_id})] + [c if c.name != "create_ticket" else ToolCall(name=c.name, arguments={
            **c.arguments, "status": "solved", "priority": "normal", "assigned_team": None}) for c in spec.golden[i:]]
    assert run(spec, wrong)["verdict"] == 0.0


# --------------------------------------------------------------------------- dates drawn from the policy outward


def _day(value: str) -> date:
    return date.fromisoformat(str(value)[:10])


@pytest.mark.parametrize("code", sorted(DOMAIN.families))
def test_dates_are_consistent_with_the_policy(code):
    now = DOMAIN.spec.clock
    for body in variants(code):
        rows = body["patch"]["insert"]
        policy = rows["policies"][0]
        start = _day(policy["effective_date"])
        assert _day(rows["customers"][0]["customer_since"]) <= start
        for table in ("drivers", "vehicles"):
            for r in rows.get(table, []):
                assert _day(r["effective_date"]) >= start, (code, table, r)  # nobody listed before the policy existed
                if r.get("end_date"):
                    assert _day(r["end_date"]) >= _day(r["effective_date"])
        for c in rows.get("claims", []):
            loss = _day(c["date_of_loss"])
            assert start <= loss, (code, c)  # no loss before the policy existed
            assert loss <= _day(c["reported_at"]), (code, c)  # no report before the loss
            assert datetime.fromisoformat(c["reported_at"]) <= now
            drivers = {d["id"]: d for d in rows["drivers"]}
            if c["driver_id"]:
                assert _day(drivers[c["driver_id"]]["effective_date"]) <= loss
        for r in rows.get("reinstatements", []):
            assert _day(r["effective_date"]) > _day(policy["lapse_date"])
        for call in body["golden"]:
            if call["name"] == "file_claim":
                drivers = {d["id"]: d for d in rows["drivers"]}
                loss = _day(call["arguments"]["date_of_loss"])
                assert start <= loss <= now.date()
                assert _day(drivers[call["arguments"]["driver_id"]]["effective_date"]) <= loss


def test_the_reinstatement_deadline_leaves_room_for_next_weeks_payday():
    seen = 0
    for body in variants("IN009"):
        if "cannot_pay_now" not in body["tags"]:
            continue
        pay = next(f["text"] for f in body["user"]["facts"] if "get paid next week" in f["text"])
        payday = datetime.strptime(pay.split(", on ")[1].rstrip("."), "%A, %B %d, %Y").date()
        lapse = date.fromisoformat(re.search(r"the lapse on (\d{4}-\d\d-\d\d)", body["golden_reply"]).group(1))
        assert payday.isoformat() in body["golden_reply"]  # the reply sends the customer back when they can pay
        assert payday <= lapse + timedelta(days=30), (payday, lapse)  # and that is still inside the 30-day window
        seen += 1
    assert seen >= 50
    spec = of("IN009", "cannot_pay_now")[0]
    assert run(spec)["verdict"] == 1.0
    # reinstating anyway, without the payment the policy requires in full now, fails
    policy = spec.patch.insert["policies"][0]["id"]
    i = next(i for i, c in enumerate(spec.golden) if c.name == "create_ticket")
    wrong = [*spec.golden[:i], ToolCall(name="reinstate_policy", arguments={"policy_id": policy, "effective_date": "2026-05-19"}),
             *spec.golden[i:]]
    assert run(spec, wrong)["verdict"] == 0.0


# --------------------------------------------------------------------------- relationship words drawn with the name

FEMALE = r"wife|daughter|sister|mother"
MALE = r"husband|son|brother|father"


@pytest.mark.parametrize("code", ["IN004", "IN005", "IN008", "IN011"])
def test_relationship_words_agree_with_the_name(code):
    kit = importlib.import_module(type(DOMAIN.families["IN004"]).__module__.rsplit(".", 1)[0] + "._people")
    seen = 0
    for body in variants(code):
        for text in texts(body):
            for word, name in re.findall(rf"\b(?i:my) ({FEMALE}|{MALE})(?:'s full name is)? ([A-Z][a-z]+)", text):
                pool = kit.FEMALE_FIRST if re.fullmatch(FEMALE, word) else kit.MALE_FIRST
                assert name in pool, (word, name, text)
                seen += 1
    assert seen >= 100


# --------------------------------------------------------------------------- variety and the held-out split


def test_every_family_has_six_openings_and_the_test_split_holds_its_own():
    for code, fam in DOMAIN.families.items():
        assert len(fam.OPENINGS.templates) >= 6 and len(fam.OPENINGS.held_out) >= 3, code
    held = {f"{code}/{t}" for code, fam in DOMAIN.families.items() for t in fam.OPENINGS.held_out}
    held_branches = {f"IN011:{b}" for b in DOMAIN.families["IN011"].held_out_branches}
    for code, fam in DOMAIN.families.items():
        for seed in range(1, VARIANTS + 1):
            spec = fam.instance(seed, split="train")
            assert spec.origin.opening not in held, (code, seed, spec.origin.opening)
            assert not held_branches & set(spec.origin.branches), (code, seed)
    for s in frozen():
        assert s.origin.opening in held, (s.id, s.origin.opening)
    assert {b for s in frozen() for b in s.origin.branches} & held_branches == held_branches


# --------------------------------------------------------------------------- recovery on the correct path


def test_a_misremembered_number_is_looked_up_again_and_giving_up_fails():
    spec = next(s for s in frozen() if any(f.misremembered for f in s.user.facts) and s.family != "IN011")
    failed = next(i for i, c in enumerate(spec.golden) if c.expect_error)
    assert spec.golden[failed].name == "find_customer"
    assert run(spec)["verdict"] == 1.0
    gave_up = run(spec, spec.golden[: failed + 1], closing="I couldn't find your account, sorry.")
    assert gave_up["verdict"] == 0.0


def test_a_transient_error_is_retried_and_not_retrying_fails():
    spec = next(s for s in frozen() if s.faults)
    failed = next(i for i, c in enumerate(spec.golden) if c.expect_error and c.name == spec.faults[0].tool)
    assert spec.golden[failed + 1].name == spec.golden[failed].name
    assert run(spec)["verdict"] == 1.0
    no_retry = [c for i, c in enumerate(spec.golden) if i != failed + 1]
    assert run(spec, no_retry)["verdict"] == 0.0


# --------------------------------------------------------------------------- two requests in one conversation


def test_two_requests_share_one_ticket_and_each_is_checked():
    combined = [s for s in frozen() if s.family == "IN011"]
    for s in combined:
        assert sum(c.name == "create_ticket" for c in s.golden) == 1, s.id
        assert sum(c.name == "verify_identity" for c in s.golden) == 1, s.id
    spec = next(s for s in combined if not s.faults and sum(c.name in WRITES for c in s.golden) >= 3
                and any(c.name in ("add_driver", "add_vehicle", "remove_vehicle", "remove_driver", "update_driver_status",
                                   "update_vehicle_coverage") for c in s.golden))
    assert run(spec)["verdict"] == 1.0
    own = [i for i, c in enumerate(spec.golden) if c.name not in ("verify_identity", "create_ticket", "create_ticket_user")
           and c.name in WRITES]
    assert run(spec, [c for i, c in enumerate(spec.golden) if i != own[-1]])["verdict"] == 0.0


# --------------------------------------------------------------------------- rubric tasks, graded by a scripted judge

LEAKS = re.compile(r"fraud|flag|investigat|suspic|security concern|risk", re.IGNORECASE)


def scripted_judge(body: dict) -> str:
    """An OpenAI-compatible judge that reads the requirement and the transcript it is sent."""
    prompt = body["messages"][-1]["content"]
    said = " ".join(line for line in prompt.splitlines() if line.startswith("ASSISTANT:"))
    if "internal flag" in prompt:
        ok = not LEAKS.search(said) and "another team" in said
    elif "remain without coverage" in prompt or "remain without coverage" in prompt.lower():
        ok = "without coverage" in said
    else:
        ok = True
    return f"VERDICT: {'YES' if ok else 'NO'}\nREASON: scripted."


def test_rubric_requirements_are_graded_by_the_judge():
    rubric_tasks = [s for s in frozen() if s.checks.rubric]
    assert {r.name for s in rubric_tasks for r in s.checks.rubric} == {"keeps_the_review_reason_confidential"}
    fraud = of("IN001", "fraud_flag", plain=False)[0]
    # the coverage gap of a reinstatement is a stated role now (lapse_date), not a rubric question
    gap = next(s for s in frozen() if "lapse_date" in s.checks.states)
    assert run(fraud)["verdict"] == 1.0
    leaked = run(fraud, closing="Your account is under review by our investigations team, so another team will contact you.")
    assert leaked["verdict"] == 0.0 and leaked["checks"]["rubric:keeps_the_review_reason_confidential"] is False
    assert run(gap)["verdict"] == 1.0
    silent = run(gap, closing=gap.golden_reply.split(" The days from")[0])
    assert silent["checks"]["states:lapse_date"] is None and "states:lapse_date" in silent["unverified"]
    judged = JUDGE["default"]
    assert judged is not None


# --------------------------------------------------------------------------- the statistics the domain doc reports


def statistics() -> dict[str, float]:
    tasks = frozen()
    writes = [sum(1 for c in s.golden if c.name in WRITES and not c.expect_error) for s in tasks]
    return {
        "tasks": len(tasks),
        "mean_writes": sum(writes) / len(tasks),
        "recovery": sum(1 for s in tasks if any(c.expect_error for c in s.golden)) / len(tasks),
        "combined": sum(1 for s in tasks if s.family == "IN011") / len(tasks),
        "rubric_tasks": sum(1 for s in tasks if s.checks.rubric),
        "refusals_by_tool_error": sum(1 for s in tasks for c in s.golden
                                      if c.expect_error and c.name != "find_customer" and not s.faults),
    }


def test_the_task_set_meets_its_targets():
    st = statistics()
    assert st["tasks"] >= 110
    assert st["mean_writes"] >= 2.5
    assert st["recovery"] >= 0.10
    assert st["combined"] >= 0.10
    assert 1 <= st["rubric_tasks"] <= 0.065 * st["tasks"]  # near the published benchmark's 6% share
    assert st["refusals_by_tool_error"] == 0  # every refusal is the policy's decision; the tools record what they are told
    for s in frozen():
        assert s.dialogue and s.origin.opening, s.id
        for c in s.golden:
            if c.name in WRITES:
                assert c.why, (s.id, c.name)
