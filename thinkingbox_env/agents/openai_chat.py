"""``OpenAIChatAgent``: a model behind any OpenAI-compatible Chat Completions endpoint as an agent.

The main case is a Qwen model served by ``vllm serve`` with its tool-call parser;
hosted APIs work the same way. The agent keeps the conversation exactly as the
environment reports it (its own assistant turns included), so what the model sees
is what the trace records. Retries are done here rather than by the client,
because the evaluation protocol fixes them: 429 is retried, 502/503/504 and
timeouts at most ``max_retries`` times, with exponential backoff; a call that
still fails raises ``ModelCallError``, which the harness records as a system
error instead of a failed trial. A refusal because the conversation no longer
fits the model's context raises ``ContextOverflowError`` instead, at once: that is
the agent's failure, not the endpoint's (see :mod:`.context_overflow`). Every call
leaves a record (latency, token usage, finish reason, reasoning text) in ``calls``.
"""

from __future__ import annotations

import copy
import logging
import time
from dataclasses import dataclass, field
from typing import Any

from ..contracts.spec import TaskSpec
from ..llm.client import openai_client, resolve_model, sum_usage, token_usage
from .context_overflow import ContextOverflowError, overflow_from_status_error

log = logging.getLogger(__name__)

RETRY_STATUS = (502, 503, 504)
RATE_LIMIT_STATUS = 429


class ModelCallError(RuntimeError):
    """A model call that failed for good: an infrastructure failure, not an agent failure."""

    def __init__(self, message: str, attempts: int, status: int | None = None):
        super().__init__(message)
        self.attempts = attempts
        self.status = status


@dataclass
class SamplingConfig:
    """Request parameters; ``None`` leaves a parameter out of the request (some servers refuse some)."""

    temperature: float | None = 0.0
    top_p: float | None = None
    max_tokens: int | None = 4096
    # OpenAI's reasoning models refuse max_tokens and take max_completion_tokens (reasoning included) instead
    max_completion_tokens: int | None = None
    seed: int | None = None
    reasoning_effort: str | None = None
    extra_body: dict[str, Any] = field(default_factory=dict)

    def request_kwargs(self, seed: int | None) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name in ("temperature", "top_p", "max_tokens", "max_completion_tokens", "reasoning_effort"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        chosen = seed if seed is not None else self.seed
        if chosen is not None:
            out["seed"] = int(chosen) % (2**31)
        if self.extra_body:
            out["extra_body"] = dict(self.extra_body)
        return out


def _reasoning(message: Any) -> str | None:
    """Reasoning text, under the names servers use for it (vLLM: ``reasoning_content`` or ``reasoning``)."""
    for name in ("reasoning_content", "reasoning"):
        value = getattr(message, name, None)
        if value is None and getattr(message, "model_extra", None):
            value = message.model_extra.get(name)
        if isinstance(value, str) and value:
            return value
    return None


def call_with_retries(create: Any, max_retries: int = 5, max_rate_limit_retries: int = 20,
                      backoff: float = 1.0, max_backoff: float = 60.0) -> tuple[Any, int]:
    """Call ``create()`` with the evaluation protocol's retries; return (response, attempts)."""
    import openai

    attempts = 0
    transient = 0
    limited = 0
    while True:
        attempts += 1
        try:
            return create(), attempts
        except openai.APIStatusError as exc:
            status = exc.status_code
            overflow = overflow_from_status_error(exc)
            if overflow is not None:  # retrying the same conversation cannot make it fit
                overflow.attempts = attempts
                raise overflow from exc
            if status == RATE_LIMIT_STATUS and limited < max_rate_limit_retries:
                limited += 1
                delay = backoff * 2 ** min(limited - 1, 10)
            elif status in RETRY_STATUS and transient < max_retries:
                transient += 1
                delay = backoff * 2 ** (transient - 1)
            else:
                raise ModelCallError(f"HTTP {status} after {attempts} attempt(s): {exc.message}", attempts, status) from exc
        except (openai.APITimeoutError, openai.APIConnectionError) as exc:
            if transient >= max_retries:
                kind = "timed out" if isinstance(exc, openai.APITimeoutError) else "connection failed"
                raise ModelCallError(f"request {kind} after {attempts} attempt(s)", attempts) from exc
            transient += 1
            delay = backoff * 2 ** (transient - 1)
        log.info("model call attempt %d failed; retrying in %.2fs", attempts, delay)
        time.sleep(min(delay, max_backoff))


class OpenAIChatAgent:
    """An agent whose every turn is one Chat Completions call with the task's tools.

    ``send_reasoning`` puts the model's reasoning back into its own earlier turns
    (as ``reasoning_content``) for models that need it; by default it is kept in
    ``calls`` and the trace only.
    """

    def __init__(
        self,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        sampling: SamplingConfig | None = None,
        timeout: float = 600.0,
        max_retries: int = 5,
        backoff: float = 1.0,
        parallel_tool_calls: bool | None = None,
        send_reasoning: bool = False,
        client: Any = None,
    ) -> None:
        self.model = resolve_model("agent", model)
        self.sampling = sampling or SamplingConfig()
        self.max_retries = max_retries
        self.backoff = backoff
        self.parallel_tool_calls = parallel_tool_calls
        self.send_reasoning = send_reasoning
        # retries are ours (see the module docstring), so the client makes one attempt per call
        self.client = client or openai_client("agent", base_url, api_key, timeout, max_retries=0)
        self.messages: list[dict[str, Any]] = []
        self.tools: list[dict[str, Any]] = []
        self.calls: list[dict[str, Any]] = []
        self.seed: int | None = None
        self._turn = 0
        self._pending_reasoning: str | None = None

    def set_seed(self, seed: int | None) -> None:
        """The trial's seed; each turn's request seed is derived from it."""
        self.seed = seed

    def reset(self, task: TaskSpec, observation: dict[str, Any]) -> None:
        self.messages = []
        self.tools = copy.deepcopy(observation.get("tools") or [])
        self.calls = []
        self._turn = 0
        self._pending_reasoning = None

    def _absorb(self, observation: dict[str, Any]) -> None:
        for m in observation.get("messages", []):
            msg = {k: v for k, v in m.items() if v is not None or k == "content"}
            if msg["role"] == "assistant" and self._pending_reasoning:
                msg["reasoning_content"] = self._pending_reasoning  # the env echoes our turn without it
                self._pending_reasoning = None
            self.messages.append(msg)

    def _request_messages(self) -> list[dict[str, Any]]:
        if self.send_reasoning:
            return self.messages
        return [{k: v for k, v in m.items() if k != "reasoning_content"} for m in self.messages]

    def act(self, observation: dict[str, Any]) -> dict[str, Any]:
        self._absorb(observation)
        seed = None if self.seed is None else self.seed * 1_000_003 + self._turn
        self._turn += 1
        kwargs = self.sampling.request_kwargs(seed)
        if self.tools:
            kwargs["tools"] = self.tools
            if self.parallel_tool_calls is not None:
                kwargs["parallel_tool_calls"] = self.parallel_tool_calls
        request_messages = self._request_messages()

        def create() -> Any:
            return self.client.chat.completions.create(model=self.model, messages=request_messages, **kwargs)

        started = time.perf_counter()
        record: dict[str, Any] = {"turn": self._turn, "model": self.model}
        try:
            response, attempts = call_with_retries(create, self.max_retries, backoff=self.backoff)
        except ModelCallError as exc:
            record.update(ok=False, attempts=exc.attempts, error=str(exc), seconds=time.perf_counter() - started,
                          usage={"input": 0, "cached": 0, "output": 0, "reasoning": 0})
            self.calls.append(record)
            raise
        except ContextOverflowError as exc:
            record.update(ok=False, attempts=exc.attempts, error=str(exc), context_overflow=True,
                          seconds=time.perf_counter() - started, usage={"input": 0, "cached": 0, "output": 0, "reasoning": 0})
            self.calls.append(record)
            raise
        record.update(ok=True, attempts=attempts, seconds=time.perf_counter() - started, usage=token_usage(response))
        if not response.choices:
            record["finish_reason"] = None
            self.calls.append(record)
            raise ModelCallError("the response has no choices", attempts)
        choice = response.choices[0]
        message = choice.message
        record["finish_reason"] = choice.finish_reason
        reasoning = _reasoning(message)
        if reasoning:
            record["reasoning"] = reasoning
        self.calls.append(record)
        tool_calls = []
        for tc in message.tool_calls or []:
            fn = getattr(tc, "function", None)  # a non-function tool call is passed on nameless: the env rejects it
            tool_calls.append({"id": tc.id, "type": "function",
                               "function": {"name": getattr(fn, "name", None), "arguments": getattr(fn, "arguments", None)}})
        action: dict[str, Any] = {"role": "assistant", "content": message.content if message.content is not None else ""}
        if tool_calls:  # content stays "" rather than None: llama.cpp's server refuses a null content sent back to it
            action["tool_calls"] = tool_calls
        if reasoning and self.send_reasoning:
            self._pending_reasoning = reasoning
        return action

    @property
    def usage(self) -> dict[str, int]:
        """Token totals over this trial's calls."""
        return sum_usage(self.calls)
