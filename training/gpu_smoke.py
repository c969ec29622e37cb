"""GRPO smoke run: a random-init Qwen3 of a chosen size against retail train variants.

Measures what a GPU run costs and how much of it is the environment: steps per
second, and the share of the training wall time spent inside Thinkingbox (episode
reset, tool calls, the simulated customer, the verdict). A short supervised warm
start (``--sft-steps``) makes the model call tools, so that the measured share
includes real tool traffic. Nothing is downloaded; generation is transformers'.
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import time
from typing import Any

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

FAMILY_TOOLS = {"ST004": ["get_customer_profile", "search_tickets", "get_shipment", "update_ticket"]}


class EnvClock:
    """Wall time spent in the environment class's entry points, summed over every instance."""

    seconds = 0.0
    calls = 0

    @classmethod
    def timed(cls, fn: Any) -> Any:
        @functools.wraps(fn)  # keeps the name, docstring and annotations TRL builds the tool schema from
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                cls.seconds += time.perf_counter() - started
                cls.calls += 1

        return wrapper


def timed_environment(domain: str, tools: list[str]) -> type:
    """The domain's TRL environment class with every entry point on the clock (same tools, same schemas)."""
    from thinkingbox_env.integrations.trl import environment_class

    base = environment_class(domain, own_reward=False, tools=tools)
    namespace = {name: EnvClock.timed(getattr(base, name)) for name in (*base.tool_names, "reset", "_finish")}
    cls = type(f"Timed{base.__name__}", (base,), namespace)
    cls.tool_names = base.tool_names
    return cls


def main(argv: list[str] | None = None) -> int:
    from thinkingbox_env.extras import require_train_extra

    require_train_extra("training/gpu_smoke.py")
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--hidden", type=int, default=1024, help="hidden size (1024 with 12 layers: about 0.16B parameters)")
    p.add_argument("--layers", type=int, default=12)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--kv-heads", type=int, default=8)
    p.add_argument("--vocab", type=int, default=8000, help="BPE vocabulary trained on the task conversations")
    p.add_argument("--family", default="ST004", choices=sorted(FAMILY_TOOLS))
    p.add_argument("--sft-steps", type=int, default=100, help="warm-start steps so that the model calls tools (0: none)")
    p.add_argument("--steps", type=int, default=5, help="GRPO steps")
    p.add_argument("--generations", type=int, default=8, help="completions per prompt (one prompt per step)")
    p.add_argument("--completion-length", type=int, default=256)
    p.add_argument("--cpu", action="store_true", help="run on CPU (a check of the script, not a measurement)")
    p.add_argument("--output", help="also write the JSON result to this file")
    args = p.parse_args(argv)

    import torch
    from trl import GRPOConfig, GRPOTrainer, SFTConfig, SFTTrainer

    from thinkingbox_env.integrations import trl as tb_trl
    from thinkingbox_env.integrations.tiny_qwen import qwen3_chat_templates, render_conversations, tiny_qwen3, train_tokenizer

    cuda = torch.cuda.is_available() and not args.cpu
    if not cuda and not args.cpu:
        raise SystemExit("no CUDA GPU here; pass --cpu to check the script on CPU")
    tools = FAMILY_TOOLS[args.family]
    families = {"retail": [args.family]}
    corpus = tb_trl.build_sft_dataset(["retail"], 32, seed=1, families=families, include_policy=False, tools=tools)
    tokenizer = train_tokenizer(render_conversations(list(corpus)), args.vocab)
    model = tiny_qwen3(tokenizer, hidden_size=args.hidden, num_layers=args.layers, num_heads=args.heads, num_kv_heads=args.kv_heads,
                       intermediate_size=3 * args.hidden)
    params = sum(t.numel() for t in model.parameters())
    common = {"use_cpu": not cuda, "bf16": cuda, "gradient_checkpointing": False, "report_to": [], "save_strategy": "no",
              "logging_steps": 1, "disable_tqdm": True, "seed": 0}
    sft_seconds = 0.0
    if args.sft_steps:
        inference, training = qwen3_chat_templates()
        tokenizer.chat_template = training
        started = time.perf_counter()
        SFTTrainer(model=model, train_dataset=corpus, processing_class=tokenizer,
                   args=SFTConfig(output_dir="/tmp/thinkingbox_smoke_sft", max_steps=args.sft_steps, per_device_train_batch_size=8,
                                  learning_rate=1e-3, assistant_only_loss=True, max_length=None, **common)).train()
        sft_seconds = time.perf_counter() - started
        tokenizer.chat_template = inference

    data = tb_trl.build_grpo_dataset(["retail"], max(4, args.steps), seed=2, families=families,
                                     include_policy=False, tools=tools).remove_columns(["environment"])
    config = GRPOConfig(output_dir="/tmp/thinkingbox_smoke_grpo", max_steps=args.steps, per_device_train_batch_size=args.generations,
                        num_generations=args.generations, max_completion_length=args.completion_length, learning_rate=1e-5,
                        temperature=1.0, chat_template_kwargs={"enable_thinking": False}, max_tool_calling_iterations=8, **common)
    trainer = GRPOTrainer(model=model, reward_funcs=[tb_trl.reward_verdict, tb_trl.reward_dialogue], args=config, train_dataset=data,
                          processing_class=tokenizer, environment_factory=timed_environment("retail", tools))
    EnvClock.seconds, EnvClock.calls = 0.0, 0
    started = time.perf_counter()
    trainer.train()
    seconds = time.perf_counter() - started
    logs = [h for h in trainer.state.log_history if "reward" in h]
    result = {
        "device": torch.cuda.get_device_name(0) if cuda else "cpu",
        "torch": torch.__version__,
        "parameters": params,
        "sft_steps": args.sft_steps,
        "sft_seconds": round(sft_seconds, 2),
        "grpo_steps": args.steps,
        "generations_per_step": args.generations,
        "completion_length": args.completion_length,
        "grpo_seconds": round(seconds, 2),
        "steps_per_second": round(args.steps / seconds, 4),
        "seconds_per_step": round(seconds / args.steps, 3),
        "env_seconds": round(EnvClock.seconds, 3),
        "env_calls": EnvClock.calls,
        "env_share": round(EnvClock.seconds / seconds, 4),
        "tool_calls_per_completion": round(sum(h.get("tools/call_frequency", 0.0) for h in logs) / max(1, len(logs)), 3),
        "mean_completion_tokens": round(sum(h.get("completions/mean_length", 0.0) for h in logs) / max(1, len(logs)), 1),
    }
    text = json.dumps(result)
    print(text, flush=True)
    if args.output:
        with open(args.output, "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
