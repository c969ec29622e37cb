"""What decides how a run's trials go: the endpoints, the agent, user and judge backends and their options.

``EvalConfig`` is picklable, so it travels to pool and Ray workers, and ``public()`` is the
configuration every row records. ``check_config`` refuses, before any trial, what cannot
run; ``config_changes`` names the options that differ between a run file's configuration
and the current one (a ``--resume`` refusal).
"""

from __future__ import annotations

import importlib.util
import json
from dataclasses import asdict, dataclass, field
from typing import Any

from ..agents.openai_chat import SamplingConfig
from ..agents.registry import AGENTS, AgentCapabilities
from ..judging.registry import DEFAULT_JUDGE, JUDGES
from ..plugins import Options, Registry
from ..users.registry import USERS

PROTOCOLS = ("chat", "customer-tool")


@dataclass
class EndpointConfig:
    """A model behind an OpenAI-compatible endpoint. The API key is never written to a row."""

    model: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    timeout: float = 600.0
    max_retries: int = 5

    def public(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if k != "api_key"}


@dataclass
class EvalConfig:
    """Everything that decides how a trial runs; picklable, so it travels to pool and Ray workers."""

    agent: str = "oracle"
    agent_endpoint: EndpointConfig = field(default_factory=EndpointConfig)
    sampling: SamplingConfig = field(default_factory=SamplingConfig)
    backoff: float = 1.0
    send_reasoning: bool = False
    user: str = "scripted"
    user_endpoint: EndpointConfig = field(default_factory=EndpointConfig)
    user_temperature: float = 0.3
    persona: str = "plain"
    judge_endpoint: EndpointConfig | None = None
    max_actions: int = 50
    seed: int = 0
    # "chat": the environment's own protocol; "customer-tool": the one TRL training uses (see customer_tool.py)
    protocol: str = "chat"
    include_policy: bool = True
    # customer-tool protocol only: show just these domain tools (a model trained on a restricted tool set); None: all
    tools: list[str] | None = None
    # keyword arguments for make(), per task namespace (e.g. {"tbbench": {"data_dir": ...}})
    task_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    # run on purpose without a judge although tasks carry rubrics: recorded in every row, whose rubric
    # checks are then not evaluated (and the verdict 0) by choice, not by a missing endpoint
    no_judge: bool = False
    # the registered judge backend (judging/registry.py); it runs when it needs no endpoint or judge_endpoint is given
    judge: str = DEFAULT_JUDGE
    # show the agent the compact tool schemas (agents/compact_tools.py), for models with a short context
    compact_tools: bool = False
    # options for the chosen backend beyond the common settings above; a name it does not take is an error
    agent_options: dict[str, Any] = field(default_factory=dict)
    user_options: dict[str, Any] = field(default_factory=dict)
    judge_options: dict[str, Any] = field(default_factory=dict)
    # count an undetermined dialogue check (text the reader could not decide) as failed
    strict_dialogue: bool = False
    # a model that reads the sentences the rule reader cannot (reading/model_reader.py); None leaves them undetermined
    reader_endpoint: EndpointConfig | None = None

    def public(self) -> dict[str, Any]:
        """The configuration as recorded in every row: each backend's validated options, keys left out.

        A name with no registered backend (``thinkingbox play``'s person at the terminal) is
        recorded by name only.
        """
        agent: dict[str, Any] = {"kind": self.agent}
        if AGENTS.find(self.agent) is not None:
            agent.update(agent_options(self).model_dump())
        if self.protocol != "chat":
            agent.update(protocol=self.protocol, include_policy=self.include_policy)
            if self.tools is not None:
                agent.update(tools=list(self.tools))
        if self.compact_tools:  # recorded only when used, so the runs before the option existed still compare
            agent.update(compact_tools=True)
        user: dict[str, Any] = {"kind": self.user}
        user.update(user_options(self).model_dump() if USERS.find(self.user) is not None else {"persona": self.persona})
        judge: dict[str, Any] | None = None
        if judge_runs(self):  # the default judge is recorded by its options alone, as before judges had names
            judge = judge_options(self).model_dump()
            if self.judge != DEFAULT_JUDGE:
                judge = {"kind": self.judge, **judge}
        out = {"agent": agent, "user": user, "judge": judge, "max_actions": self.max_actions, "seed": self.seed}
        if self.task_options:
            out["task_options"] = self.task_options
        if self.no_judge:
            out["no_judge"] = True
        if self.strict_dialogue:  # recorded only when set: a strict run's rates do not compare with a default one's
            out["strict_dialogue"] = True
        if self.reader_endpoint is not None:  # recorded only when set, so runs without a reader still compare
            out["reader"] = self.reader_endpoint.public()
        return out


def _endpoint_offer(ep: EndpointConfig | None) -> dict[str, Any]:
    return {} if ep is None else {"model": ep.model, "base_url": ep.base_url, "api_key": ep.api_key, "timeout": ep.timeout,
                                  "max_retries": ep.max_retries}


def agent_options(config: EvalConfig) -> Options:
    """The agent backend's validated options: the run's common agent settings it declares, then ``agent_options``."""
    offered = {**_endpoint_offer(config.agent_endpoint), "sampling": config.sampling, "backoff": config.backoff,
               "send_reasoning": config.send_reasoning}
    return AGENTS.options(config.agent, offered, config.agent_options)


def user_options(config: EvalConfig) -> Options:
    """The user backend's validated options (endpoint, temperature and persona as it declares them, then ``user_options``)."""
    offered = {**_endpoint_offer(config.user_endpoint), "temperature": config.user_temperature, "persona": config.persona}
    return USERS.options(config.user, offered, config.user_options)


def judge_options(config: EvalConfig) -> Options:
    """The judge backend's validated options (its endpoint, if one is given, then ``judge_options``)."""
    return JUDGES.options(config.judge, _endpoint_offer(config.judge_endpoint), config.judge_options)


def judge_runs(config: EvalConfig) -> bool:
    """Whether trials are judged: a judge that asks a model needs its endpoint; one that does not runs unless ``no_judge``."""
    if JUDGES.get(config.judge).capabilities.needs_endpoint:
        return config.judge_endpoint is not None
    return not config.no_judge


def declared_capabilities(registry: Registry[Any], name: str, default: Any) -> Any:
    """The capabilities declared for ``name``, or ``default`` for an object that no backend built (a person at a terminal)."""
    backend = registry.find(name)
    return default if backend is None else backend.capabilities


def check_config(config: EvalConfig) -> None:
    """Refuse, before any trial, what cannot run: an unknown backend, an option it refuses, a missing extra, a protocol mismatch.

    Raises ``ValueError`` (``UnknownBackendError`` and ``BackendOptionError`` among them)
    with a message that names the backend and what to change.
    """
    check_protocol(config)
    agent = AGENTS.get(config.agent)
    missing = [m for m in agent.capabilities.requires if importlib.util.find_spec(m) is None]
    if missing:
        extra = agent.capabilities.extra
        hint = f" (pip install -e '.[{extra}]' in the thinkingbox-env checkout)" if extra else ""
        raise ValueError(f"the {config.agent} agent needs {', '.join(missing)}, not installed{hint}")
    agent_options(config)
    user_options(config)
    if judge_runs(config):
        judge_options(config)



def check_protocol(config: EvalConfig) -> None:
    """Refuse an unknown protocol, a chat-only agent in the customer-tool protocol, and a tool set outside it."""
    if config.protocol not in PROTOCOLS:
        raise ValueError(f"unknown protocol '{config.protocol}'; choose from {', '.join(PROTOCOLS)}")
    if config.protocol == "customer-tool" and not declared_capabilities(AGENTS, config.agent, AgentCapabilities(customer_tool=True)).customer_tool:
        raise ValueError(f"the {config.agent} agent speaks the chat protocol only")
    if config.tools is not None and config.protocol != "customer-tool":
        raise ValueError("a restricted tool set (tools) applies to the customer-tool protocol only")


# the command-line option behind each recorded configuration field, to name it in a resume refusal
OPTION_OF = {
    "agent.kind": "--agent", "agent.model": "--model", "agent.base_url": "--base-url", "agent.timeout": "--timeout",
    "agent.max_retries": "--max-retries", "agent.backoff": "--backoff", "agent.send_reasoning": "--send-reasoning",
    "agent.sampling.temperature": "--temperature", "agent.sampling.top_p": "--top-p",
    "agent.sampling.max_tokens": "--max-tokens", "agent.sampling.max_completion_tokens": "--max-completion-tokens",
    "agent.sampling.reasoning_effort": "--reasoning-effort", "agent.sampling.extra_body": "--extra-body",
    "agent.protocol": "--protocol", "agent.include_policy": "--no-policy", "agent.compact_tools": "--compact-tools",
    "user.kind": "--user", "user.model": "--user-model", "user.base_url": "--user-base-url",
    "user.temperature": "--user-temperature", "user.persona": "--persona", "judge": "--judge-model/--judge-base-url",
    "judge.kind": "--judge", "judge.timeout": "--timeout", "judge.max_retries": "--max-retries",
    "user.timeout": "--timeout", "user.max_retries": "--max-retries",
    "judge.model": "--judge-model", "judge.base_url": "--judge-base-url",
    "reader": "--reader-model/--reader-base-url", "reader.model": "--reader-model", "reader.base_url": "--reader-base-url",
    "reader.timeout": "--timeout", "reader.max_retries": "--max-retries",
    "max_actions": "--max-actions", "seed": "--seed",
}


def config_changes(stored: dict[str, Any], now: dict[str, Any], prefix: str = "") -> list[str]:
    """What differs between two recorded configurations, as ``--option: stored -> now`` lines."""
    out: list[str] = []
    for key in sorted(set(stored) | set(now), key=str):
        path = f"{prefix}{key}"
        a, b = stored.get(key), now.get(key)
        if isinstance(a, dict) and isinstance(b, dict) and path in ("agent", "user", "agent.sampling", "judge", "reader"):
            out += config_changes(a, b, path + ".")
        elif a != b:
            name = OPTION_OF.get(path, path)
            out.append(f"{name} was {json.dumps(a, default=str)} in the file, {json.dumps(b, default=str)} now")
    return out
