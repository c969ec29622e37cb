"""Repeated trials: one JSON row per trial, appended as trials finish, resumable, on threads or Ray.

A run is a list of (task, trial index) pairs. Each finished trial becomes one
line of a JSONL file, written in one ``write`` and flushed to disk, so a run
killed at any moment loses at most the trial in flight (and perhaps a torn last
line). ``--resume`` drops a torn line and the rows that ended in a system error,
then runs exactly the missing pairs: the file ends with one row per pair.

A *system error* is an infrastructure failure (a model endpoint that stays
down, a simulated user that cannot be reached, a judge that fails): the trial
says nothing about the agent, so it is recorded as such and kept out of the
pass rates (``thinkingbox agg`` shows them separately). A model that refuses a turn
because the conversation outgrew its context is not one: that trial is the agent's
failure (``context_overflow``, :mod:`.overflow`), counted like any other.

A run can be stopped cleanly through a ``RunControl``: no new trial starts,
trials in flight give up at their next model call (their half-done episodes are
not rows), and every trial that finished is still handed over. The same control
stops a run after K consecutive system errors, so a broken endpoint costs a few
trials rather than the whole run. Before the run, ``resolve_agent_model`` and
``preflight`` make sure the endpoint answers at all, and with which model.

Rows of schema 2 leave out the chat ``messages`` (they repeat the trace; see
:func:`~thinkingbox_env.eval.metrics.row_messages`), and the long system texts (the agent's instructions and the
policy, the same in every trial of a task) are stored once per file as ``text``
records that rows refer to by hash (:func:`compact_row`); :func:`scan_rows` puts them
back, so every reader sees whole rows. Schema 1 rows, which carry both in full, read
as before.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import os
import queue
import socket
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, cast

from ..agents.baselines import run_episode
from ..agents.compact_tools import CompactToolsAgent
from ..agents.context_overflow import ContextOverflowError
from ..agents.customer_tool import CustomerToolAgent
from ..agents.openai_chat import ModelCallError, SamplingConfig
from ..agents.registry import AGENTS, AgentCapabilities
from ..checks import trial_outcome
from ..domain import load_domain
from ..env import ThinkingboxEnv
from ..events import TraceEvent, is_message, tool_calls
from ..judges import DEFAULT_JUDGE, JUDGES, Judge
from ..llm import sum_usage
from ..plugins import Options, Registry
from ..records import EvalRow, TrialCounts, TrialOutcome
from ..registry import make
from ..spec import TaskSpec
from ..users.registry import USERS, UserCapabilities
from ..wrappers import CustomerToolWrapper
from .overflow import overflow_info

log = logging.getLogger(__name__)


ROW_SCHEMA_VERSION = 2
SHARED_TEXT_MIN_CHARS = 256  # system texts this long are stored once per run file, not once per row
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
    # the registered judge backend (judges.py); it runs when it needs no endpoint or judge_endpoint is given
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


def _declared(registry: Registry[Any], name: str, default: Any) -> Any:
    """The capabilities declared for ``name``, or ``default`` for an object that no backend built (a person at a terminal)."""
    backend = registry.find(name)
    return default if backend is None else backend.capabilities


def check_config(config: EvalConfig) -> None:
    """Refuse, before any trial, what cannot run: an unknown backend, an option it refuses, a missing extra, a protocol mismatch.

    Raises ``ValueError`` (``UnknownBackendError`` and ``BackendOptionError`` among them)
    with a message that names the backend and what to change.
    """
    _check_protocol(config)
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


def trial_seed(base_seed: int, trial: int) -> int:
    """The seed of trial ``trial``: the same for every task, so trial i of two runs is comparable."""
    return base_seed + trial


# --------------------------------------------------------------------------- one trial


class InfrastructureError(RuntimeError):
    """Raised around a failing simulated user or judge, to tell where a system error came from."""

    def __init__(self, where: str, cause: BaseException):
        super().__init__(f"{type(cause).__name__}: {cause}")
        self.where = where
        self.cause = cause


class TrialCancelled(Exception):
    """The run was stopped while this trial was in flight: the trial is dropped, not recorded."""


class _GuardedUser:
    """Passes calls through to a simulated user; its exceptions become ``InfrastructureError``.

    What the env may ask of the user (determinism, leaving the chat, the domain's
    vocabulary) is answered from the user's declared capabilities.
    """

    def __init__(self, user: Any, capabilities: UserCapabilities, stop: threading.Event | None = None):
        self.user = user
        self.stop = stop
        self.capabilities = capabilities
        self.deterministic = capabilities.deterministic

    def bind_domain(self, domain: Any) -> None:
        if self.capabilities.binds_domain:
            self.user.bind_domain(domain)

    def reset(self, spec: Any, seed: int | None) -> None:
        self.user.reset(spec, seed)

    @property
    def ended(self) -> bool:
        """Whether the user left the chat, passed through so the env can end the episode."""
        return self.capabilities.can_end and bool(self.user.ended)

    def reply(self, dialogue: list[dict[str, str]]) -> str:
        if self.stop is not None and self.stop.is_set():
            raise TrialCancelled()
        try:
            return self.user.reply(dialogue)
        except Exception as exc:  # noqa: BLE001 - any failure of the simulator is infrastructure
            raise InfrastructureError("user", exc) from exc


class RecordingJudge:
    """The judge, with every question, raw answer, parsed verdict and reason kept for the row.

    ``accepts_dialogue`` is the judge's declared capability; grading reads it here to decide
    whether to pass the structured dialogue and facts.
    """

    def __init__(self, judge: Judge, accepts_dialogue: bool = True):
        self.judge = judge
        self.accepts_dialogue = accepts_dialogue
        self.calls: list[dict[str, Any]] = []

    def identity(self) -> dict[str, Any]:
        return self.judge.identity()

    def __call__(self, question: str, transcript: str, dialogue: list[dict[str, Any]] | None = None,
                 facts: str | None = None) -> tuple[bool | None, str]:
        started = time.perf_counter()
        try:
            if self.accepts_dialogue:
                answer, reason = self.judge(question, transcript, dialogue=dialogue, facts=facts)
            else:
                answer, reason = self.judge(question, transcript)
        except Exception as exc:
            self.calls.append({"question": question, "ok": False, "error": f"{type(exc).__name__}: {exc}",
                               "seconds": time.perf_counter() - started})
            raise
        parsed = answer is not None
        self.calls.append({"question": question, "ok": True, "answer": None if answer is None else ("yes" if answer else "no"),
                           "parsed": parsed,
                           "reason": reason, "raw": self.judge.last_raw, "seconds": time.perf_counter() - started,
                           "usage": self.judge.last_usage or {"input": 0, "cached": 0, "output": 0, "reasoning": 0}})
        return answer, reason


class _StoppableAgent:
    """Checks the run's stop event before every agent turn, so a stopped run sends no further requests."""

    def __init__(self, agent: Any, stop: threading.Event):
        self.agent = agent
        self.stop = stop

    def __getattr__(self, name: str) -> Any:
        return getattr(self.agent, name)

    def reset(self, task: Any, observation: dict[str, Any]) -> None:
        self.agent.reset(task, observation)

    def act(self, observation: dict[str, Any]) -> Any:
        if self.stop.is_set():
            raise TrialCancelled()
        return self.agent.act(observation)


def _check_protocol(config: EvalConfig) -> None:
    if config.protocol not in PROTOCOLS:
        raise ValueError(f"unknown protocol '{config.protocol}'; choose from {', '.join(PROTOCOLS)}")
    if config.protocol == "customer-tool" and not _declared(AGENTS, config.agent, AgentCapabilities(customer_tool=True)).customer_tool:
        raise ValueError(f"the {config.agent} agent speaks the chat protocol only")
    if config.tools is not None and config.protocol != "customer-tool":
        raise ValueError("a restricted tool set (tools) applies to the customer-tool protocol only")


def build_agent(config: EvalConfig, seed: int) -> Any:
    """The agent of a trial, speaking the env's own protocol (customer-tool agents adapted by ``CustomerToolAgent``)."""
    _check_protocol(config)
    agent = _build_model_agent(config, seed)
    if config.protocol == "customer-tool":
        return CustomerToolAgent(agent, include_policy=config.include_policy)
    return agent


def _build_model_agent(config: EvalConfig, seed: int) -> Any:
    return AGENTS.get(config.agent).build(agent_options(config), seed)


def present_tools(config: EvalConfig, agent: Any) -> Any:
    """The agent as the run shows it the tools: their compact schemas with ``compact_tools``, else as the env gives them."""
    return CompactToolsAgent(agent) if config.compact_tools else agent


def trial_env(config: EvalConfig, task_id: str, user: Any = None, judge: Any = None,
              reader: Any = None) -> tuple[ThinkingboxEnv, Any]:
    """The environment of a trial (the unwrapped one, and the one the agent steps: wrapped in its protocol)."""
    options = dict(config.task_options.get(task_id.split("/", 1)[0], {}))
    if user is not None:
        options["user"] = user
    if reader is not None:  # passed only when configured: a task source of another package may not take it
        options["reader"] = reader
    if config.strict_dialogue:
        options["strict_dialogue"] = True
    base = make(task_id, **options, judge=judge, max_actions=config.max_actions)
    env: ThinkingboxEnv | CustomerToolWrapper = base
    if config.protocol == "customer-tool":  # the model plays the protocol it was trained in
        env = CustomerToolWrapper(base, include_policy=config.include_policy, tools=config.tools)
    return base, env


def build_user(config: EvalConfig) -> Any:
    """The simulated customer of a trial; the scripted one needs no endpoint, the LLM one is the realistic setting."""
    return USERS.get(config.user).build(user_options(config))


def build_reader(config: EvalConfig) -> Any:
    """The model reader of a trial (it records its own calls), or None: sentences the rules cannot read stay undetermined."""
    ep = config.reader_endpoint
    if ep is None:
        return None
    from ..reading.model_reader import ModelReader

    return ModelReader(model=ep.model, base_url=ep.base_url, api_key=ep.api_key, timeout=ep.timeout, retries=ep.max_retries)


def build_judge(config: EvalConfig) -> RecordingJudge | None:
    """The judge, recording its calls so their cost and failures land in the row; None leaves rubrics unevaluated."""
    if not judge_runs(config):
        return None
    backend = JUDGES.get(config.judge)
    return RecordingJudge(backend.build(judge_options(config)), accepts_dialogue=backend.capabilities.accepts_dialogue)


def _annotate_trace(trace: list[TraceEvent], calls: list[dict[str, Any]]) -> list[TraceEvent]:
    """Attach each model call's reasoning and usage to the agent message it produced (one per call)."""
    agent_events = [e for e in trace if is_message(e) and e["source"] == "agent"]
    for event, call in zip(agent_events, [c for c in calls if c.get("ok")]):
        event["model_call"] = call["turn"]
        event["usage"] = call["usage"]
        if call.get("reasoning"):
            event["reasoning"] = call["reasoning"]
    return trace


def trace_counts(trace: Sequence[TraceEvent], messages: list[dict[str, Any]]) -> dict[str, int]:
    """Per-trial interaction counts (the paper's Table 14 columns)."""
    calls = tool_calls(trace)
    sources = [e["source"] for e in trace if is_message(e)]
    return {
        "messages": len(messages),
        "tool_calls": len(calls),
        "write_calls": sum(1 for c in calls if c.get("writes")),
        "tool_errors": sum(1 for c in calls if not c.get("ok")),
        "agent_messages": sources.count("agent"),
        "user_messages": sources.count("simulator"),
    }


def run_trial(config: EvalConfig, task_id: str, trial: int, stop: threading.Event | None = None,
              agent: Any = None, user: Any = None, *, agent_capabilities: AgentCapabilities | None = None,
              user_capabilities: UserCapabilities | None = None) -> EvalRow:
    """Run one trial and return its row. Never raises for a failing model, user or judge.

    With ``stop`` set during the trial it raises ``TrialCancelled`` at the next agent or
    user turn instead: an interrupted episode says nothing about the agent. ``agent`` and
    ``user`` replace the ones ``config`` describes (``thinkingbox play``: a person at the
    terminal), so such a trial is recorded in the same row as any other; what they can do
    is ``agent_capabilities``/``user_capabilities``, else what the backend of the configured
    name declares, else nothing optional.
    """
    from ..version import __version__

    seed = trial_seed(config.seed, trial)
    started_at = time.time()
    t0 = time.perf_counter()
    _check_protocol(config)
    if agent is None:
        agent = _build_model_agent(config, seed)
        agent_capabilities = AGENTS.get(config.agent).capabilities
    agent_caps: AgentCapabilities = agent_capabilities or _declared(AGENTS, config.agent, AgentCapabilities())
    agent = present_tools(config, agent)
    if stop is not None:
        agent = _StoppableAgent(agent, stop)
    judge = build_judge(config)
    reader = build_reader(config)
    if user is None:
        user = build_user(config)
        user_capabilities = USERS.get(config.user).capabilities
    user_caps: UserCapabilities = user_capabilities or _declared(USERS, config.user, UserCapabilities())
    base, env = trial_env(config, task_id, _GuardedUser(user, user_caps, stop), judge, reader)
    spec = base.task  # the engine's TaskSpec, or the task of an external source (same domain/family/content_key)
    info: dict[str, Any] = {}  # stays empty when the episode did not finish
    system_error: dict[str, Any] | None = None
    try:
        info = run_episode(env, agent, seed=seed)
    except TrialCancelled:
        env.close()
        raise
    except ContextOverflowError as exc:  # the agent's model cannot hold the conversation: its failure, not the endpoint's
        info = overflow_info(base, exc)
    except ModelCallError as exc:
        system_error = {"where": "agent", "type": type(exc).__name__, "message": str(exc), "status": exc.status}
    except InfrastructureError as exc:
        system_error = {"where": exc.where, "type": type(exc.cause).__name__, "message": str(exc.cause)}
    except Exception as exc:  # noqa: BLE001 - a harness crash is recorded, never lost
        system_error = {"where": "harness", "type": type(exc).__name__, "message": str(exc),
                        "traceback": traceback.format_exc(limit=8)}
    messages = list(base.messages)
    trace: list[TraceEvent] = info["trace"] if info else list(base.trace)
    env.close()
    model_calls = list(agent.calls) if agent_caps.records_calls else []
    judge_calls = judge.calls if judge else []
    if info and system_error is None and judge is not None:
        failed = [c for c in judge_calls if not c["ok"]]
        if failed:
            system_error = {"where": "judge", "type": "JudgeError", "message": failed[0]["error"]}
    usage = {**sum_usage(model_calls), "model_calls": len(model_calls)}
    # the evaluator's tokens, kept apart from the agent's
    judge_usage: dict[str, Any] = {**sum_usage(judge_calls), "judge_calls": len(judge_calls)}
    if reader is not None:  # the model reader's requests (cached readings cost none), counted apart from the judge's
        reader_calls = list(reader.calls)
        judge_usage.update(reader_calls=len(reader_calls), reader_failed=sum(1 for c in reader_calls if not c.get("ok")),
                           reader_tokens=sum_usage(reader_calls))
    seconds = time.perf_counter() - t0
    ok = system_error is None and bool(info)
    return EvalRow(
        schema=ROW_SCHEMA_VERSION,
        task_id=task_id,
        domain=spec.domain,
        family=spec.family,
        trial=trial,
        seed=seed,
        status="ok" if ok else "system_error",
        system_error=system_error,
        verdict=info["verdict"] if ok else None,
        checks=info["checks"] if ok else None,
        check_details=info["check_details"] if ok else None,
        reward_vector=[float(x) for x in info["reward_vector"]] if ok else None,
        unevaluated=info["unevaluated"] if ok else None,
        outcome=_outcome(info) if ok else None,
        **(cast("dict[str, Any]", {"unverified": list(info.get("unverified") or [])}) if ok else {}),
        diff=info["diff"] if ok else None,
        state_hash=info["state_hash"] if ok else None,
        finish_reason=info["finish_reason"] if info else None,
        failure_category=info["failure_category"] if ok else None,
        counts=TrialCounts(**trace_counts(trace, messages), actions=base.action_count, user_turns=base.user_turn_count),
        usage=usage,
        judge_usage=judge_usage,
        timings={"started_at": started_at, "seconds": seconds,
                 "model_seconds": sum(c.get("seconds", 0.0) for c in model_calls),
                 "judge_seconds": sum(c.get("seconds", 0.0) for c in judge_calls)},
        trace=cast("list[dict[str, Any]]", _annotate_trace(trace, model_calls)),  # stored as the plain dicts they are
        model_calls=model_calls,
        judge_calls=judge_calls,
        judge=judge.identity() if judge is not None else None,
        **({"reader": reader.identity()} if reader is not None else {}),
        worker={"host": socket.gethostname(), "pid": os.getpid()},
        package_version=__version__,
        task_set_version=task_set_version(spec),
        task_hash=spec.content_key(),
        config=config.public(),
        user=user.describe() if hasattr(user, "describe") else {"kind": config.user},
        **({"context_overflow": info["context_overflow"]} if ok and "context_overflow" in info else {}),
        **({"user_replies": user.reply_checks} if hasattr(user, "reply_checks") else {}),
    )


def _outcome(info: dict[str, Any]) -> TrialOutcome:
    """Pass, fail or unjudged; a trial cut by a context overflow is failed whatever its open checks are."""
    if "context_overflow" in info:
        return "fail"
    return trial_outcome(info["verdict"], info["check_details"])


def task_set_version(spec: TaskSpec) -> int | None:
    """The version of the task set a task belongs to (``domain.yaml``), so rows name what they measured.

    None for tasks from outside the domain folders (an imported benchmark carries its own release);
    an archived task's own version (``retail/ST030_001@v2``).
    """
    archived = getattr(spec, "_task_set_version", None)  # an imported benchmark's task has no such attribute
    if archived is not None:
        return int(archived)
    try:
        return load_domain(spec.domain).spec.task_set_version
    except KeyError:
        return None


# --------------------------------------------------------------------------- the JSONL file


class RunFileError(RuntimeError):
    """A run that cannot go on for a reason the user must fix (the file exists, another process writes it, Ray is missing)."""
    pass


def row_problem(row: Any) -> str | None:
    """Why a parsed line is not a usable row (None if it is): the fields every reader relies on."""
    if not isinstance(row, dict):
        return f"a row must be a JSON object, got {type(row).__name__}"
    if not isinstance(row.get("task_id"), str):
        return "no task_id string"
    if isinstance(row.get("trial"), bool) or not isinstance(row.get("trial"), int):
        return "no integer trial"
    if not isinstance(row.get("status"), str):
        return "no status string"
    if row["status"] == "ok" and (isinstance(row.get("verdict"), bool) or not isinstance(row.get("verdict"), (int, float))):
        return "status ok without a numeric verdict"
    return None


@dataclass
class RowScan:
    """A run file read line by line: its good rows and, by line number, every line that is not one."""

    path: str
    rows: list[dict[str, Any]]
    malformed: list[tuple[int, str]]

    def describe(self, limit: int = 10) -> list[str]:
        lines = [f"{self.path}:{n}: {why}" for n, why in self.malformed[:limit]]
        if len(self.malformed) > limit:
            lines.append(f"... and {len(self.malformed) - limit} more")
        return lines


def _text_ref(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]


def compact_row(row: dict[str, Any], written: set[str]) -> list[str]:
    """The lines that store ``row``: a ``text`` record for each long system text not yet in ``written``, then the row.

    The row's copy refers to those texts by ``content_ref``; ``row`` itself is left as it
    is (callbacks see whole rows). ``written`` is updated, so one writer stores each text once.
    """
    lines: list[str] = []
    trace: list[Any] = []
    for event in row.get("trace") or []:
        content = event.get("content") if isinstance(event, dict) else None
        if isinstance(content, str) and len(content) >= SHARED_TEXT_MIN_CHARS \
                and is_message(event) and event.get("role") == "system":
            ref = _text_ref(content)
            if ref not in written:
                lines.append(json.dumps({"kind": "text", "ref": ref, "content": content}))
                written.add(ref)
            event = {k: v for k, v in event.items() if k != "content"} | {"content_ref": ref}
        trace.append(event)
    lines.append(json.dumps({**row, "trace": trace} if "trace" in row else row, default=str))
    return lines


def _resolve_texts(row: dict[str, Any], texts: dict[str, str]) -> str | None:
    """Put the shared texts back into ``row``'s trace; the reason it cannot be done, if one is missing."""
    trace = row.get("trace")
    if not isinstance(trace, list):
        return None
    for i, event in enumerate(trace):
        if isinstance(event, dict) and "content_ref" in event:
            ref = event["content_ref"]
            if ref not in texts:
                return f"refers to a shared text {ref} that is not in the file (was the file cut or its lines reordered?)"
            trace[i] = {k: v for k, v in event.items() if k != "content_ref"} | {"content": texts[ref]}
    return None


MAX_ROW_CHARS = 64 * 1024 * 1024  # a row holds one trial's trace; the longest a run of the package writes is far below


def _bounded_lines(fh: Any) -> Iterator[str | None]:
    """The file's lines, each read in at most :data:`MAX_ROW_CHARS` characters; ``None`` for a longer line.

    A longer line is read past in pieces, so a run file that is not ours (or a damaged one)
    cannot take memory without bound.
    """
    while True:
        line = fh.readline(MAX_ROW_CHARS + 1)
        if not line:
            return
        if len(line) <= MAX_ROW_CHARS or line.endswith("\n"):
            yield line
            continue
        while line and not line.endswith("\n"):
            line = fh.readline(MAX_ROW_CHARS)
        yield None


def scan_rows(path: str | Path) -> RowScan:
    """Every line of a run file, sorted into rows and named problems; nothing is dropped without a record.

    ``text`` records (schema 2) are not rows: their texts are put back into the rows that refer to them.
    """
    numbered: list[tuple[int, dict[str, Any]]] = []
    texts: dict[str, str] = {}
    malformed: list[tuple[int, str]] = []
    with open(path, encoding="utf-8", errors="replace") as fh:
        for number, line in enumerate(_bounded_lines(fh), start=1):
            if line is None:
                malformed.append((number, f"longer than {MAX_ROW_CHARS:,} characters (not a row this package writes); skipped"))
                continue
            if not line.endswith("\n"):
                malformed.append((number, "torn last line (its writer stopped mid-row; --resume repairs the file)"))
                break
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except (ValueError, RecursionError) as exc:
                malformed.append((number, f"not valid JSON ({str(exc)[:80]})"))
                continue
            if isinstance(row, dict) and row.get("kind") == "text" and "task_id" not in row:
                if isinstance(row.get("ref"), str) and isinstance(row.get("content"), str):
                    texts[row["ref"]] = row["content"]
                else:
                    malformed.append((number, "a text record needs a string ref and content"))
                continue
            problem = row_problem(row)
            if problem is not None:
                malformed.append((number, problem))
                continue
            numbered.append((number, row))
    rows: list[dict[str, Any]] = []
    for number, row in numbered:
        problem = _resolve_texts(row, texts)
        if problem is not None:
            malformed.append((number, problem))
        else:
            rows.append(row)
    malformed.sort()
    return RowScan(str(path), rows, malformed)


def read_rows(path: str | Path) -> list[dict[str, Any]]:
    """Every good row of a run file; a torn last line (a killed writer) and malformed lines are logged and skipped."""
    scan = scan_rows(path)
    for line in scan.describe():
        log.warning("skipping %s", line)
    return scan.rows


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


def prepare_resume(path: Path, config: EvalConfig) -> set[tuple[str, int]]:
    """Rewrite the file with its good rows only (no torn line, no system errors, no repeats); return their keys."""
    rows = read_rows(path)
    kept: list[dict[str, Any]] = []
    done: set[tuple[str, int]] = set()
    want = config.public()
    for row in rows:
        if row.get("config") != want:
            changes = "; ".join(config_changes(row.get("config") or {}, want)) or "the configuration"
            raise RunFileError(
                f"{path} was written with a different configuration: {changes}. "
                "Resume with the options the file was written with, or write to a new file (-o)"
            )
        key = (row["task_id"], row["trial"])
        if row.get("status") != "ok" or key in done:
            continue
        done.add(key)
        kept.append(row)
    tmp = path.with_name(path.name + ".resume-tmp")
    written: set[str] = set()
    with open(tmp, "w", encoding="utf-8") as fh:
        for row in kept:
            fh.write("".join(line + "\n" for line in compact_row(row, written)))
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    return done


class RunLock:
    """An exclusive lock on a run file for the life of a run, naming its holder to whoever is refused.

    Two writers appending to one file double its rows, and a ``--resume`` that rewrites
    the file while another run appends loses that run's rows; both are refused. The lock
    is ``flock`` on a sidecar ``<file>.lock`` (the run file itself is replaced by a
    resume, which would drop a lock held on it); the kernel releases it when its
    process dies, so a killed run never leaves a stale lock. The sidecar stays behind
    on purpose: deleting it would let a third process lock a fresh file while a
    second still holds the old one.

    The sidecar sits beside the file's real path (``os.path.realpath``: symlinks and
    ``..`` resolved), not the string given, so a second writer or a ``--resume`` that
    names the same file through a symlink meets the same lock. Hard links are distinct
    paths to one inode and are not recognised; ``evaluate`` writes through the real path.
    """

    def __init__(self, path: str | Path):
        import fcntl

        self.path = Path(path)
        self.real_path = Path(os.path.realpath(self.path))
        self.lock_path = self.real_path.with_name(self.real_path.name + ".lock")
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            try:
                holder = json.loads(os.pread(fd, 4096, 0) or b"{}")
            except ValueError:
                holder = {}
            os.close(fd)
            who = (f"pid {holder.get('pid', '?')} on host {holder.get('host', '?')}, started {holder.get('started', '?')}"
                   if holder else "another process")
            shown = str(self.path) if self.real_path == self.path.absolute() else f"{self.path} (the file {self.real_path})"
            raise RunFileError(f"{shown} is being written by {who} (lock {self.lock_path}); "
                               "wait for that run to finish, or write to another file") from None
        self.fd: int | None = fd
        info = {"pid": os.getpid(), "host": socket.gethostname(),
                "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "file": str(self.real_path)}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(info).encode(), 0)

    def release(self) -> None:
        if self.fd is not None:
            os.ftruncate(self.fd, 0)
            os.close(self.fd)  # closing the descriptor releases the flock
            self.fd = None

    def __enter__(self) -> RunLock:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release()


class RowWriter:
    """Appends one row per line; each row is one write, flushed and synced before the next.

    The writer holds the run's :class:`RunLock` (its own unless the caller already took
    one, e.g. before resuming) until :meth:`close`.
    """

    def __init__(self, path: Path, lock: RunLock | None = None):
        self._own_lock = lock is None
        self.lock = lock if lock is not None else RunLock(path)
        self.fh = open(path, "a", encoding="utf-8")  # noqa: SIM115 - held open for the whole run
        self.written: set[str] = set()  # shared texts this writer stored (a resumed file may hold a second copy)

    def write(self, row: EvalRow) -> None:
        """One write for the row and the shared texts it is the first to need, so a killed run tears at most one line."""
        self.fh.write("".join(line + "\n" for line in compact_row(row.to_json(), self.written)))
        self.fh.flush()
        os.fsync(self.fh.fileno())

    def close(self) -> None:
        self.fh.close()
        if self._own_lock:
            self.lock.release()


def plan_trials(tasks: Iterable[str], trials: int, done: AbstractSet[tuple[str, int]] = frozenset()) -> list[tuple[str, int]]:
    """Trial-major order: every task gets its first trial before any gets a second."""
    tasks = list(tasks)
    return [(t, i) for i in range(trials) for t in tasks if (t, i) not in done]


# --------------------------------------------------------------------------- stopping a run


class RunControl:
    """Stops a run cleanly: on request (a signal) or after ``max_consecutive_errors`` system errors in a row.

    Every executor takes one; ``observe`` is called with each finished row.
    """

    def __init__(self, max_consecutive_errors: int = 0):
        self.event = threading.Event()
        self.max_consecutive_errors = max_consecutive_errors
        self.reason: str | None = None
        self.first_error: dict[str, Any] | None = None  # the first system error of the current streak
        self._streak = 0

    @property
    def stopped(self) -> bool:
        return self.event.is_set()

    def stop(self, reason: str) -> None:
        if not self.event.is_set():
            self.reason = reason
            self.event.set()

    def observe(self, row: EvalRow) -> None:
        if row.status == "ok":
            self._streak = 0
            self.first_error = None
            return
        self._streak += 1
        if self.first_error is None:
            self.first_error = row.system_error or {}
        if self.max_consecutive_errors and self._streak >= self.max_consecutive_errors:
            self.stop("errors")


# --------------------------------------------------------------------------- executors

GRACE_SECONDS = 5.0  # how long a stopped run waits for trials in flight before leaving them


def run_local(config: EvalConfig, plan: list[tuple[str, int]], on_row: Callable[[EvalRow], None],
              concurrency: int = 1, control: RunControl | None = None, grace: float = GRACE_SECONDS) -> None:
    """Trials on worker threads (model calls dominate a trial; the backend is thread-safe).

    At most ``concurrency`` trials are started at a time, so a stopped run launches nothing
    more. Once stopped, trials in flight end at their next turn; those still waiting on a
    model answer after ``grace`` seconds are left behind on daemon threads (their
    requests end with the process), so stopping never waits for a slow endpoint.
    """
    control = control or RunControl()
    todo = list(plan)
    results: queue.Queue[tuple[str, Any]] = queue.Queue()

    def work(task_id: str, trial: int) -> None:
        try:
            results.put(("row", run_trial(config, task_id, trial, control.event)))
        except TrialCancelled:
            results.put(("cancelled", None))
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread, which raises it
            results.put(("crash", exc))

    in_flight = 0
    stopped_at: float | None = None
    while True:
        while todo and in_flight < max(concurrency, 1) and not control.stopped:
            task_id, trial = todo.pop(0)
            threading.Thread(target=work, args=(task_id, trial), daemon=True, name=f"trial {task_id}#{trial}").start()
            in_flight += 1
        if in_flight == 0:
            return
        if control.stopped:
            stopped_at = stopped_at or time.monotonic()
            if time.monotonic() - stopped_at > grace:
                return
        try:
            kind, value = results.get(timeout=0.1)  # short, so signal handlers run on the main thread
        except queue.Empty:
            continue
        in_flight -= 1
        if kind == "crash":
            control.stop("crash")
            raise value
        if kind == "row":
            control.observe(value)
            on_row(value)


def _ray_trial(config: EvalConfig, task_id: str, trial: int) -> EvalRow:
    return run_trial(config, task_id, trial)


def run_ray(config: EvalConfig, plan: list[tuple[str, int]], on_row: Callable[[EvalRow], None],
            address: str | None = None, concurrency: int = 0, control: RunControl | None = None) -> None:
    """Trials as Ray tasks on an existing cluster (``address``) or a local Ray instance; rows come back here.

    A stopped run launches nothing more and cancels the Ray tasks in flight.
    """
    try:
        import ray
    except ImportError as exc:
        raise RunFileError("--ray needs Ray, which is not installed: pip install -e '.[ray]' in the thinkingbox-env checkout "
                           "(or run without --ray: trials then run on local threads)") from exc
    control = control or RunControl()
    if not ray.is_initialized():
        ray.init(address=address, ignore_reinit_error=True, log_to_driver=False,
                 include_dashboard=False, configure_logging=False)
    remote = ray.remote(num_cpus=0.25)(_ray_trial)
    todo = list(plan)
    limit = concurrency if concurrency > 0 else len(todo)
    in_flight: list[Any] = []
    while todo or in_flight:
        if control.stopped:
            for ref in in_flight:
                ray.cancel(ref, force=True)
            return
        while todo and len(in_flight) < limit:
            task_id, trial = todo.pop(0)
            in_flight.append(remote.remote(config, task_id, trial))
        ready, in_flight = ray.wait(in_flight, num_returns=1, timeout=0.2)
        for ref in ready:
            row = ray.get(ref)
            control.observe(row)
            on_row(row)


# --------------------------------------------------------------------------- before the run


class PreflightError(RuntimeError):
    """The agent endpoint cannot serve the run; the message says what the endpoint said and what to do."""


def _where(ep: EndpointConfig) -> str:
    return ep.base_url or os.environ.get("THINKINGBOX_AGENT_BASE_URL") or os.environ.get("OPENAI_BASE_URL") \
        or "the OpenAI API (no --base-url)"


def resolve_agent_model(ep: EndpointConfig) -> str:
    """The model to evaluate: ``--model`` (or its variable), else the only model the server lists."""
    from ..llm import openai_client

    chosen = ep.model or os.environ.get("THINKINGBOX_AGENT_MODEL")
    if chosen:
        return chosen
    client = openai_client("agent", ep.base_url, ep.api_key, timeout=preflight_timeout(ep), max_retries=0)
    try:
        models = sorted(m.id for m in client.models.list())
    except Exception as exc:  # noqa: BLE001 - any failure means: we cannot guess, ask for --model
        raise PreflightError(f"no --model given, and the models of {_where(ep)} could not be listed "
                             f"({_endpoint_error(exc)}); pass --model NAME") from exc
    if len(models) == 1:
        return models[0]
    listed = ", ".join(models[:10]) + (f" and {len(models) - 10} more" if len(models) > 10 else "")
    raise PreflightError(f"no --model given and {_where(ep)} serves {len(models)} models"
                         + (f" ({listed})" if models else "") + "; pass --model NAME")


PREFLIGHT_CONNECT_SECONDS = 5.0  # a server that does not accept a connection in this time is reported as down
PREFLIGHT_READ_SECONDS = 60.0


def preflight_timeout(ep: EndpointConfig) -> Any:
    """The timeouts of the requests sent before a run: a short connect, so a dead host is reported in seconds, not minutes."""
    import openai  # its Timeout is the one of whichever HTTP client it is built on (httpx, then httpx2)

    read = min(ep.timeout, PREFLIGHT_READ_SECONDS)
    return openai.Timeout(read, connect=min(read, PREFLIGHT_CONNECT_SECONDS))


def served_models(ep: EndpointConfig) -> list[str] | None:
    """The models the endpoint lists, or None when it cannot list them (to name the choices when a model is refused)."""
    from ..llm import openai_client

    client = openai_client("agent", ep.base_url, ep.api_key, timeout=preflight_timeout(ep), max_retries=0)
    try:
        return sorted(m.id for m in client.models.list())
    except Exception:  # noqa: BLE001 - listing is a courtesy; the refusal itself is reported either way
        return None


def _endpoint_error(exc: BaseException) -> str:
    import openai

    if isinstance(exc, openai.APIStatusError):
        return f"HTTP {exc.status_code}: {exc.message}"
    if isinstance(exc, openai.APITimeoutError):
        return "the request timed out"
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc
        return f"connection failed: {cause}"
    return f"{type(exc).__name__}: {exc}"


def preflight(config: EvalConfig, check_tools: bool = True) -> None:
    """One short request with the run's model and sampling options; raises ``PreflightError`` with the endpoint's answer.

    A wrong model name, a dead server or a parameter the server refuses would otherwise fail
    every trial, each after its retries. With ``check_tools`` the request carries a trivial
    tool and a prompt that needs it (:mod:`.tool_check`): a server that returns no tool
    call would make every trial end without one, so the run is refused, saying what to fix.
    """
    from ..llm import openai_client
    from .tool_check import check_tool_calls, ignored_tools_message

    ep = config.agent_endpoint
    kwargs = config.sampling.request_kwargs(config.seed)
    import openai

    client = openai_client("agent", ep.base_url, ep.api_key, timeout=preflight_timeout(ep), max_retries=0)
    try:
        if check_tools:
            check = check_tool_calls(client, str(ep.model), kwargs)
        else:
            client.chat.completions.create(model=ep.model, messages=[{"role": "user", "content": "Reply with OK."}],
                                           **{**kwargs, **_capped(kwargs, 16)})
    except Exception as exc:  # noqa: BLE001 - whatever it is, the run cannot start
        hint = ""
        if isinstance(exc, openai.APIStatusError):  # a refusal, perhaps of the model's name: say which ones it serves
            models = served_models(ep)
            if models and ep.model not in models:
                listed = ", ".join(models[:20]) + (f" and {len(models) - 20} more" if len(models) > 20 else "")
                hint = f"; it serves {listed}: pass one of them with --model"
            elif check_tools and "tool" in str(exc.message).lower():
                hint = "; the request carried one tool: serve the model with tool calling, or pass --no-tool-check"
        raise PreflightError(f"the agent endpoint {_where(ep)} refused a test request for model '{ep.model}': "
                             f"{_endpoint_error(exc)}{hint}") from exc
    if check_tools and not check.tool_called:
        raise ToolsIgnoredError(ignored_tools_message(_where(ep), str(ep.model), check, config.sampling.extra_body))


class ToolsIgnoredError(PreflightError):
    """The agent endpoint answered a request that needs its one tool without a tool call."""


def _capped(kwargs: dict[str, Any], limit: int) -> dict[str, Any]:
    return {k: min(v, limit) for k, v in kwargs.items() if k in ("max_tokens", "max_completion_tokens")}
