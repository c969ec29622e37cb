"""Baseline agents and the minimal episode loop.

``OracleAgent`` replays a task's golden actions and closes with its golden reply:
it is the reference every task must pass. ``NoopAgent`` closes at once: every task
that expects a change must fail it. Both are used by ``thinkingbox validate`` and
as the embedded defaults of ``thinkingbox run``.
"""

from __future__ import annotations

from typing import Any, Protocol

from ..checks.verdict_rules import describe, load_verdict_rules
from ..contracts.spec import GoldenTurn, TaskSpec, ToolCall, interleave
from ..tasks.domain import domain_dirs
from ..users import DONE_MARKER


class Agent(Protocol):
    """What the episode loop needs of a player, so scripted baselines and model-backed agents run through the same ``run_episode``."""
    def reset(self, task: TaskSpec, observation: dict[str, Any]) -> None: ...

    def act(self, observation: dict[str, Any]) -> Any: ...


def ask_for_facts(task: TaskSpec) -> list[str]:
    """One question per fact the customer knows, by the words that release it.

    One slot a turn, so that no question hides another.
    """
    return [f"Could you tell me: {', '.join(f.unlock[:2])}?" for f in task.user.facts]


def proposal(task: TaskSpec, calls: list[ToolCall]) -> str | None:
    """The proposal for the consent-guarded writes among ``calls``, or None when none is guarded.

    Tasks from outside the domain folders (an imported benchmark) declare no process rules here.
    """
    folder = domain_dirs().get(task.domain)
    if folder is None:
        return None
    rules = [r for r in load_verdict_rules(str(folder)).process if r.kind == "consent_before"]
    said = []
    for call in calls:
        for rule in rules:
            if call.name in rule.writes:
                said.append(describe(rule, call.name, call.arguments))
    said = list(dict.fromkeys(said))
    if not said:
        return None
    return "I can now " + ", and ".join(said) + ". Shall I go ahead?"


class OracleAgent:
    """Plays the golden trajectory through the simulated user, then the closing message with the marker.

    A task that writes its dialogue (``TaskSpec.dialogue``) is played as written. For task sets
    that hold only the golden tool calls, the oracle derives the dialogue steps the domain's
    process rules require: it asks for the customer's facts first and proposes the
    consent-guarded writes (described from their arguments) in the turn before the first of
    them. ``consent="after"`` plays the proposal after those writes instead (to show the process
    check catches it), ``consent="none"`` never proposes.
    """

    def __init__(self, calls: list[ToolCall] | None = None, closing: str | None = None,
                 consent: str = "before", closing_turns: list[str] | None = None):
        if consent not in ("before", "after", "none"):
            raise ValueError("consent must be 'before', 'after' or 'none'")
        self._override = calls
        self._closing = closing
        self._consent = consent
        self._closing_turns = closing_turns or []
        self._queue: list[Any] = []

    def reset(self, task: TaskSpec, observation: dict[str, Any]) -> None:
        calls = list(self._override if self._override is not None else task.golden)
        closing = self._closing if self._closing is not None else task.golden_reply
        written = getattr(task, "dialogue", None)  # tasks from other sources (an imported benchmark) have none
        self._queue = self._written_turns(task, calls) if written else self._derived_turns(task, calls)
        if self._closing_turns:
            self._queue.append(closing)
            self._queue += [f"{t} {DONE_MARKER}" if k == len(self._closing_turns) - 1 else t
                            for k, t in enumerate(self._closing_turns)]
        else:
            self._queue.append(f"{closing} {DONE_MARKER}")

    def _derived_turns(self, task: TaskSpec, calls: list[ToolCall]) -> list[Any]:
        """Questions and the proposal derived from the facts and the process rules (specs without ``dialogue``)."""
        queue: list[Any] = list(ask_for_facts(task))
        propose = proposal(task, calls) if self._consent != "none" else None
        guarded = {c.name for c in calls if proposal(task, [c])} if propose else set()
        first = next((i for i, c in enumerate(calls) if c.name in guarded), None)
        last = max((i for i, c in enumerate(calls) if c.name in guarded), default=None)
        for i, c in enumerate(calls):
            if propose and self._consent == "before" and i == first:
                queue.append(propose)
            queue.append({"name": c.name, "arguments": dict(c.arguments)})
            if propose and self._consent == "after" and i == last:
                queue.append(propose)
        return queue

    def _written_turns(self, task: TaskSpec, calls: list[ToolCall]) -> list[Any]:
        """The task's own turns, each before the call it names.

        With altered calls (validation probes) a turn keeps its position, clamped to the
        calls there are; ``consent="after"`` moves the proposals after the last consent-guarded
        write and ``consent="none"`` leaves them out.
        """
        turns = list(task.dialogue)
        if self._consent != "before":
            proposals = [t for t in turns if t.act == "propose"]
            turns = [t for t in turns if t.act != "propose"]
            if self._consent == "after" and proposals:
                guarded = [i for i, c in enumerate(calls) if proposal(task, [c])]
                at = max(guarded) + 1 if guarded else len(calls)
                turns += [t.model_copy(update={"before": at}) for t in proposals]
                turns.sort(key=lambda t: t.before)
        return [step.say if isinstance(step, GoldenTurn) else {"name": step.name, "arguments": dict(step.arguments)}
                for step in interleave(turns, calls)]

    def act(self, observation: dict[str, Any]) -> Any:
        if not self._queue:
            return f"Done. {DONE_MARKER}"
        return self._queue.pop(0)


class NoopAgent:
    """Closes the conversation immediately without touching any tool."""

    def reset(self, task: TaskSpec, observation: dict[str, Any]) -> None:
        pass

    def act(self, observation: dict[str, Any]) -> Any:
        return f"I'm unable to help with this request. {DONE_MARKER}"


def run_episode(env: Any, agent: Agent, seed: int | None = None) -> dict[str, Any]:
    """Run one episode to its end and return the final ``info`` (with the verdict)."""
    obs, _ = env.reset(seed=seed)
    base = env.unwrapped
    agent.reset(base.task, obs)
    while True:
        obs, reward, terminated, truncated, info = env.step(agent.act(obs))
        if terminated or truncated:
            return info
