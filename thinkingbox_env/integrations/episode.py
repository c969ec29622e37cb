"""One Thinkingbox episode as every adapter steps it: a task or a drawn task, in either protocol.

The OpenEnv server, the verifiers environment and the SkyRL-gym environment differ in how
they carry messages (typed models over a WebSocket, a rollout state, text in and out) but
not in what an episode is. This module is that common part, so the adapters stay a few
lines each over the same env and wrappers the TRL path uses:

- the *target* is a task id (``retail/ST030_001``, every episode plays it) or a domain
  (``retail``: each reset draws a frozen test task or, with ``split="train"``, a generated
  variant of a family, through :class:`~thinkingbox_env.envs.domain_env.DomainEnv`);
- the *protocol* is the env's own ``chat`` protocol (a plain message goes to the simulated
  customer, ``<DONE>`` or the end tool closes) or ``customer-tool`` (the customer is the
  ``reply_to_customer`` tool and the first plain-text turn closes), through
  :class:`~thinkingbox_env.envs.wrappers.CustomerToolWrapper`;
- the outcome is the env's final ``info``; :func:`outcome` keeps the part every adapter
  reports (verdict, checks, reward vector, state hash, finish reason).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..checks import Judge
from ..contracts.protocol import DONE_MARKER
from ..contracts.spec import TaskSpec
from ..envs.domain_env import DomainEnv
from ..envs.env import ThinkingboxEnv
from ..envs.registration import make
from ..envs.wrappers import CustomerToolWrapper
from ..tasks.domain import load_domain
from ..tasks.lookup import list_tasks, load_task
from ..users import ScriptedUser

PROTOCOLS = ("chat", "customer-tool")
SPLITS = ("test", "train")

__all__ = ["PROTOCOLS", "SPLITS", "Episode", "StepOutcome", "outcome", "row_episode", "task_rows"]


def outcome(info: dict[str, Any]) -> dict[str, Any]:
    """The verdict part of a final ``info``, in plain JSON values (what every adapter hands back)."""
    return {
        "task_id": info.get("task_id"),
        "verdict": float(info["verdict"]),
        "checks": dict(info["checks"]),
        "check_names": list(info["check_names"]),
        "check_details": [dict(d) for d in info["check_details"]],
        "reward_vector": [float(x) for x in info["reward_vector"]],
        "state_hash": info["state_hash"],
        "finish_reason": info["finish_reason"],
        "failure_category": info.get("failure_category"),
    }


@dataclass
class StepOutcome:
    """What one step produced: the new messages, the env's reward and flags, and the outcome once over."""

    messages: list[dict[str, Any]]
    reward: float
    terminated: bool
    truncated: bool
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def done(self) -> bool:
        return self.terminated or self.truncated

    @property
    def result(self) -> dict[str, Any] | None:
        """The verdict part of ``info`` when the episode ended on this step, else None."""
        return outcome(self.info) if "verdict" in self.info else None


class Episode:
    """A reusable episode: ``reset`` starts a new one (a new task when the target is a domain), ``step`` plays it.

    Each instance owns its env, so adapters that serve several clients give each its own
    ``Episode`` (the DuckDB backend is shared and isolates episodes itself).
    """

    def __init__(self, target: str, protocol: str = "chat", split: str = "test", families: Sequence[str] | None = None,
                 judge: Judge | None = None, max_actions: int = 50, include_policy: bool = True):
        if protocol not in PROTOCOLS:
            raise ValueError(f"unknown protocol {protocol!r}; choose from {', '.join(PROTOCOLS)}")
        if split not in SPLITS:
            raise ValueError(f"split must be one of {', '.join(SPLITS)}, got {split!r}")
        if max_actions < 1:
            raise ValueError(f"max_actions must be at least 1, got {max_actions}")
        self.target = target
        self.protocol = protocol
        self.split = split
        self.judge = judge
        self.max_actions = max_actions
        self.include_policy = include_policy
        self.families = list(families) if families else None
        self._sampler: DomainEnv | None = None
        if "/" in target:
            if self.families:
                raise ValueError("families select tasks of a domain; the target is already one task")
            make(target).close()  # an unknown task fails here, not at the first reset
        else:
            tasks = None
            if split == "test" and self.families:
                tasks = [t for t in list_tasks(target, split="test") if load_task(t).family in self.families]
                if not tasks:
                    raise ValueError(f"domain {target!r} has no test tasks of families {self.families}")
            self._sampler = DomainEnv(target, split=split, tasks=tasks, families=self.families, judge=judge)
        self._env: ThinkingboxEnv | None = None
        self._wrapper: CustomerToolWrapper | None = None

    # ------------------------------------------------------------------ episode

    def _draw(self, seed: int | None, task_id: str | None, family: str | None) -> ThinkingboxEnv:
        kwargs: dict[str, Any] = {"user": ScriptedUser(), "judge": self.judge, "max_actions": self.max_actions}
        if self._sampler is None:
            if task_id is not None and task_id != self.target:
                raise ValueError(f"this episode serves task {self.target!r}, not {task_id!r}")
            if family is not None:
                raise ValueError("a family selects a drawn task; the target is one task")
            return make(self.target, **kwargs)
        options: dict[str, Any] = {}
        if task_id is not None:
            if not task_id.startswith(f"{self.target}/"):
                raise ValueError(f"task {task_id!r} is not a task of domain {self.target!r}")
            if self.split == "train":
                raise ValueError(f"task {task_id!r} is a frozen test task; the train split draws family variants")
            options["task_id"] = task_id
        if family is not None:
            if self.split == "test":
                raise ValueError("family picks a generated variant; pass split='train' (or task_id for a test task)")
            options["family"] = family
        self._sampler.reset(seed=seed, options=options)
        task: TaskSpec = self._sampler.task
        self._sampler.close()
        return ThinkingboxEnv(task, **kwargs)

    def reset(self, seed: int | None = None, task_id: str | None = None, family: str | None = None) -> dict[str, Any]:
        """Start an episode; the first observation: ``messages`` (system prompts and the opening), ``tools``, ``task_id``."""
        self.close()
        env = self._draw(seed, task_id, family)
        episode_seed = 0 if seed is None else int(seed)
        if self.protocol == "customer-tool":
            self._wrapper = CustomerToolWrapper(env, include_policy=self.include_policy)
            obs, _ = self._wrapper.reset(seed=episode_seed)
        else:
            obs, _ = env.reset(seed=episode_seed)
        self._env = env
        return {"messages": obs["messages"], "tools": obs["tools"], "task_id": env.task.full_id}

    def step(self, action: Any) -> StepOutcome:
        """One action: a message (str), a tool call ``{"name", "arguments"}`` or an assistant message (OpenAI format)."""
        env = self.env
        if env.episode_over:
            raise RuntimeError("the episode has ended; reset() to start a new one")
        stepper: Any = self._wrapper if self._wrapper is not None else env
        obs, reward, terminated, truncated, info = stepper.step(action)
        return StepOutcome(list(obs["messages"]), float(reward), bool(terminated), bool(truncated), dict(info))

    def finish(self, text: str | None = None) -> dict[str, Any]:
        """End the episode now if still open (customer-tool: with ``text`` as the closing message); its outcome."""
        env = self.env
        if not env.episode_over:
            if self._wrapper is not None:
                self._wrapper.finish(text)
            else:
                env.step(f"{text or ''} {DONE_MARKER}".strip())
        assert env.final_info is not None
        return outcome(env.final_info)

    # ------------------------------------------------------------------ reading

    @property
    def env(self) -> ThinkingboxEnv:
        if self._env is None:
            raise RuntimeError("reset() first")
        return self._env

    @property
    def started(self) -> bool:
        return self._env is not None

    @property
    def done(self) -> bool:
        return self._env is not None and self._env.episode_over

    @property
    def result(self) -> dict[str, Any] | None:
        """The outcome of the episode once it is over, else None."""
        info = self._env.final_info if self._env is not None else None
        return outcome(info) if info is not None else None

    def close(self) -> None:
        if self._wrapper is not None:
            self._wrapper.close()
        elif self._env is not None:
            self._env.close()
        self._env = self._wrapper = None


# ---------------------------------------------------------------------- rows


def task_rows(domain: str, families: Sequence[str] | None = None, split: str = "test", variants_per_family: int = 4,
              seed: int = 0, tasks: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """The rows an evaluation library's dataset or taskset is built from: one per episode to play.

    ``split="test"``: one row per frozen task (of ``families``, or the ids in ``tasks``), leaving
    out tasks with rubric questions, which need a judge the library adapters do not configure;
    ``split="train"``: ``variants_per_family`` rows per family, each a seed drawn from ``seed``
    (a generated variant, never a test task). The verifiers adapters (both API lines) share it,
    so the same arguments select the same tasks whichever line is installed.
    """
    if split not in SPLITS:
        raise ValueError(f"split must be 'test' or 'train', got {split!r}")
    spec = load_domain(domain)
    codes = [spec.family(f).code for f in families] if families else list(spec.families)
    if split == "test":
        ids = list(tasks) if tasks else [t for t in list_tasks(domain, split="test") if load_task(t).family in codes]
        ids = [t for t in ids if not load_task(t).checks.rubric]
        if not ids:
            raise ValueError(f"no test tasks of {domain} match families={list(families or [])} tasks={list(tasks or [])}")
        return [{"domain": domain, "task_id": t, "seed": 0} for t in ids]
    if tasks:
        raise ValueError("tasks names frozen test tasks; the train split draws family variants")
    rng = random.Random(seed)
    rows = [{"domain": domain, "family": code, "seed": rng.randrange(10**6, 10**9)} for code in codes
            for _ in range(variants_per_family)]
    DomainEnv(domain, split="train", families=codes)  # unknown families fail here
    return rows


def row_episode(row: dict[str, Any], protocol: str = "chat", max_actions: int = 50) -> Episode:
    """The episode of one :func:`task_rows` row (not yet reset): its frozen task, or its domain's train variants."""
    task_id = row.get("task_id")
    return Episode(task_id or row["domain"], protocol=protocol, split="test" if task_id else "train",
                   max_actions=max_actions)
