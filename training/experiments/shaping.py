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
from dataclasses import asdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import shaping_report as report  # noqa: E402 - the folder is put on the path first
from shaping_config import (  # noqa: E402
    ArmConfig,
    ConfigError,
    ExperimentConfig,
    apply_overrides,
    parse_config,
)
from shaping_rewards import reward_functions  # noqa: E402

log = logging.getLogger("thinkingbox.training.shaping")


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
