"""A Qwen3-architecture model and tokenizer built locally, for tests and smoke runs.

Nothing can be downloaded in CI or on an air-gapped GPU box, yet the training path
(chat template with tools, tool-call parsing, SFT, GRPO) must run for real. This
builds a byte-level BPE tokenizer trained on the conversations it will see, gives it
the Qwen3 chat templates TRL ships (they render tools and tool calls and mark the
assistant turns for ``assistant_only_loss``), and a random-init ``Qwen3ForCausalLM``
of any size from a config.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

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


def _byte_level_bpe() -> Any:
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers

    tok = Tokenizer(models.BPE())
    # apart from values, no word splitting: merges may span spaces and punctuation, so the repeated
    # JSON of tool schemas and results compresses into few tokens and a tiny model trains on short sequences
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(_VALUE), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
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


def train_tokenizer(texts: list[str], vocab_size: int = 2000) -> Any:
    """A byte-level BPE tokenizer with Qwen3's special tokens and chat template, trained on ``texts``."""
    from tokenizers import pre_tokenizers, trainers

    bpe = _byte_level_bpe()
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
