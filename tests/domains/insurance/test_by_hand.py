"""Insurance tasks stepped by hand: the right run earns 1, each plausible mistake earns 0 with the right check named."""

from __future__ import annotations

import json
from datetime import date

import thinkingbox_env as tb
from thinkingbox_env.tasks.domain import load_domain

RULES = load_domain("insurance").module("rules")

# two questions: the scripted user answers at most three things per message
ASK = ("To get started, what is the email address on your account and your date of birth?",
       "For full verification I also need your policy number, the answer to your security question, or the last four digits of your SSN.")


def _plain(spec) -> bool:
    return not spec.faults and not any(c.expect_error for c in spec.golden) and not any(f.misremembered for f in spec.user.facts)


def pick(code: str, branch: str):
    """A task of a family branch whose golden path has no recovery step: the first frozen one, else a training variant."""
    for task_id in tb.list_tasks(domain="insurance"):
        spec = tb.load_task(task_id)
        if spec.family == code and branch in spec.tags and _plain(spec):
            return spec
    for seed in range(1, 200):
        spec = tb.generate_variant("insurance", code, seed)
        if branch in spec.tags and _plain(spec):
            return spec
    raise LookupError(f"no plain {code} task of branch {branch}")


def call(env, tool: str, **arguments):
    """Step one tool call by hand and return its parsed result."""
    obs, *_ = env.step({"name": tool, "arguments": arguments})
    return json.loads(obs["messages"][-1]["content"])


def _replay(spec, change, closing=lambda results: "All done, thank you for your patience.") -> tuple[dict, dict]:
    """Step a task by hand: ask for the customer's details, then the golden calls as ``change`` rewrites them."""
    env = tb.ThinkingboxEnv(spec)
    env.reset(seed=0)
    answer = ""
    for question in ASK:
        obs, *_ = env.step(question)
        answer += obs["messages"][-1]["content"]
    verify = next(c.arguments for c in spec.golden if c.name == "verify_identity")
    assert verify["date_of_birth"] in answer  # the scripted user released what was asked
    results: dict[str, object] = {}
    for c in change(spec, [(c.name, dict(c.arguments)) for c in spec.golden], results):
        content = call(env, c[0], **c[1])
        assert "error" not in content, (c, content)  # every call succeeds at the tool level
        results[c[0]] = content
    obs, reward, term, trunc, info = env.step(f"{closing(results)} <DONE>")
    env.close()
    assert term and info["finish_reason"] == "done_marker"
    return info, results


def _failed(info: dict) -> set[str]:
    return {name for name, ok in info["checks"].items() if ok is False}


def _insert_before_ticket(calls: list, new_call: tuple) -> list:
    i = next(i for i, c in enumerate(calls) if c[0] == "create_ticket")
    return calls[:i] + [new_call] + calls[i:]


def test_extension_granted_past_the_arrangement_limit_fails():
    spec = task = pick("IN001", "limit_reached")
    billing = next(c.arguments["billing_account_id"] for c in spec.golden if c.name == "get_arrangement_history")

    def change(spec, calls, results):
        for name, args in calls:
            if name == "create_ticket":
                due = date.fromisoformat(results["get_billing_account"]["due_date"])
                new = RULES.add_business_days(max(due, date(2026, 5, 19)), 2)
                yield ("grant_extension", {"billing_account_id": billing, "new_due_date": new.isoformat()})
            yield (name, args)

    info, results = _replay(task, change)
    assert results["grant_extension"]["status"] == "extended"  # the backend took it
    assert info["verdict"] == 0.0
    # the closing is the golden refusal, so what the customer is told no longer matches the write: claims names it too
    failed = _failed(info)
    assert {"sql:arrangements_within_tier_limit", "no_collateral"} <= failed
    assert all(n.startswith("claims:") for n in failed - {"sql:arrangements_within_tier_limit", "no_collateral"})
    detail = next(d["detail"] for d in info["check_details"] if d["name"] == "no_collateral")
    assert "payment_arrangements:insert" in detail and "billing_accounts" in detail
    assert info["failure_category"] == "wrong_state_update"


def test_id_card_issued_without_full_verification_fails():
    spec = task = pick("IN003", "partial_verification")
    policy = next(c.arguments["policy_id"] for c in spec.golden if c.name == "create_ticket")
    vehicle = spec.patch.insert["vehicles"][0]["id"]

    def change(spec, calls, results):
        calls = _insert_before_ticket(calls, ("issue_document", {"policy_id": policy, "doc_type": "id_card", "vehicle_id": vehicle}))
        yield from calls

    info, results = _replay(task, change)
    assert results["verify_identity"]["verification_level"] == "partial"
    assert results["issue_document"]["link"].endswith(".pdf")
    assert info["verdict"] == 0.0
    # the closing is the golden's pending reply, so a claim check may also name the document it does not mention
    failed = _failed(info)
    assert {"sql:documents_only_with_full_verification", "no_collateral"} <= failed
    assert all(n.startswith("claims:") for n in failed - {"sql:documents_only_with_full_verification", "no_collateral"})
    assert info["failure_category"] == "wrong_state_update"


def test_driver_added_with_the_wrong_effective_date_fails():
    spec = task = pick("IN004", "add_tomorrow")
    assert next(c.arguments["effective_date"] for c in spec.golden if c.name == "add_driver") == "2026-05-20"

    def change(spec, calls, results):
        for name, args in calls:
            if name == "add_driver":
                args = {**args, "effective_date": "2026-05-19"}  # "starting today", as the customer asked
            yield (name, args)

    info, _ = _replay(task, change, lambda r: "Done: the new driver is listed on your policy effective today, 2026-05-19.")
    assert info["verdict"] == 0.0
    failed = _failed(info)
    assert "effect:drivers:insert#1" in failed
    # the customer was told, consistently, the wrong date: the date they must be told is the policy's, so the
    # mention fails too, and the failure is still the wrong write
    assert failed <= {"effect:drivers:insert#1", "effect:endorsements:insert#1", "no_collateral",
                      "mentions:states_effective_date"}
    assert "grounded_values" not in failed
    detail = next(d["detail"] for d in info["check_details"] if d["name"] == "effect:drivers:insert#1")
    assert '"effective_date": {"expected": "2026-05-20", "actual": "2026-05-19"}' in detail
    assert info["failure_category"] == "wrong_state_update"


def test_claim_filed_on_the_wrong_vehicle_fails():
    spec = task = pick("IN008", "collision_minor")
    right = next(c.arguments["vehicle_id"] for c in spec.golden if c.name == "file_claim")
    wrong = next(v["id"] for v in spec.patch.insert["vehicles"] if v["id"] != right)

    def change(spec, calls, results):
        for name, args in calls:
            if name == "file_claim":
                args = {**args, "vehicle_id": wrong}
            yield (name, args)

    # the closing names what policy section 13 asks (the claim number, its loss type and severity)
    info, results = _replay(task, change, lambda r: f"I've opened claim {r['file_claim']['claim_id']} for you, a minor collision claim.")
    assert results["file_claim"]["status"] == "open"
    assert info["verdict"] == 0.0
    failed = _failed(info)
    assert "effect:claims:insert#1" in failed and failed <= {"effect:claims:insert#1", "no_collateral"}
    detail = next(d["detail"] for d in info["check_details"] if d["name"] == "effect:claims:insert#1")
    assert f'"vehicle_id": {{"expected": "{right}", "actual": "{wrong}"}}' in detail
    assert info["failure_category"] == "wrong_state_update"


def test_the_right_run_by_hand_earns_reward_1():
    info, results = _replay(pick("IN008", "collision_minor"), lambda spec, calls, results: iter(calls),
                            lambda r: f"I've opened claim {r['file_claim']['claim_id']}; an adjuster will call you.")
    assert info["verdict"] == 1.0 and info["failure_category"] is None


def _one_argument_wrong(code: str, branch: str, tool: str, argument: str, wrong):
    spec = pick(code, branch)
    right = next(c.arguments[argument] for c in spec.golden if c.name == tool)
    assert right != wrong

    def change(spec, calls, results):
        for name, args in calls:
            yield (name, {**args, argument: wrong} if name == tool else args)

    info, _ = _replay(spec, change)
    return spec, right, info


def test_a_vehicle_added_with_the_wrong_model_fails():
    """vehicles.model was volatile: an agent could list a CR-V as a Civic and pass."""
    _, right, info = _one_argument_wrong("IN006", "add_recent_purchase", "add_vehicle", "model", "Wrongmodel 9000")
    assert info["verdict"] == 0.0
    assert "effect:vehicles:insert#1" in _failed(info)
    detail = next(d["detail"] for d in info["check_details"] if d["name"] == "effect:vehicles:insert#1")
    assert f'"model": {{"expected": "{right}", "actual": "Wrongmodel 9000"}}' in detail
    assert info["failure_category"] == "wrong_state_update"


def test_a_driver_added_under_the_wrong_name_fails():
    """drivers.full_name was volatile: any name passed for the driver the customer named."""
    _, right, info = _one_argument_wrong("IN004", "add_tomorrow", "add_driver", "full_name", "Someone Else Entirely")
    assert info["verdict"] == 0.0
    assert "effect:drivers:insert#1" in _failed(info)
    detail = next(d["detail"] for d in info["check_details"] if d["name"] == "effect:drivers:insert#1")
    assert '"full_name"' in detail and right in detail


def test_a_vehicle_removed_for_the_wrong_reason_fails():
    """remove_vehicle.reason was returned but never stored; endorsements.reason now keeps it."""
    spec, right, info = _one_argument_wrong("IN007", "remove_sold", "remove_vehicle", "reason", "totaled")
    assert right == "sold"
    assert info["verdict"] == 0.0
    assert "effect:endorsements:insert#1" in _failed(info)
    detail = next(d["detail"] for d in info["check_details"] if d["name"] == "effect:endorsements:insert#1")
    assert '"reason": {"expected": "sold", "actual": "totaled"}' in detail


def test_the_names_and_models_are_stored_with_their_spaces_collapsed():
    """Exact grading compares what the backend keeps: ' Jane   Doe ' is stored as 'Jane Doe'."""
    spec = pick("IN004", "add_tomorrow")
    env = tb.ThinkingboxEnv(spec)
    env.reset(seed=0)
    args = dict(next(c.arguments for c in spec.golden if c.name == "add_driver"))
    out = call(env, "add_driver", **{**args, "full_name": "  " + args["full_name"].replace(" ", "   ") + " "})
    row = env.state.query_one("SELECT full_name FROM drivers WHERE id = ?", [out["driver_id"]])
    assert row["full_name"] == " ".join(args["full_name"].split())
    env.close()
