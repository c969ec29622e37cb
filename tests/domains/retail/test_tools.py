"""Retail tools: what the backend enforces, what it leaves to the agent, and what the agent is told."""

from __future__ import annotations

import pytest

import thinkingbox_env as tb
from thinkingbox_env.domain import load_domain
from thinkingbox_env.kb import search_documents

DOMAIN = load_domain("retail")


def test_policy_search_finds_the_fee_tables():
    top = search_documents("retail", "restocking fee for an opened laptop", 3)
    assert top[0]["source"] == "returns_and_fees.md"
    assert "10%" in top[0]["text"]


def test_policy_search_limits_are_in_the_schema_and_enforced():
    params = DOMAIN.toolbox["search_policy"].parameters["properties"]["top_k"]
    assert (params["minimum"], params["maximum"]) == (1, 5)
    env = tb.make("retail/ST030_001")
    env.reset(seed=0)
    obs, *_ = env.step({"name": "search_policy", "arguments": {"query": "restocking", "top_k": 9}})
    assert "top_k" in obs["messages"][-1]["content"] and "error" in obs["messages"][-1]["content"]
    env.close()


@pytest.mark.parametrize("day, works", [("2026-03-08", False), ("2026-03-09", True), ("2026-03-07", True)])
def test_installers_are_refused_on_sundays(day, works):
    env = tb.make("retail/ST012_001")
    env.reset(seed=0)
    job = env.task.patch.insert["installations"][0]["id"]
    obs, *_ = env.step({"name": "reschedule_installation", "arguments": {"installation_id": job, "new_date": day}})
    content = obs["messages"][-1]["content"]
    assert ("Sundays" in content) is (not works), content
    env.close()
