"""The customer-as-a-tool protocol as an agent adapter, for evaluating trained models on an unwrapped env.

Trainers with a built-in tool loop (TRL's GRPOTrainer) have no user turn, so during
training the customer is reached through a ``reply_to_customer`` tool and the
model's first plain-text message closes the conversation. The protocol itself lives
in :mod:`thinkingbox_env.envs.wrappers` (``CustomerToolWrapper``, which the evaluation
harness and the TRL classes run on). :class:`CustomerToolAgent` plays the same
protocol, through the same translation, against an unwrapped chat env: one env
action per ``act``, for loops that step the env themselves.
"""

from __future__ import annotations

from typing import Any

from ..contracts.protocol import EPISODE_OVER, REPLY_TOOL, customer_tool_prompt, reply_tool_schema
from ..contracts.spec import TaskSpec
from ..envs.wrappers import CustomerToolProtocol, protocol_tools
from ..tasks.domain import load_domain

__all__ = ["EPISODE_OVER", "REPLY_TOOL", "CustomerToolAgent", "protocol_tools", "reply_tool_schema", "system_prompt"]


def system_prompt(domain: str, include_policy: bool = True) -> str:
    """The system prompt of the protocol: instructions, then the domain's policy (optional for tiny models)."""
    return customer_tool_prompt(load_domain(domain), include_policy)


class CustomerToolAgent:
    """Runs a chat agent in the training protocol against a :class:`ThinkingboxEnv`.

    The inner agent sees the protocol's system prompt, the customer's opening, the
    tools plus ``reply_to_customer``, and only its own turns and their results. Each
    of its tool calls becomes one environment step: ``reply_to_customer`` a message to
    the customer (whose answer comes back as the tool's result), any other a tool
    call; a turn without tool calls closes the episode with that text.
    """

    def __init__(self, inner: Any, include_policy: bool = True):
        self.inner = inner
        self.include_policy = include_policy
        self.protocol = CustomerToolProtocol()
        self._queue: list[dict[str, Any]] = []  # the inner agent's tool calls not yet stepped
        self._results: list[dict[str, Any]] = []  # tool messages for the inner agent's next turn
        self._turn: dict[str, Any] | None = None
        self._current: dict[str, Any] | None = None
        self._as_message = False  # whether the call in flight went to the env as a message to the customer

    @property
    def calls(self) -> list[dict[str, Any]]:
        """The inner agent's model calls (the harness records their usage and reasoning)."""
        return getattr(self.inner, "calls", [])

    def set_seed(self, seed: int | None) -> None:
        if hasattr(self.inner, "set_seed"):
            self.inner.set_seed(seed)

    def reset(self, task: TaskSpec, observation: dict[str, Any]) -> None:
        tools = protocol_tools(task.domain, observation.get("tools") or [])
        self.inner.reset(task, {"messages": [], "tools": tools})
        self._queue, self._turn, self._current = [], None, None
        self._results = [{"role": "system", "content": system_prompt(task.domain, self.include_policy)},
                         {"role": "user", "content": task.user.opening}]

    def _absorb(self, observation: dict[str, Any]) -> None:
        """Turn the environment's answer to the call just stepped into the tool message the inner agent expects."""
        call = self._current
        if call is None:
            return
        self._current = None
        content = self.protocol.result_content(call, self._as_message, observation.get("messages", []))
        self._results.append(self.protocol.tool_message(call, content))

    def act(self, observation: dict[str, Any]) -> Any:
        self._absorb(observation)
        if not self._queue:
            feed = ([self._turn] if self._turn is not None else []) + self._results
            self._results = []
            turn = self.inner.act({"messages": feed, "tools": []})
            self._turn = turn
            calls = turn.get("tool_calls") or []
            if not calls:
                return self.protocol.closing_action(turn.get("content"))
            self._queue = list(calls)
        call = self._queue.pop(0)
        self._current = call
        action, self._as_message = self.protocol.env_action(call)
        return action
