"""TRL integration: Thinkingbox environments for ``GRPOTrainer(environment_factory=...)``.

TRL 1.x drives tool use itself: it exposes every public method of an environment
class as a tool, calls ``reset(**row)`` before each rollout, and asks
``get_reward()`` for the outcome. This module builds such a class for a domain
from the domain's own tool definitions (one typed method per tool, with the
docstring TRL turns into the schema), so nothing is written by hand per tool.

TRL's loop has no user turn: the simulated customer is reached through the
``reply_to_customer`` tool, and the model's final plain-text message is the
closing message the dialogue checks read. TRL hands that text only to reward
functions, so every reward function here first records it in its environment;
``get_reward`` (appended by TRL after the user's reward functions) then scores
the episode with it.

Training uses generated ``train`` variants only: a dataset row or a reset that
names a frozen test task is refused.
"""

from __future__ import annotations

import json
import logging
import random
from collections.abc import Callable, Mapping
from typing import Any

import gymnasium as gym

from ..checks import Judge, reward_groups
from ..checks.asked_checks import ASKED_CHECKS, ASKED_KINDS, asked_checks
from ..contracts.protocol import END_TOOL_NAME, EPISODE_OVER, REPLY_TOOL, customer_tool_prompt, reply_to_customer
from ..contracts.spec import GoldenTurn, TaskSpec, interleave
from ..envs.env import ThinkingboxEnv
from ..envs.wrappers import CheckRewardWrapper, CustomerToolWrapper
from ..tasks.domain import load_domain
from ..tasks.lookup import generate_variant
from ..toolkit.tools import Tool, tool_function
from ..users import ScriptedUser

log = logging.getLogger(__name__)

__all__ = ["ASKED_CHECKS", "ASKED_KINDS", "EPISODE_OVER", "REPLY_TOOL", "REWARD_GROUPS", "RefusedTestTask", "ThinkingboxTRLEnvironment", "asked_checks", "build_grpo_dataset",
           "build_sft_dataset", "environment_class", "environment_factories", "group_value", "grpo_rows", "oracle_conversation", "progress_value",
           "reward_checks", "reward_dialogue", "reward_effects", "reward_no_collateral", "reward_process", "reward_progress", "reward_rubric",
           "reward_verdict", "system_prompt", "task_for_row", "trl_tool_schemas"]


def system_prompt(domain: str, include_policy: bool = True) -> str:
    """The customer-as-a-tool system prompt of a domain (what a rollout's first message holds)."""
    return customer_tool_prompt(load_domain(domain), include_policy)


class RefusedTestTask(ValueError):
    """Training must never see a frozen test task."""


# --------------------------------------------------------------------------- the environment class


class ThinkingboxTRLEnvironment:
    """Base class; :func:`environment_class` makes one subclass per domain with a method per tool.

    TRL constructs instances with no arguments and reuses them across rollouts, so
    ``reset`` restores everything. Every public method is a tool to TRL, so all
    helpers are private.
    """

    domain: str = ""
    max_actions: int = 50
    judge: Judge | None = None  # rubric judge of the episodes (a local model served by vLLM in practice)

    def __init__(self) -> None:
        self._env: CustomerToolWrapper | None = None
        self._final_message: str | None = None

    # TRL's protocol --------------------------------------------------------

    def reset(self, **row: Any) -> str:
        spec = task_for_row(self.domain, row)
        if self._env is not None:
            self._env.close()
        base = ThinkingboxEnv(spec, user=ScriptedUser(), judge=type(self).judge,
                              max_actions=int(row.get("max_actions") or self.max_actions))
        self._env = CustomerToolWrapper(base)
        self._env.reset(seed=int(row.get("seed") or 0))
        self._final_message = None
        return spec.user.opening

    # helpers (private: TRL exposes every public method as a tool) -----------

    def _wrapper(self) -> CustomerToolWrapper:
        if self._env is None:
            raise RuntimeError("reset() first")
        return self._env

    def _step_tool(self, name: str, arguments: dict[str, Any]) -> str:
        return self._wrapper().call_tool(name, arguments)

    def _reply(self, message: str) -> str:
        return self._wrapper().reply(message)

    def _record_final_message(self, text: str) -> None:
        if self._final_message is None:
            self._final_message = text

    def _finish(self) -> dict[str, Any]:
        """End the episode (if still open) with the recorded final message; return the env's final info."""
        return self._wrapper().finish(self._final_message)

    @property
    def env(self) -> ThinkingboxEnv | None:
        return self._env.unwrapped if self._env is not None else None  # type: ignore[return-value]


def _tool_method(tool: Tool) -> Callable[..., str]:
    """A method whose signature and docstring are the tool's, for TRL's schema extraction."""
    return tool_function(tool, lambda self, name, arguments: self._step_tool(name, arguments))


class _OwnsReward:
    def get_reward(self) -> float:
        """The verdict of the episode (TRL adds it as a reward with weight 1)."""
        return float(self._finish()["verdict"])  # type: ignore[attr-defined]


_CLASSES: dict[tuple[str, bool, tuple[str, ...] | None, int | None], type] = {}


def environment_class(domain: str, own_reward: bool = True, tools: list[str] | None = None,
                      judge: Judge | None = None) -> type[ThinkingboxTRLEnvironment]:
    """The environment class of a domain, for ``environment_factory``.

    With ``own_reward`` the class defines ``get_reward`` (the verdict, added by TRL
    as a reward with weight 1); without it, pass :func:`reward_verdict` among the
    reward functions so that its weight can be set like any other. ``tools``
    restricts the exposed domain tools (a smaller action space for curricula and
    small models); ``reply_to_customer`` is always there.
    """
    key = (domain, own_reward, tuple(tools) if tools is not None else None, id(judge) if judge is not None else None)
    if key in _CLASSES:
        return _CLASSES[key]
    toolbox = load_domain(domain).toolbox
    if tools is not None:
        unknown = sorted(set(tools) - set(toolbox.tools))
        if unknown:
            raise ValueError(f"domain '{domain}' has no tools {unknown}")
    namespace: dict[str, Any] = {"domain": domain, "__module__": __name__, "judge": judge}
    for tool in toolbox.tools.values():
        if tool.name == END_TOOL_NAME or (tools is not None and tool.name not in tools):
            continue  # the final plain-text message ends the episode instead of the end tool
        if tool.name.startswith("_") or tool.name in ("reset", "get_reward", "env", REPLY_TOOL):
            raise ValueError(f"domain '{domain}': tool name '{tool.name}' clashes with the TRL environment protocol")
        namespace[tool.name] = _tool_method(tool)
    namespace[REPLY_TOOL] = reply_to_customer
    bases = (_OwnsReward, ThinkingboxTRLEnvironment) if own_reward else (ThinkingboxTRLEnvironment,)
    name = "".join(part.title() for part in domain.split("_")) + ("Environment" if own_reward else "EnvironmentNoReward")
    cls = type(name, bases, namespace)
    cls.tool_names = [n for n in namespace if n not in ("domain", "__module__", "judge")]  # type: ignore[attr-defined]
    _CLASSES[key] = cls
    return cls


def environment_factories(domains: list[str], own_reward: bool = True,
                          judge: Judge | None = None) -> dict[str, type[ThinkingboxTRLEnvironment]]:
    """``{domain: class}`` for a run that mixes domains (rows carry an ``environment`` column)."""
    return {d: environment_class(d, own_reward, judge=judge) for d in domains}


def task_for_row(domain: str, row: dict[str, Any]) -> TaskSpec:
    """The task a dataset row names: a generated variant (family + seed) or a given spec; never a test task."""
    if row.get("spec") is not None:
        data = json.loads(row["spec"]) if isinstance(row["spec"], str) else row["spec"]
        spec = TaskSpec.model_validate(data)
        if spec.split != "train":
            raise RefusedTestTask(f"task '{spec.full_id}' is a {spec.split} task; training uses train variants only")
        return spec
    if row.get("task_id"):
        raise RefusedTestTask(f"row names task '{row['task_id']}': frozen tasks are for testing, train on family variants")
    if row.get("family") is None or row.get("seed") is None:
        raise ValueError("a training row needs 'family' and 'seed' (or a train 'spec')")
    return generate_variant(domain, str(row["family"]), int(row["seed"]))


# --------------------------------------------------------------------------- reward functions


def _final_text(completion: Any) -> str:
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list):
        for message in reversed(completion):
            if isinstance(message, dict) and message.get("role") == "assistant" and not message.get("tool_calls"):
                content = message.get("content")
                if isinstance(content, list):
                    content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
                return content or ""
    return ""


def _infos(completions: list[Any], environments: list[Any]) -> list[dict[str, Any] | None]:
    out: list[dict[str, Any] | None] = []
    for completion, env in zip(completions, environments):
        if not isinstance(env, ThinkingboxTRLEnvironment):
            out.append(None)
            continue
        env._record_final_message(_final_text(completion))
        out.append(env._finish())
    return out


# The per-check reward groups by name, shared with the other trainer adapters (verifiers, SkyRL) so a reward
# called reward_effects means the same checks everywhere. Each check kind names its group (``reward_group``).
REWARD_GROUPS: dict[str, tuple[str, ...]] = {f"reward_{group}": names for group, names in reward_groups().items()}


def group_value(check_details: list[dict[str, Any]], kinds: tuple[str, ...]) -> float | None:
    """1.0 when every check of ``kinds`` passed, 0.0 when one did not, None when the task has none of them.

    An undetermined dialogue check counts as the verdict counts it: not failed (no evidence against the agent).
    """
    chosen = [d for d in check_details if d["kind"] in kinds]
    return None if not chosen else float(all(d["passed"] is True or d.get("undetermined") for d in chosen))


def progress_value(check_details: list[dict[str, Any]]) -> float:
    """The shaping signal of :func:`reward_progress` for one episode's checks.

    The share of the asked checks (:func:`asked_checks`) that passed, minus 0.5 when anything
    else in the backend changed. Guards never count towards it, so an episode that did
    nothing gets 0 on every task, and so does any episode of a task that asks nothing. An
    undetermined check is no evidence of work done, so it never counts as done here.
    """
    asked = asked_checks(check_details)
    done = sum(1 for d in asked if d["passed"] is True) / len(asked) if asked else 0.0
    collateral = any(d["passed"] is False for d in check_details if d["kind"] == "no_collateral")
    return done - (0.5 if collateral else 0.0)


def _group(kinds: tuple[str, ...]) -> Callable[..., list[float | None]]:
    def reward(completions: list[Any], environments: list[Any] | None = None, **kwargs: Any) -> list[float | None]:
        return [None if info is None else group_value(info["check_details"], kinds)
                for info in _infos(completions, environments or [])]

    return reward


def reward_verdict(completions: list[Any], environments: list[Any] | None = None, **kwargs: Any) -> list[float | None]:
    """1.0 when every check passes (the task's verdict), else 0.0."""
    return [None if info is None else float(info["verdict"]) for info in _infos(completions, environments or [])]


reward_effects = _group(REWARD_GROUPS["reward_effects"])
reward_effects.__name__ = "reward_effects"
reward_effects.__doc__ = "1.0 when every expected state change happened (effect and SQL checks)."
reward_no_collateral = _group(REWARD_GROUPS["reward_no_collateral"])
reward_no_collateral.__name__ = "reward_no_collateral"
reward_no_collateral.__doc__ = "1.0 when nothing else in the backend changed."
reward_dialogue = _group(REWARD_GROUPS["reward_dialogue"])
reward_dialogue.__name__ = "reward_dialogue"
reward_dialogue.__doc__ = "1.0 when what the agent told the customer meets the dialogue checks (mentions, withholds, grounded values, claims)."
reward_process = _group(REWARD_GROUPS["reward_process"])
reward_process.__name__ = "reward_process"
reward_process.__doc__ = "1.0 when the domain's order rules (verification, consent) were kept; None where none applies."
reward_rubric = _group(REWARD_GROUPS["reward_rubric"])
reward_rubric.__name__ = "reward_rubric"
reward_rubric.__doc__ = "1.0 when every judged question (rubrics, truthfulness) is answered yes; None for tasks without them."


def reward_progress(completions: list[Any], environments: list[Any] | None = None, **kwargs: Any) -> list[float | None]:
    """Shaping signal for experiments, not the task's success.

    The fraction of expected effects realised (on a task without effect checks: of the facts it
    asks to be said, :func:`asked_checks`), minus 0.5 when anything else changed. In [-0.5, 1.0];
    0 for an episode that did nothing.
    """
    return [None if info is None else progress_value(info["check_details"]) for info in _infos(completions, environments or [])]


class _NullEnv(gym.Env):
    """The wrapper's weighting needs no env; gymnasium's wrapper type insists on one."""


def reward_checks(weights: Mapping[str, float] | None = None, default: float = 1.0) -> Callable[..., list[float | None]]:
    """A reward function giving :class:`~thinkingbox_env.envs.wrappers.CheckRewardWrapper`'s weighted per-check reward.

    The same weights (by check name, then kind, then ``default``) and the same value in [0, 1]
    as the wrapper gives a Gymnasium trainer, so a shaping experiment with TRL and one with a
    plain Gymnasium loop train on one definition of partial credit. Bad weights are refused
    here, before any rollout.
    """
    checker = CheckRewardWrapper(_NullEnv(), weights, default)

    def reward_checks(completions: list[Any], environments: list[Any] | None = None, **kwargs: Any) -> list[float | None]:
        return [None if info is None else checker.shaped(info) for info in _infos(completions, environments or [])]

    return reward_checks


CHECK_GROUP_REWARDS = [reward_effects, reward_no_collateral, reward_dialogue, reward_rubric]


# --------------------------------------------------------------------------- datasets


def _families(domain: str, families: list[str] | None) -> list[str]:
    d = load_domain(domain)
    return [d.family(f).code for f in families] if families else list(d.families)


def grpo_rows(domains: list[str], variants_per_family: int, seed: int = 0, families: dict[str, list[str]] | None = None,
              include_policy: bool = True, judge: bool = True, tools: list[str] | None = None) -> list[dict[str, Any]]:
    """Rows for GRPO: a prompt per generated train variant, with the columns ``reset`` reads.

    Without a judge (``judge=False``) a variant whose task carries rubric questions could never
    earn a verdict of 1, so it would only teach that nothing works: those variants are left out,
    and the families they came from are named in a warning. With a restricted tool set
    (``tools``), so is a variant whose golden calls a tool outside it (a variant of the injection
    dimension reports with ``report_injection``): its oracle conversation could not be shown.
    """
    rng = random.Random(seed)
    rows = []
    dropped: dict[str, int] = {}
    needs_tools: dict[str, int] = {}
    allowed = set(tools) if tools else None
    for domain in domains:
        prompt = [{"role": "system", "content": system_prompt(domain, include_policy)}, {"role": "user", "content": ""}]
        for code in _families(domain, (families or {}).get(domain)):
            for _ in range(variants_per_family):
                row = {"prompt": prompt, "environment": domain, "family": code, "seed": rng.randrange(10**6, 10**9)}
                if not judge or allowed is not None:
                    spec = task_for_row(domain, row)
                    if not judge and spec.checks.rubric:
                        dropped[f"{domain}:{code}"] = dropped.get(f"{domain}:{code}", 0) + 1
                        continue
                    if allowed is not None and {c.name for c in spec.golden} - allowed:
                        needs_tools[f"{domain}:{code}"] = needs_tools.get(f"{domain}:{code}", 0) + 1
                        continue
                rows.append(row)
    if dropped:
        log.warning("no judge configured: left out %d variants with rubric questions (%s); configure a judge endpoint "
                    "to train on them", sum(dropped.values()), ", ".join(f"{k}: {n}" for k, n in sorted(dropped.items())))
    if needs_tools:
        log.info("restricted tool set: left out %d variants whose golden needs other tools (%s)", sum(needs_tools.values()),
                 ", ".join(f"{k}: {n}" for k, n in sorted(needs_tools.items())))
    rng.shuffle(rows)
    return rows


def build_grpo_dataset(domains: list[str], variants_per_family: int, seed: int = 0,
                       families: dict[str, list[str]] | None = None, include_policy: bool = True, judge: bool = True,
                       tools: list[str] | None = None) -> Any:
    """A ``datasets.Dataset`` of train variants for ``GRPOTrainer`` (one environment per domain)."""
    from datasets import Dataset

    return Dataset.from_list(grpo_rows(domains, variants_per_family, seed, families, include_policy, judge, tools))


def _ask_for_facts(spec: TaskSpec) -> str | None:
    if not spec.user.facts:
        return None
    words = [f.unlock[0] for f in spec.user.facts]
    return "Before I start, could you give me your " + ", ".join(words) + "?"


def trl_tool_schemas(cls: type[ThinkingboxTRLEnvironment]) -> list[dict[str, Any]]:
    """The tool schemas TRL renders for an environment class (what the model sees)."""
    from transformers.utils import get_json_schema

    return [get_json_schema(getattr(cls, name)) for name in sorted(cls.tool_names)]  # type: ignore[attr-defined]


def oracle_conversation(spec: TaskSpec, include_policy: bool = True, tools: list[str] | None = None) -> dict[str, Any]:
    """One train variant played by the oracle, as a chat with tool calls (TRL's conversational format).

    The trajectory plays the task's written turns (questions, proposals) where the task puts
    them, or, for tasks without them, first asks the customer for the facts the task withholds
    (the scripted user answers); it makes the golden calls with their real results, then
    closes with the golden reply.
    """
    if spec.split != "train":
        raise RefusedTestTask(f"task '{spec.full_id}' is a {spec.split} task; training uses train variants only")
    cls = environment_class(spec.domain, tools=tools)
    hidden = sorted({c.name for c in spec.golden} - set(cls.tool_names))  # type: ignore[attr-defined]
    if hidden:
        raise ValueError(f"task '{spec.full_id}' needs tools {hidden}, which the restricted tool set does not expose")
    env = cls()
    env.reset(spec=spec.model_dump(mode="json"))
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system_prompt(spec.domain, include_policy)},
        {"role": "user", "content": spec.user.opening},
    ]

    def tool_turn(name: str, arguments: dict[str, Any], result: str) -> None:
        call = {"type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
        messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
        messages.append({"role": "tool", "name": name, "content": result})

    turns = list(spec.dialogue)
    if not turns:
        question = _ask_for_facts(spec)
        if question:
            tool_turn(REPLY_TOOL, {"message": question}, env._reply(question))
    for step in interleave(turns, list(spec.golden)):  # the task's written turns where the task puts them
        if isinstance(step, GoldenTurn):
            tool_turn(REPLY_TOOL, {"message": step.say}, env._reply(step.say))
        else:
            tool_turn(step.name, dict(step.arguments), env._step_tool(step.name, dict(step.arguments)))
    messages.append({"role": "assistant", "content": spec.golden_reply})
    env._record_final_message(spec.golden_reply)
    info = env._finish()
    if info["verdict"] != 1.0:
        raise RuntimeError(f"oracle trajectory of {spec.full_id} does not pass: {info['checks']}")
    return {"messages": messages, "task_id": spec.full_id}


def build_sft_dataset(domains: list[str], variants_per_family: int, seed: int = 0,
                      families: dict[str, list[str]] | None = None, include_policy: bool = True,
                      tools: list[str] | None = None) -> Any:
    """Oracle conversations of train variants, for a supervised warm start with ``SFTTrainer``.

    Each row has ``messages`` and ``tools`` (the schemas TRL will show in GRPO), the
    conversational format SFTTrainer renders with the model's chat template.
    """
    from datasets import Dataset

    rows = []
    for row in grpo_rows(domains, variants_per_family, seed, families, include_policy, tools=tools):
        spec = generate_variant(row["environment"], row["family"], row["seed"])
        conv = oracle_conversation(spec, include_policy, tools)
        # tool schemas differ in shape from tool to tool, so they travel as JSON text (SFTTrainer decodes it)
        rows.append({"messages": conv["messages"], "tools": json.dumps(trl_tool_schemas(environment_class(spec.domain, tools=tools)))})
    return Dataset.from_list(rows)
