"""No text of any kind raises out of ``step()``: the agent's messages go through the whole grading path.

Lone surrogates (which UTF-8 cannot encode), line and paragraph separators, NEL, bidi
controls, NUL, byte-order marks, and very long messages, as the customer-facing message and
as the closing, on a task of every domain. Each episode must be graded (or the message
refused as too long) and its trace must serialise to JSON for the run file.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import thinkingbox_env as tb
from thinkingbox_env.contracts.actions import MAX_MESSAGE_CHARS, parse_action, valid_text

TASKS = ["retail/ST030_001", "insurance/IN001_001", "travel/TR001_001", "neobank/NB001_001", "consulting/HV001_001"]
HOSTILE = ["\ud800", "\udfff", "\ud83d", "\u2028", "\u2029", "\x85", "\u202e", "\u202d", "\u2066", "\x00", "\ufeff", "\u200b",
           "\U0001f600", "\ud83d\ude00", "12.50", "$", "2026-03-02", "CUS-3000001", " ", "\n", "<DONE>"]
hostile_text = st.lists(st.one_of(st.sampled_from(HOSTILE), st.text(max_size=12)), max_size=30).map("".join)

_ENVS: dict[str, tb.ThinkingboxEnv] = {}


def _env(task: str):
    if task not in _ENVS:
        _ENVS[task] = tb.make(task)
    env = _ENVS[task]
    env.reset(seed=0)
    return env


@settings(max_examples=60, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(task=st.sampled_from(TASKS), middle=hostile_text, closing=hostile_text)
def test_any_text_is_graded_and_never_raises(task, middle, closing):
    env = _env(task)
    middle = middle.replace("<DONE>", "")
    env.step(middle if middle.strip() else "hello")
    obs, reward, terminated, truncated, info = env.step(f"{closing} <DONE>")
    assert terminated and reward in (0.0, 1.0)
    assert obs in env.observation_space
    json.dumps(env.unwrapped.trace).encode("utf-8")  # the run file writes it
    for m in env.unwrapped.messages:
        if m.get("content"):
            m["content"].encode("utf-8")


@pytest.mark.parametrize("task", TASKS)
def test_lone_surrogates_in_the_closing_are_graded(task):
    env = _env(task)
    obs, reward, terminated, *_ = env.step("All done \ud800 for you \udfff. <DONE>")
    assert terminated and reward == 0.0


def test_a_message_over_the_limit_is_refused_by_name_and_changes_nothing():
    env = _env(TASKS[0])
    before = len(env.unwrapped.messages)
    obs, reward, terminated, truncated, info = env.step("word " * (MAX_MESSAGE_CHARS // 5 + 10) + "<DONE>")
    assert not terminated and reward == 0.0
    error = json.loads(obs["messages"][-1]["content"])["error"]
    assert "too long" in error and f"{MAX_MESSAGE_CHARS:,}" in error
    assert not [m for m in env.unwrapped.messages[before:] if m["role"] in ("assistant", "user")]
    assert env.step("Done. <DONE>")[2]


def test_a_megabyte_message_is_refused_as_a_tool_free_assistant_message_too():
    env = _env(TASKS[1])
    obs, *_ = env.step({"role": "assistant", "content": "x" * 1_000_000})
    assert "too long" in json.loads(obs["messages"][-1]["content"])["error"]


def test_valid_text_joins_pairs_and_replaces_lone_surrogates():
    assert valid_text("a\ud800b") == "a\ufffdb"
    assert valid_text("\ud83d\ude00") == "\U0001f600"
    assert valid_text("plain é") == "plain é"
    assert parse_action("x\udfff").content == "x\ufffd"
