"""Insurance tools: what the backend enforces, what it leaves to the agent, and what the agent is told."""

from __future__ import annotations

import json

import thinkingbox_env as tb
from thinkingbox_env.domain import load_domain
from thinkingbox_env.kb import search_documents

DOMAIN = load_domain("insurance")


def call(env, tool: str, **arguments):
    """Step one tool call by hand and return its parsed result."""
    obs, *_ = env.step({"name": tool, "arguments": arguments})
    return json.loads(obs["messages"][-1]["content"])


def test_the_backend_does_not_enforce_policy():
    """The tools record well-formed requests; refusing is the agent's job."""
    env = tb.make("insurance/IN009_003")  # lapsed too long: reinstatement must be refused
    spec = env.task
    assert "lapsed_too_long" in spec.tags
    env.reset(seed=0)
    policy = spec.patch.insert["policies"][0]["id"]
    result = call(env, "reinstate_policy", policy_id=policy, effective_date="2026-05-19")
    assert result["status"] == "active"
    obs, reward, *_ , info = env.step("Reinstated. <DONE>")
    assert reward == 0.0 and info["checks"]["no_collateral"] is False
    env.close()


def test_policy_search_reads_this_domains_knowledge_base():
    env = tb.make("insurance/IN001_001")
    env.reset(seed=0)
    result = call(env, "search_policy", query="grace period reinstatement fee")
    env.close()
    assert result["results"] and result["results"] == search_documents("insurance", "grace period reinstatement fee", 3)
    assert set(r["source"] for r in result["results"]) <= set(DOMAIN.kb_documents())
