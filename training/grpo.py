"""GRPO fine-tuning of a chat model on Thinkingbox train variants, with TRL.

Every option of TRL's ``GRPOConfig`` (vLLM server or colocate mode, generations per
prompt, completion length, tool-call iterations, reward weights, loss type,
checkpoints, ...) and ``ModelConfig`` (model path, dtype, LoRA) is a command-line
flag and a YAML key; the Thinkingbox options below choose the tasks, the reward
functions, an optional supervised warm start, and the evaluation of the final
checkpoint on frozen test tasks. Training only ever sees generated ``train``
variants.

    python training/grpo.py --config training/configs/qwen3_8b_lora_vllm_server.yaml
    python training/grpo.py --help
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

logger = logging.getLogger("thinkingbox.training.grpo")

TOOL_PROTOCOLS = ("auto", "native", "prompt")  # thinkingbox_env.agents.tool_protocol.PROTOCOLS, without importing the package here
REWARD_NAMES = ("verdict", "effects", "no_collateral", "dialogue", "process", "rubric", "progress")


@dataclass
class ThinkingboxArguments:
    """Which tasks to train on, which rewards, and what to do before and after GRPO."""

    domains: list[str] = field(default_factory=lambda: ["retail"], metadata={"help": "Domains to train on (a run can mix them)."})
    families: list[str] = field(default_factory=list, metadata={
        "help": "Only these task families, as DOMAIN:CODE (e.g. retail:ST030); empty means every family of the domains."})
    tools: list[str] = field(default_factory=list, metadata={
        "help": "Expose only these domain tools (single-domain runs; a smaller action space for small models). Empty: all."})
    variants_per_family: int = field(default=64, metadata={"help": "Generated train variants per family in the GRPO dataset."})
    dataset_seed: int = field(default=0, metadata={"help": "Seed of the variant draw (the same seed gives the same dataset)."})
    include_policy: bool = field(default=True, metadata={"help": "Put the domain policy in the system prompt."})
    rewards: list[str] = field(default_factory=lambda: ["verdict"], metadata={
        "help": f"Reward functions, by name ({', '.join(REWARD_NAMES)}); each is logged as rewards/reward_NAME. "
                "Weights come from --reward_weights, in the same order (weight 0 logs without training on it)."})
    sft_variants_per_family: int = field(default=0, metadata={
        "help": "Oracle conversations per family for a supervised warm start before GRPO (0: no warm start)."})
    sft_max_steps: int = field(default=200, metadata={"help": "Optimizer steps of the warm start."})
    sft_learning_rate: float = field(default=1e-5, metadata={"help": "Learning rate of the warm start."})
    sft_dataset_seed: int | None = field(default=None, metadata={
        "help": "Seed of the warm start's variant draw; default dataset_seed + 1 (other variants than GRPO's). "
                "Equal to dataset_seed with equal counts, the warm start sees GRPO's own variants (smoke tests)."})
    sft_lr_scheduler_type: str = field(default="constant", metadata={"help": "Learning-rate schedule of the warm start."})
    sft_batch_size: int = field(default=4, metadata={"help": "Conversations per device and step in the warm start."})
    sft_assistant_only_loss: bool = field(default=True, metadata={
        "help": "Train the warm start on the assistant's tokens only. False trains on every token: the customer's "
                "answers and the tool results repeat values said earlier, which teaches a model built from scratch "
                "to copy values from its context."})
    judge_model: str | None = field(default=None, metadata={
        "help": "Rubric judge model (any OpenAI-compatible endpoint, e.g. a local vLLM server). Without a judge, "
                "variants whose tasks carry rubric questions are left out with a warning."})
    judge_base_url: str | None = field(default=None, metadata={"help": "Base URL of the judge's endpoint (default: OPENAI_BASE_URL)."})
    eval_tasks: list[str] = field(default_factory=list, metadata={
        "help": "Frozen test tasks to evaluate the final checkpoint on (ids, domains or globs, e.g. retail/*); empty: none."})
    eval_trials: int = field(default=1, metadata={"help": "Trials per evaluation task."})
    eval_max_new_tokens: int = field(default=1024, metadata={"help": "Token budget of each model turn in the evaluation."})
    tool_protocol: str = field(default="auto", metadata={
        "help": "How the model is shown tools and writes calls: native (its chat template renders tools), prompt (tool "
                "schemas in the system message, calls as <tool_call> JSON blocks; for ChatML models whose template "
                "knows no tools) or auto (decided by rendering the template). Chosen and logged before any step."})


def parse_args(argv: list[str] | None = None) -> tuple[ThinkingboxArguments, Any, Any]:
    """Command line and YAML (``--config FILE``; flags override the file) into the three argument groups."""
    from trl import GRPOConfig, ModelConfig, TrlParser

    parser = TrlParser((ThinkingboxArguments, GRPOConfig, ModelConfig), description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       epilog="--config FILE: a YAML file of any of the options above (keys without dashes); "
                              "flags on the command line override it.")
    tb_args, grpo_args, model_args = parser.parse_args_and_config(args=argv)
    unknown = sorted(set(tb_args.rewards) - set(REWARD_NAMES))
    if unknown:
        parser.error(f"unknown reward functions {unknown}; choose from {', '.join(REWARD_NAMES)}")
    if tb_args.tool_protocol not in TOOL_PROTOCOLS:
        parser.error(f"--tool_protocol {tb_args.tool_protocol!r}: choose from {', '.join(TOOL_PROTOCOLS)}")
    if tb_args.tools and len(tb_args.domains) != 1:
        parser.error("--tools restricts one domain's tools: give exactly one --domains")
    if grpo_args.reward_weights is not None and len(grpo_args.reward_weights) != len(tb_args.rewards):
        parser.error(f"--reward_weights has {len(grpo_args.reward_weights)} values for {len(tb_args.rewards)} --rewards")
    return tb_args, grpo_args, model_args


def family_map(args: ThinkingboxArguments) -> dict[str, list[str]] | None:
    if not args.families:
        return None
    out: dict[str, list[str]] = {}
    for item in args.families:
        domain, sep, code = item.partition(":")
        if not sep or domain not in args.domains:
            raise SystemExit(f"--families item '{item}' must be DOMAIN:CODE with DOMAIN among --domains {args.domains}")
        out.setdefault(domain, []).append(code)
    return out


def reward_functions(names: list[str]) -> list[Any]:
    from thinkingbox_env.integrations import trl as tb_trl

    return [getattr(tb_trl, f"reward_{name}") for name in names]


def rubric_judge(args: ThinkingboxArguments) -> Any:
    """The episodes' rubric judge, when the run names one (model or endpoint); else None."""
    if not (args.judge_model or args.judge_base_url):
        return None
    from thinkingbox_env.judging.judge import RubricJudge

    return RubricJudge(model=args.judge_model, base_url=args.judge_base_url)


def environment_factory(args: ThinkingboxArguments, judge: Any = None) -> Any:
    """One class for a single domain; ``{domain: class}`` when the run mixes domains (rows name theirs)."""
    from thinkingbox_env.integrations.trl import environment_class, environment_factories

    if len(args.domains) == 1:
        return environment_class(args.domains[0], own_reward=False, tools=args.tools or None, judge=judge)
    return environment_factories(args.domains, own_reward=False, judge=judge)


def grpo_dataset(args: ThinkingboxArguments, judge: bool = False) -> Any:
    from thinkingbox_env.integrations.trl import build_grpo_dataset

    ds = build_grpo_dataset(args.domains, args.variants_per_family, args.dataset_seed, family_map(args), args.include_policy,
                            judge=judge, tools=list(args.tools) or None)
    return ds.remove_columns(["environment"]) if len(args.domains) == 1 else ds


def peft_config(model_args: Any) -> Any:
    from trl import get_peft_config

    return get_peft_config(model_args)


def load_tokenizer(model_args: Any, tool_protocol: str = "auto") -> Any:
    """The model's tokenizer with the tool protocol chosen, stated and applied, or a stop that says why.

    This runs before the weights load and before any warm-start step: TRL would refuse a
    template that cannot carry tool calls only when GRPO starts, after the warm start ran.
    """
    from transformers import AutoTokenizer

    from thinkingbox_env.agents.tool_protocol import ToolProtocolError, prepare_tokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_args.model_name_or_path, revision=model_args.model_revision)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    try:
        protocol = prepare_tokenizer(tokenizer, tool_protocol)
    except ToolProtocolError as exc:
        raise SystemExit(f"training/grpo.py: {model_args.model_name_or_path}: {exc}") from None
    print(f"{model_args.model_name_or_path}: {protocol.statement}", file=sys.stderr, flush=True)
    return tokenizer


def load_model(model_args: Any, tool_protocol: str = "auto") -> tuple[Any, Any]:
    import torch
    from transformers import AutoModelForCausalLM

    tokenizer = load_tokenizer(model_args, tool_protocol)
    dtype = model_args.dtype if model_args.dtype in (None, "auto") else getattr(torch, model_args.dtype)
    model = AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path, revision=model_args.model_revision,
                                                 dtype=dtype or "auto", attn_implementation=model_args.attn_implementation)
    return model, tokenizer


def warm_start(args: ThinkingboxArguments, grpo_args: Any, model: Any, tokenizer: Any, peft: Any) -> Any:
    """Supervised steps on oracle conversations of train variants, so the model emits tool calls before GRPO."""
    from trl import SFTConfig, SFTTrainer

    from thinkingbox_env.integrations.trl import build_sft_dataset

    seed = args.dataset_seed + 1 if args.sft_dataset_seed is None else args.sft_dataset_seed
    data = build_sft_dataset(args.domains, args.sft_variants_per_family, seed, family_map(args),
                             args.include_policy, args.tools or None)
    shared = {k: getattr(grpo_args, k) for k in ("use_cpu", "bf16", "fp16", "gradient_checkpointing", "seed", "report_to")}
    sft_args = SFTConfig(output_dir=str(Path(grpo_args.output_dir) / "sft"), max_steps=args.sft_max_steps,
                         learning_rate=args.sft_learning_rate, per_device_train_batch_size=args.sft_batch_size,
                         lr_scheduler_type=args.sft_lr_scheduler_type,
                         assistant_only_loss=args.sft_assistant_only_loss, max_length=None, save_strategy="no",
                         logging_steps=grpo_args.logging_steps,
                         **shared)
    template = tokenizer.chat_template
    tokenizer.chat_template = _training_template(tokenizer) or template
    trainer = SFTTrainer(model=model, args=sft_args, train_dataset=data, processing_class=tokenizer, peft_config=peft)
    trainer.train()
    tokenizer.chat_template = template  # GRPO renders prompts with the model's own template
    model = trainer.model
    if peft is not None:
        model = model.merge_and_unload()  # GRPO puts a fresh adapter on the warmed-up weights
    return model


def _training_template(tokenizer: Any) -> str | None:
    """TRL's training variant of a known chat template (marks assistant turns for assistant-only loss), if any."""
    try:
        from trl.chat_template_utils import get_training_chat_template

        return get_training_chat_template(tokenizer)
    except Exception:  # noqa: BLE001 - templates TRL does not know keep their own
        return None


def eval_config(args: ThinkingboxArguments, checkpoint: str, seed: int) -> Any:
    """The evaluation of a checkpoint: the local transformers agent, in the protocol it was trained in."""
    from thinkingbox_env.agents.openai_chat import SamplingConfig
    from thinkingbox_env.eval.config import EndpointConfig, EvalConfig

    return EvalConfig(agent="transformers", agent_endpoint=EndpointConfig(model=checkpoint),
                      sampling=SamplingConfig(max_tokens=args.eval_max_new_tokens), seed=seed,
                      protocol="customer-tool", include_policy=args.include_policy)


def evaluate(args: ThinkingboxArguments, checkpoint: str, output: Path, seed: int) -> Any:
    """The final checkpoint on frozen test tasks through the evaluation library, in the training protocol.

    Returns the run's summary; ``thinkingbox agg OUTPUT`` gives the full metrics.
    """
    from thinkingbox_env.eval import evaluate as run_evaluation
    from thinkingbox_env.eval import select_tasks

    tasks = select_tasks(args.eval_tasks, split="test")
    summary = run_evaluation(tasks, eval_config(args, checkpoint, seed), out=output, trials=args.eval_trials,
                             resume=True, concurrency=1)
    logger.info("evaluation of %s: %d trials run (%d kept), pass@1 %.3f, system errors %d -> %s", checkpoint,
                summary.planned, summary.kept, summary.pass_rate, summary.system_errors, output)
    return summary


def prepare_model(args: ThinkingboxArguments, grpo_args: Any, model_args: Any) -> tuple[Any, Any, Any]:
    """The model to run GRPO on (warm-started if asked), its tokenizer and the LoRA config (or None)."""
    model, tokenizer = load_model(model_args, args.tool_protocol)
    peft = peft_config(model_args)
    if args.sft_variants_per_family > 0:
        model = warm_start(args, grpo_args, model, tokenizer, peft)
    return model, tokenizer, peft


def grpo_trainer(args: ThinkingboxArguments, grpo_args: Any, model: Any, tokenizer: Any, peft: Any) -> Any:
    from trl import GRPOTrainer

    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    judge = rubric_judge(args)
    return GRPOTrainer(model=model, reward_funcs=reward_functions(args.rewards), args=grpo_args,
                       train_dataset=grpo_dataset(args, judge=judge is not None), processing_class=tokenizer,
                       environment_factory=environment_factory(args, judge), peft_config=peft)


def finish(args: ThinkingboxArguments, grpo_args: Any, trainer: Any, tokenizer: Any, peft: Any) -> Path:
    """Save the final checkpoint (LoRA merged) and, if asked, evaluate it on test tasks; return its folder.

    Under ``accelerate launch`` every process gets here: ``save_model`` gathers sharded weights,
    and only the main process writes files and runs the evaluation.
    """
    final = Path(grpo_args.output_dir) / "final"
    main_process = trainer.accelerator.is_main_process
    if peft is None:
        trainer.save_model(str(final))
    elif main_process:
        trainer.model.merge_and_unload().save_pretrained(final)  # the evaluation and vLLM load a plain checkpoint
    if main_process:
        tokenizer.save_pretrained(final)
    trainer.accelerator.wait_for_everyone()
    if args.eval_tasks and main_process:
        evaluate(args, str(final), Path(grpo_args.output_dir) / "eval.jsonl", grpo_args.seed)
    return final


def train(args: ThinkingboxArguments, grpo_args: Any, model_args: Any) -> Any:
    model, tokenizer, peft = prepare_model(args, grpo_args, model_args)
    trainer = grpo_trainer(args, grpo_args, model, tokenizer, peft)
    trainer.train(resume_from_checkpoint=grpo_args.resume_from_checkpoint)
    finish(args, grpo_args, trainer, tokenizer, peft)
    return trainer


def main(argv: list[str] | None = None) -> int:
    from thinkingbox_env.extras import require_train_extra

    require_train_extra("training/grpo.py")
    tb_args, grpo_args, model_args = parse_args(argv)
    train(tb_args, grpo_args, model_args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
