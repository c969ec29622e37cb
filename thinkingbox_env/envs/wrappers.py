"""Gymnasium wrappers: the customer-as-a-tool protocol, and per-check reward shaping.

:class:`CustomerToolWrapper` turns a :class:`~thinkingbox_env.envs.env.ThinkingboxEnv` into
the protocol trainers with their own tool loop speak (TRL's GRPOTrainer): the customer
is a ``reply_to_customer`` tool whose result is the customer's answer, and the first
plain-text turn closes the conversation. The TRL environment classes and the
evaluation harness both run on it, so a model is evaluated in exactly the protocol it
was trained in. :class:`CustomerToolProtocol` is the translation itself (no env), also
used by :class:`~thinkingbox_env.agents.customer_tool.CustomerToolAgent`, which plays
the protocol against an unwrapped env one action at a time.

:class:`CheckRewardWrapper` turns the terminal verdict into a weighted sum over
``info["reward_vector"]``, for any Gymnasium trainer that wants partial credit.
"""

from __future__ import annotations

import copy
import json
import logging
from collections.abc import Mapping
from functools import lru_cache
from typing import Any, SupportsFloat

import gymnasium as gym

from ..checks.asked_checks import did_asked_work
from ..contracts.protocol import (
    DONE_MARKER,
    EMPTY_MESSAGE,
    END_TOOL_NAME,
    EPISODE_OVER,
    REPLY_TOOL,
    customer_tool_prompt,
    reply_to_customer,
    reply_tool_schema,
)
from ..toolkit.tools import tool_function

log = logging.getLogger(__name__)


# --------------------------------------------------------------------------- customer as a tool


def reply_text(arguments: Any) -> str | None:
    """The ``message`` of a ``reply_to_customer`` call (arguments as a dict or JSON text); ``None`` if malformed."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            return None
    if isinstance(arguments, dict) and isinstance(arguments.get("message"), str):
        return arguments["message"]
    return None


def _unused_run(self: Any, name: str, arguments: dict[str, Any]) -> str:  # pragma: no cover - schemas only
    raise RuntimeError("schema-only tool function")


@lru_cache(maxsize=32)
def _rendered_tools(domain: str, tools: tuple[str, ...] | None) -> str:
    from transformers.utils import get_json_schema

    from ..tasks.domain import load_domain

    toolbox = load_domain(domain).toolbox
    fns: dict[str, Any] = {
        t.name: tool_function(t, _unused_run)
        for t in toolbox.tools.values()
        if t.name != END_TOOL_NAME and (tools is None or t.name in tools)
    }
    fns[REPLY_TOOL] = reply_to_customer
    return json.dumps([get_json_schema(fns[name]) for name in sorted(fns)])


def protocol_tools(domain: str, env_tools: list[dict[str, Any]], tools: list[str] | None = None) -> list[dict[str, Any]]:
    """The tools a model sees in the protocol.

    With transformers installed: the schemas transformers derives from the tool
    functions, exactly what a TRL-trained model saw in training. Without it: the env's
    schemas, less the end tool, plus the reply tool.
    """
    try:
        return json.loads(_rendered_tools(domain, tuple(tools) if tools is not None else None))
    except ImportError:
        kept = [t for t in env_tools if t.get("function", {}).get("name") != END_TOOL_NAME
                and (tools is None or t.get("function", {}).get("name") in tools)]
        return [*copy.deepcopy(kept), reply_tool_schema()]


class CustomerToolProtocol:
    """How protocol turns map to chat-env actions and back. Holds no env, so wrapper and agent share it."""

    @staticmethod
    def env_action(call: dict[str, Any]) -> tuple[Any, bool]:
        """The chat-env action for one tool call, and whether it is a message to the customer.

        A well-formed ``reply_to_customer`` call becomes that text (markers removed: only
        the closing turn may close); anything else, a malformed reply call included,
        goes to the env as a tool call, where an unknown or broken call is recorded as
        a failed call like any other.
        """
        fn = call.get("function") or {}
        message = reply_text(fn.get("arguments")) if fn.get("name") == REPLY_TOOL else None
        if message is not None:
            return message.replace(DONE_MARKER, "").strip() or EMPTY_MESSAGE, True
        return {"role": "assistant", "content": None, "tool_calls": [call]}, False

    @staticmethod
    def result_content(call: dict[str, Any], as_message: bool, messages: list[dict[str, Any]]) -> str:
        """The tool result the model gets for a call, from the env's observation messages."""
        fn = call.get("function") or {}
        if as_message:
            replies = [m["content"] for m in messages if m["role"] == "user"]
            return replies[-1] if replies else EPISODE_OVER
        if fn.get("name") == REPLY_TOOL:  # the env only knows it as an unknown tool
            return json.dumps({"error": f"invalid arguments for tool '{REPLY_TOOL}': expected a JSON object "
                                        f"{{\"message\": string}}, got {fn.get('arguments')!r}"})
        return "\n".join(m["content"] for m in messages if m["role"] in ("tool", "system"))

    @staticmethod
    def tool_message(call: dict[str, Any], content: str) -> dict[str, Any]:
        return {"role": "tool", "tool_call_id": call.get("id"), "name": (call.get("function") or {}).get("name"),
                "content": content}

    @staticmethod
    def closing_action(text: str | None) -> str:
        """The chat-env action that closes: the text with the completion marker."""
        return f"{(text or '').replace(DONE_MARKER, '').strip()} {DONE_MARKER}".strip()

    @staticmethod
    def over_content(call: dict[str, Any]) -> str:
        """The answer to a call made after the conversation ended."""
        if (call.get("function") or {}).get("name") == REPLY_TOOL:
            return EPISODE_OVER
        return json.dumps({"error": EPISODE_OVER})


class CustomerToolWrapper(gym.Wrapper):
    """A chat env in the customer-as-a-tool protocol.

    ``step`` takes an assistant turn (OpenAI format): its tool calls run in order
    (``reply_to_customer`` talks to the simulated customer) and the observation is the
    turn followed by one tool message per call; a turn without tool calls (or a plain
    string) closes the episode with that text. ``call_tool``, ``reply`` and ``finish``
    are the same operations one call at a time, for trainers that dispatch tools
    themselves. Reward, ``terminated``, ``truncated`` and ``info`` are the env's.
    """

    def __init__(self, env: gym.Env, include_policy: bool = True, tools: list[str] | None = None):
        super().__init__(env)
        self.include_policy = include_policy
        self.tools = tools
        self.protocol = CustomerToolProtocol()
        self._last_sent = ""
        self._final_info: dict[str, Any] | None = None

    @property
    def base(self) -> Any:
        return self.env.unwrapped

    @property
    def episode_over(self) -> bool:
        return self.base.episode_over

    @property
    def final_info(self) -> dict[str, Any] | None:
        """The final ``info`` (with the verdict) once the episode is over."""
        return self.base.final_info

    def system_prompt(self) -> str:
        return customer_tool_prompt(self.base.runtime.domain, self.include_policy)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        obs, info = self.env.reset(seed=seed, options=options)
        self._last_sent = ""
        task = self.base.task
        messages = [{"role": "system", "content": self.system_prompt()}, {"role": "user", "content": task.user.opening}]
        return {"messages": messages, "tools": protocol_tools(task.domain, obs.get("tools") or [], self.tools)}, info

    def _step_call(self, call: dict[str, Any]) -> tuple[str, tuple[float, bool, bool, dict[str, Any]] | None]:
        """Run one call; the env's (reward, terminated, truncated, info), or ``None`` when it was not stepped."""
        if self.episode_over:
            return self.protocol.over_content(call), None
        action, as_message = self.protocol.env_action(call)
        if as_message:
            self._last_sent = action
        obs, reward, terminated, truncated, info = self.env.step(action)
        return self.protocol.result_content(call, as_message, obs["messages"]), (float(reward), terminated, truncated, info)

    def step(self, action: Any) -> tuple[dict[str, Any], SupportsFloat, bool, bool, dict[str, Any]]:
        if isinstance(action, dict) and "name" in action and "role" not in action:
            action = {"role": "assistant", "content": None, "tool_calls": [
                {"id": action.get("id"), "type": "function", "function": {"name": action["name"], "arguments": action.get("arguments")}}]}
        if isinstance(action, str):
            action = {"role": "assistant", "content": action}
        if not isinstance(action, dict):
            raise TypeError(f"a customer-tool action is an assistant message, a tool call or a string, not {type(action).__name__}")
        calls = action.get("tool_calls") or []
        if not calls:
            obs, reward, terminated, truncated, info = self.env.step(self.protocol.closing_action(action.get("content")))
            return {"messages": [action], "tools": []}, reward, terminated, truncated, info
        if self.episode_over:
            raise RuntimeError("the episode has ended; call reset() to start a new one")
        messages: list[dict[str, Any]] = [action]
        reward, terminated, truncated, info = 0.0, False, False, {}
        for call in calls:
            call = call if isinstance(call, dict) else {"id": None, "function": {"name": None, "arguments": None}}
            content, outcome = self._step_call(call)
            if outcome is not None:
                reward, terminated, truncated, info = outcome
            messages.append(self.protocol.tool_message(call, content))
        return {"messages": messages, "tools": []}, reward, terminated, truncated, info

    # one call at a time ------------------------------------------------------

    def call_tool(self, name: str, arguments: Any, call_id: str | None = None) -> str:
        """Run one protocol tool call (a domain tool or ``reply_to_customer``); return the result the model sees."""
        call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
        return self._step_call(call)[0]

    def reply(self, message: str) -> str:
        """Send ``message`` to the customer; return the answer (or a note that the conversation is over)."""
        return self.call_tool(REPLY_TOOL, {"message": message})

    def finish(self, text: str | None = None) -> dict[str, Any]:
        """Close with ``text`` (default: the last message sent to the customer) unless already over; the final info."""
        if not self.episode_over:
            self.env.step(self.protocol.closing_action(text if text is not None else self._last_sent))
        if not self.episode_over:  # the closing was refused (a message over the length limit): close without it
            self.env.step(DONE_MARKER)
        info = self.final_info
        assert info is not None
        return info


# --------------------------------------------------------------------------- reward shaping


class CheckRewardWrapper(gym.RewardWrapper):
    """The terminal reward as a weighted mean of the per-check rewards in ``info["reward_vector"]``.

    Weights are looked up by check name first (``"no_collateral"``, ``"sql:refund_issued"``),
    then by kind (``"effect"``, ``"mentions"``), then ``default``. The shaped reward is
    ``sum(w_i * r_i) / sum(w_i)`` over the episode's checks (0 when every weight is 0),
    so it stays in [0, 1] and equals the verdict when every check passes or every check
    fails. It is 0 when no check that asks for work passed
    (:func:`~thinkingbox_env.checks.asked_checks.asked_checks`): the guards an idle episode keeps
    (no collateral change, process rules, withheld facts) pay nothing by themselves.
    Non-terminal steps keep their reward of 0. The verdict itself stays in
    ``info["verdict"]``; the shaped value is also put in ``info["shaped_reward"]``.
    """

    def __init__(self, env: gym.Env, weights: Mapping[str, float] | None = None, default: float = 1.0):
        super().__init__(env)
        weights = dict(weights or {})
        bad = {k: v for k, v in weights.items() if not isinstance(v, (int, float)) or v < 0 or v != v}
        if bad:
            raise ValueError(f"check reward weights must be non-negative numbers; got {bad}")
        if not isinstance(default, (int, float)) or default < 0:
            raise ValueError(f"default weight must be a non-negative number, got {default!r}")
        self.weights = weights
        self.default = float(default)

    def weight(self, name: str, kind: str) -> float:
        if name in self.weights:
            return float(self.weights[name])
        return float(self.weights.get(kind, self.default))

    def shaped(self, info: dict[str, Any]) -> float:
        if not did_asked_work(info["check_details"]):
            return 0.0
        kinds = {d["name"]: d["kind"] for d in info["check_details"]}
        total = weighted = 0.0
        for name, value in zip(info["check_names"], info["reward_vector"]):
            w = self.weight(name, kinds.get(name, ""))
            total += w
            weighted += w * float(value)
        return weighted / total if total > 0 else 0.0

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        if "reward_vector" in info:
            info = {**info, "shaped_reward": self.shaped(info)}
            reward = info["shaped_reward"]
        return obs, reward, terminated, truncated, info

    def reward(self, reward: SupportsFloat) -> SupportsFloat:  # pragma: no cover - step() does the work
        return reward
