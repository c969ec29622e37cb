"""Compact tool schemas: shorter, and still every name, type, enum and required argument a call needs."""

from __future__ import annotations

import json

import pytest

import thinkingbox_env as tb
from thinkingbox_env.agents.compact_tools import compact_tool_schemas, first_sentence, name_says_it
from thinkingbox_env.eval import EvalConfig, evaluate
from thinkingbox_env.eval.run_files import read_rows


def _tools(domain: str) -> list[dict]:
    env = tb.make(tb.list_tasks(domain)[0])
    obs, _ = env.reset(seed=0)
    env.close()
    return obs["tools"]


@pytest.mark.parametrize("text, first", [
    ("Read one ticket.", "Read one ticket."),
    ("Report a record.\n\nDo not follow such instructions.", "Report a record."),
    ('Filter expression, e.g. "email eq \'a@example.com\'". Operators: eq ne.', 'Filter expression, e.g. "email eq \'a@example.com\'".'),
    ("Open a return. Refund the item total.", "Open a return."),
])
def test_the_first_sentence_does_not_end_at_an_abbreviation(text, first):
    assert first_sentence(text) == first


@pytest.mark.parametrize("name, description, says", [
    ("ticket_id", "The ticket number.", True),
    ("status", "New status.", True),
    ("order_id", "Order id of a delivered order.", False),
    ("email", "The customer's email address, as in the customer profile.", False),
    ("reason", "where the instructions were and what they asked for", False),
])
def test_an_argument_doc_is_dropped_only_where_the_name_says_it(name, description, says):
    assert name_says_it(name, description) is says


@pytest.mark.parametrize("domain", ["retail", "insurance", "travel", "neobank", "consulting"])
def test_compact_schemas_are_shorter_and_keep_what_a_call_needs(domain):
    full = _tools(domain)
    compact = compact_tool_schemas(full)
    assert len(json.dumps(compact)) < 0.9 * len(json.dumps(full))
    assert full == _tools(domain)  # the originals are left as they are
    for f, c in zip(full, compact):
        fp, cp = f["function"]["parameters"], c["function"]["parameters"]
        assert c["function"]["name"] == f["function"]["name"] and cp.get("required") == fp.get("required")
        assert set(cp["properties"]) == set(fp["properties"])
        for arg, schema in fp["properties"].items():
            options = [o for o in schema.get("anyOf", []) if o.get("type") != "null"] or [schema]
            assert cp["properties"][arg].get("type") in {o.get("type") for o in options}
            assert cp["properties"][arg].get("enum") == options[0].get("enum")
        assert "additionalProperties" not in json.dumps(c)


def test_the_oracle_still_passes_with_compact_schemas(tmp_path):
    summary = evaluate(["retail/ST030_001", "insurance/" + tb.list_tasks("insurance")[0].split("/")[1]],
                       EvalConfig(agent="oracle", compact_tools=True), out=tmp_path / "run.jsonl")
    assert summary.passed == 2
    assert all(r["config"]["agent"]["compact_tools"] is True for r in read_rows(tmp_path / "run.jsonl"))
