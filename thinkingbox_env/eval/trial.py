"""One trial, one row: the agent, simulated user, judge and reader of a trial, its environment, and ``run_trial``.

A *system error* is an infrastructure failure (a model endpoint that stays
down, a simulated user that cannot be reached, a judge that fails): the trial
says nothing about the agent, so it is recorded as such and kept out of the
pass rates (``thinkingbox agg`` shows them separately). A model that refuses a turn
because the conversation outgrew its context is not one: that trial is the agent's
failure (``context_overflow``, :mod:`.overflow`), counted like any other.

A trial given a stop event gives up at its next agent or user turn once the event is
set (``TrialCancelled``): its half-done episode is not a row.
"""

from __future__ import annotations

import os
import socket
import threading
import time
import traceback
from collections.abc import Sequence
from typing import Any, cast

from ..agents.baselines import run_episode
from ..agents.compact_tools import CompactToolsAgent
from ..agents.context_overflow import ContextOverflowError
from ..agents.customer_tool import CustomerToolAgent
from ..agents.openai_chat import ModelCallError
from ..agents.registry import AGENTS, AgentCapabilities
from ..checks import trial_outcome
from ..contracts.events import TraceEvent, is_message, tool_calls
from ..contracts.records import EvalRow, TrialCounts, TrialOutcome
from ..contracts.spec import TaskSpec
from ..envs.env import ThinkingboxEnv
from ..envs.registration import make
from ..envs.wrappers import CustomerToolWrapper
from ..judging.registry import JUDGES, Judge
from ..llm.client import sum_usage
from ..tasks.domain import load_domain
from ..users.registry import USERS, UserCapabilities
from .config import EvalConfig, agent_options, check_protocol, declared_capabilities, judge_options, judge_runs, user_options
from .overflow import overflow_info
from .run_files import ROW_SCHEMA_VERSION


def trial_seed(base_seed: int, trial: int) -> int:
    """The seed of trial ``trial``: the same for every task, so trial i of two runs is comparable."""
    return base_seed + trial



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



def build_agent(config: EvalConfig, seed: int) -> Any:
    """The agent of a trial, speaking the env's own protocol (customer-tool agents adapted by ``CustomerToolAgent``)."""
    check_protocol(config)
    agent = build_model_agent(config, seed)
    if config.protocol == "customer-tool":
        return CustomerToolAgent(agent, include_policy=config.include_policy)
    return agent


def build_model_agent(config: EvalConfig, seed: int) -> Any:
    """The configured agent backend as built, before any protocol adapter or tool view is put around it."""
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
    check_protocol(config)
    if agent is None:
        agent = build_model_agent(config, seed)
        agent_capabilities = AGENTS.get(config.agent).capabilities
    agent_caps: AgentCapabilities = agent_capabilities or declared_capabilities(AGENTS, config.agent, AgentCapabilities())
    agent = present_tools(config, agent)
    if stop is not None:
        agent = _StoppableAgent(agent, stop)
    judge = build_judge(config)
    reader = build_reader(config)
    if user is None:
        user = build_user(config)
        user_capabilities = USERS.get(config.user).capabilities
    user_caps: UserCapabilities = user_capabilities or declared_capabilities(USERS, config.user, UserCapabilities())
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
