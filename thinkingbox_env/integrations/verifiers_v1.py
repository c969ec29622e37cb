"""verifiers 0.4 integration: a ``verifiers.v1`` taskset, harness and env over a domain's tasks.

verifiers 0.4 (``pip install thinkingbox-env[verifiers04]``) replaced the 0.1 API
(:mod:`.verifiers_multiturn`): its package root holds only ``verifiers.v1``, where an
environment is a *taskset* of tasks played by *agents*, each a harness (the program that
talks to the model) in a runtime, every model call going through verifiers' interception
server (which records the trace and applies the run's model and sampling). Its ``vf-eval``
loads a taskset by the top-level module its id names, and that module may also export the
harness its tasks are played with and the env around them: the id is ``thinkingbox-verifiers``
(the package ``thinkingbox_verifiers`` re-exports the classes below).

- :class:`ThinkingboxTaskset` yields one :class:`ThinkingboxTask` per row
  (:func:`~thinkingbox_env.integrations.episode.task_rows`: the frozen test tasks, or drawn
  train variants), whose prompt is the episode's opening (system prompts and the customer's
  first message);
- :class:`ThinkingboxTask` owns the rollout's :class:`~thinkingbox_env.integrations.episode.Episode`:
  ``setup`` starts it, ``finalize`` grades it and puts the outcome on ``trace.info["thinkingbox"]``,
  and its ``@reward``/``@metric`` read that outcome (``reward_verdict`` with weight 1, the
  per-check groups and ``reward_progress`` as metrics, the TRL adapter's names);
- :class:`ThinkingboxHarness` is an in-process chat loop: it posts the conversation with the
  domain's tool definitions to the interception endpoint, steps each assistant turn in the
  episode (tool calls answered from its backend; in the ``chat`` protocol plain text goes to
  the simulated customer, whose reply is the next user turn) until the episode ends. The
  harness docstring of verifiers allows such a loop as long as every model call goes through
  the endpoint it is handed; nothing is launched, no ``uv`` or network is needed besides the
  model's endpoint;
- :class:`ThinkingboxVerifiersEnv` is the single-agent env with a local (subprocess) runtime as
  its seat's default, since the harness runs nothing in it (verifiers' default is a remote
  Prime sandbox).

The domain's tools are not MCP toolsets: the episode's backend answers them in process, so
only this harness can play these tasks (a ``bash`` or ``codex`` harness would see no tools).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Literal

import verifiers

try:
    import verifiers.v1 as vf
except ImportError:  # verifiers before 0.1.14 had no verifiers.v1 at all
    vf = None
if vf is None or not hasattr(vf, "SingleAgentEnv"):  # 0.1.x ships an unrelated early verifiers.v1 (no tasksets, no envs)
    raise ImportError(f"the verifiers 0.4 adapter needs the verifiers.v1 API of verifiers>=0.4, but verifiers "
                      f"{getattr(verifiers, '__version__', '?')} is installed: pip install 'thinkingbox-env[verifiers04]', "
                      "or use thinkingbox_env.integrations.verifiers, which serves the 0.1 line too")
from openai import AsyncOpenAI
from pydantic import Field, PrivateAttr, model_validator

from .episode import PROTOCOLS, Episode, row_episode, task_rows
from .trl import REWARD_GROUPS, group_value, progress_value

__all__ = ["ThinkingboxEnvConfig", "ThinkingboxHarness", "ThinkingboxTask", "ThinkingboxTaskData", "ThinkingboxTaskset",
           "ThinkingboxTasksetConfig", "ThinkingboxVerifiersEnv", "load_environment"]

TASKSET_ID = "thinkingbox-verifiers"  # the top-level module thinkingbox_verifiers, which re-exports these classes
INFO_KEY = "thinkingbox"  # trace.info[INFO_KEY]: the episode's outcome (verdict, checks, reward vector, state hash)


# ---------------------------------------------------------------------- task


class ThinkingboxTaskData(vf.TaskData):
    """One episode to play: the row's task (or family and seed) beside verifiers' fields; the prompt is its opening."""

    domain: str
    task_id: str | None = None
    """The frozen test task, or None for a train variant drawn from ``family`` and ``seed``."""
    family: str | None = None
    seed: int = 0
    protocol: Literal["chat", "customer-tool"] = "chat"
    max_actions: int = 50
    drawn_task: str | None = None
    """The task the row's episode plays (a train variant's generated id), for reading traces."""


class ThinkingboxState(vf.State):
    """Holds the rollout's live episode, for the harness and the task hooks of that rollout only (never serialized)."""

    _episode: Episode | None = PrivateAttr(default=None)
    _tools: list[dict[str, Any]] = PrivateAttr(default_factory=list)


class ThinkingboxTask(vf.Task[ThinkingboxTaskData, ThinkingboxState, vf.TaskConfig]):
    """A Thinkingbox task as a verifiers task: the episode lives from ``setup`` to ``finalize``; rewards read its outcome."""

    @property
    def key(self) -> str:
        """The task's identity across runs (``--resume``, comparisons): the task played and its seed, not the row position."""
        data = self.data
        return f"{data.drawn_task or data.task_id}#{data.seed}#{data.protocol}"

    async def setup(self, trace: vf.Trace) -> None:
        """Start the rollout's episode; the harness plays it, ``finalize`` grades it."""
        data = self.data
        episode = row_episode(data.model_dump(), protocol=data.protocol, max_actions=data.max_actions)
        first = episode.reset(seed=data.seed, family=data.family)
        trace.state._episode = episode
        trace.state._tools = first["tools"]  # the domain's tools (and the reply tool in customer-tool), OpenAI format

    async def finalize(self, trace: vf.Trace) -> None:
        """Grade the episode as it stands (one the model left open is closed first) and record its outcome."""
        episode: Episode | None = trace.state._episode
        if episode is None or not episode.started:
            return
        result = episode.result if episode.done else episode.finish(None)
        trace.info[INFO_KEY] = result
        release(trace)

    @vf.reward(weight=1.0)
    async def reward_verdict(self, trace: vf.Trace) -> float:
        """1.0 when every check passes (the task's verdict): the rollout's reward."""
        result = trace.info.get(INFO_KEY)
        return float(result["verdict"]) if result else 0.0

    @vf.metric
    async def reward_checks(self, trace: vf.Trace) -> dict[str, float]:
        """The per-check groups (0.0 where the task has none: nothing asked, nothing paid) and the progress signal."""
        result = trace.info.get(INFO_KEY)
        if not result:
            return {**{name: 0.0 for name in REWARD_GROUPS}, "reward_progress": 0.0}
        details = result["check_details"]
        groups = {name: group_value(details, kinds) for name, kinds in REWARD_GROUPS.items()}
        return {**{name: 0.0 if value is None else float(value) for name, value in groups.items()},
                "reward_progress": float(progress_value(details))}


def release(trace: vf.Trace) -> None:
    """Close the rollout's episode (idempotent): after grading, or when the rollout failed before ``finalize``."""
    episode: Episode | None = trace.state._episode
    trace.state._episode = None
    if episode is not None:
        episode.close()


# ---------------------------------------------------------------------- taskset


class ThinkingboxTasksetConfig(vf.TasksetConfig):
    """Which tasks load (``--env.taskset.*`` on ``vf-eval``): the arguments of the 0.1 adapter's ``load_environment``."""

    domain: str = "retail"
    families: list[str] | None = None
    """Family codes (``ST030``); all of the domain's when unset."""
    tasks: list[str] | None = None
    """Explicit frozen test task ids (``retail/ST030_001``)."""
    split: Literal["test", "train"] = "test"
    """``test``: the frozen tasks (those with rubric questions left out: no judge is configured);
    ``train``: ``variants_per_family`` generated variants per family drawn from ``seed``."""
    variants_per_family: int = Field(4, ge=1)
    seed: int = 0
    protocol: Literal["chat", "customer-tool"] = "chat"
    max_actions: int = Field(50, ge=1)
    """The episode's action limit (its env truncates there)."""

    @model_validator(mode="after")
    def _tasks_are_test_tasks(self) -> ThinkingboxTasksetConfig:
        """Refuse at configuration, not at the first rollout: ``tasks`` are frozen test tasks, never trained on."""
        if self.tasks and self.split == "train":
            raise ValueError("tasks names frozen test tasks; the train split draws family variants")
        return self


class ThinkingboxTaskset(vf.Taskset[ThinkingboxTask, ThinkingboxTasksetConfig]):
    """A domain's tasks as a verifiers taskset; each task's prompt is its episode's opening, as the agent sees it."""

    def load(self) -> Iterable[ThinkingboxTask]:
        config = self.config
        rows = task_rows(config.domain, families=config.families, split=config.split,
                         variants_per_family=config.variants_per_family, seed=config.seed, tasks=config.tasks)
        for row in rows:
            episode = row_episode(row, protocol=config.protocol, max_actions=config.max_actions)
            first = episode.reset(seed=int(row.get("seed") or 0), family=row.get("family"))
            episode.close()
            data = ThinkingboxTaskData(
                id=first["task_id"], name=first["task_id"], prompt=[_vf_message(m) for m in first["messages"]],
                domain=config.domain, task_id=row.get("task_id"), family=row.get("family"), seed=int(row.get("seed") or 0),
                protocol=config.protocol, max_actions=config.max_actions, drawn_task=first["task_id"])
            yield ThinkingboxTask(data, config.task)


def _vf_message(message: dict[str, Any]) -> Any:
    """An opening message as verifiers' message type (the trace records the prompt in these)."""
    if message["role"] == "system":
        return vf.SystemMessage(content=message.get("content") or "")
    if message["role"] == "assistant":
        return vf.AssistantMessage(content=message.get("content"))
    return vf.UserMessage(content=message.get("content") or "")


# ---------------------------------------------------------------------- harness


class ThinkingboxHarness(vf.Harness[vf.HarnessConfig]):
    """An in-process chat loop over the rollout's episode: every model call through verifiers' endpoint, tools answered here.

    One segment plays the whole episode: the customer's replies (and, in the ``customer-tool``
    protocol, the reply tool's results) are the environment's turns within it, so the loop ends
    exactly when the episode does (closing message, action limit, or the env's own end).
    """

    APPENDS_SYSTEM_PROMPT = True
    EXECUTES_CODE = False
    NEEDS_CONTAINER = False

    async def launch(self, ctx: vf.ModelContext, trace: vf.Trace, runtime: vf.Runtime, endpoint: str, secret: str,
                     mcp_urls: dict[str, str], data: vf.TaskData, tool_interception_url: str | None = None) -> vf.ProgramResult:
        episode: Episode | None = trace.state._episode
        if episode is None or not episode.started:
            raise vf.HarnessError("the Thinkingbox harness plays only Thinkingbox tasks (their setup starts the episode)")
        system, prompt = self.resolve_prompt(data)
        messages: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
        messages += [m.model_dump(exclude_none=True) for m in prompt] if isinstance(prompt, list) else (
            [{"role": "user", "content": prompt}] if prompt else [])
        tools = trace.state._tools
        # the interception server replaces the model and applies the run's sampling; the secret routes to this rollout
        client = AsyncOpenAI(base_url=endpoint, api_key=secret, max_retries=0)
        try:
            while not episode.done:
                completion = await client.chat.completions.create(model=ctx.model, messages=messages, tools=tools)  # type: ignore[arg-type]
                turn = _assistant_turn(completion.choices[0].message)
                messages.append(turn)
                out = episode.step(turn)
                messages += [_reply(m) for m in out.messages if m["role"] != "assistant"]
        finally:
            await client.close()
        return vf.ProgramResult(exit_code=0, stdout="", stderr="")

    async def cleanup(self, trace: vf.Trace, runtime: vf.Runtime) -> None:
        """Close an episode the task's ``finalize`` never graded (a failed rollout): its backend is released either way."""
        release(trace)


def _assistant_turn(message: Any) -> dict[str, Any]:
    """An OpenAI SDK assistant message as the OpenAI-format turn the env steps (arguments as sent, malformed or not)."""
    content = message.content if isinstance(message.content, str) else None
    calls = message.tool_calls or []
    if not calls:
        return {"role": "assistant", "content": content or ""}
    return {"role": "assistant", "content": content, "tool_calls": [
        {"id": c.id, "type": "function", "function": {"name": c.function.name, "arguments": c.function.arguments}}
        for c in calls]}


def _reply(message: dict[str, Any]) -> dict[str, Any]:
    """An env message for the next request: tool results stay tool messages; the rest reaches the model as user turns."""
    if message["role"] == "tool":
        return {"role": "tool", "tool_call_id": message.get("tool_call_id") or "", "content": message.get("content") or ""}
    # the customer's reply, or a malformed action's error (a system message in the env): the environment's turn
    return {"role": "user", "content": message.get("content") or ""}


# ---------------------------------------------------------------------- env


class ThinkingboxEnvConfig(vf.EnvConfig):
    """The env's one seat, ``agent`` (``--env.agent.*``), whose runtime defaults to a local subprocess.

    The harness runs nothing in its runtime, so provisioning verifiers' default (a remote
    Prime sandbox) would only cost a network round trip and credentials.
    """

    agent: vf.AgentConfig = vf.AgentConfig(runtime=vf.SubprocessConfig())


class ThinkingboxVerifiersEnv(vf.Env[ThinkingboxEnvConfig]):
    """The single-agent env over the Thinkingbox taskset: one agent run per episode."""

    async def run(self, task: vf.Task, agents: vf.Agents) -> None:
        await agents.agent.run(task)


def load_environment(domain: str = "retail", families: Sequence[str] | None = None, split: str = "test",
                     protocol: str = "chat", variants_per_family: int = 4, seed: int = 0, tasks: Sequence[str] | None = None,
                     max_actions: int = 50, **env: Any) -> ThinkingboxVerifiersEnv:
    """The verifiers 0.4 env of ``domain``, with the 0.1 adapter's arguments; ``env`` adds ``vf.EnvConfig`` fields.

    Evaluate it with ``async with env.serving(): await env.run_episode(task, vf.ModelContext(...))``
    over ``env.taskset``, or from the command line with ``vf-eval`` (docs/integrations/verifiers.md).
    """
    if protocol not in PROTOCOLS:
        raise ValueError(f"unknown protocol {protocol!r}; choose from {', '.join(PROTOCOLS)}")
    if split not in ("test", "train"):
        raise ValueError(f"split must be 'test' or 'train', got {split!r}")
    taskset = {"id": TASKSET_ID, "domain": domain, "families": list(families) if families else None,
               "tasks": list(tasks) if tasks else None, "split": split, "variants_per_family": variants_per_family,
               "seed": seed, "protocol": protocol, "max_actions": max_actions}
    config = vf.resolve_env_config({**env, "taskset": taskset})
    environment = vf.load_environment(config)
    assert isinstance(environment, ThinkingboxVerifiersEnv)
    return environment
