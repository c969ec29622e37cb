"""Helpers the tests import (``from helpers import call``); fixtures are in ``conftest.py``."""

from __future__ import annotations

import json

from thinkingbox_env.state.diff import canonical_hash


def call(env, name, **arguments):
    """Step one tool call and return (parsed result, info)."""
    obs, reward, terminated, truncated, info = env.step({"name": name, "arguments": arguments})
    tool_msgs = [m for m in obs["messages"] if m["role"] == "tool"]
    assert len(tool_msgs) == 1
    return json.loads(tool_msgs[0]["content"]), info


def play_oracle(env, substitute=None) -> dict:
    """Play the oracle agent on ``env`` from ``reset(seed=0)`` to the end; the last info. The env stays open.

    ``substitute(action)`` may return another action to take in the oracle's place (a wrong
    write, a reworded closing), or None to keep the oracle's.
    """
    from thinkingbox_env.agents.baselines import OracleAgent

    obs, _ = env.reset(seed=0)
    agent = OracleAgent()
    agent.reset(env.unwrapped.task, obs)
    while True:
        action = agent.act(obs)
        other = substitute(action) if substitute is not None else None
        obs, _, terminated, truncated, info = env.step(action if other is None else other)
        if terminated or truncated:
            return info


def state_hash(env) -> str:
    return canonical_hash(env.unwrapped.state)


def template_tables_in_duckdb(template, order_by_key: bool = False) -> dict[str, list[tuple]]:
    """Each patched table of a task template as an episode's DuckDB copy holds it (stored order unless by key).

    A template built in Python exists in DuckDB only as such copies: this is what every
    read that reaches DuckDB sees.
    """
    state = template.new_episode()
    try:
        out = {}
        for table in sorted(template.tables):
            state.materialize(table)
            order = f" ORDER BY {', '.join(template.domain.tables[table].primary_key)}" if order_by_key else ""
            out[table] = state.cursor.execute(f"SELECT * FROM {state.schema}.{table}{order}").fetchall()
        return out
    finally:
        state.close()


ST004_TOOLS = ["get_customer_profile", "search_tickets", "get_shipment", "update_ticket"]


def save_tiny_checkpoint(folder, variants: int = 2, seed: int = 0, vocab: int = 1000, hidden: int = 32, layers: int = 1,
                         include_policy: bool = False) -> None:
    """A random-init Qwen3 and a BPE tokenizer fitted to oracle conversations of ST004 train variants,
    saved like a hub model (the conversations are those a warm start with the same seed would use)."""
    from thinkingbox_env.integrations.tiny_qwen import save_tiny_checkpoint as save

    save(folder, domains=["retail"], families={"retail": ["ST004"]}, tools=ST004_TOOLS, include_policy=include_policy,
         variants=variants, seed=seed, vocab=vocab, hidden=hidden, layers=layers)
