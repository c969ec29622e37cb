"""The oracle that sends the customer's facts as the customer gave them (``--agent-option facts=heard``)."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

import thinkingbox_env as tb
from thinkingbox_env.agents.heard_facts import HeardFactsOracle, classify_sent, dates_in, heard_value, is_fact, said
from thinkingbox_env.cli import main
from thinkingbox_env.eval.run_files import read_rows

DATA = Path(__file__).resolve().parents[1] / "data"


def test_dates_are_read_in_their_usual_written_forms():
    text = "Born 1990-03-05, or March 6, 1990, or 7th of March 1990, or 03/08/1990; not 1990-02-30."
    assert dates_in(text) == [date(1990, 3, 5), date(1990, 3, 6), date(1990, 3, 7), date(1990, 3, 8)]


def test_a_fact_is_heard_as_said_replaced_by_the_latest_of_its_shape_or_missing():
    assert said("AGM-2000003", "my policy is agm 2000003") and said(8, "8 hours") and said("1981-09-07", "September 7, 1981")
    assert heard_value("SYS-511", "it was SYS-115, no, SYS-151") == ("substituted", "SYS-151")
    assert heard_value("1981-09-07", "I was born on 7 September 1980") == ("substituted", "1980-09-07")
    assert heard_value("SYS-511", "I don't know") == ("missing", None)
    assert heard_value("Wren Vasquez", "my sister Wren") == ("missing", None)
    assert heard_value(["SYS-511", "SYS-512"], "SYS-511 and SYS-999") == ("substituted", ["SYS-511", "SYS-999"])


def test_composed_text_option_names_and_yes_no_are_not_facts():
    assert is_fact("booking_id", "BK-100010") and is_fact("full_name", "Wren Vasquez") and is_fact("quantity", 1)
    assert not is_fact("subject", "FLD-41013") and not is_fact("reason", "left_household")
    assert not is_fact("shipping_speed", "express") and not is_fact("injuries", False)
    assert not is_fact("note", "a longer sentence of text")


@pytest.fixture
def library(monkeypatch):
    monkeypatch.setenv("THINKINGBOX_PATH", str(DATA))
    return tb.make("library/LB001_001").unwrapped.task


def _play(agent, task, customer_says: str):
    """Drive the oracle with one customer reply after its question; return what it sends, in order."""
    agent.reset(task, {"messages": [{"role": "user", "content": task.user.opening}]})
    sent, observation = [], {"messages": []}
    for _ in range(10):
        action = agent.act(observation)
        sent.append(action)
        if isinstance(action, str) and "<DONE>" in action:
            return sent
        observation = {"messages": [{"role": "user", "content": customer_says}]} if isinstance(action, str) else {"messages": []}
    return sent


def test_the_customer_s_own_value_replaces_the_golden_one(library):
    agent = HeardFactsOracle()
    sent = _play(agent, library, "I want Ice Roads. My name is Ada7.")
    lend = next(a for a in sent if isinstance(a, dict) and a["name"] == "lend_book")
    assert lend["arguments"]["borrower"] == "Ada7"
    assert ("lend_book", "borrower", "substituted") in agent.uses
    calls = [a for a in sent if isinstance(a, dict)]
    assert classify_sent(library, calls).count("substituted") == 1


def test_a_fact_never_given_is_left_out_of_the_call(library):
    agent = HeardFactsOracle()
    sent = _play(agent, library, "I want Ice Roads.")
    lend = next(a for a in sent if isinstance(a, dict) and a["name"] == "lend_book")
    assert "borrower" not in lend["arguments"]
    assert "missing" in classify_sent(library, [a for a in sent if isinstance(a, dict)])


def test_with_the_scripted_user_the_heard_facts_oracle_passes_where_the_facts_are_said(library, tmp_path):
    run = tmp_path / "heard.jsonl"
    assert main(["eval", "library/LB001_001", "--agent", "oracle", "--agent-option", "facts=heard", "-o", str(run)]) == 0
    (row,) = read_rows(run)
    assert row["outcome"] == "pass"


def test_an_unknown_facts_option_is_refused_by_name(tmp_path, capsys):
    code = main(["eval", "retail/ST030_001", "--agent", "oracle", "--agent-option", "facts=invented", "-o", str(tmp_path / "r.jsonl")])
    assert code == 2 and "facts" in capsys.readouterr().out
