"""`env.step` never raises and a failed call never changes the state, whatever the action.

A hypothesis property over the env's own action sampler mixed with adversarial
structures an agent (or a broken model server) can produce: arguments nested far
deeper than any tool takes, huge fan-out, NUL bytes, values JSON cannot carry,
wrong types, unknown or non-string tool names, and malformed action shapes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest
from helpers import state_hash
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import thinkingbox_env as tb
from thinkingbox_env.contracts.arguments import MAX_ARGUMENT_DEPTH

FUZZ_EXAMPLES = 5_000
TASK = "retail/ST030_001"

_ENV = None


def _env():
    global _ENV
    if _ENV is None:
        _ENV = tb.make(TASK)
        _ENV.reset(seed=0)
    return _ENV


def _nested(depth: int, leaf, as_list: bool):
    value = leaf
    for _ in range(depth):
        value = [value] if as_list else {"a": value}
    return value


def _nested_text(depth: int) -> str:
    return '{"customer_id": ' + "[" * depth + "1" + "]" * depth + "}"


def _text_of(value) -> str:
    try:
        return json.dumps(value, default=str)
    except ValueError:  # an integer too long to print
        return "{"


class _Opaque:
    def __repr__(self) -> str:
        return "<opaque>"


TOOL_NAMES = [s["function"]["name"] for s in tb.make(TASK).tool_schemas]

# values at the edges of what JSON can spell: lone UTF-16 surrogates (valid JSON escapes that UTF-8 cannot store)
# and doubles near their limits (which a tool rounding to cents cannot represent); both once came back as
# "internal" errors, and hypothesis's default text alphabet never draws a surrogate
surrogate_text = st.text(st.characters(categories=["Cs", "Lu", "Nd"]), min_size=1, max_size=12)
edge_values = st.one_of(
    surrogate_text, st.sampled_from(["\ud800", "ORD-20001\udfff", "\udc00CUS-3000001", "PAY-\ud83d"]),
    st.sampled_from([1e308, -1e308, 1.7976931348623157e308, -5e307, 1e16, -9.1e15, 5e-324, -0.0]),
    st.floats(min_value=1e15, max_value=1e308) | st.floats(min_value=-1e308, max_value=-1e15),
)
leaves = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70), st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20), st.just("\x00"), st.just("CUS-3000001\x00"), st.just("ORD-20001"), edge_values,
    st.binary(max_size=8), st.just({1, 2}), st.builds(_Opaque), st.builds(lambda: 10**5000),
)
deep = st.builds(_nested, st.integers(MAX_ARGUMENT_DEPTH - 2, 1_500), leaves, st.booleans())
fan_out = st.one_of(
    st.integers(500, 3_000).map(lambda n: list(range(n))),
    st.integers(500, 2_000).map(lambda n: {f"k{i}": i for i in range(n)}),
    st.integers(1, 40_000).map(lambda n: "x" * n),
)
values = st.recursive(leaves, lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)), max_leaves=12)
any_value = st.one_of(values, deep, fan_out)

arguments = st.one_of(
    st.dictionaries(st.sampled_from(["customer_id", "order_id", "email", "ticket_id", "amount", "filter", "table", "x"]), any_value, max_size=4),
    any_value,
    st.integers(MAX_ARGUMENT_DEPTH - 2, 30_000).map(_nested_text),
    st.text(max_size=60),
    st.builds(lambda v: _text_of(v)[:200], values),
)
real_names = st.sampled_from(TOOL_NAMES)
odd_names = st.one_of(st.text(max_size=30), st.integers(), st.none(), deep, st.lists(st.integers(), max_size=3))


def _weighted(*pairs):
    """Choose among strategies with integer weights (``one_of`` alone picks uniformly)."""
    table = [strategy for weight, strategy in pairs for _ in range(weight)]
    return st.integers(0, len(table) - 1).flatmap(lambda i: table[i])


names = _weighted((4, real_names), (1, odd_names))
tool_call = st.builds(lambda n, a: {"name": n, "arguments": a}, names, arguments)
openai_call = st.builds(
    lambda n, a, shape: {"id": "c1", "type": "function", "function": {"name": n, "arguments": a}} if shape else {"id": n, "function": a},
    names, arguments, st.booleans(),
)
assistant = st.builds(
    lambda calls, content: {"role": "assistant", "content": content, "tool_calls": calls},
    st.one_of(st.lists(openai_call, max_size=3), any_value), st.one_of(st.none(), st.text(max_size=40), any_value),
)
malformed = st.one_of(any_value, st.dictionaries(st.text(max_size=5), any_value, max_size=3))


@dataclass(frozen=True)
class Sampled:
    """Stands for an action drawn from the env's own action sampler with this seed."""

    seed: int


sampled = st.builds(Sampled, st.integers(0, 2**32 - 1))


@dataclass(frozen=True)
class Mutated:
    """A call from the env's sampler (well-formed for its tool) with one argument replaced by an edge value."""

    seed: int
    which: int
    value: object


mutated = st.builds(Mutated, st.integers(0, 2**32 - 1), st.integers(0, 7), edge_values)

actions = _weighted((2, sampled), (4, tool_call), (2, mutated), (1, assistant), (1, malformed))


def _mutate(env, m: Mutated):
    """The sampled action with argument ``which`` (modulo their number) set to ``value``; a message stays as drawn."""
    env.action_space.seed(m.seed)
    for _ in range(20):  # the sampler also draws messages: take the first tool call
        action = env.action_space.sample()
        if isinstance(action, dict) and isinstance(action.get("arguments"), dict) and action["arguments"]:
            keys = sorted(action["arguments"])
            return {**action, "arguments": {**action["arguments"], keys[m.which % len(keys)]: m.value}}
    return action


def _tool_results(obs):
    return [m for m in obs["messages"] if m["role"] in ("tool", "system")]


def _is_error(message) -> bool:
    try:
        content = json.loads(message["content"])
    except json.JSONDecodeError:
        return False
    return isinstance(content, dict) and set(content) == {"error"}


@settings(max_examples=FUZZ_EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example])
@given(actions)
def test_step_never_raises_and_failed_calls_change_nothing(action):
    env = _env()
    if isinstance(action, Sampled):
        env.action_space.seed(action.seed)
        action = env.action_space.sample()
    elif isinstance(action, Mutated):
        action = _mutate(env, action)
    before = state_hash(env)
    trace_len = len(env.unwrapped.trace)
    obs, reward, terminated, truncated, info = env.step(action)  # the property: this line never raises
    assert obs in env.observation_space
    new_calls = env.unwrapped.trace[trace_len:]
    results = _tool_results(obs)
    assert len(results) >= sum(1 for c in new_calls if c["type"] == "tool_call") or terminated or truncated
    for call in new_calls:
        if call["type"] == "tool_call" and not call["ok"]:
            assert call["error_kind"] != "internal", call
    if new_calls and all(c["type"] == "tool_call" and not c["ok"] for c in new_calls):
        assert all(_is_error(m) for m in results), results
        assert state_hash(env) == before
    json.dumps(env.unwrapped.trace[trace_len:])  # the trace stays serialisable for the run file
    if terminated or truncated:
        env.reset(seed=0)


def _last_call(env):
    return [e for e in env.unwrapped.trace if e["type"] == "tool_call"][-1]


@pytest.mark.parametrize("depth", [MAX_ARGUMENT_DEPTH + 1, 1_000, 10_000])
def test_deep_arguments_are_an_argument_error_at_every_depth(depth):
    env = tb.make(TASK)
    env.reset(seed=0)
    before = state_hash(env)
    for args in ({"customer_id": _nested(depth, 1, True)}, _nested(depth, 1, False), _nested_text(depth)):
        obs = env.step({"name": "get_customer_profile", "arguments": args})[0]
        error = json.loads(obs["messages"][-1]["content"])["error"]
        assert f"nested more than {MAX_ARGUMENT_DEPTH} levels deep" in error
        assert _last_call(env)["error_kind"] == "arguments"
    assert state_hash(env) == before
    env.close()


@pytest.mark.parametrize("value,expected", [
    ("CUS-3000001\x00", "NUL character"),
    (float("nan"), "not a finite number"),
    (float("inf"), "not a finite number"),
    (2**80, "64-bit range"),
    ("CUS-3000001\ud800", "lone surrogate"),
    ("\udfff", "lone surrogate"),
    (b"CUS", "bytes is not a JSON value"),
    ({1, 2}, "set is not a JSON value"),
])
def test_values_json_cannot_carry_are_named_argument_errors(value, expected):
    env = tb.make(TASK)
    env.reset(seed=0)
    before = state_hash(env)
    obs = env.step({"name": "update_membership", "arguments": {"customer_id": value, "action": "upgrade"}})[0]
    error = json.loads(obs["messages"][-1]["content"])["error"]
    assert "argument 'customer_id'" in error and expected in error
    assert _last_call(env)["error_kind"] == "arguments"
    assert state_hash(env) == before
    env.close()


@pytest.mark.parametrize("amount", [1e308, -1e308, 1.7976931348623157e308, 1e16])
def test_amounts_beyond_what_a_double_holds_exactly_are_argument_errors_naming_the_argument(amount):
    env = tb.make(TASK)
    env.reset(seed=0)
    before = state_hash(env)
    for arguments in ({"payment_id": "PAY-30001", "amount": amount, "reason": "goodwill"},
                      json.dumps({"payment_id": "PAY-30001", "amount": amount, "reason": "goodwill"})):
        obs = env.step({"name": "issue_refund", "arguments": arguments})[0]
        error = json.loads(obs["messages"][-1]["content"])["error"]
        assert "argument 'amount'" in error and "2^53" in error, error
        assert _last_call(env)["error_kind"] == "arguments"
    assert state_hash(env) == before
    env.close()


def test_a_lone_surrogate_in_json_text_is_an_argument_error_naming_the_argument():
    env = tb.make(TASK)
    env.reset(seed=0)
    obs = env.step({"name": "get_order", "arguments": '{"order_id": "ORD-\\ud800"}'})[0]
    error = json.loads(obs["messages"][-1]["content"])["error"]
    assert "argument 'order_id'" in error and "lone surrogate" in error
    assert _last_call(env)["error_kind"] == "arguments"
    env.close()


def test_an_integer_too_wide_for_its_column_is_an_argument_error():
    env = tb.make(TASK)
    env.reset(seed=0)
    obs = env.step({"name": "get_ticket", "arguments": {"ticket_id": 2**62}})[0]
    content = json.loads(obs["messages"][-1]["content"])
    assert "error" in content
    assert _last_call(env)["error_kind"] in ("arguments", "precondition")
    env.close()
