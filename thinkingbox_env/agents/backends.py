"""The built-in agents, registered under ``thinkingbox_env.agents`` in ``pyproject.toml``."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ..llm.client import EndpointOptions
from ..plugins import Backend, NoOptions, Options
from .baselines import NoopAgent, OracleAgent
from .heard_facts import HeardFactsOracle
from .openai_chat import OpenAIChatAgent, SamplingConfig
from .registry import AgentCapabilities


class OpenAIOptions(EndpointOptions):
    """A model behind an OpenAI-compatible endpoint, and how it is sampled and retried."""

    sampling: SamplingConfig = Field(default_factory=SamplingConfig)
    backoff: float = 1.0
    send_reasoning: bool = False


class OracleOptions(Options):
    """Where the oracle's customer-given facts come from.

    ``golden``: the task's values (with the scripted user, what the customer says); ``heard``: what
    the customer actually said, for a model-played customer (:mod:`.heard_facts`).
    """

    facts: Literal["golden", "heard"] = "golden"


class TransformersOptions(Options):
    """A local checkpoint; of the sampling settings it uses the token limit, temperature and top-p."""

    model: str
    sampling: SamplingConfig = Field(default_factory=SamplingConfig)


def _oracle(options: OracleOptions, seed: int) -> OracleAgent:
    return HeardFactsOracle() if options.facts == "heard" else OracleAgent()


def _noop(options: NoOptions, seed: int) -> NoopAgent:
    return NoopAgent()


def _openai(options: OpenAIOptions, seed: int) -> OpenAIChatAgent:
    agent = OpenAIChatAgent(model=options.model, base_url=options.base_url, api_key=options.api_key, sampling=options.sampling,
                            timeout=options.timeout, max_retries=options.max_retries, backoff=options.backoff,
                            send_reasoning=options.send_reasoning)
    agent.set_seed(seed)
    return agent


def _transformers(options: TransformersOptions, seed: int) -> Any:
    from .transformers_local import TransformersChatAgent  # torch is imported only when a checkpoint is loaded

    sampling = options.sampling
    agent = TransformersChatAgent.from_pretrained(options.model, max_new_tokens=sampling.max_tokens or 1024,
                                                  temperature=sampling.temperature or 0.0, top_p=sampling.top_p or 1.0)
    agent.set_seed(seed)
    return agent


ORACLE = Backend("oracle", OracleOptions, _oracle, "replays the task's golden calls, an upper bound and a check of the task",
                 AgentCapabilities())
NOOP = Backend("noop", NoOptions, _noop, "closes the conversation at once without a tool call, a lower bound", AgentCapabilities())
OPENAI = Backend("openai", OpenAIOptions, _openai, "a model behind an OpenAI-compatible endpoint, --base-url and --model",
                 AgentCapabilities(needs_endpoint=True, records_calls=True, customer_tool=True))
TRANSFORMERS = Backend("transformers", TransformersOptions, _transformers, "a local checkpoint, --model PATH",
                       AgentCapabilities(records_calls=True, customer_tool=True, requires=("torch", "transformers"), extra="train"))
