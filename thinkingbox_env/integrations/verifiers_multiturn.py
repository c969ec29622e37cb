"""verifiers 0.1 integration: the ``MultiTurnEnv`` behind ``thinkingbox_env.integrations.verifiers`` on that line.

:mod:`thinkingbox_env.integrations.verifiers` imports this module where the installed verifiers
has the 0.1 API (``pip install thinkingbox-env[verifiers]``), and :mod:`.verifiers_v1` where it
has the 0.4 one; the two APIs share no class, so each line has a module of its own.

verifiers (the 0.1 line, whose ``MultiTurnEnv``/``Rubric`` API ``vf-eval`` and prime-rl run)
drives the model itself: it sends the dataset row's prompt with the environment's tool
definitions to an OpenAI-compatible endpoint and calls ``env_response`` with every
assistant turn. Here each rollout owns one :class:`~thinkingbox_env.integrations.episode.Episode`:
the turn is stepped in the env (tool calls run against the episode's backend; text goes
to the simulated customer in the ``chat`` protocol, or closes in ``customer-tool``), and
the env's new messages come back as the environment's response.

The rubric's reward functions carry the TRL adapter's names: ``reward_verdict`` (weight 1,
so the rollout's reward is the verdict) and, as weight-0 metrics, the per-check groups
``reward_effects``, ``reward_no_collateral``, ``reward_dialogue``, ``reward_process`` and
``reward_rubric`` (0.0 where a task has no check of a group: nothing of it was asked, so
nothing is paid) and ``reward_progress``.
``state["thinkingbox"]`` holds the episode's outcome (checks, reward vector, state hash).

The ``test`` split is the domain's frozen tasks; ``train`` draws ``variants_per_family``
generated variants of each family (never a test task).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from typing import Any

import verifiers as vf

from .episode import Episode, row_episode, task_rows
from .trl import REWARD_GROUPS, group_value, progress_value

__all__ = ["ThinkingboxVerifiersEnv", "load_environment", "rubric"]

STATE_KEY = "thinkingbox"
ENV_ID = "thinkingbox_env.integrations.verifiers"  # the module vf-eval loads; it imports this one on the 0.1 line


def _vf_message(message: dict[str, Any]) -> Any:
    """An env message as the verifiers message type the next prompt carries."""
    if message["role"] == "tool":
        return vf.ToolMessage(tool_call_id=message.get("tool_call_id") or "", content=message.get("content") or "")
    if message["role"] == "system":  # a malformed action's error: shown to the model as the env's reply
        return vf.UserMessage(content=message.get("content") or "")
    return vf.UserMessage(content=message.get("content") or "")


def _assistant_turn(message: Any) -> dict[str, Any]:
    """A verifiers assistant message as the OpenAI-format turn the env steps."""
    calls = getattr(message, "tool_calls", None) or []
    content = message.content if isinstance(message.content, str) or message.content is None else str(message.content)
    if not calls:
        return {"role": "assistant", "content": content or ""}
    return {"role": "assistant", "content": content, "tool_calls": [
        {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}} for c in calls]}


def _outcome_reward(pick: Callable[[dict[str, Any]], float | None], name: str, doc: str) -> Callable[..., float]:
    def reward(state: Any, **kwargs: Any) -> float:
        result = state.get(STATE_KEY)
        if not result:
            return 0.0
        value = pick(result)
        # a group the task has none of pays nothing: 1.0 there would reward an episode that did nothing
        return 0.0 if value is None else float(value)

    reward.__name__ = reward.__qualname__ = name
    reward.__doc__ = doc
    return reward


def _group_of(result: dict[str, Any], kinds: tuple[str, ...]) -> float | None:
    return group_value(result["check_details"], kinds)


def rubric() -> Any:
    """The rubric: the verdict as the reward, the per-check groups and the progress signal as metrics."""
    funcs = [_outcome_reward(lambda r: r["verdict"], "reward_verdict", "1.0 when every check passes (the task's verdict).")]
    for name, kinds in REWARD_GROUPS.items():
        funcs.append(_outcome_reward(functools.partial(_group_of, kinds=kinds), name,
                                     f"1.0 when every {'/'.join(kinds)} check passed (0.0 where the task has none)."))
    funcs.append(_outcome_reward(lambda r: progress_value(r["check_details"]), "reward_progress",
                                 "Share of the asked checks passed (expected effects, else what the task asks to be said), "
                                 "minus 0.5 on collateral changes (shaping, not success); 0 for an idle episode."))
    return vf.Rubric(funcs=funcs, weights=[1.0] + [0.0] * (len(funcs) - 1))


class ThinkingboxVerifiersEnv(vf.MultiTurnEnv):
    """A verifiers multi-turn environment over a domain's tasks; one episode per rollout, kept in the rollout state."""

    def __init__(self, domain: str, protocol: str = "chat", rows: list[dict[str, Any]] | None = None,
                 eval_rows: list[dict[str, Any]] | None = None, max_actions: int = 50, **kwargs: Any):
        self.domain = domain
        self.protocol = protocol
        self.max_actions = max_actions
        first_row = {"domain": domain, **(eval_rows or rows or [{}])[0]}
        probe = row_episode(first_row, protocol=protocol, max_actions=max_actions)
        first = probe.reset(seed=0, family=first_row.get("family"))
        probe.close()
        tool_defs = [{"name": t["function"]["name"], "description": t["function"].get("description", ""),
                      "parameters": t["function"]["parameters"]} for t in first["tools"]]
        super().__init__(dataset=_dataset(rows, protocol, max_actions) if rows is not None else None,
                         eval_dataset=_dataset(eval_rows, protocol, max_actions) if eval_rows is not None else None,
                         tool_defs=tool_defs, rubric=rubric(), max_turns=max_actions, **kwargs)

    async def setup_state(self, state: Any) -> None:
        info = state["info"]
        episode = row_episode({"domain": self.domain, **info}, protocol=self.protocol, max_actions=self.max_actions)
        episode.reset(seed=int(info.get("seed") or 0), family=info.get("family"))
        state["_tb_episode"] = episode

    async def env_response(self, messages: Any, state: Any, **kwargs: Any) -> Any:
        episode: Episode = state["_tb_episode"]
        out = episode.step(_assistant_turn(messages[-1]))
        reply = [_vf_message(m) for m in out.messages if m["role"] != "assistant"]
        if out.done:
            state[STATE_KEY] = out.result
            state["final_env_response"] = reply
        return reply

    @vf.stop
    async def episode_over(self, state: Any) -> bool:
        episode = state.get("_tb_episode")
        return episode is not None and episode.done

    @vf.cleanup
    async def close_episode(self, state: Any) -> None:
        """Grade an episode the rollout left open (turn limit, model error) as it stands, then release it."""
        episode: Episode | None = state.pop("_tb_episode", None)
        if episode is None:
            return
        if state.get(STATE_KEY) is None and episode.started:
            state[STATE_KEY] = episode.finish(None)
        episode.close()


def _dataset(rows: list[dict[str, Any]], protocol: str, max_actions: int) -> Any:
    """Rows as verifiers reads them: the episode's first messages as ``prompt``, the task in ``info``."""
    from datasets import Dataset  # a dependency of the 0.1 line, needed only when rows are built

    out = []
    for info in rows:
        episode = row_episode(info, protocol=protocol, max_actions=max_actions)
        first = episode.reset(seed=int(info.get("seed") or 0), family=info.get("family"))
        episode.close()
        out.append({"prompt": first["messages"], "answer": "",
                    "info": json.dumps({**info, "task_id": info.get("task_id"), "drawn_task": first["task_id"]})})
    return Dataset.from_list(out)


def load_environment(domain: str = "retail", families: Sequence[str] | None = None, split: str = "test",
                     protocol: str = "chat", variants_per_family: int = 4, seed: int = 0, tasks: Sequence[str] | None = None,
                     max_actions: int = 50, **kwargs: Any) -> ThinkingboxVerifiersEnv:
    """The verifiers environment of ``domain``: ``vf-eval`` and prime-rl call this with ``--env-args``.

    ``split="test"`` evaluates the frozen tasks (of ``families``, or the ids in ``tasks``);
    ``split="train"`` draws ``variants_per_family`` variants per family from ``seed``.
    Tasks with rubric questions need a judge, which this environment does not configure, so
    they are left out.
    """
    rows = task_rows(domain, families=families, split=split, variants_per_family=variants_per_family, seed=seed,
                     tasks=tasks)
    env_rows = {"eval_rows": rows} if split == "test" else {"rows": rows}
    # env_id is how vf-eval's env-server workers load the environment again (verifiers imports the module it names, "-"
    # read as "_"): it must be the module users name, never a name of our own ("thinkingbox-retail" sent every worker
    # after a module thinkingbox_retail that does not exist, and vf-eval never finished)
    kwargs.setdefault("env_id", ENV_ID)
    return ThinkingboxVerifiersEnv(domain, protocol=protocol, max_actions=max_actions, **env_rows, **kwargs)
