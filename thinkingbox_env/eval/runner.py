"""Repeated trials: one JSON row per trial, appended as trials finish, resumable, on threads or Ray.

A run is a list of (task, trial index) pairs. Each finished trial becomes one
line of a JSONL file, written in one ``write`` and flushed to disk, so a run
killed at any moment loses at most the trial in flight (and perhaps a torn last
line). ``--resume`` drops a torn line and the rows that ended in a system error,
then runs exactly the missing pairs: the file ends with one row per pair.

A *system error* is an infrastructure failure (a model endpoint that stays
down, a simulated user that cannot be reached, a judge that fails): the trial
says nothing about the agent, so it is recorded as such and kept out of the
pass rates (``thinkingbox agg`` shows them separately).
"""

from __future__ import annotations

import json
import os
import socket
import time
import traceback
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..agents.baselines import NoopAgent, OracleAgent, run_episode
from ..agents.customer_tool import CustomerToolAgent
from ..agents.openai_chat import ModelCallError, OpenAIChatAgent, SamplingConfig
from ..judge import RubricJudge, parse_verdict
from ..llm import sum_usage
from ..registry import make
from ..users import LLMUser, ScriptedUser

ROW_SCHEMA_VERSION = 1
AGENT_KINDS = ("openai", "transformers", "oracle", "noop")
PROTOCOLS = ("chat", "customer-tool")
USER_KINDS = ("scripted", "llm")


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
    # keyword arguments for make(), per task namespace (e.g. {"tbbench": {"data_dir": ...}})
    task_options: dict[str, dict[str, Any]] = field(default_factory=dict)

    def public(self) -> dict[str, Any]:
        """The configuration as recorded in every row (keys left out)."""
        agent: dict[str, Any] = {"kind": self.agent}
        if self.agent == "openai":
            agent.update(self.agent_endpoint.public(), sampling=asdict(self.sampling), backoff=self.backoff,
                         send_reasoning=self.send_reasoning)
        if self.agent == "transformers":
            agent.update(model=self.agent_endpoint.model, sampling=asdict(self.sampling))
        if self.protocol != "chat":
            agent.update(protocol=self.protocol, include_policy=self.include_policy)
        user: dict[str, Any] = {"kind": self.user, "persona": self.persona}
        if self.user == "llm":
            user.update(self.user_endpoint.public(), temperature=self.user_temperature)
        judge = self.judge_endpoint.public() if self.judge_endpoint else None
        out = {"agent": agent, "user": user, "judge": judge, "max_actions": self.max_actions, "seed": self.seed}
        if self.task_options:
            out["task_options"] = self.task_options
        return out


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


class _GuardedUser:
    """Passes calls through to a simulated user; its exceptions become ``InfrastructureError``."""

    def __init__(self, user: Any):
        self.user = user
        self.deterministic = getattr(user, "deterministic", False)

    def bind_domain(self, domain: Any) -> None:
        if hasattr(self.user, "bind_domain"):
            self.user.bind_domain(domain)

    def reset(self, spec: Any, seed: int | None) -> None:
        self.user.reset(spec, seed)

    def reply(self, dialogue: list[dict[str, str]]) -> str:
        try:
            return self.user.reply(dialogue)
        except Exception as exc:  # noqa: BLE001 - any failure of the simulator is infrastructure
            raise InfrastructureError("user", exc) from exc


class RecordingJudge:
    """The rubric judge, with every question, raw answer, parsed verdict and reason kept for the row."""

    def __init__(self, judge: RubricJudge):
        self.judge = judge
        self.calls: list[dict[str, Any]] = []

    def __call__(self, question: str, transcript: str) -> tuple[bool, str]:
        started = time.perf_counter()
        try:
            answer, reason = self.judge(question, transcript)
        except Exception as exc:
            self.calls.append({"question": question, "ok": False, "error": f"{type(exc).__name__}: {exc}",
                               "seconds": time.perf_counter() - started})
            raise
        _, _, parsed = parse_verdict(self.judge.last_raw)
        self.calls.append({"question": question, "ok": True, "answer": "yes" if answer else "no", "parsed": parsed,
                           "reason": reason, "raw": self.judge.last_raw, "seconds": time.perf_counter() - started,
                           "usage": self.judge.last_usage or {"input": 0, "cached": 0, "output": 0, "reasoning": 0}})
        return answer, reason


def build_agent(config: EvalConfig, seed: int) -> Any:
    if config.protocol not in PROTOCOLS:
        raise ValueError(f"unknown protocol '{config.protocol}'; choose from {', '.join(PROTOCOLS)}")
    agent = _build_model_agent(config, seed)
    if config.protocol == "customer-tool":
        if config.agent in ("oracle", "noop"):
            raise ValueError(f"the {config.agent} agent speaks the chat protocol only")
        return CustomerToolAgent(agent, include_policy=config.include_policy)
    return agent


def _build_model_agent(config: EvalConfig, seed: int) -> Any:
    if config.agent == "oracle":
        return OracleAgent()
    if config.agent == "noop":
        return NoopAgent()
    if config.agent == "openai":
        ep = config.agent_endpoint
        agent = OpenAIChatAgent(model=ep.model, base_url=ep.base_url, api_key=ep.api_key, sampling=config.sampling,
                                timeout=ep.timeout, max_retries=ep.max_retries, backoff=config.backoff,
                                send_reasoning=config.send_reasoning)
        agent.set_seed(seed)
        return agent
    if config.agent == "transformers":
        from ..agents.transformers_local import TransformersChatAgent

        if not config.agent_endpoint.model:
            raise ValueError("the transformers agent needs --model (a checkpoint folder or model name)")
        sampling = config.sampling
        agent = TransformersChatAgent.from_pretrained(config.agent_endpoint.model, max_new_tokens=sampling.max_tokens or 1024,
                                                      temperature=sampling.temperature or 0.0, top_p=sampling.top_p or 1.0)
        agent.set_seed(seed)
        return agent
    raise ValueError(f"unknown agent '{config.agent}'; choose from {', '.join(AGENT_KINDS)}")


def build_user(config: EvalConfig) -> Any:
    if config.user == "scripted":
        return ScriptedUser(persona=config.persona)
    if config.user == "llm":
        ep = config.user_endpoint
        return LLMUser(model=ep.model, base_url=ep.base_url, api_key=ep.api_key, temperature=config.user_temperature, persona=config.persona,
                       timeout=ep.timeout, max_retries=ep.max_retries)
    raise ValueError(f"unknown user '{config.user}'; choose from {', '.join(USER_KINDS)}")


def build_judge(config: EvalConfig) -> RecordingJudge | None:
    ep = config.judge_endpoint
    if ep is None:
        return None
    return RecordingJudge(RubricJudge(model=ep.model, base_url=ep.base_url, api_key=ep.api_key, timeout=ep.timeout,
                                      max_retries=ep.max_retries))


def _annotate_trace(trace: list[dict[str, Any]], calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Attach each model call's reasoning and usage to the agent message it produced (one per call)."""
    agent_events = [e for e in trace if e.get("type") == "message" and e.get("source") == "agent"]
    for event, call in zip(agent_events, [c for c in calls if c.get("ok")]):
        event["model_call"] = call["turn"]
        event["usage"] = call["usage"]
        if call.get("reasoning"):
            event["reasoning"] = call["reasoning"]
    return trace


def trace_counts(trace: list[dict[str, Any]], messages: list[dict[str, Any]]) -> dict[str, int]:
    """Per-trial interaction counts (the paper's Table 14 columns)."""
    calls = [e for e in trace if e.get("type") == "tool_call"]
    return {
        "messages": len(messages),
        "tool_calls": len(calls),
        "write_calls": sum(1 for c in calls if c.get("writes")),
        "tool_errors": sum(1 for c in calls if not c.get("ok")),
        "agent_messages": sum(1 for e in trace if e.get("type") == "message" and e.get("source") == "agent"),
        "user_messages": sum(1 for e in trace if e.get("type") == "message" and e.get("source") == "simulator"),
    }


def run_trial(config: EvalConfig, task_id: str, trial: int) -> dict[str, Any]:
    """Run one trial and return its row. Never raises for a failing model, user or judge."""
    from ..version import __version__

    seed = trial_seed(config.seed, trial)
    started_at = time.time()
    t0 = time.perf_counter()
    agent = build_agent(config, seed)
    judge = build_judge(config)
    user = build_user(config)
    options = config.task_options.get(task_id.split("/", 1)[0], {})
    env = make(task_id, **options, user=_GuardedUser(user), judge=judge, max_actions=config.max_actions)
    base = env.unwrapped
    spec = base.task  # the engine's TaskSpec, or the task of an external source (same domain/family/content_key)
    info: dict[str, Any] | None = None
    system_error: dict[str, Any] | None = None
    try:
        info = run_episode(env, agent, seed=seed)
    except ModelCallError as exc:
        system_error = {"where": "agent", "type": type(exc).__name__, "message": str(exc), "status": exc.status}
    except InfrastructureError as exc:
        system_error = {"where": exc.where, "type": type(exc.cause).__name__, "message": str(exc.cause)}
    except Exception as exc:  # noqa: BLE001 - a harness crash is recorded, never lost
        system_error = {"where": "harness", "type": type(exc).__name__, "message": str(exc),
                        "traceback": traceback.format_exc(limit=8)}
    messages = list(base.messages)
    trace = info["trace"] if info else list(base.trace)
    env.close()
    model_calls = list(getattr(agent, "calls", []))
    judge_calls = judge.calls if judge else []
    if info and system_error is None and judge is not None:
        failed = [c for c in judge_calls if not c["ok"]]
        if failed:
            system_error = {"where": "judge", "type": "JudgeError", "message": failed[0]["error"]}
    usage = {**sum_usage(model_calls), "model_calls": len(model_calls)}
    # the evaluator's tokens, kept apart from the agent's
    judge_usage = {**sum_usage(judge_calls), "judge_calls": len(judge_calls)}
    seconds = time.perf_counter() - t0
    ok = system_error is None and info is not None
    row: dict[str, Any] = {
        "schema": ROW_SCHEMA_VERSION,
        "task_id": task_id,
        "domain": spec.domain,
        "family": spec.family,
        "trial": trial,
        "seed": seed,
        "status": "ok" if ok else "system_error",
        "system_error": system_error,
        "verdict": info["verdict"] if ok else None,
        "checks": info["checks"] if ok else None,
        "check_details": info["check_details"] if ok else None,
        "reward_vector": [float(x) for x in info["reward_vector"]] if ok else None,
        "unevaluated": info["unevaluated"] if ok else None,
        "diff": info["diff"] if ok else None,
        "state_hash": info["state_hash"] if ok else None,
        "finish_reason": info["finish_reason"] if info else None,
        "failure_category": info["failure_category"] if ok else None,
        "counts": {**trace_counts(trace, messages), "actions": base._actions, "user_turns": base._user_turns},
        "usage": usage,
        "judge_usage": judge_usage,
        "timings": {"started_at": started_at, "seconds": seconds,
                    "model_seconds": sum(c.get("seconds", 0.0) for c in model_calls),
                    "judge_seconds": sum(c.get("seconds", 0.0) for c in judge_calls)},
        "messages": messages,
        "trace": _annotate_trace(trace, model_calls),
        "model_calls": model_calls,
        "judge_calls": judge_calls,
        "worker": {"host": socket.gethostname(), "pid": os.getpid()},
        "package_version": __version__,
        "task_hash": spec.content_key(),
        "config": config.public(),
        "user": user.describe() if hasattr(user, "describe") else {"kind": config.user},
    }
    return row


# --------------------------------------------------------------------------- the JSONL file


class RunFileError(RuntimeError):
    pass


def read_rows(path: str | Path) -> list[dict[str, Any]]:
    """Every complete row of a run file; a torn last line (a killed writer) is skipped."""
    rows = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if not line.endswith("\n"):
                break  # torn
            line = line.strip()
            if line:
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError:
                    continue
    return rows


def prepare_resume(path: Path, config: EvalConfig) -> set[tuple[str, int]]:
    """Rewrite the file with its good rows only (no torn line, no system errors, no repeats); return their keys."""
    rows = read_rows(path)
    kept: list[dict[str, Any]] = []
    done: set[tuple[str, int]] = set()
    want = config.public()
    for row in rows:
        if row.get("config") != want:
            raise RunFileError(
                f"{path} was written with a different configuration ({json.dumps(row.get('config'))}); "
                "resume it with the same options, or write to a new file"
            )
        key = (row["task_id"], row["trial"])
        if row.get("status") != "ok" or key in done:
            continue
        done.add(key)
        kept.append(row)
    tmp = path.with_name(path.name + ".resume-tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        for row in kept:
            fh.write(json.dumps(row, default=str) + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    return done


class RowWriter:
    """Appends one row per line; each row is one write, flushed and synced before the next."""

    def __init__(self, path: Path):
        self.fh = open(path, "a", encoding="utf-8")  # noqa: SIM115 - held open for the whole run

    def write(self, row: dict[str, Any]) -> None:
        self.fh.write(json.dumps(row, default=str) + "\n")
        self.fh.flush()
        os.fsync(self.fh.fileno())

    def close(self) -> None:
        self.fh.close()


def plan_trials(tasks: Iterable[str], trials: int, done: set[tuple[str, int]] = frozenset()) -> list[tuple[str, int]]:
    """Trial-major order: every task gets its first trial before any gets a second."""
    tasks = list(tasks)
    return [(t, i) for i in range(trials) for t in tasks if (t, i) not in done]


# --------------------------------------------------------------------------- executors


def run_local(config: EvalConfig, plan: list[tuple[str, int]], on_row: Callable[[dict[str, Any]], None],
              concurrency: int = 1) -> None:
    """Trials on a thread pool (model calls dominate a trial; the backend is thread-safe)."""
    if concurrency <= 1:
        for task_id, trial in plan:
            on_row(run_trial(config, task_id, trial))
        return
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        pending = {pool.submit(run_trial, config, t, i) for t, i in plan}
        while pending:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in finished:
                on_row(fut.result())


def _ray_trial(config: EvalConfig, task_id: str, trial: int) -> dict[str, Any]:
    return run_trial(config, task_id, trial)


def run_ray(config: EvalConfig, plan: list[tuple[str, int]], on_row: Callable[[dict[str, Any]], None],
            address: str | None = None, concurrency: int = 0) -> None:
    """Trials as Ray tasks on an existing cluster (``address``) or a local Ray instance; rows come back here."""
    try:
        import ray
    except ImportError as exc:  # pragma: no cover - depends on the installed extras
        raise RunFileError("Ray is not installed: pip install 'thinkingbox-env[ray]'") from exc
    if not ray.is_initialized():
        ray.init(address=address, ignore_reinit_error=True, log_to_driver=False,
                 include_dashboard=False, configure_logging=False)
    remote = ray.remote(num_cpus=0.25)(_ray_trial)
    queue = list(plan)
    limit = concurrency if concurrency > 0 else len(queue)
    in_flight: list[Any] = []
    while queue or in_flight:
        while queue and len(in_flight) < limit:
            task_id, trial = queue.pop(0)
            in_flight.append(remote.remote(config, task_id, trial))
        ready, in_flight = ray.wait(in_flight, num_returns=1)
        for ref in ready:
            on_row(ray.get(ref))
