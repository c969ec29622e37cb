"""The TRL environment adapter, exercised through the same protocol GRPOTrainer uses."""

from __future__ import annotations

import inspect
import json

import pytest

import thinkingbox_env as tb
from thinkingbox_env.integrations.trl import (
    REPLY_TOOL,
    RefusedTestTask,
    environment_class,
    grpo_rows,
    oracle_conversation,
    reward_checks,
    reward_dialogue,
    reward_effects,
    reward_no_collateral,
    reward_progress,
    reward_verdict,
    task_for_row,
)


def _trl_tools(cls):
    """What TRL exposes: public functions of the class other than reset and get_reward."""
    return {n for n, _ in inspect.getmembers(cls, predicate=inspect.isfunction) if not n.startswith("_") and n not in ("reset", "get_reward")}


def test_the_adapter_exposes_exactly_the_domain_tools_and_the_reply_tool():
    cls = environment_class("retail")
    domain_tools = {n for n in tb.make("retail/ST030_001").toolbox.tools if n != "end_conversation"}
    assert _trl_tools(cls) == domain_tools | {REPLY_TOOL}
    assert "get_reward" in dict(inspect.getmembers(cls, predicate=inspect.isfunction))
    assert "get_reward" not in dict(inspect.getmembers(environment_class("retail", own_reward=False), predicate=inspect.isfunction))
    small = environment_class("retail", tools=["get_order", "cancel_order"])
    assert _trl_tools(small) == {"get_order", "cancel_order", REPLY_TOOL}
    with pytest.raises(ValueError, match="no tools"):
        environment_class("retail", tools=["launch_rocket"])


def test_tool_methods_carry_the_tool_signature_and_docstring():
    method = environment_class("retail").issue_refund
    params = inspect.signature(method).parameters
    assert list(params) == ["self", "payment_id", "amount", "reason"]
    assert params["amount"].annotation is float
    assert "Args:" in method.__doc__ and "payment_id:" in method.__doc__
    transformers = pytest.importorskip("transformers")
    schema = transformers.utils.get_json_schema(environment_class("retail")().issue_refund)
    assert schema["function"]["parameters"]["required"] == ["payment_id", "amount", "reason"]


def test_the_schemas_the_model_sees_name_exactly_the_exposed_tools():
    pytest.importorskip("transformers")
    from thinkingbox_env.integrations.trl import trl_tool_schemas

    cls = environment_class("retail", tools=["get_order", "cancel_order"])
    assert sorted(s["function"]["name"] for s in trl_tool_schemas(cls)) == sorted(["get_order", "cancel_order", REPLY_TOOL])


def test_an_oracle_conversation_needs_every_golden_tool_exposed():
    spec = tb.generate_variant("retail", "ST030", 5)
    with pytest.raises(ValueError, match="does not expose"):
        oracle_conversation(spec, tools=["get_customer_profile"])


def _row(family="ST030", seed=123456):
    return {"prompt": [{"role": "user", "content": ""}], "family": family, "seed": seed}


def test_reward_through_the_trl_path_equals_the_env_verdict():
    for family in ("ST030", "ST001", "ST003"):
        # a variant without rubric questions: without a judge those cannot pass (the judge path has its own test)
        row = next(r for seed in range(424242, 424342) if not task_for_row("retail", r := _row(family, seed)).checks.rubric)
        spec = task_for_row("retail", row)
        adapter = environment_class("retail")()
        assert adapter.reset(**row) == spec.user.opening
        turns = list(spec.dialogue)
        for i, call in enumerate(spec.golden):
            while turns and turns[0].before <= i:  # questions and the proposal a consent rule needs
                getattr(adapter, REPLY_TOOL)(message=turns.pop(0).say)
            json.loads(getattr(adapter, call.name)(**call.arguments))
        completion = [{"role": "assistant", "content": spec.golden_reply}]
        assert reward_verdict([completion], [adapter]) == [1.0]
        assert adapter.get_reward() == 1.0
        env = tb.ThinkingboxEnv(spec)
        assert tb.run_episode(env, tb.OracleAgent())["verdict"] == adapter.get_reward()


def test_a_wrong_trajectory_scores_zero_with_the_right_components():
    row = _row("ST030", 777)
    spec = task_for_row("retail", row)
    adapter = environment_class("retail")()
    adapter.reset(**row)
    writes = [c for c in spec.golden if c.name in ("update_membership",)]
    for call in writes:  # the upgrade, but no ticket
        getattr(adapter, call.name)(**call.arguments)
    completion = [{"role": "assistant", "content": spec.golden_reply}]
    assert reward_effects([completion], [adapter]) == [0.0]
    assert adapter.get_reward() == 0.0
    assert reward_no_collateral([completion], [adapter]) == [1.0]
    assert reward_dialogue([completion], [adapter]) == [1.0]
    (progress,) = reward_progress([completion], [adapter])
    assert 0.0 < progress < 1.0


def test_the_weighted_check_reward_is_the_wrappers_on_the_same_episode():
    from thinkingbox_env.envs.wrappers import CheckRewardWrapper

    row = _row("ST030", 777)
    spec = task_for_row("retail", row)
    adapter = environment_class("retail")()
    adapter.reset(**row)
    adapter.update_membership(**next(c for c in spec.golden if c.name == "update_membership").arguments)
    completion = [{"role": "assistant", "content": spec.golden_reply}]
    weights = {"effect": 3.0, "no_collateral": 0.0}
    (shaped,) = reward_checks(weights)([completion], [adapter])
    info = adapter._finish()  # the episode's final info, as the reward functions read it
    by_hand = CheckRewardWrapper(tb.ThinkingboxEnv(spec), weights).shaped(info)
    assert shaped == pytest.approx(by_hand) and 0.0 < shaped < 1.0
    # effects count three times, collateral not at all: the same episode under other weights scores otherwise
    (even,) = reward_checks()([completion], [adapter])
    assert even != pytest.approx(shaped)
    assert reward_verdict([completion], [adapter]) == [0.0]
    with pytest.raises(ValueError, match="non-negative"):
        reward_checks({"effect": -1.0})


def test_reset_restores_everything_between_rollouts():
    adapter = environment_class("retail")()
    row = _row("ST030", 99)
    spec = task_for_row("retail", row)
    adapter.reset(**row)
    for call in spec.golden:
        getattr(adapter, call.name)(**call.arguments)
    assert reward_verdict([[{"role": "assistant", "content": spec.golden_reply}]], [adapter]) == [1.0]
    adapter.reset(**row)
    assert adapter.get_reward() == 0.0  # a fresh episode: nothing done yet
    assert json.loads(adapter.get_order(order_id="ORD-404"))["error"]


def test_the_customer_is_reached_through_the_reply_tool():
    row = _row("ST030", 5)
    spec = task_for_row("retail", row)
    adapter = environment_class("retail")()
    adapter.reset(**row)
    email = next(f.text for f in spec.user.facts if "email" in f.unlock)
    assert adapter.reply_to_customer(message="What is the email address on your account?") == email


def test_training_never_sees_a_test_task():
    with pytest.raises(RefusedTestTask):
        task_for_row("retail", {"task_id": "retail/ST030_001"})
    test_spec = tb.load_task("retail/ST030_001").model_dump(mode="json")
    with pytest.raises(RefusedTestTask):
        task_for_row("retail", {"spec": test_spec})
    with pytest.raises(RefusedTestTask):
        oracle_conversation(tb.load_task("retail/ST030_001"))
    test_keys = {tb.load_task(t).content_key() for t in tb.list_tasks("retail")}
    for row in grpo_rows(["retail"], 3, seed=1, families={"retail": ["ST030", "ST001"]}):
        assert set(row) == {"prompt", "environment", "family", "seed"}
        assert task_for_row("retail", row).content_key() not in test_keys


def test_oracle_conversation_is_a_chat_with_tool_calls():
    spec = tb.generate_variant("retail", "ST030", 31337)
    conv = oracle_conversation(spec, include_policy=False)
    roles = [m["role"] for m in conv["messages"]]
    assert roles[:2] == ["system", "user"] and roles[-1] == "assistant"
    calls = [m["tool_calls"][0]["function"] for m in conv["messages"] if m.get("tool_calls")]
    assert calls[0]["name"] == REPLY_TOOL
    assert [c["name"] for c in calls if c["name"] != REPLY_TOOL] == [c.name for c in spec.golden]
    said = [json.loads(c["arguments"])["message"] for c in calls if c["name"] == REPLY_TOOL]
    assert said == [t.say for t in spec.dialogue] if spec.dialogue else len(said) == 1  # the task's written turns
    assert roles.count("tool") == len(calls)


def test_without_a_judge_rubric_variants_are_left_out_with_a_warning(caplog, monkeypatch):
    """Variants of one family are given a rubric question (real generated specs, one check added)."""
    import logging

    from thinkingbox_env.contracts.spec import RubricCheck
    from thinkingbox_env.integrations import trl as tb_trl

    generated = tb_trl.task_for_row

    def with_rubric(domain, row):
        spec = generated(domain, row)
        if row.get("family") == "ST030":
            spec.checks.rubric.append(RubricCheck(name="courteous", question="Was the assistant courteous?"))
        return spec

    monkeypatch.setattr(tb_trl, "task_for_row", with_rubric)
    families = {"retail": ["ST030", "ST004"]}
    with caplog.at_level(logging.WARNING, logger="thinkingbox_env.integrations.trl"):
        kept = tb_trl.grpo_rows(["retail"], 3, seed=0, families=families, judge=False)
    assert {r["family"] for r in kept} == {"ST004"}
    assert "no judge configured" in caplog.text and "retail:ST030: 3" in caplog.text
    assert {r["family"] for r in tb_trl.grpo_rows(["retail"], 3, seed=0, families=families, judge=True)} == {"ST030", "ST004"}


def test_the_judge_reaches_the_episodes_of_an_environment_class():
    from thinkingbox_env.integrations.trl import environment_class

    def judge(question, transcript):
        return True, "scripted"

    cls = environment_class("retail", judge=judge)
    assert cls.judge is judge and environment_class("retail").judge is None
    env = cls()
    env.reset(family="ST030", seed=12345)
    assert env._env.unwrapped.judge is judge


def test_a_restricted_tool_set_leaves_out_variants_whose_golden_needs_other_tools():
    """ST004 variants of the injection dimension report with report_injection, which four tools leave out."""
    from thinkingbox_env.integrations import trl as tb_trl

    tools = ["get_customer_profile", "search_tickets", "get_shipment", "update_ticket"]
    families = {"retail": ["ST004"]}
    every = tb_trl.grpo_rows(["retail"], 30, seed=3, families=families)
    needing = [r for r in every if "report_injection" in {c.name for c in tb_trl.task_for_row("retail", r).golden}]
    assert needing, "no ST004 variant of the injection dimension among 30: the test needs one"
    kept = tb_trl.grpo_rows(["retail"], 30, seed=3, families=families, tools=tools)
    assert sorted(r["seed"] for r in kept) == sorted(r["seed"] for r in every if r not in needing)
    for row in kept:  # every kept variant's oracle conversation can be shown with the four tools
        assert {c.name for c in tb_trl.task_for_row("retail", row).golden} <= set(tools)
    with pytest.raises(ValueError, match="report_injection"):
        oracle_conversation(tb_trl.task_for_row("retail", needing[0]), include_policy=False, tools=tools)
