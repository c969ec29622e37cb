"""Personas on one task (ST001_001: cancel an order), decisions from a spec, and the env option."""

from __future__ import annotations

import pytest
from fake_openai import FakeOpenAI

import thinkingbox_env as tb
from thinkingbox_env.contracts.records import FinishReason
from thinkingbox_env.contracts.spec import Decision, RequestChange, UserSpec
from thinkingbox_env.tasks.lookup import load_task
from thinkingbox_env.users import LLMUser, ScriptedUser, customer_agreed, read_customer_answer
from thinkingbox_env.users.scripted import GOODBYE, HURRY, LEFT

TASK = load_task("retail/ST001_001")
ORDER = "ORD-100001"


def _talk(user: ScriptedUser, *messages: str) -> list[str]:
    dialogue = [{"role": "user", "content": TASK.user.opening}]
    replies = []
    for m in messages:
        dialogue.append({"role": "assistant", "content": m})
        replies.append(user.reply(dialogue))
        dialogue.append({"role": "user", "content": replies[-1]})
    return replies


def _user(persona: str, seed: int = 0, spec: UserSpec | None = None, **kw) -> ScriptedUser:
    user = ScriptedUser(persona=persona, **kw)
    user.reset(spec or TASK.user, seed=seed)
    return user


def test_terse_gives_bare_values_and_short_yes():
    replies = _talk(_user("terse"), "What's your email?", "Shall I cancel it?", "Your order is cancelled.")
    assert replies[0].endswith("@example.com.") and " is " not in replies[0]
    assert replies[1] == "Yes." and replies[2] == "Thanks."


def test_verbose_volunteers_exactly_one_more_fact():
    reply = _talk(_user("verbose"), "What's your email?")[0]
    others = [f.text for f in TASK.user.facts if "email" not in f.text.lower()]
    assert "Also, in case it helps" in reply
    assert sum(1 for t in others if t[:1].lower() + t[1:] in reply) == 1


def test_impatient_hurries_then_leaves_when_ignored():
    user = _user("impatient", hurry_after=2)
    replies = _talk(user, "What's your email?", "What's your name?", "What's the order number?", "Anything else?")
    assert HURRY not in replies[0] and replies[1].endswith(HURRY)
    assert replies[2] == GOODBYE and user.ended and replies[3] == LEFT


def test_impatient_stays_when_the_agent_acknowledges():
    user = _user("impatient", hurry_after=1)
    replies = _talk(user, "What's your email?", "Sorry, nearly done: shall I cancel it now?")
    assert replies[0].endswith(HURRY) and replies[1] == TASK.user.confirm and not user.ended


def test_misremembers_the_order_number_then_corrects_it():
    replies = _talk(_user("misremembers", seed=3), "What's the order number?", "I can't find that order. Could you check the number?")
    assert ORDER not in replies[0] and "ORD-" in replies[0]
    assert "Sorry, I misread it." in replies[1] and ORDER in replies[1]


def test_changes_the_request_once():
    spec = TASK.user.model_copy(update={"change": RequestChange(after_turns=2, to="Please just change the delivery address instead.")})
    replies = _talk(_user("changes", spec=spec), "What's your email?", "What's your name?", "What's the order number?")
    assert "changed my mind" not in replies[0]
    assert replies[1].endswith("Actually, I've changed my mind: Please just change the delivery address instead.")
    assert "changed my mind" not in replies[2]


@pytest.mark.parametrize("persona", ["plain", "terse", "verbose", "impatient", "misremembers"])
def test_personas_are_deterministic_for_a_seed(persona):
    script = ("What's your email?", "What's the order number?", "That order doesn't exist.", "What's your name?", "Shall I cancel it?")
    assert _talk(_user(persona, seed=7), *script) == _talk(_user(persona, seed=7), *script)


def test_decisions_answer_proposals_and_choices():
    spec = UserSpec(
        opening="I'd like to return my kettle.",
        facts=[{"text": "My email address is kim@example.com.", "unlock": ["email"]}],
        decisions=[
            Decision(about=["store credit", "refund"], prefer=["refund"]),
            Decision(about=["pickup", "collection"], no_later_than="2026-03-10", reason="I'm away after March 10."),
            Decision(about=["restocking fee"], answer="refuse", reason="I won't pay a restocking fee."),
        ],
        otherwise="ask",
    )
    user = ScriptedUser()
    user.reset(spec, seed=0)
    say = lambda m: user.reply([{"role": "user", "content": spec.opening}, {"role": "assistant", "content": m}])  # noqa: E731
    assert say("Would you prefer store credit or a refund to your card?") == "I'd prefer a refund to your card."
    assert say("I can book the pickup for 2026-03-14. Does that work?").endswith("I'm away after March 10.")
    assert say("I can book the pickup for 2026-03-09. Does that work?") == spec.confirm
    assert "restocking fee" in say("There is a $10 restocking fee. Shall I go ahead?") and user.last.answer == "refuse"
    assert say("Shall I also send you a catalogue?") == "What would you recommend?"


def test_customer_agreement_reader():
    assert customer_agreed("Yes, please go ahead.")
    assert not customer_agreed("I can't pay anything today; I get paid next week.")
    assert read_customer_answer("No, please don't. I won't pay a restocking fee.") == "refuse"
    assert read_customer_answer("My email address is kim@example.com.") == "unclear"


def test_env_persona_option_and_reset_option():
    env = tb.make("retail/ST001_001", persona="terse")
    env.reset(seed=0)
    obs, *_ = env.step("What's your email?")
    assert obs["messages"][-1]["content"].endswith("@example.com.") and " is " not in obs["messages"][-1]["content"]
    env.reset(seed=0, options={"persona": "plain"})
    obs, *_ = env.step("What's your email?")
    assert obs["messages"][-1]["content"].startswith("My email address is")
    env.close()
    with pytest.raises(ValueError):
        tb.make("retail/ST001_001", persona="grumpy")


def test_llm_user_prompt_carries_typed_facts_decisions_and_persona():
    spec = load_task("insurance/IN009_005").user
    with FakeOpenAI(lambda body: "No, I can't pay today.") as server:
        user = LLMUser(model="qwen-user", base_url=server.base_url, api_key="k", max_retries=0, persona="terse")
        user.reset(spec, seed=1)
        assert user.reply([{"role": "user", "content": spec.opening}, {"role": "assistant", "content": "Shall I charge your card?"}]) == "No, I can't pay today."
        profile = server.requests[-1]["messages"][1]["content"]
    assert "- email: My email address is" in profile and "- payment method: I can't pay anything today" in profile
    assert "about charge" in profile and "refuse" in profile and "Manner: Answer in as few words" in profile
    assert user.describe() == {"kind": "llm", "persona": "terse", "model": "qwen-user", "base_url": server.base_url,
                               "temperature": 0.3, "max_tokens": 512}


def test_the_episode_ends_truncated_when_the_impatient_user_leaves():
    env = tb.make("retail/ST001_001", user=ScriptedUser("impatient", hurry_after=1))  # leaves after one ignored hurry
    env.reset(seed=0)
    _, reward, terminated, truncated, info = env.step("What's your email?")
    assert not (terminated or truncated) and HURRY in env.unwrapped.messages[-1]["content"]
    _, reward, terminated, truncated, info = env.step("What's your name?")
    assert env.unwrapped.messages[-1]["content"] == GOODBYE
    assert truncated and not terminated and reward == 0.0
    assert info["finish_reason"] == FinishReason.USER_LEFT.value == "user_left"
    assert info["failure_category"] == "no_state_changing_action"  # the category still reads the state first
    assert env.unwrapped.episode_over
    with pytest.raises(RuntimeError, match="episode has ended"):
        env.step("Are you still there?")
    env.close()
    assert FinishReason.USER_LEFT.truncated and not FinishReason.USER_LEFT.terminated
