"""A Qwen3-architecture model and tokenizer built locally, for tests and smoke runs.

Nothing can be downloaded in CI or on an air-gapped GPU box, yet the training path
(chat template with tools, tool-call parsing, SFT, GRPO) must run for real. This
builds a byte-level BPE tokenizer trained on the conversations it will see, gives it
the Qwen3 chat templates TRL ships (they render tools and tool calls and mark the
assistant turns for ``assistant_only_loss``), and a random-init ``Qwen3ForCausalLM``
of any size from a config.

``python -m thinkingbox_env.integrations.tiny_qwen --config CONFIG.yaml FOLDER`` saves such a
model, like a hub model, with its tokenizer fitted to the warm-start conversations the
training config names (domains, families, tools, policy, variants and seed), so that a
CPU training run (``training/configs/tiny_cpu.yaml``) needs no download.
"""

from __future__ import annotations

import argparse
import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>",
                  "<tool_response>", "</tool_response>", "<think>", "</think>"]


def qwen3_chat_templates() -> tuple[str, str]:
    """TRL's Qwen3 templates: the inference one and the training one (with generation markers)."""
    import trl

    folder = Path(trl.__file__).parent / "chat_templates"
    return (folder / "qwen3.jinja").read_text(), (folder / "qwen3_training.jinja").read_text()


# Runs holding a digit (emails, ids, amounts, dates) are pieces of their own, so a value is
# tokenized the same wherever it appears and a model can copy it from a tool result or the
# customer's answer into a call.
_VALUE = r"(?=[A-Za-z0-9._@+-]*[0-9])[A-Za-z0-9_@+-]+(?:\.[A-Za-z0-9_@+-]+)*"


# How the characters of a value are cut into pieces before BPE merges them (train_tokenizer):
# - "whole": the value is one piece; merges fitted to the warm start can make a seen value one token,
#   so an unseen value is a string of pieces the model has rarely seen.
# - "characters": every character up to the value's last digit is a piece; unseen values are made of
#   trained tokens, but a digit token recurs all over a conversation, so copying a value by matching
#   the token before it (what an induction head does) is ambiguous at every step.
# - "chunks": letter runs, digit groups of up to three and single punctuation marks, as the
#   tokenizers of pretrained models cut numbers; pieces are trained, sequences are a third shorter
#   than with characters, and a chunk rarely recurs in one conversation outside the value it is part of.
VALUE_PIECES = ("whole", "characters", "chunks")
_IN_VALUE = r"(?=[A-Za-z0-9._@+-]*[0-9])"  # followed, within the value, by a digit
_PIECE_OF_VALUE = {
    "characters": rf"[A-Za-z0-9._@+-]{_IN_VALUE}|[0-9]",
    "chunks": rf"[A-Za-z]+{_IN_VALUE}|[0-9]{{1,3}}|[._@+-]{_IN_VALUE}",
}


def _byte_level_bpe(value_pieces: str = "whole") -> Any:
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers

    if value_pieces not in VALUE_PIECES:
        raise ValueError(f"value_pieces must be one of {VALUE_PIECES}, got {value_pieces!r}")
    tok = Tokenizer(models.BPE())
    # apart from values, no word splitting: merges may span spaces and punctuation, so the repeated
    # JSON of tool schemas and results compresses into few tokens and a tiny model trains on short sequences.
    steps: list[Any] = [pre_tokenizers.Split(Regex(_VALUE), behavior="isolated")]
    if value_pieces in _PIECE_OF_VALUE:
        steps.append(pre_tokenizers.Split(Regex(_PIECE_OF_VALUE[value_pieces]), behavior="isolated"))
    steps.append(pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False))
    tok.pre_tokenizer = pre_tokenizers.Sequence(steps)
    tok.decoder = decoders.ByteLevel()
    return tok


def _wrap(tokenizer_object: Any, template: str) -> Any:
    from transformers import PreTrainedTokenizerFast

    tok = PreTrainedTokenizerFast(tokenizer_object=tokenizer_object, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                  additional_special_tokens=SPECIAL_TOKENS[3:])
    tok.chat_template = template
    tok.padding_side = "left"
    return tok


def render_conversations(rows: list[dict[str, Any]]) -> list[str]:
    """The text of SFT rows (``messages`` + JSON ``tools``) under the Qwen3 template, to train the BPE on."""
    template, _ = qwen3_chat_templates()
    bootstrap = _byte_level_bpe()
    bootstrap.add_special_tokens(SPECIAL_TOKENS)
    tok = _wrap(bootstrap, template)
    texts = []
    for row in rows:
        tools = json.loads(row["tools"]) if isinstance(row.get("tools"), str) else row.get("tools")
        texts.append(tok.apply_chat_template(row["messages"], tools=tools, tokenize=False))
    return texts


def train_tokenizer(texts: list[str], vocab_size: int = 2000, value_pieces: str = "whole") -> Any:
    """A byte-level BPE tokenizer with Qwen3's special tokens and chat template, trained on ``texts``.

    ``value_pieces`` (one of ``VALUE_PIECES``) says how values (runs holding a digit) are cut.
    """
    from tokenizers import pre_tokenizers, trainers

    bpe = _byte_level_bpe(value_pieces)
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIAL_TOKENS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    bpe.train_from_iterator(texts, trainer)
    template, _ = qwen3_chat_templates()
    return _wrap(bpe, template)


def tiny_qwen3(tokenizer: Any, hidden_size: int = 64, num_layers: int = 2, num_heads: int = 4, num_kv_heads: int = 2,
               intermediate_size: int | None = None, max_positions: int = 8192, seed: int = 0) -> Any:
    """A random-init Qwen3ForCausalLM sized by the arguments, matching ``tokenizer``'s vocabulary."""
    import torch
    from transformers import Qwen3Config, Qwen3ForCausalLM

    torch.manual_seed(seed)
    config = Qwen3Config(
        vocab_size=len(tokenizer), hidden_size=hidden_size, intermediate_size=intermediate_size or 2 * hidden_size,
        num_hidden_layers=num_layers, num_attention_heads=num_heads, num_key_value_heads=num_kv_heads,
        head_dim=hidden_size // num_heads, max_position_embeddings=max_positions, tie_word_embeddings=True,
        pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id, bos_token_id=None,
    )
    return Qwen3ForCausalLM(config)


def save_tiny_checkpoint(folder: str | Path, *, domains: Sequence[str] = ("retail",),
                         families: dict[str, list[str]] | None = None, tools: list[str] | None = None,
                         include_policy: bool = True, variants: int = 2, seed: int = 0, vocab: int = 1000,
                         hidden: int = 32, layers: int = 1) -> Path:
    """A random-init Qwen3 and a BPE tokenizer fitted to oracle conversations of train variants, saved like a hub model.

    The conversations are those a warm start with the same domains, families, tools,
    policy, variant count and seed trains on, so the tokenizer covers every value the
    model is asked to copy.
    """
    from .trl import build_sft_dataset

    if variants < 1 or vocab < 300 or hidden < 8 or layers < 1:
        raise ValueError(f"variants >= 1, vocab >= 300, hidden >= 8 and layers >= 1 are needed; got {variants}, "
                         f"{vocab}, {hidden}, {layers}")
    corpus = build_sft_dataset(list(domains), variants, seed=seed, families=families, include_policy=include_policy,
                               tools=tools)
    tokenizer = train_tokenizer(render_conversations(list(corpus)), vocab_size=vocab)
    model = tiny_qwen3(tokenizer, hidden_size=hidden, num_layers=layers)
    out = Path(folder)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    log.info("saved a Qwen3 of %d parameters and a %d-token vocabulary to %s", model.num_parameters(), len(tokenizer), out)
    return out


def _families(items: list[str], domains: list[str]) -> dict[str, list[str]] | None:
    """``DOMAIN:CODE`` items (the training config's form) by domain; None (every family) when there are none."""
    if not items:
        return None
    out: dict[str, list[str]] = {}
    for item in items:
        domain, sep, code = str(item).partition(":")
        if not sep or domain not in domains or not code:
            raise ValueError(f"families item {item!r} must be DOMAIN:CODE with DOMAIN among {domains}")
        out.setdefault(domain, []).append(code)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Save a tiny checkpoint for the warm start of a training config (the model a CPU run starts from)."""
    import yaml

    from ..extras import require_train_extra

    require_train_extra("python -m thinkingbox_env.integrations.tiny_qwen")  # a line naming the extra, not torch's error

    parser = argparse.ArgumentParser(
        prog="python -m thinkingbox_env.integrations.tiny_qwen",
        description="Save a random-init Qwen3 of about a million parameters, with a tokenizer fitted to the "
                    "warm-start conversations of a training config, for a training run on CPU.",
        epilog="example: python -m thinkingbox_env.integrations.tiny_qwen --config training/configs/tiny_cpu.yaml runs/tiny-qwen")
    parser.add_argument("folder", help="where to save the model and tokenizer (pass it as --model_name_or_path)")
    parser.add_argument("--config", required=True, help="the training config whose warm start the tokenizer is fitted to")
    parser.add_argument("--vocab", type=int, default=4000, help="tokenizer vocabulary size (default: %(default)s)")
    parser.add_argument("--hidden", type=int, default=128, help="hidden size (default: %(default)s)")
    parser.add_argument("--layers", type=int, default=2, help="decoder layers (default: %(default)s)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    path = Path(args.config)
    if not path.is_file():
        parser.error(f"no such config: {path}")
    config = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    domains = list(config.get("domains") or ["retail"])
    try:
        save_tiny_checkpoint(args.folder, domains=domains, families=_families(list(config.get("families") or []), domains),
                             tools=config.get("tools") or None, include_policy=bool(config.get("include_policy", True)),
                             variants=int(config.get("sft_variants_per_family") or config.get("variants_per_family") or 8),
                             seed=int(config.get("sft_dataset_seed", 0)), vocab=args.vocab, hidden=args.hidden,
                             layers=args.layers)
    except ValueError as exc:
        parser.error(str(exc))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
