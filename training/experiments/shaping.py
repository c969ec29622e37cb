"""Per-check reward shaping, measured: GRPO learning curves of several reward arms on held-out tasks.

For one or two narrow task families, a Qwen3-architecture model is built here (random
init, a tokenizer fitted to the warm-start conversations; nothing is downloaded), warm
started on oracle conversations of train variants, then trained with GRPO once per arm
and seed. Every arm trains on

    reward = a(t) * verdict + (1 - a(t)) * shaping

where ``shaping`` is nothing, the weighted per-check reward of ``CheckRewardWrapper``
(``checks``) or the package's ``reward_progress`` (``progress``), and ``a(t)`` is a
constant or moves linearly over training (a curriculum from components to the verdict).
All components are logged on every arm with weight 0, so the arms' curves are comparable.

Every ``eval.every`` steps the current weights are evaluated through the evaluation
library, greedily, on train variants never trained on (held out by seed) and on the
families' frozen test tasks: pass@1 with its interval, per-check pass rates, tokens per
episode, and signs of collapse or reward hacking. One JSON holds every curve, and the
plots show them per arm with seed bands.

    python training/experiments/shaping.py --config training/experiments/shaping_cpu.yaml --out runs/shaping_cpu
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import sys
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import shaping_report as report  # noqa: E402 - the folder is put on the path first

log = logging.getLogger("thinkingbox.training.shaping")

SHAPINGS = ("none", "checks", "progress")
# logged on every arm with weight 0: the arms differ only in what trains
LOGGED = ("verdict", "effects", "no_collateral", "dialogue", "progress")


# --------------------------------------------------------------------------- configuration


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


# --------------------------------------------------------------------------- data: warm start, GRPO, held out


def _grpo_module() -> Any:
    """training/grpo.py (a script, loaded by path) for its dataset, environment, warm start and evaluation helpers."""
    import importlib.util

    name = "thinkingbox_training_grpo"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, HERE.parent / "grpo.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def tb_arguments(cfg: ExperimentConfig) -> Any:
    """grpo.py's ThinkingboxArguments for this experiment (GRPO variants and the warm start's)."""
    grpo = _grpo_module()
    return grpo.ThinkingboxArguments(
        domains=[cfg.domain], families=[f"{cfg.domain}:{c}" for c in cfg.families], tools=list(cfg.tools),
        variants_per_family=cfg.grpo.variants_per_family, dataset_seed=cfg.grpo.dataset_seed,
        include_policy=cfg.include_policy, sft_variants_per_family=cfg.warm_start.variants_per_family,
        sft_max_steps=cfg.warm_start.max_steps, sft_learning_rate=cfg.warm_start.learning_rate,
        sft_dataset_seed=cfg.warm_start.seed, sft_batch_size=cfg.warm_start.batch_size,
        sft_lr_scheduler_type=cfg.warm_start.lr_scheduler_type, sft_assistant_only_loss=cfg.warm_start.assistant_only_loss)


def heldout_ids(cfg: ExperimentConfig) -> list[str]:
    """Held-out variant ids: seeds drawn apart from the warm start's and GRPO's, checked to share no task with them."""
    from thinkingbox_env.integrations.trl import grpo_rows
    from thinkingbox_env.tasks.lookup import generate_variant

    fams = {cfg.domain: list(cfg.families)}
    n = cfg.eval.heldout_variants_per_family
    if n < 1:
        return []
    tools = list(cfg.tools) or None
    trained = grpo_rows([cfg.domain], cfg.grpo.variants_per_family, cfg.grpo.dataset_seed, fams, judge=True, tools=tools)
    trained += grpo_rows([cfg.domain], cfg.warm_start.variants_per_family, cfg.warm_start.seed, fams, judge=True,
                         tools=tools)
    seen = {generate_variant(cfg.domain, r["family"], r["seed"]).content_key() for r in trained}
    ids = []
    for row in grpo_rows([cfg.domain], n, cfg.eval.heldout_seed, fams, judge=True, tools=tools):
        if generate_variant(cfg.domain, row["family"], row["seed"]).content_key() in seen:
            continue  # a held-out task must be one the model never trained on
        ids.append(report.variant_id(cfg.domain, row["family"], row["seed"]))
    return sorted(ids)


def seen_ids(cfg: ExperimentConfig) -> list[str]:
    """The first warm-start variants per family (the model was fitted to these conversations)."""
    from thinkingbox_env.integrations.trl import grpo_rows

    n = min(cfg.eval.seen_variants_per_family, cfg.warm_start.variants_per_family)
    if n < 1:
        return []
    rows = grpo_rows([cfg.domain], cfg.warm_start.variants_per_family, cfg.warm_start.seed,
                     {cfg.domain: list(cfg.families)}, judge=True, tools=list(cfg.tools) or None)
    ids = []
    for code in cfg.families:
        ids += [report.variant_id(cfg.domain, r["family"], r["seed"]) for r in rows if r["family"] == code][:n]
    return sorted(ids)


def frozen_test_ids(cfg: ExperimentConfig) -> list[str]:
    from thinkingbox_env.eval import select_tasks

    if not cfg.eval.test_tasks:
        return []
    ids = select_tasks(cfg.eval.test_tasks, split="test")
    outside = [t for t in ids if t.split("/", 1)[1].split("_")[0] not in cfg.families]
    if outside:
        raise ConfigError(f"eval.test_tasks: {outside} are not tasks of the families {cfg.families}")
    return ids


# --------------------------------------------------------------------------- model


def warm_start_conversations(cfg: ExperimentConfig) -> Any:
    """The oracle conversations of the warm start's train variants (SFT rows: ``messages`` and JSON ``tools``)."""
    from thinkingbox_env.integrations.trl import build_sft_dataset

    return build_sft_dataset([cfg.domain], cfg.warm_start.variants_per_family, cfg.warm_start.seed,
                             {cfg.domain: list(cfg.families)}, cfg.include_policy, cfg.tools or None)


def build_base_model(cfg: ExperimentConfig, folder: Path, corpus: Any = None) -> Path:
    """A random-init Qwen3 and a tokenizer fitted to the warm-start conversations (held-out tasks are not seen).

    ``corpus``: those conversations when the caller already has them.
    """
    from thinkingbox_env.integrations.tiny_qwen import render_conversations, tiny_qwen3, train_tokenizer

    corpus = warm_start_conversations(cfg) if corpus is None else corpus
    tokenizer = train_tokenizer(render_conversations(list(corpus)), vocab_size=cfg.model.vocab,
                                value_pieces=cfg.model.value_pieces)
    model = tiny_qwen3(tokenizer, hidden_size=cfg.model.hidden, num_layers=cfg.model.layers, num_heads=cfg.model.heads,
                       num_kv_heads=cfg.model.kv_heads)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    log.info("base model: %d parameters, %d-token vocabulary -> %s", model.num_parameters(), len(tokenizer), folder)
    return folder


def _trl_common(out: Path, seed: int) -> dict[str, Any]:
    return {"output_dir": str(out), "use_cpu": not _cuda(), "bf16": _cuda(), "gradient_checkpointing": False,
            "seed": seed, "report_to": "none", "save_strategy": "no", "logging_steps": 1, "disable_tqdm": True}


def _cuda() -> bool:
    import torch

    return bool(torch.cuda.is_available())


def warm_start(cfg: ExperimentConfig, base: Path, out: Path, seed: int) -> Path:
    """The base model after the supervised warm start with this seed, saved to ``out``."""
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig

    grpo = _grpo_module()
    model = AutoModelForCausalLM.from_pretrained(base)
    tokenizer = AutoTokenizer.from_pretrained(base)
    args = GRPOConfig(**_trl_common(out / "trainer", seed))
    ws = cfg.warm_start
    (out / "induction.json").unlink(missing_ok=True)  # a model trained before in this folder may have had one
    if ws.induction_steps:
        import copy_probe

        if _cuda():
            model.to("cuda")
        records = copy_probe.induction_stage(model, tokenizer, ws.induction_steps, ws.induction_batch_size,
                                             ws.induction_learning_rate, ws.induction_vocab, seed,
                                             every=max(1, ws.induction_steps // 10))
        out.mkdir(parents=True, exist_ok=True)
        (out / "induction.json").write_text(json.dumps(records, indent=1), encoding="utf-8")
    model = grpo.warm_start(tb_arguments(cfg), args, model, tokenizer, None)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    shutil.rmtree(out / "trainer", ignore_errors=True)
    return out


# --------------------------------------------------------------------------- rewards


def arm_reward(arm: ArmConfig, check_weights: dict[str, float], max_steps: int, group: int) -> Any:
    """The reward an arm trains on; it also logs a(t) and the rollouts' collapse and hacking indicators."""
    from thinkingbox_env.integrations import trl as tb_trl

    shaping = tb_trl.reward_checks(arm.weights or check_weights) if arm.shaping == "checks" else (
        tb_trl.reward_progress if arm.shaping == "progress" else None)

    def reward_arm(completions: list[Any], environments: list[Any] | None = None, trainer_state: Any = None,
                   log_metric: Any = None, **kwargs: Any) -> list[float | None]:
        envs = environments or []
        verdicts = tb_trl.reward_verdict(completions, envs)
        extra = shaping(completions, envs) if shaping is not None else [0.0] * len(verdicts)
        step = int(getattr(trainer_state, "global_step", 0) or 0)
        a = arm.share(step, max_steps)
        values = [None if v is None else a * v + (1 - a) * float(s or 0.0) for v, s in zip(verdicts, extra)]
        if log_metric is not None:
            closings = [report.closing_text(c) for c in completions]
            for name, value in report.rollout_indicators(values, verdicts, closings, group).items():
                log_metric(f"shaping/{name}", value)
            log_metric("shaping/verdict_share", a)
        return values

    return reward_arm


def reward_functions(cfg: ExperimentConfig, arm: ArmConfig) -> tuple[list[Any], list[float]]:
    """The arm's reward (weight 1) and every logged component (weight 0), the same on every arm."""
    from thinkingbox_env.integrations import trl as tb_trl

    funcs = [arm_reward(arm, cfg.check_weights, cfg.grpo.max_steps, cfg.grpo.num_generations)]
    funcs += [getattr(tb_trl, f"reward_{n}") for n in LOGGED]
    funcs.append(tb_trl.reward_checks(cfg.check_weights))  # the experiment's weighting, logged on every arm
    return funcs, [1.0] + [0.0] * (len(funcs) - 1)


# --------------------------------------------------------------------------- evaluation


def eval_config(cfg: ExperimentConfig, checkpoint: str, seed: int) -> Any:
    from thinkingbox_env.agents.openai_chat import SamplingConfig
    from thinkingbox_env.eval.config import EndpointConfig, EvalConfig

    return EvalConfig(agent="transformers", agent_endpoint=EndpointConfig(model=checkpoint),
                      sampling=SamplingConfig(max_tokens=cfg.eval.max_new_tokens, temperature=0.0), seed=seed,
                      protocol="customer-tool", include_policy=cfg.include_policy, tools=list(cfg.tools) or None)


def evaluate_checkpoint(cfg: ExperimentConfig, checkpoint: Path, out: Path, seed: int,
                        splits: dict[str, list[str]]) -> dict[str, Any]:
    """Every split's metrics for one checkpoint, through the evaluation library (rows kept in ``out``)."""
    from thinkingbox_env.eval import evaluate

    result: dict[str, Any] = {}
    for split, ids in splits.items():
        if not ids:
            continue
        path = out / f"{split}.jsonl"
        summary = evaluate(ids, eval_config(cfg, str(checkpoint), seed), out=path, trials=cfg.eval.trials,
                           resume=True, keep_rows=True)
        rows = [r.to_json() for r in summary.rows] or _read(path)
        result[split] = report.split_metrics(rows)
    return result


def _read(path: Path) -> list[dict[str, Any]]:
    from thinkingbox_env.eval.run_files import read_rows

    return list(read_rows(path))


class _Recorder:
    """A TrainerCallback: training logs every step, evaluations every ``every`` steps."""

    def __init__(self, cfg: ExperimentConfig, out: Path, seed: int, splits: dict[str, list[str]], tokenizer: Any):
        from transformers import TrainerCallback

        self.cfg, self.out, self.seed, self.splits, self.tokenizer = cfg, out, seed, splits, tokenizer
        self.train_log: list[dict[str, Any]] = []
        self.evals: list[dict[str, Any]] = []
        self.eval_seconds = 0.0
        recorder = self

        class Callback(TrainerCallback):  # type: ignore[misc]
            def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **kwargs: Any) -> None:
                if logs and "reward" in logs:
                    recorder.train_log.append({"step": state.global_step, **{k: float(v) for k, v in logs.items()
                                                                              if isinstance(v, (int, float))}})

            def on_step_end(self, args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any) -> None:
                step = state.global_step
                if step % recorder.cfg.eval.every == 0 or step == state.max_steps:
                    recorder.evaluate(model, step)

        self.callback = Callback()

    def evaluate(self, model: Any, step: int) -> None:
        t0 = time.perf_counter()
        ckpt = self.out / f"step{step}"
        model.save_pretrained(ckpt)
        self.tokenizer.save_pretrained(ckpt)
        was_training = model.training
        metrics = evaluate_checkpoint(self.cfg, ckpt, self.out / f"eval_step{step}", self.seed, self.splits)
        model.train(was_training)
        shutil.rmtree(ckpt, ignore_errors=True)  # the rows stay; checkpoints of every step would fill the disk
        self.evals.append({"step": step, **metrics})
        self.eval_seconds += time.perf_counter() - t0


def run_arm(cfg: ExperimentConfig, arm: ArmConfig, seed: int, warm: Path, out: Path, splits: dict[str, list[str]],
            step0: dict[str, Any]) -> dict[str, Any]:
    """GRPO of one arm from the seed's warm-started model, evaluated as it trains."""
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    grpo = _grpo_module()
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    shutil.rmtree(out, ignore_errors=True)  # an earlier run's checkpoints and evaluation rows are not this run's
    t0 = time.perf_counter()
    model = AutoModelForCausalLM.from_pretrained(warm)
    tokenizer = AutoTokenizer.from_pretrained(warm)
    funcs, weights = reward_functions(cfg, arm)
    settings = asdict(cfg.grpo)
    settings.pop("variants_per_family")
    settings.pop("dataset_seed")
    args = GRPOConfig(**_trl_common(out / "trainer", seed), **settings, reward_weights=weights,
                      chat_template_kwargs={"enable_thinking": False})
    tb_args = tb_arguments(cfg)
    recorder = _Recorder(cfg, out, seed, splits, tokenizer)
    trainer = GRPOTrainer(model=model, reward_funcs=funcs, args=args, train_dataset=grpo.grpo_dataset(tb_args),
                          processing_class=tokenizer, environment_factory=grpo.environment_factory(tb_args),
                          callbacks=[recorder.callback])
    trainer.train()
    shutil.rmtree(out / "trainer", ignore_errors=True)
    seconds = time.perf_counter() - t0
    return {"train": recorder.train_log, "evals": [{"step": 0, **step0}] + recorder.evals,
            "seconds": seconds, "eval_seconds": recorder.eval_seconds}


# --------------------------------------------------------------------------- the experiment


def run(cfg: ExperimentConfig, out: Path, config_path: str | None = None, only_seeds: list[int] | None = None) -> dict[str, Any]:
    """Warm start per seed, every arm per seed, then the JSON and the plots; returns the JSON's content.

    ``only_seeds``: run these of the config's seeds only (a shared warm start stays the first seed's), so the
    seeds can run as separate processes into separate folders; ``shaping_report.py`` pools such folders.

    The thread count is the process's: it is restored afterwards, since it changes the numerics (the
    order of float reductions) of everything else the process runs.
    """
    import torch

    previous = torch.get_num_threads()
    if cfg.torch_threads:
        torch.set_num_threads(cfg.torch_threads)
    try:
        return _run(cfg, out, config_path, only_seeds)
    finally:
        torch.set_num_threads(previous)


def _run(cfg: ExperimentConfig, out: Path, config_path: str | None = None,
         only_seeds: list[int] | None = None) -> dict[str, Any]:
    import torch

    report.register_variant_source()
    out.mkdir(parents=True, exist_ok=True)
    started = time.time()
    splits = {"heldout": heldout_ids(cfg), "test": frozen_test_ids(cfg), "seen": seen_ids(cfg)}
    log.info("held-out variants: %d, test tasks: %d", len(splits["heldout"]), len(splits["test"]))
    base = build_base_model(cfg, out / "base")
    from transformers import AutoModelForCausalLM

    params = AutoModelForCausalLM.from_pretrained(base).num_parameters()
    results: dict[str, Any] = {
        "config": {**asdict(cfg), "path": config_path}, "model_parameters": params,
        "splits": splits, "torch_threads": torch.get_num_threads(), "device": "cuda" if _cuda() else "cpu",
        "arms": {arm.name: {"seeds": {}} for arm in cfg.arms}, "warm_start": {},
    }
    finished = _finished_runs(out, results["config"])
    done: dict[int, tuple[dict[str, Any], float, bool]] = {}
    for seed in [s for s in cfg.seeds if only_seeds is None or s in only_seeds]:
        warm_seed = cfg.seeds[0] if cfg.warm_start.shared else seed
        warm_dir = out / "warm" / f"seed{warm_seed}"
        if warm_seed not in done:
            done[warm_seed] = _warm_start_once(cfg, base, warm_dir, warm_seed, splits)
        step0, warm_seconds, reused = done[warm_seed]
        warm = warm_dir
        results["warm_start"][str(seed)] = {"seconds": warm_seconds, "metrics": step0, "reused": reused,
                                            "warm_seed": warm_seed, "induction": _induction_records(warm_dir)}
        log.info("seed %d: warm start %.0fs%s; held-out pass@1 %s", seed, warm_seconds, " (reused)" if reused else "",
                 step0.get("heldout", {}).get("pass1", {}).get("value"))
        for arm in cfg.arms:
            kept = finished.get(arm.name, {}).get(str(seed))
            if kept is not None:
                results["arms"][arm.name]["seeds"][str(seed)] = kept
                results.setdefault("resumed", {}).setdefault(arm.name, []).append(seed)
                _write(out, results)
                log.info("seed %d arm %s: finished by an earlier run of this configuration, kept", seed, arm.name)
                continue
            arm_out = out / "arms" / arm.name / f"seed{seed}"
            results["arms"][arm.name]["seeds"][str(seed)] = run_arm(cfg, arm, seed, warm, arm_out, splits, step0)
            _write(out, results)
            log.info("seed %d arm %s done", seed, arm.name)
    results["summary"] = report.aggregate(results)
    results["wall_seconds"] = time.time() - started
    _write(out, results)
    results["plots"] = report.plot_all(results, out) if cfg.arms else []
    _write(out, results)
    return results


def _warm_start_once(cfg: ExperimentConfig, base: Path, warm_dir: Path, seed: int,
                     splits: dict[str, list[str]]) -> tuple[dict[str, Any], float, bool]:
    """The warm start of ``seed`` (reused when the folder holds one of the same settings) and its step-0 metrics."""
    step0, warm_seconds, reused = _reuse_warm_start(cfg, warm_dir, seed)
    if not reused:
        t0 = time.perf_counter()
        warm_start(cfg, base, warm_dir, seed)
        warm_seconds = time.perf_counter() - t0
    if step0 is None:
        shutil.rmtree(warm_dir / "eval", ignore_errors=True)
        step0 = evaluate_checkpoint(cfg, warm_dir, warm_dir / "eval", seed, splits)
    (warm_dir / "warm_start.json").write_text(json.dumps(
        {"key": _warm_key(cfg, seed), "seconds": warm_seconds, "eval_key": _eval_key(cfg), "metrics": step0},
        default=str), encoding="utf-8")
    return step0, warm_seconds, reused


def _induction_records(warm_dir: Path) -> list[dict[str, Any]]:
    """The induction stage's copy accuracy as it trained (empty without one)."""
    path = warm_dir / "induction.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else []


def _warm_key(cfg: ExperimentConfig, seed: int) -> dict[str, Any]:
    """Everything a warm-started model depends on (sharing it across seeds does not change it)."""
    settings = {k: v for k, v in asdict(cfg.warm_start).items() if k != "shared"}
    return json.loads(json.dumps({"seed": seed, "domain": cfg.domain, "families": cfg.families, "tools": cfg.tools,
                                  "include_policy": cfg.include_policy, "model": asdict(cfg.model),
                                  "warm_start": settings}))


def _eval_key(cfg: ExperimentConfig) -> dict[str, Any]:
    return json.loads(json.dumps(asdict(cfg.eval)))


def _reuse_warm_start(cfg: ExperimentConfig, folder: Path, seed: int) -> tuple[dict[str, Any] | None, float, bool]:
    """A warm start this output folder already holds for the same settings (a rerun or a resumed run skips it).

    Returns its step-0 metrics (None when the evaluation settings changed: it is evaluated again),
    its training time, and whether the model is reused.
    """
    marker = folder / "warm_start.json"
    if not marker.is_file() or not (folder / "config.json").is_file():
        return None, 0.0, False
    saved = json.loads(marker.read_text(encoding="utf-8"))
    if saved.get("key") != _warm_key(cfg, seed):
        return None, 0.0, False
    metrics = saved["metrics"] if saved.get("eval_key") == _eval_key(cfg) else None
    return metrics, float(saved["seconds"]), True


def _finished_runs(out: Path, config: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The arm runs an interrupted process of the same configuration finished into ``out``, by arm and seed.

    Each finished seed is written to results.json as it ends, so a run stopped part-way resumes at the first
    unfinished seed instead of training the finished ones again; any difference in the configuration (model,
    warm start, GRPO, evaluation, seeds, arms, config path) starts every seed afresh.
    """
    path = out / "results.json"
    if not path.is_file():
        return {}
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(saved, dict) or saved.get("config") != json.loads(json.dumps(config, default=str)):
        return {}
    arms = saved.get("arms")
    if not isinstance(arms, dict):
        return {}
    return {name: dict(entry.get("seeds") or {}) for name, entry in arms.items() if isinstance(entry, dict)}


def _write(out: Path, results: dict[str, Any]) -> None:
    tmp = out / "results.json.tmp"
    tmp.write_text(json.dumps(results, indent=1, default=str), encoding="utf-8")
    tmp.replace(out / "results.json")


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


def main(argv: list[str] | None = None) -> int:
    from thinkingbox_env.extras import require_train_extra

    require_train_extra("training/experiments/shaping.py")
    import yaml

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", required=True, help="the experiment's YAML file")
    parser.add_argument("--out", required=True, help="output folder: results.json, plots/*.png, evaluation rows")
    parser.add_argument("--set", nargs="+", default=[], metavar="KEY=VALUE",
                        help="override config keys, e.g. --set seeds=[0,1] grpo.max_steps=6 model.hidden=256")
    parser.add_argument("--arms", nargs="+", help="run only these arms (by name)")
    parser.add_argument("--seeds", nargs="+", type=int, metavar="SEED",
                        help="run only these of the config's seeds (the shared warm start stays the first seed's); seeds "
                             "run as separate processes into separate folders are pooled by shaping_report.py")
    parser.add_argument("--warm_start_only", action="store_true",
                        help="build, warm start and evaluate the model of every seed, no GRPO (what a model size "
                             "and warm-start data solve on held-out variants)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    try:
        path = Path(args.config)
        if not path.is_file():
            raise ConfigError(f"no such config: {path}")
        data = apply_overrides(yaml.safe_load(path.read_text(encoding="utf-8")), list(args.set))
        cfg = parse_config(data)
        if args.arms:
            missing = sorted(set(args.arms) - {a.name for a in cfg.arms})
            if missing:
                raise ConfigError(f"--arms: no arms named {missing}; the config has {[a.name for a in cfg.arms]}")
            cfg.arms = [a for a in cfg.arms if a.name in args.arms]
        if args.warm_start_only:
            cfg.arms = []
        if args.seeds and set(args.seeds) - set(cfg.seeds):
            raise ConfigError(f"--seeds: {sorted(set(args.seeds) - set(cfg.seeds))} are not seeds of the config {cfg.seeds}")
    except (ConfigError, KeyError, TypeError) as exc:
        parser.error(str(exc))
    results = run(cfg, Path(args.out), args.config, args.seeds)
    print(json.dumps(results["summary"]["final"] or {s: w["metrics"] for s, w in results["warm_start"].items()},
                     indent=1, default=str)[:4000])
    return 0


if __name__ == "__main__":
    sys.exit(main())
