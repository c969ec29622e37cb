"""A local Hugging Face model as a tool-calling chat agent, for evaluating checkpoints.

A checkpoint fresh out of training is evaluated where it was trained, without
standing up a server: the model renders the conversation with its own chat
template (tools included), generates, and its tool calls are parsed the way TRL
parsed them during training. The interface is ``OpenAIChatAgent``'s (OpenAI-format
messages in, an assistant message out), so the harness and the customer-tool
protocol wrapper treat both alike.

A model whose template knows no tools is given the prompt tool protocol
(``tool_protocol.py``) before its first turn, and the choice is logged. A
completion whose tool call cannot be read is passed on as a call with its raw
text, which the environment records as the model's error.
"""

from __future__ import annotations

import functools
import json
import re
import time
from typing import Any

from ..contracts.actions import hermes_calls
from ..contracts.spec import TaskSpec
from .tool_protocol import ToolProtocol, prepare_tokenizer

_THINK = re.compile(r"<think>.*?</think>", re.S)


def parse_hermes(text: str) -> dict[str, Any]:
    """Content and tool calls of a Qwen/Hermes-format completion (used when TRL's parser is not there).

    The blocks are read by the env's own reader (:func:`thinkingbox_env.contracts.actions.hermes_calls`), so a
    completion stepped as raw text and one stepped as this parse run the same calls.
    """
    content, found = hermes_calls(_THINK.sub("", text))
    calls = [{"name": name, "arguments": arguments} for name, arguments in found]
    return {"content": content.replace("<|im_end|>", "").strip(), "tool_calls": calls}


class TransformersChatAgent:
    """Generates each turn with ``model.generate``; greedy when ``temperature`` is 0."""

    def __init__(self, model: Any, tokenizer: Any, max_new_tokens: int = 512, temperature: float = 0.0, top_p: float = 1.0,
                 enable_thinking: bool = False, name: str | None = None, tool_protocol: str = "auto") -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.max_new_tokens = max_new_tokens
        self.temperature = temperature
        self.top_p = top_p
        self.enable_thinking = enable_thinking
        self.name = name or getattr(model, "name_or_path", "local")
        self.messages: list[dict[str, Any]] = []
        self.tools: list[dict[str, Any]] = []
        self.calls: list[dict[str, Any]] = []
        self.seed: int | None = None
        self.tool_protocol: ToolProtocol = prepare_tokenizer(tokenizer, tool_protocol)
        self._trl_parser = _trl_parser(tokenizer)

    @classmethod
    def from_pretrained(cls, path: str, **kwargs: Any) -> TransformersChatAgent:
        model, tokenizer = load_model(path)
        return cls(model, tokenizer, name=path, **kwargs)

    def set_seed(self, seed: int | None) -> None:
        self.seed = seed

    def reset(self, task: TaskSpec, observation: dict[str, Any]) -> None:
        self.messages, self.calls = [], []
        self.tools = list(observation.get("tools") or [])

    def act(self, observation: dict[str, Any]) -> dict[str, Any]:
        import torch

        self.messages.extend(m for m in observation.get("messages", []))
        prompt = self.tokenizer.apply_chat_template(self.messages, tools=self.tools or None, add_generation_prompt=True,
                                                    tokenize=True, return_dict=True, enable_thinking=self.enable_thinking)
        input_ids = torch.tensor([prompt["input_ids"]], device=self.model.device)
        sampling: dict[str, Any] = {"do_sample": False}
        if self.temperature > 0:
            sampling = {"do_sample": True, "temperature": self.temperature, "top_p": self.top_p}
            if self.seed is not None:
                torch.manual_seed(self.seed * 1_000_003 + len(self.calls))
        started = time.perf_counter()
        with torch.no_grad():
            out = self.model.generate(input_ids=input_ids, attention_mask=torch.ones_like(input_ids),
                                      max_new_tokens=self.max_new_tokens, pad_token_id=self.tokenizer.pad_token_id, **sampling)
        ids = out[0, input_ids.shape[1]:].tolist()
        parsed = self._parse(ids, prompt["input_ids"])
        finish = "stop" if ids and ids[-1] == self.tokenizer.eos_token_id else "length"
        self.calls.append({"turn": len(self.calls) + 1, "model": self.name, "ok": True, "attempts": 1, "finish_reason": finish,
                           "seconds": time.perf_counter() - started,
                           "usage": {"input": len(prompt["input_ids"]), "cached": 0, "output": len(ids), "reasoning": 0}})
        action: dict[str, Any] = {"role": "assistant", "content": parsed["content"]}
        if parsed["tool_calls"]:
            action["tool_calls"] = [
                {"id": f"call_{len(self.calls)}_{i}", "type": "function",
                 "function": {"name": c["name"], "arguments": c["arguments"] if isinstance(c["arguments"], str) else json.dumps(c["arguments"])}}
                for i, c in enumerate(parsed["tool_calls"])
            ]
        return action

    def _parse(self, ids: list[int], prefix: list[int]) -> dict[str, Any]:
        if self._trl_parser is not None:
            try:
                message = self._trl_parser(self.tokenizer, ids, prefix=prefix, tools=self.tools or None)
            except Exception:  # noqa: BLE001 - a call the schema parser cannot read: the raw text goes to the env
                return parse_hermes(self.tokenizer.decode(ids, skip_special_tokens=False))
            calls = [{"name": (c.get("function") or {}).get("name"), "arguments": (c.get("function") or {}).get("arguments", {})}
                     for c in message.get("tool_calls") or []]
            content = message.get("content") or ""
            if isinstance(content, list):
                content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
            return {"content": _THINK.sub("", content).strip(), "tool_calls": calls}
        return parse_hermes(self.tokenizer.decode(ids, skip_special_tokens=False))


def _trl_parser(tokenizer: Any) -> Any:
    """The response parser GRPO used: the tokenizer's own response template, or TRL's for a template it knows; else None."""
    if getattr(tokenizer, "response_template", None) is not None:
        return lambda tok, ids, prefix, tools: tok.parse_response(ids, prefix=prefix, tools=tools)
    try:
        from trl.chat_template_utils import add_response_schema, parse_response

        add_response_schema(tokenizer)
        return parse_response
    except Exception:  # noqa: BLE001 - unknown template or no TRL: the Hermes parser applies
        return None


@functools.lru_cache(maxsize=2)
def load_model(path: str) -> tuple[Any, Any]:
    """A checkpoint and its tokenizer, loaded once per process (trials of a run share them)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    device = "cuda" if torch.cuda.is_available() else "cpu"
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    tokenizer = AutoTokenizer.from_pretrained(path)
    # Any: transformers types the decorated .to() as taking a model, and the package may be absent where mypy runs.
    model: Any = AutoModelForCausalLM.from_pretrained(path, dtype=dtype)
    model = model.to(device).eval()
    return model, tokenizer
