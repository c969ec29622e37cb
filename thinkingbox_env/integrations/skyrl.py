"""SkyRL-gym integration: a Thinkingbox episode as a registered text environment (``pip install thinkingbox-env[skyrl]``).

SkyRL's environments are text in, messages out: ``init(prompt)`` gives the first prompt,
``step(text)`` takes the model's raw output and returns the messages to append, a reward
and ``done``. Tool calls in the output are read in the Hermes/Qwen form the chat
templates of open models produce (``<tool_call>{"name": ..., "arguments": ...}</tool_call>``),
as the local-checkpoint agent reads them; text without a call is a message to the
customer (``chat`` protocol, ``<DONE>`` closes) or the closing message (``customer-tool``).
The reward is the verdict, given on the last step; ``metadata`` then holds the checks,
the reward vector and the state hash.

The task comes from ``extras`` (SkyRL passes a dataset row's extra columns there):
``task_id`` for a frozen task, or ``domain`` with ``family`` and ``seed`` for a train
variant; ``protocol`` and ``max_turns`` are optional. ``skyrl_gym.make("thinkingbox", extras=...)``
builds one once this module is imported (importing it registers the id).
"""

from __future__ import annotations

import json
from typing import Any

import skyrl_gym
from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput

from ..agents.transformers_local import parse_hermes
from .episode import Episode

ENV_ID = "thinkingbox"

__all__ = ["ENV_ID", "ThinkingboxSkyRLEnv", "register", "tool_prompt"]


def tool_prompt(tools: list[dict[str, Any]]) -> str:
    """The system text that tells a text-only model its tools and the call format this env parses."""
    schemas = "\n".join(json.dumps(t["function"], sort_keys=True) for t in tools)
    return ("# Tools\n\nCall a tool by writing, on its own line:\n"
            '<tool_call>{"name": "<tool name>", "arguments": {<arguments as JSON>}}</tool_call>\n'
            "Several calls may follow one another. The tools:\n" + schemas)


class ThinkingboxSkyRLEnv(BaseTextEnv):
    """One episode of a task or a train variant, stepped with the model's text."""

    def __init__(self, env_config: Any = None, extras: dict[str, Any] | None = None):
        super().__init__()
        extras = dict(extras or {})
        task_id, domain = extras.get("task_id"), extras.get("domain")
        if bool(task_id) == bool(domain):
            raise ValueError("extras need either 'task_id' (a frozen task) or 'domain' with 'family' and 'seed' (a train variant)")
        self.max_turns = int(extras.get("max_turns") or 50)
        self.seed = int(extras.get("seed") or 0)
        self.family = extras.get("family")
        if domain and self.family is None:
            raise ValueError("a train variant needs 'family' (and 'seed') in extras")
        self.episode = Episode(str(task_id or domain), protocol=extras.get("protocol") or "chat",
                               split="test" if task_id else "train", max_actions=self.max_turns)
        self.result: dict[str, Any] | None = None

    def init(self, prompt: list[dict[str, Any]] | None = None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """Start the episode; the prompt is the env's (system prompts, tools, the customer's opening) unless one is given."""
        first = self.episode.reset(seed=self.seed, family=self.family)
        self.turns, self.result = 0, None
        messages = [dict(m) for m in first["messages"]]
        messages.insert(len(messages) - 1, {"role": "system", "content": tool_prompt(first["tools"])})
        return (list(prompt) if prompt else messages), {"task_id": first["task_id"]}

    def step(self, action: str) -> BaseTextEnvStepOutput:
        self.turns += 1
        parsed = parse_hermes(action)
        if parsed["tool_calls"]:
            turn: Any = {"role": "assistant", "content": parsed["content"] or None, "tool_calls": [
                {"id": f"call_{self.turns}_{i}", "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
                for i, c in enumerate(parsed["tool_calls"])]}
        else:
            turn = parsed["content"]
        out = self.episode.step(turn)
        if not out.done and self.turns >= self.max_turns:
            self.result = self.episode.finish(parsed["content"])
        else:
            self.result = out.result
        observations = [{"role": m["role"] if m["role"] in ("user", "tool") else "user", "content": m.get("content") or ""}
                        for m in out.messages if m["role"] != "assistant"]
        if self.result is None:
            return BaseTextEnvStepOutput(observations=observations, reward=0.0, done=False, metadata={}, postprocessed_action=None)
        return BaseTextEnvStepOutput(observations=[], reward=self.result["verdict"], done=True, metadata=dict(self.result),
                                     postprocessed_action=None)

    def get_metrics(self) -> dict[str, Any]:
        """Per-episode numbers SkyRL averages over a batch: the verdict and the share of checks passed."""
        if self.result is None:
            return {}
        vector = self.result["reward_vector"]
        return {"verdict": self.result["verdict"], "checks_passed": sum(vector) / len(vector) if vector else 0.0}

    def close(self) -> None:
        self.episode.close()


def register() -> None:
    """Register :data:`ENV_ID` with skyrl_gym (done on import; safe to call again)."""
    if ENV_ID not in skyrl_gym.registry:
        skyrl_gym.register(id=ENV_ID, entry_point=f"{__name__}:ThinkingboxSkyRLEnv")


register()
