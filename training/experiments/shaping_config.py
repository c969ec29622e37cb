"""The shaping experiment's configuration: its YAML keys as dataclasses, checked by key before anything runs.

``training/experiments/shaping.py`` reads its ``--config`` file and ``--set`` overrides through
``load_config``, ``apply_overrides`` and ``parse_config``; a problem raises ``ConfigError`` naming the key.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

SHAPINGS = ("none", "checks", "progress")


@dataclass
class ArmConfig:
    """One reward arm: ``verdict_share`` is a(t), a number or [start, end] moved linearly over the run."""

    name: str
    shaping: str = "none"
    verdict_share: float | list[float] = 1.0
    # CheckRewardWrapper weights of this arm's shaping (shaping: checks); empty: the experiment's check_weights
    weights: dict[str, float] = field(default_factory=dict)

    def share(self, step: int, max_steps: int) -> float:
        """a(t) at optimizer step ``step`` (0-based) of ``max_steps``."""
        if isinstance(self.verdict_share, list):
            start, end = self.verdict_share
            frac = step / max(1, max_steps - 1)
            return float(start + (end - start) * min(1.0, max(0.0, frac)))
        return float(self.verdict_share)


@dataclass
class ModelConfig:
    """The locally built Qwen3 (random init) and its BPE tokenizer."""

    hidden: int = 128
    layers: int = 2
    heads: int = 4
    kv_heads: int = 2
    vocab: int = 4000
    # how values are cut into tokens (tiny_qwen.VALUE_PIECES): "whole" lets the fitted vocabulary merge
    # values it saw, so an unseen email or id is made of rarely trained pieces; "characters" and
    # "chunks" make every value a sequence of trained tokens
    value_pieces: str = "whole"


@dataclass
class WarmStartConfig:
    """Supervised steps on oracle conversations of train variants (drawn with ``seed``)."""

    variants_per_family: int = 32
    seed: int = 1
    max_steps: int = 200
    learning_rate: float = 5e-3
    batch_size: int = 4
    lr_scheduler_type: str = "constant"
    # False: the loss is on every token, the customer's answers and tool results included; they repeat values
    # said earlier in the conversation, which is what teaches a model built from scratch to copy a value
    assistant_only_loss: bool = True
    # one warm start (with the first seed) shared by every seed: the seeds then vary only GRPO (its
    # sampling and data order), which is what the arms are compared on, and a warm start that costs
    # more than all the arm runs together is paid once
    shared: bool = False
    # steps on random token sequences with a repeated stretch before the conversations (copy_probe.py):
    # a model built from scratch has no induction circuit, the part of a pretrained model that copies
    # what came before, and conversations alone hold too few copies to grow one in a short run
    induction_steps: int = 0
    induction_batch_size: int = 32
    induction_learning_rate: float = 1e-3
    induction_vocab: int = 500  # drawn from this many of the lowest token ids (0: all)


@dataclass
class GRPOSettings:
    """The GRPO run of every arm and seed (TRL's GRPOConfig fields of the same names)."""

    max_steps: int = 20
    variants_per_family: int = 32
    dataset_seed: int = 1
    num_generations: int = 8
    per_device_train_batch_size: int = 8
    max_completion_length: int = 768
    max_tool_calling_iterations: int = 10
    temperature: float = 1.0
    learning_rate: float = 1e-4
    lr_scheduler_type: str = "linear"  # "constant": a long run whose informative groups are rare keeps its step size
    beta: float = 0.0
    loss_type: str = "dapo"


@dataclass
class EvalSettings:
    """What is evaluated, and when (step 0 is the warm-started model, shared by the arms of a seed)."""

    every: int = 5
    heldout_variants_per_family: int = 16
    heldout_seed: int = 7
    test_tasks: list[str] = field(default_factory=list)
    max_new_tokens: int = 96
    trials: int = 1
    # also evaluate this many of the warm start's own variants per family (split "seen"): tells a model
    # that cannot do the task from one that cannot copy values it has not seen
    seen_variants_per_family: int = 0


@dataclass
class ExperimentConfig:
    """The whole experiment; ``--config FILE.yaml`` holds these keys."""

    domain: str = "retail"
    families: list[str] = field(default_factory=lambda: ["ST004"])
    tools: list[str] = field(default_factory=list)
    include_policy: bool = False
    # CPU threads for torch (None: torch's default). A model this small gains little from a second
    # thread and loses much when the cores are shared, so the CPU config uses one.
    torch_threads: int | None = None
    # CheckRewardWrapper weights (check name, then kind; others count 1): the shaping of arms that give none,
    # and the reward_checks component every arm logs, so that the logged curves compare across arms
    check_weights: dict[str, float] = field(default_factory=dict)
    seeds: list[int] = field(default_factory=lambda: [0, 1, 2])
    model: ModelConfig = field(default_factory=ModelConfig)
    warm_start: WarmStartConfig = field(default_factory=WarmStartConfig)
    grpo: GRPOSettings = field(default_factory=GRPOSettings)
    eval: EvalSettings = field(default_factory=EvalSettings)
    arms: list[ArmConfig] = field(default_factory=list)


class ConfigError(ValueError):
    """A configuration that cannot run, named by its key."""


def _section(cls: type, data: Any, where: str) -> Any:
    if data is None:
        return cls()
    if not isinstance(data, dict):
        raise ConfigError(f"{where} must be a mapping, got {type(data).__name__}")
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(f"{where}: unknown keys {unknown}; known: {sorted(known)}")
    return cls(**data)


def parse_config(data: Any) -> ExperimentConfig:
    """The experiment of a YAML mapping, every problem named by its key before anything runs."""
    if not isinstance(data, dict):
        raise ConfigError("the config must be a YAML mapping")
    nested = {"model": ModelConfig, "warm_start": WarmStartConfig, "grpo": GRPOSettings, "eval": EvalSettings}
    top = {k: v for k, v in data.items() if k not in nested and k != "arms"}
    cfg = _section(ExperimentConfig, top, "config")
    for key, cls in nested.items():
        setattr(cfg, key, _section(cls, data.get(key), key))
    arms = data.get("arms")
    if not isinstance(arms, list) or not arms:
        raise ConfigError("arms: give a non-empty list of arms (name, shaping, verdict_share, weights)")
    cfg.arms = [_section(ArmConfig, a, f"arms[{i}]") for i, a in enumerate(arms)]
    _validate(cfg)
    return cfg


def _validate(cfg: ExperimentConfig) -> None:
    from thinkingbox_env.tasks.domain import load_domain

    domain = load_domain(cfg.domain)
    for code in cfg.families:
        domain.family(code)  # raises naming the unknown family
    names = [a.name for a in cfg.arms]
    if len(set(names)) != len(names):
        raise ConfigError(f"arms: names must be distinct, got {names}")
    for arm in cfg.arms:
        if arm.shaping not in SHAPINGS:
            raise ConfigError(f"arm '{arm.name}': shaping must be one of {SHAPINGS}, got {arm.shaping!r}")
        shares = arm.verdict_share if isinstance(arm.verdict_share, list) else [arm.verdict_share]
        if len(shares) not in (1, 2) or not all(isinstance(s, (int, float)) and 0 <= s <= 1 for s in shares):
            raise ConfigError(f"arm '{arm.name}': verdict_share must be a number in [0, 1] or [start, end], got {arm.verdict_share!r}")
        if arm.shaping == "none" and shares != [1] and shares != [1.0]:
            raise ConfigError(f"arm '{arm.name}': without shaping the verdict share must be 1")
        bad = {k: v for k, v in {**cfg.check_weights, **arm.weights}.items()
               if not isinstance(v, (int, float)) or isinstance(v, bool) or v < 0}
        if bad:
            raise ConfigError(f"arm '{arm.name}': check weights must be non-negative numbers, got {bad}")
    from thinkingbox_env.integrations.tiny_qwen import VALUE_PIECES

    if cfg.model.value_pieces not in VALUE_PIECES:
        raise ConfigError(f"model.value_pieces must be one of {list(VALUE_PIECES)}, got {cfg.model.value_pieces!r}")
    for key, value in (("warm_start.shared", cfg.warm_start.shared),
                       ("warm_start.assistant_only_loss", cfg.warm_start.assistant_only_loss)):
        if not isinstance(value, bool):
            raise ConfigError(f"{key} must be true or false, got {value!r}")
    ws = cfg.warm_start
    for key, value in (("induction_steps", ws.induction_steps), ("induction_batch_size", ws.induction_batch_size),
                       ("induction_vocab", ws.induction_vocab)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ConfigError(f"warm_start.{key} must be a whole number >= 0, got {value!r}")
    if ws.induction_steps and ws.induction_batch_size < 1:
        raise ConfigError("warm_start.induction_batch_size must be >= 1 when induction_steps is set")
    schedules = _lr_schedules()
    if cfg.warm_start.lr_scheduler_type not in schedules:
        raise ConfigError(f"warm_start.lr_scheduler_type must be one of {schedules}, got {cfg.warm_start.lr_scheduler_type!r}")
    if not cfg.seeds or len(set(cfg.seeds)) != len(cfg.seeds):
        raise ConfigError(f"seeds: give distinct seeds, got {cfg.seeds}")
    if cfg.grpo.lr_scheduler_type not in schedules:
        raise ConfigError(f"grpo.lr_scheduler_type must be one of {schedules}, got {cfg.grpo.lr_scheduler_type!r}")
    if cfg.grpo.per_device_train_batch_size % cfg.grpo.num_generations:
        raise ConfigError("grpo: per_device_train_batch_size must be a multiple of num_generations")
    if cfg.eval.every < 1 or cfg.grpo.max_steps < 1:
        raise ConfigError("eval.every and grpo.max_steps must be >= 1")
    if cfg.eval.heldout_variants_per_family < 1 and not cfg.eval.test_tasks:
        raise ConfigError("eval: nothing to evaluate (no held-out variants, no test tasks)")


def _lr_schedules() -> list[str]:
    """The learning-rate schedules transformers knows (the warm start's SFTConfig takes one by name)."""
    from transformers import SchedulerType

    return [t.value for t in SchedulerType]


def load_config(path: str | Path) -> ExperimentConfig:
    import yaml

    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"no such config: {p}")
    return parse_config(yaml.safe_load(p.read_text(encoding="utf-8")))



def apply_overrides(data: dict[str, Any], items: list[str]) -> dict[str, Any]:
    """``KEY=VALUE`` items (dotted keys into the YAML mapping, YAML values) applied to the raw config."""
    import copy

    import yaml

    data = copy.deepcopy(data)
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"--set takes KEY=VALUE (e.g. model.hidden=256), got {item!r}")
        node = data
        *parents, leaf = key.split(".")
        for part in parents:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise ConfigError(f"--set {key}: '{part}' is not a section")
            node = child
        node[leaf] = yaml.safe_load(raw)
    return data
