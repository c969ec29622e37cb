"""reward_progress pays for work only: an episode that did nothing gets 0 on every task, effect checks or none."""

from __future__ import annotations

import pytest

from thinkingbox_env.integrations.trl import (
    REPLY_TOOL,
    asked_checks,
    environment_class,
    progress_value,
    reward_progress,
    reward_verdict,
    task_for_row,
)
from thinkingbox_env.tasks.domain import domain_dirs, load_domain

IDLE = [{"role": "assistant", "content": "I'm unable to help with this request."}]
# train variants whose task has no effect check: the right outcome is an answer (the latest shipment event, the
# approval windows), so progress has to come from what the task asks to be said
NO_EFFECT_VARIANTS = [("retail", "ST004", 3), ("neobank", "NB009", 1)]


def _episode(domain: str, family: str, seed: int):
    env = environment_class(domain)()
    env.reset(family=family, seed=seed)
    return env


@pytest.mark.parametrize(("domain", "family", "seed"), NO_EFFECT_VARIANTS)
def test_doing_nothing_on_a_variant_without_effect_checks_earns_no_progress(domain, family, seed):
    env = _episode(domain, family, seed)
    assert reward_progress([IDLE], [env]) == [0.0]
    details = env._finish()["check_details"]
    assert not any(d["kind"] == "effect" for d in details)  # the premise: nothing in the backend is to change
    # the guards an idle episode keeps (no collateral, process, withholds, ...) are not progress
    assert any(d["passed"] for d in details) and not any(d["passed"] for d in asked_checks(details))


@pytest.mark.parametrize(("domain", "family", "seed"), NO_EFFECT_VARIANTS)
def test_the_oracle_on_the_same_variant_earns_full_progress(domain, family, seed):
    spec = task_for_row(domain, {"family": family, "seed": seed})
    env = _episode(domain, family, seed)
    turns = list(spec.dialogue)
    for i, call in enumerate(spec.golden):
        while turns and turns[0].before <= i:
            getattr(env, REPLY_TOOL)(message=turns.pop(0).say)
        getattr(env, call.name)(**call.arguments)
    completion = [{"role": "assistant", "content": spec.golden_reply}]
    assert reward_verdict([completion], [env]) == [1.0]
    assert reward_progress([completion], [env]) == [1.0]
    assert asked_checks(env._finish()["check_details"])  # the task does ask something


def test_an_idle_episode_earns_no_progress_on_any_family():
    played = 0
    for domain in sorted(domain_dirs()):
        cls = environment_class(domain)
        for family in load_domain(domain).families:
            env = cls()
            env.reset(family=family, seed=3)
            env._record_final_message(IDLE[0]["content"])
            value = progress_value(env._finish()["check_details"])
            assert value == 0.0, f"{domain}:{family} pays {value} for doing nothing"
            played += 1
    assert played > 50


def test_progress_counts_effects_where_a_task_has_them_and_never_guards():
    effect = {"kind": "effect", "name": "effect:a", "passed": True}
    missed = {"kind": "effect", "name": "effect:b", "passed": False}
    guard = {"kind": "no_collateral", "name": "no_collateral", "passed": True}
    said = {"kind": "mentions", "name": "mentions:x", "passed": True}
    unjudged = {"kind": "rubric", "name": "rubric:q", "passed": None}
    assert progress_value([effect, missed, guard, said]) == 0.5  # effects decide where there are any
    assert progress_value([guard, said, {**said, "name": "mentions:y", "passed": False}]) == 0.5
    assert progress_value([guard, unjudged]) == 0.0  # nothing asked that could be seen done
    assert progress_value([effect, {**guard, "passed": False}]) == 0.5  # collateral still costs 0.5


def test_verifiers_groups_pay_nothing_where_a_task_has_none_of_their_checks():
    pytest.importorskip("verifiers")
    from thinkingbox_env.integrations.verifiers import STATE_KEY, rubric

    env = _episode("retail", "ST004", 3)
    env._record_final_message(IDLE[0]["content"])
    state = {STATE_KEY: env._finish()}
    assert not any(d["kind"] in ("effect", "sql") for d in state[STATE_KEY]["check_details"])
    values = {f.__name__: f(state=state) for f in rubric().funcs}
    assert values["reward_effects"] == 0.0 and values["reward_rubric"] == 0.0 and values["reward_progress"] == 0.0
    assert values["reward_no_collateral"] == 1.0  # a guard an idle episode keeps, documented as such


def test_the_weighted_check_reward_pays_an_idle_episode_nothing_and_partial_work_something():
    import thinkingbox_env as tb
    from thinkingbox_env.envs.wrappers import CheckRewardWrapper
    from thinkingbox_env.integrations.trl import reward_checks

    weighted = reward_checks({"effect": 2.0, "no_collateral": 1.0, "dialogue": 0.5})
    cls = environment_class("retail")
    for family in load_domain("retail").families:
        env = cls()
        env.reset(family=family, seed=3)
        # the guards it keeps (no collateral change, process, withholds) used to pay it 0.35 to 0.8 with even weights
        assert weighted([IDLE], [env]) == [0.0], family
    wrapped = CheckRewardWrapper(tb.make("retail/ST030_001"))
    wrapped.reset(seed=0)
    *_, info = wrapped.step("I'm unable to help with this request. <DONE>")
    assert info["shaped_reward"] == 0.0 and any(d["passed"] for d in info["check_details"])
    # one of the two expected effects done: paid in part
    wrapped.reset(seed=0)
    wrapped.step({"name": "update_membership", "arguments": {"customer_id": "CUS-3000001", "action": "upgrade"}})
    *_, info = wrapped.step(f"{tb.load_task('retail/ST030_001').golden_reply} <DONE>")
    assert 0.0 < info["shaped_reward"] < 1.0 and info["verdict"] == 0.0
