"""One argument contract for every domain: text bounded, dates only as YYYY-MM-DD, integers within ±2^53, each refusal
naming the argument. Walked over every tool of every shipped domain, so a new tool cannot opt out by omission."""

from __future__ import annotations

import json

import pytest
from helpers import state_hash

import thinkingbox_env as tb
from thinkingbox_env.tasks.domain import load_domain
from thinkingbox_env.toolkit.tools import MAX_FREE_TEXT_CHARS, MAX_TEXT_ARGUMENT_CHARS

DOMAINS = ["retail", "insurance", "travel", "neobank", "consulting"]
FIRST_TASK = {"retail": "retail/ST030_001", "insurance": "insurance/IN001_001", "travel": "travel/TR001_001",
              "neobank": "neobank/NB001_001", "consulting": "consulting/HV001_001"}


def _text_limits(schema: dict) -> list[int | None]:
    """The maxLength of each string form a property accepts (None where one is unbounded)."""
    forms = schema.get("anyOf", [schema])
    return [f.get("maxLength") for f in forms if f.get("type") == "string" and f.get("format") != "date" and "enum" not in f]


@pytest.mark.parametrize("domain", DOMAINS)
def test_every_text_argument_of_every_tool_is_bounded(domain):
    unbounded = []
    for tool in load_domain(domain).toolbox.tools.values():
        for name, prop in tool.openai_schema()["function"]["parameters"]["properties"].items():
            if any(limit is None for limit in _text_limits(prop)):
                unbounded.append(f"{tool.name}.{name}")
    assert not unbounded


def _call(env, name, arguments):
    obs = env.step({"role": "assistant", "content": None, "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}]})[0]
    return json.loads(obs["messages"][-1]["content"])


def _text_arguments(tool):
    for name, prop in tool.openai_schema()["function"]["parameters"]["properties"].items():
        limits = _text_limits(prop)
        if limits:
            yield name, limits[0]


@pytest.mark.parametrize("domain", DOMAINS)
def test_overlong_text_compact_dates_and_huge_integers_are_refused_naming_the_argument(domain):
    env = tb.make(FIRST_TASK[domain])
    env.reset(seed=0, options={"max_actions": 10_000})
    before = state_hash(env)
    box = env.unwrapped.toolbox
    refused = 0
    for tool in box.tools.values():
        if not tool.writes:
            continue
        for name, limit in _text_arguments(tool):
            assert limit in (MAX_TEXT_ARGUMENT_CHARS, MAX_FREE_TEXT_CHARS) or limit < MAX_TEXT_ARGUMENT_CHARS
            error = _call(env, tool.name, {name: "x" * 30_000})["error"]
            assert f"argument '{name}'" in error and "at most" in error, error
            refused += 1
        for name, prop in tool.openai_schema()["function"]["parameters"]["properties"].items():
            if any(f.get("format") == "date" for f in prop.get("anyOf", [prop])):
                for compact in ("20260302", "2026-W10-1", "2026-061"):
                    error = _call(env, tool.name, {name: compact})["error"]
                    assert f"argument '{name}'" in error and "YYYY-MM-DD" in error, error
                    refused += 1
    name = next(iter(box.tools))
    first = next(iter(box[name].openai_schema()["function"]["parameters"]["properties"]), "x")
    assert "beyond ±2^53" in _call(env, name, {first: 2**53 + 1})["error"]
    assert refused > 0
    assert state_hash(env) == before  # every refusal wrote nothing
    env.close()


@pytest.mark.parametrize("domain", DOMAINS)
def test_no_write_of_any_domain_takes_a_date_a_century_before_its_records(domain):
    """Each write's date arguments, set to 1900-01-01 in the golden call where that write first appears (after the
    golden calls before it), are refused: no record of these backends began that early."""
    box = load_domain(domain).toolbox
    seen, accepted = set(), []
    for task_id in tb.list_tasks(domain):
        spec = tb.load_task(task_id)
        for i, call in enumerate(spec.golden):
            tool = box[call.name]
            if not tool.writes or tool.identity is not None:  # an identity check answers "no match", it records nothing
                continue
            props = tool.openai_schema()["function"]["parameters"]["properties"]
            for name, prop in props.items():
                if (call.name, name) in seen or not any(f.get("format") == "date" for f in prop.get("anyOf", [prop])):
                    continue
                seen.add((call.name, name))
                env = tb.make(task_id)
                env.reset(seed=0, options={"max_actions": 500})
                for before in spec.golden[:i]:
                    env.step({"name": before.name, "arguments": dict(before.arguments)})
                answer = _call(env, call.name, {**call.arguments, name: "1900-01-01"})
                env.close()
                if "error" not in answer:
                    accepted.append(f"{call.name}.{name}")
    assert not accepted
    assert seen or domain == "retail"  # every domain but retail has dated writes in its goldens


def test_every_required_argument_is_in_the_schema_even_one_called_title(monkeypatch):
    """Pydantic's bookkeeping titles are dropped from schemas; an argument named ``title`` must not go with them."""
    from pathlib import Path

    from thinkingbox_env.agents.compact_tools import compact_tool_schema

    monkeypatch.setenv("THINKINGBOX_PATH", str(Path(__file__).resolve().parents[1] / "data"))
    missing = []
    for domain in [*DOMAINS, "library"]:
        for tool in load_domain(domain).toolbox.tools.values():
            for schema in (tool.openai_schema(), compact_tool_schema(tool.openai_schema())):
                params = schema["function"]["parameters"]
                missing += [f"{domain}.{tool.name}.{n}" for n in params.get("required", []) if n not in params["properties"]]
    assert not missing
    find_book = load_domain("library").toolbox["find_book"].openai_schema()["function"]["parameters"]["properties"]
    assert "title" in find_book
