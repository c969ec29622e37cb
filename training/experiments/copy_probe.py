"""Can a model of a given size copy a value it has never seen? Measured in minutes, not in a full run.

A held-out variant is solvable only if the model copies the customer's email and the ids
in tool results into its next calls. Greedy evaluation of a warm-started model says only
pass or fail; these two measurements say how close a model is:

- ``induction``: sequences of random tokens in which one stretch repeats later. The loss is
  on the repeat, which nothing but copying predicts, so copy accuracy stays at chance until
  the model forms an induction circuit and then jumps (the step of the jump is what a
  model size and learning rate are compared on).
- ``conversations``: the supervised warm start of a shaping config (same conversations,
  tokenizer and model), with the accuracy of every assistant token of held-out variants'
  oracle conversations, predicted with the true conversation so far, and of the assistant
  tokens that hold a digit (the ids and emails the model must copy). ``--induction_steps``
  runs the induction stage on the same model first.

    python training/experiments/copy_probe.py induction --hidden 128 --layers 2 --vocab 500 --steps 1500
    python training/experiments/copy_probe.py conversations --config training/experiments/shaping_cpu.yaml --steps 800
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

log = logging.getLogger("thinkingbox.training.copy_probe")
HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))


def induction_batch(rng: random.Random, pool: list[int], size: int, length: int = 128, span: int = 12,
                    ) -> list[tuple[list[int], list[int]]]:
    """``size`` random sequences, each with the stretch at ``s`` repeated at ``t``; the mask marks the predictable part.

    The first token of the repeat is not marked: nothing in the sequence says where a repeat starts.
    """
    rows = []
    for _ in range(size):
        ids = [rng.choice(pool) for _ in range(length)]
        s = rng.randint(0, length // 3)
        t = rng.randint(s + span + 4, length - span)
        ids[t:t + span] = ids[s:s + span]
        rows.append((ids, [int(t < i < t + span) for i in range(length)]))
    return rows


def _tensors(rows: list[tuple[list[int], list[int]]], pad: int, device: Any = "cpu") -> tuple[Any, Any, Any]:
    """Right-padded ids, attention mask and labels (-100 where the mask is 0), on ``device``."""
    import torch

    width = max(len(ids) for ids, _ in rows)
    ids = torch.full((len(rows), width), pad)
    attention = torch.zeros((len(rows), width), dtype=torch.long)
    labels = torch.full((len(rows), width), -100)
    for k, (seq, mask) in enumerate(rows):
        ids[k, :len(seq)] = torch.tensor(seq)
        attention[k, :len(seq)] = 1
        labels[k, :len(seq)] = torch.where(torch.tensor(mask).bool(), torch.tensor(seq), -100)
    return ids.to(device), attention.to(device), labels.to(device)


def accuracy(model: Any, rows: list[tuple[list[int], list[int]]], pad: int, digit: Any | None = None,
             batch: int = 8) -> dict[str, float]:
    """Share of marked tokens predicted right from the true prefix; with ``digit``, also of those holding a digit."""
    import torch

    right = total = digit_right = digit_total = whole = 0
    model.eval()
    with torch.no_grad():
        for i in range(0, len(rows), batch):
            ids, attention, labels = _tensors(rows[i:i + batch], pad, model.device)
            predicted = model(input_ids=ids, attention_mask=attention).logits[:, :-1].argmax(-1)
            target = labels[:, 1:]
            marked = target != -100
            hit = predicted == target
            right += int(hit[marked].sum())
            total += int(marked.sum())
            whole += sum(bool((hit[k] | ~marked[k]).all()) for k in range(len(target)))
            if digit is not None:
                holds = marked & digit.to(target.device)[target.clamp(min=0)]
                digit_right += int(hit[holds].sum())
                digit_total += int(holds.sum())
    model.train()
    out = {"tokens": right / max(total, 1), "all_right": whole / max(len(rows), 1)}
    if digit is not None:
        out["digit_tokens"] = digit_right / max(digit_total, 1)
    return out


def _train(model: Any, batches: Any, steps: int, lr: float, every: int, measure: Any, pad: int,
           stage: str) -> list[dict[str, Any]]:
    """AdamW at a constant rate with gradients clipped at 1 (SFTTrainer's defaults); a measurement every ``every`` steps."""
    import torch

    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    records = []
    started = time.process_time()
    for step in range(1, steps + 1):
        ids, attention, labels = _tensors(next(batches), pad, model.device)
        loss = model(input_ids=ids, attention_mask=attention, labels=labels).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad()
        if step % every == 0 or step == steps:
            record = {"stage": stage, "step": step, "loss": round(loss.item(), 4),
                      "cpu_s_per_step": round((time.process_time() - started) / step, 3), **measure()}
            records.append(record)
            log.info(json.dumps(record))
    return records


def induction_stage(model: Any, tokenizer: Any, steps: int, batch: int, lr: float, vocab: int = 0, seed: int = 0,
                    every: int = 100, extra: Any = None) -> list[dict[str, Any]]:
    """Train ``model`` on induction sequences; copy accuracy on 64 fixed sequences (and ``extra()``) every ``every`` steps.

    ``vocab`` > 0 draws the sequences from the lowest non-special token ids only (the byte
    alphabet and the first merges): the circuit does not depend on which tokens it copies.
    """
    special = set(tokenizer.all_special_ids)
    pool = [i for i in range(len(tokenizer)) if i not in special]
    if vocab:
        pool = pool[:vocab]
    rng = random.Random(seed)
    held = induction_batch(random.Random(seed + 1), pool, 64)

    def batches() -> Any:
        while True:
            yield induction_batch(rng, pool, batch)

    def measure() -> dict[str, Any]:
        return {"copy": accuracy(model, held, tokenizer.pad_token_id), **(extra() if extra else {})}

    return _train(model, batches(), steps, lr, every, measure, tokenizer.pad_token_id, "induction")


def run_induction(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The induction measurement on a random-init Qwen3 with a vocabulary of ``--vocab`` tokens."""
    import torch
    from transformers import Qwen3Config, Qwen3ForCausalLM

    torch.manual_seed(args.seed)
    config = Qwen3Config(vocab_size=args.vocab + 1, hidden_size=args.hidden, intermediate_size=2 * args.hidden,
                         num_hidden_layers=args.layers, num_attention_heads=args.heads, num_key_value_heads=args.kv_heads,
                         head_dim=args.hidden // args.heads, max_position_embeddings=512, tie_word_embeddings=True,
                         pad_token_id=args.vocab)
    model = Qwen3ForCausalLM(config)

    class Vocabulary:  # the token ids the sequences are drawn from; the last id pads
        all_special_ids = [args.vocab]
        pad_token_id = args.vocab

        def __len__(self) -> int:
            return args.vocab + 1

    return induction_stage(model, Vocabulary(), args.steps, args.batch, args.lr, seed=args.seed, every=args.every)


def run_conversations(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The warm start of a shaping config, measured on held-out and seen conversations as it trains."""
    import shaping
    import shaping_config
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from thinkingbox_env.integrations.trl import build_sft_dataset

    cfg = shaping_config.load_config(args.config)
    torch.manual_seed(args.seed)
    conversations = shaping.warm_start_conversations(cfg)
    with tempfile.TemporaryDirectory() as folder:
        base = shaping.build_base_model(cfg, Path(folder), conversations)
        model = AutoModelForCausalLM.from_pretrained(base)
        tokenizer = AutoTokenizer.from_pretrained(base)
    tokenizer.chat_template = shaping._grpo_module()._training_template(tokenizer) or tokenizer.chat_template

    def encode(rows: Any) -> list[tuple[list[int], list[int]]]:
        out = []
        for row in rows:
            enc: Any = tokenizer.apply_chat_template(row["messages"], tools=json.loads(row["tools"]), tokenize=True,
                                                return_dict=True, return_assistant_tokens_mask=True)
            out.append((list(enc["input_ids"]), list(enc["assistant_masks"])))
        return out

    train = encode(conversations)
    trained = {tuple(ids) for ids, _ in train}
    heldout_rows = build_sft_dataset([cfg.domain], args.heldout, cfg.eval.heldout_seed, {cfg.domain: list(cfg.families)},
                                     cfg.include_policy, cfg.tools or None)
    heldout = [row for row in encode(heldout_rows) if tuple(row[0]) not in trained]
    seen = train[:args.heldout]
    digit = torch.tensor([any(ch.isdigit() for ch in tokenizer.decode([i])) for i in range(len(tokenizer))])
    pad = tokenizer.pad_token_id

    def measure() -> dict[str, Any]:
        return {"heldout": accuracy(model, heldout, pad, digit), "seen": accuracy(model, seen, pad, digit)}

    records = (induction_stage(model, tokenizer, args.induction_steps, args.batch, args.lr, args.induction_vocab,
                               args.seed, args.every, measure) if args.induction_steps else [])
    rng = random.Random(args.seed)
    # the loss of the training rows: the assistant's tokens only, or every token (the customer's answers and the
    # tool results repeat the email and ids said before, so they are copies too); measured on the assistant's either way
    assistant_only = cfg.warm_start.assistant_only_loss if args.loss == "config" else args.loss == "assistant"
    fit = train if assistant_only else [(ids, [1] * len(ids)) for ids, _ in train]

    def batches() -> Any:
        order: list[int] = []
        while True:
            if len(order) < cfg.warm_start.batch_size:
                order += rng.sample(range(len(fit)), len(fit))
            yield [fit[order.pop()] for _ in range(cfg.warm_start.batch_size)]

    steps = args.steps or cfg.warm_start.max_steps
    records += _train(model, batches(), steps, cfg.warm_start.learning_rate, args.every, measure, pad, "conversations")
    return records


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=["induction", "conversations"])
    parser.add_argument("--config", default=str(HERE / "shaping_cpu.yaml"), help="shaping config (conversations)")
    parser.add_argument("--hidden", type=int, default=128, help="induction: model width")
    parser.add_argument("--layers", type=int, default=2, help="induction: layers")
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--kv_heads", type=int, default=2)
    parser.add_argument("--vocab", type=int, default=500, help="induction: tokens the sequences are drawn from")
    parser.add_argument("--steps", type=int, default=0,
                        help="training steps (induction; conversations: 0 = the config's warm_start.max_steps)")
    parser.add_argument("--induction_steps", type=int, default=0, help="conversations: induction steps first")
    parser.add_argument("--induction_vocab", type=int, default=0,
                        help="conversations: draw induction sequences from this many tokens (0: the whole vocabulary)")
    parser.add_argument("--loss", choices=["config", "assistant", "all"], default="config",
                        help="conversations: train on the assistant's tokens or on every token (default: the config's "
                             "warm_start.assistant_only_loss)")
    parser.add_argument("--batch", type=int, default=32, help="induction sequences per step")
    parser.add_argument("--lr", type=float, default=1e-3, help="induction learning rate")
    parser.add_argument("--every", type=int, default=100, help="measure every N steps")
    parser.add_argument("--heldout", type=int, default=32, help="conversations: held-out (and seen) conversations measured")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: as the process has them)")
    parser.add_argument("--out", help="write the measurements to this JSON file")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if args.mode == "induction" and args.steps < 1:
        parser.error("induction: give --steps")
    for name in ("every", "batch", "heldout"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1, got {getattr(args, name)}")
    import torch

    # the thread count and the random state are the process's: a caller (a test run, a notebook) gets them back.
    # torch's thread pool is touched only when asked: even setting the count it already has changes the
    # numerics of later work in the process
    previous = torch.get_num_threads()
    with torch.random.fork_rng(devices=[]):
        if args.threads and args.threads != previous:
            torch.set_num_threads(args.threads)
        try:
            records = run_induction(args) if args.mode == "induction" else run_conversations(args)
        finally:
            if torch.get_num_threads() != previous:
                torch.set_num_threads(previous)
    if args.out:
        Path(args.out).write_text(json.dumps({"args": vars(args), "records": records}, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
