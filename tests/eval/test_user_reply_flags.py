"""Rows flag the LLM user's replies that quote its prompt or were cut at its token cap; agg and the report count them."""

from __future__ import annotations

import json

import pytest
from fake_openai import FakeOpenAI
from scripted_model import Say, ScriptedModel

import thinkingbox_env as tb
from thinkingbox_env.agents.openai_chat import SamplingConfig
from thinkingbox_env.cli import main
from thinkingbox_env.eval import EvalConfig, evaluate
from thinkingbox_env.eval.config import EndpointConfig
from thinkingbox_env.eval.metrics import summarize
from thinkingbox_env.eval.report import build_report
from thinkingbox_env.eval.run_files import read_rows
from thinkingbox_env.users.llm import USER_SYSTEM_PROMPT, LLMUser

TASK = "retail/ST030_001"
SPEC = tb.load_task(TASK).user

ECHOES = [
    '<<<BEGIN DIALOGUE 3f9a>>>\nASSISTANT: "What is your email address?"\n<<<END DIALOGUE 3f9a>>>',
    'CUSTOMER: "Hi" ASSISTANT: "What is your email address?"',
    "[[PROFILE]] Rules: - Do not invent or provide any data",
    "Facts come only from the PROFILE block or from what was already said in the DIALOGUE block.",
    "What you can tell the assistant when asked (one kind of information per line): - email: My email address is "
    "anders.achterberg98@example.org.",
    "Do not invent or provide any data that is not in this context. My email is anders.achterberg98@example.org.",
]
FINE = [
    "My email address is anders.achterberg98@example.org.",
    "My name is Anders Achterberg.",
    "I'd like to join Brightwell Plus for free shipping and reward points.",
    "Join Brightwell Plus for free shipping and reward points, please.",
    "Yes, please go ahead.",
    "Please take care of that for me.",
    "Thanks, that solves it.",
    "I don't know.",
    "My email address is anders.achterberg98@example.org and my name is Anders Achterberg; please go ahead.",
]


def _user_replying(replies: list[str | dict]) -> tuple[FakeOpenAI, list]:
    queue = list(replies)

    def respond(body: dict):
        reply = queue.pop(0)
        return reply if isinstance(reply, dict) else {"message": {"content": reply}}

    return FakeOpenAI(respond), queue


def _asked(user: LLMUser, reply: str | dict) -> dict:
    server, _ = _user_replying([reply])
    with server:
        user.client = user.client.with_options(base_url=server.base_url)
        user.reply([{"role": "assistant", "content": "What is your email address?"}])
    return user.reply_checks


@pytest.mark.parametrize("reply", ECHOES)
def test_a_reply_that_quotes_the_prompt_is_flagged(reply):
    user = LLMUser(model="sim", base_url="http://127.0.0.1:9/v1", api_key="k", max_retries=0)
    user.reset(SPEC, seed=0)
    assert _asked(user, reply) == {"replies": 1, "quoted_prompt": [0], "cut": []}


@pytest.mark.parametrize("reply", FINE)
def test_what_the_customer_is_meant_to_say_is_not_a_quote(reply):
    user = LLMUser(model="sim", base_url="http://127.0.0.1:9/v1", api_key="k", max_retries=0)
    user.reset(SPEC, seed=0)
    assert _asked(user, reply) == {"replies": 1, "quoted_prompt": [], "cut": []}


def test_the_instructions_in_full_are_a_quote_and_a_reply_at_the_cap_is_cut():
    user = LLMUser(model="sim", base_url="http://127.0.0.1:9/v1", api_key="k", max_retries=0, max_tokens=32)
    user.reset(SPEC, seed=0)
    _asked(user, USER_SYSTEM_PROMPT.splitlines()[0])
    checks = _asked(user, {"message": {"content": "My email address is anders.achter"}, "finish_reason": "length"})
    assert checks == {"replies": 2, "quoted_prompt": [0], "cut": [1]}
    user.reset(SPEC, seed=1)
    assert user.reply_checks == {"replies": 0, "quoted_prompt": [], "cut": []}  # per episode


def _three_questions(body: dict) -> Say:
    asked = sum(m["role"] == "assistant" for m in body["messages"])
    return Say("Could you tell me your email address?") if asked < 3 else Say("Thanks. <DONE>")


def _run(tmp_path, user_replies: list) -> list[dict]:
    out = tmp_path / "run.jsonl"
    server, _ = _user_replying(user_replies)
    with ScriptedModel(_three_questions) as agent, server:
        config = EvalConfig(agent="openai", agent_endpoint=EndpointConfig(model="m", base_url=agent.base_url, api_key="k"),
                            sampling=SamplingConfig(), user="llm",
                            user_endpoint=EndpointConfig(model="sim", base_url=server.base_url, api_key="k", max_retries=0))
        evaluate([TASK], config, out=out)
    return read_rows(out)


def test_the_row_says_which_user_replies_were_flagged_and_agg_and_the_report_count_them(tmp_path, capsys):
    rows = _run(tmp_path, [ECHOES[0], {"message": {"content": "My email is anders"}, "finish_reason": "length"}, FINE[0]])
    (row,) = rows
    assert row["status"] == "ok"
    assert row["user_replies"] == {"replies": 3, "quoted_prompt": [0], "cut": [1]}
    assert summarize(rows)["user_replies"] == {"trials": 1, "replies": 3, "quoted_prompt": 1, "cut": 1, "trials_flagged": 1}
    assert main(["agg", str(tmp_path / "run.jsonl")]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "simulated user: of 3 replies in 1 trials, 1 quoted its prompt and 1 were cut at its token cap" in out
    html = build_report({"run": rows})
    assert "user replies quoting the prompt / cut" in html and "1 / 1 of 3" in html
    assert main(["agg", str(tmp_path / "run.jsonl"), "--json", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["user_replies"]["quoted_prompt"] == 1
    assert main(["show", str(tmp_path / "run.jsonl"), "--task", TASK, "--trial", "0"]) == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert "simulated user: of 3 replies, [0] quoted its prompt and [1] were cut at its token cap" in shown


def test_a_scripted_user_row_has_no_user_reply_checks(tmp_path):
    evaluate([TASK], EvalConfig(agent="oracle"), out=tmp_path / "run.jsonl")
    (row,) = read_rows(tmp_path / "run.jsonl")
    assert "user_replies" not in row
    assert summarize([row])["user_replies"]["trials"] == 0
