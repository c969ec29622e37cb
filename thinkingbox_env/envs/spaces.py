"""Gymnasium spaces for chat observations and agent actions.

Gymnasium's ``Text`` space has a fixed alphabet and ``Sequence`` yields tuples,
neither of which fits chat messages, so these are small ``Space`` subclasses with
a real ``contains`` and a ``sample``. The action sampler draws schema-conforming
tool calls and messages, which makes ``action_space.sample()`` a fuzzer for the
domain tools.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

ROLES = ("system", "user", "assistant", "tool")
MAX_TEXT = 1_000_000

_WORDS = ["hello", "order", "refund", "ticket", "status", "membership", "please", "help", "cancel", "shipment", "delivered", "missing", "charge", "email", "account", "update", "tracking", "damaged", "return", "address", "thanks", "yes", "no", "check", "policy"]
_TOKENS = ("CUS-10001", "ORD-20001", "10001", "open", "solved", "pending", "", "a@example.com", "' OR 1=1 --", "x" * 40)


def _is_message(m: Any) -> bool:
    if not isinstance(m, dict) or m.get("role") not in ROLES:
        return False
    content = m.get("content")
    if content is not None and not isinstance(content, str):
        return False
    if "tool_calls" in m and not (isinstance(m["tool_calls"], list) and all(_is_openai_call(c) for c in m["tool_calls"])):
        return False
    return all(isinstance(m[key], str) for key in ("tool_call_id", "name") if key in m)


def _is_openai_call(c: Any) -> bool:
    return (
        isinstance(c, dict)
        and isinstance(c.get("function"), dict)
        and isinstance(c["function"].get("name"), str)
        and isinstance(c["function"].get("arguments", ""), (str, dict))
    )


class ChatObservation(spaces.Space):
    """``{"messages": [chat message, ...], "tools": [OpenAI function schema, ...]}``.

    ``tools`` is filled in the opening observation and empty afterwards.
    """

    def __init__(self, seed: int | np.random.Generator | None = None):
        super().__init__(shape=None, dtype=None, seed=seed)

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def contains(self, x: Any) -> bool:
        if not isinstance(x, dict) or set(x) != {"messages", "tools"}:
            return False
        if not isinstance(x["messages"], list) or not all(_is_message(m) for m in x["messages"]):
            return False
        return isinstance(x["tools"], list) and all(
            isinstance(t, dict) and t.get("type") == "function" and isinstance(t.get("function"), dict) for t in x["tools"]
        )

    def sample(self, mask: Any = None, probability: Any = None) -> dict[str, Any]:
        n = int(self.np_random.integers(1, 4))
        messages = []
        for _ in range(n):
            role = ROLES[int(self.np_random.integers(1, 4))]
            words = self.np_random.choice(_WORDS, size=int(self.np_random.integers(1, 12)))
            msg: dict[str, Any] = {"role": role, "content": " ".join(words)}
            if role == "tool":
                msg["tool_call_id"] = f"call_{int(self.np_random.integers(0, 10**6))}"
                msg["content"] = json.dumps({"ok": True})
            messages.append(msg)
        return {"messages": messages, "tools": []}

    def __repr__(self) -> str:
        return "ChatObservation()"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, ChatObservation)


class AgentAction(spaces.Space):
    """An agent action, in any of the three forms the env accepts.

    A message (``str``), one tool call ``{"name", "arguments"}``, or an OpenAI-style assistant
    message ``{"role": "assistant", "content", "tool_calls": [...]}``.
    """

    def __init__(self, tool_schemas: list[dict[str, Any]], seed: int | np.random.Generator | None = None):
        super().__init__(shape=None, dtype=None, seed=seed)
        self.tool_schemas = tool_schemas

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def contains(self, x: Any) -> bool:
        if isinstance(x, str):
            return len(x) <= MAX_TEXT
        if not isinstance(x, dict):
            return False
        if "name" in x:
            return isinstance(x["name"], str) and isinstance(x.get("arguments", {}), (dict, str))
        if x.get("role") == "assistant":
            calls = x.get("tool_calls") or []
            content = x.get("content")
            return (content is None or isinstance(content, str)) and isinstance(calls, list) and all(_is_openai_call(c) for c in calls)
        return False

    # -------------------------------------------------------------- sampling

    def _text(self) -> str:
        words = list(self.np_random.choice(_WORDS, size=int(self.np_random.integers(2, 14))))
        text = " ".join(words).capitalize()
        text += "?" if self.np_random.random() < 0.5 else "."
        if self.np_random.random() < 0.15:
            text += " <DONE>"
        return text

    def _value(self, schema: dict[str, Any], depth: int = 0) -> Any:
        rng = self.np_random
        if "anyOf" in schema:
            options = schema["anyOf"]
            return self._value(options[int(rng.integers(0, len(options)))], depth)
        if "enum" in schema:
            return schema["enum"][int(rng.integers(0, len(schema["enum"])))]
        if "const" in schema:
            return schema["const"]
        kind = schema.get("type", "string")
        if kind == "null":
            return None
        if kind == "boolean":
            return bool(rng.random() < 0.5)
        if kind == "integer":
            lo, hi = schema.get("minimum", 0), schema.get("maximum", 100_000)
            return int(rng.integers(lo, hi + 1))
        if kind == "number":
            lo, hi = schema.get("minimum", 0.0), schema.get("maximum", 1000.0)
            return round(float(rng.uniform(lo, hi)), 2)
        if kind == "array":
            if depth > 3:
                return []
            return [self._value(schema.get("items", {}), depth + 1) for _ in range(int(rng.integers(0, 3)))]
        if kind == "object":
            return self._object(schema, depth + 1) if depth <= 3 else {}
        token = _TOKENS[int(rng.integers(0, len(_TOKENS)))]
        return token if rng.random() < 0.6 else " ".join(rng.choice(_WORDS, size=int(rng.integers(1, 4))))

    def _object(self, schema: dict[str, Any], depth: int = 0) -> dict[str, Any]:
        required = set(schema.get("required", []))
        out = {}
        for name, prop in schema.get("properties", {}).items():
            if name in required or self.np_random.random() < 0.5:
                out[name] = self._value(prop, depth)
        return out

    def _call(self) -> dict[str, Any]:
        fn = self.tool_schemas[int(self.np_random.integers(0, len(self.tool_schemas)))]["function"]
        return {"name": fn["name"], "arguments": self._object(fn.get("parameters", {}))}

    def sample(self, mask: Any = None, probability: Any = None) -> Any:
        r = self.np_random.random()
        if r < 0.25 or not self.tool_schemas:
            return self._text()
        if r < 0.85:
            return self._call()
        calls = [self._call() for _ in range(int(self.np_random.integers(1, 4)))]
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": f"call_{i}", "type": "function", "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])}}
                for i, c in enumerate(calls)
            ],
        }

    def __repr__(self) -> str:
        return f"AgentAction({len(self.tool_schemas)} tools)"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, AgentAction) and other.tool_schemas == self.tool_schemas


# --------------------------------------------------------------------------- shared memory for AsyncVectorEnv
#
# AsyncVectorEnv passes observations through shared memory by default, which Gymnasium only knows
# for fixed-shape spaces. A chat observation is JSON of varying length, so each environment gets a
# fixed byte slot holding a length prefix and the JSON text. Gymnasium reads the shared memory
# once, as a view, and deep-copies it on every step; the view here decodes on access and its deep
# copy is a tuple of observations, the same batch as without shared memory.

SHARED_SLOT_BYTES = 8 * 1024 * 1024  # the largest observation is the opening one (policy and tool schemas)
_LENGTH_BYTES = 8


class SharedObservations(Sequence):
    """A live view of the observations in shared memory (what ``copy=False`` vector envs return)."""

    def __init__(self, buffer: Any, n: int):
        self._buf = np.frombuffer(buffer, dtype=np.uint8)
        self._n = n

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return tuple(self[j] for j in range(*i.indices(self._n)))
        if not -self._n <= i < self._n:
            raise IndexError(i)
        start = (i % self._n) * SHARED_SLOT_BYTES
        size = int.from_bytes(self._buf[start:start + _LENGTH_BYTES].tobytes(), "little")
        if size == 0:
            return None  # nothing written yet
        return json.loads(self._buf[start + _LENGTH_BYTES:start + _LENGTH_BYTES + size].tobytes())

    def __deepcopy__(self, memo: dict[int, Any]) -> tuple[Any, ...]:
        return tuple(self)

    def __repr__(self) -> str:
        return f"SharedObservations({list(self)!r})"


def _register_shared_memory() -> None:
    import multiprocessing as mp

    from gymnasium.vector.utils import shared_memory as sm

    @sm.create_shared_memory.register(ChatObservation)
    def _create(space: ChatObservation, n: int = 1, ctx: Any = mp) -> Any:
        return ctx.Array("B", n * SHARED_SLOT_BYTES, lock=False)

    @sm.write_to_shared_memory.register(ChatObservation)
    def _write(space: ChatObservation, index: int, value: Any, shared_memory: Any) -> None:
        data = json.dumps(value, default=str).encode("utf-8")
        if len(data) + _LENGTH_BYTES > SHARED_SLOT_BYTES:
            raise ValueError(f"an observation of {len(data)} bytes does not fit the {SHARED_SLOT_BYTES}-byte shared-memory "
                             "slot; create the vector env with shared_memory=False")
        buf = np.frombuffer(shared_memory, dtype=np.uint8)
        start = index * SHARED_SLOT_BYTES
        buf[start:start + _LENGTH_BYTES] = np.frombuffer(len(data).to_bytes(_LENGTH_BYTES, "little"), dtype=np.uint8)
        buf[start + _LENGTH_BYTES:start + _LENGTH_BYTES + len(data)] = np.frombuffer(data, dtype=np.uint8)

    @sm.read_from_shared_memory.register(ChatObservation)
    def _read(space: ChatObservation, shared_memory: Any, n: int = 1) -> SharedObservations:
        return SharedObservations(shared_memory, n)


_register_shared_memory()
