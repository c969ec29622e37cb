"""The tool protocol of a model whose chat template knows no tools, on tiny tokenizers and models built here.

The template under test is the shape SmolLM2's has: ChatML that renders ``message['content']`` and
nothing else (tools vanish, a call-only assistant turn breaks it). The realmodel tests run the same
paths on SmolLM2's own weights (tests/training/test_smollm2.py).
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from thinkingbox_env.agents.tool_protocol import (  # noqa: E402 - after the skips
    NATIVE,
    PROMPT,
    PROMPT_TOOLS_TEMPLATE,
    ToolProtocolError,
    apply_tool_protocol,
    choose_tool_protocol,
    prepare_tokenizer,
    probe_template,
)

CONTENT_ONLY = ("{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}"
                "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}")
# a template that does carry tools (schemas, calls with their arguments, results, content None)
WITH_TOOLS = ("{% if tools %}TOOLS:{{ tools | tojson }}\n{% endif %}{% for m in messages %}<|im_start|>{{ m['role'] }}\n"
              "{{ m['content'] or '' }}{% for c in (m['tool_calls'] or []) %}CALL {{ c['function'] | tojson }}{% endfor %}"
              "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
TOOL = {"type": "function", "function": {"name": "get_shipment", "description": "Look a shipment up.",
                                         "parameters": {"type": "object", "properties": {"shipment_id": {"type": "string"}},
                                                        "required": ["shipment_id"]}}}


def char_tokenizer(template: str | None, chatml: bool = True):
    """A character-level tokenizer with ChatML's two markers as single tokens (or without them)."""
    from tokenizers import Tokenizer, decoders, models
    from transformers import PreTrainedTokenizerFast

    chars = [chr(i) for i in range(32, 127)] + ["\n"]
    vocab = {c: i for i, c in enumerate(["<unk>", *chars])}
    backend = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token="<unk>"))
    backend.decoder = decoders.Fuse()
    marks = ["<|im_start|>", "<|im_end|>"] if chatml else ["<s>", "</s>"]
    tok = PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="<unk>", eos_token=marks[1], pad_token=marks[1],
                                  additional_special_tokens=[marks[0]])
    tok.chat_template = template
    return tok


def test_a_content_only_template_is_found_lacking_in_every_part_a_tool_conversation_needs():
    probe = probe_template(char_tokenizer(CONTENT_ONLY))
    assert probe.chatml and probe.has_template
    assert not probe.renders_tools and not probe.renders_calls and not probe.null_content_ok
    assert probe.renders_results  # a tool message's content is content
    assert not probe.supports_tools
    assert probe_template(char_tokenizer(WITH_TOOLS)).supports_tools


def test_auto_keeps_a_template_that_carries_tools_and_gives_the_prompt_protocol_to_one_that_does_not():
    native = char_tokenizer(WITH_TOOLS)
    assert choose_tool_protocol(native).name == NATIVE
    assert prepare_tokenizer(native).name == NATIVE and native.chat_template == WITH_TOOLS  # left as it was
    plain = char_tokenizer(CONTENT_ONLY)
    protocol = prepare_tokenizer(plain)
    assert protocol.name == PROMPT and plain.chat_template == PROMPT_TOOLS_TEMPLATE
    assert "ignores the tool schemas" in protocol.statement and "<tool_call>" in protocol.statement
    # applied once, the choice is stated the same way again (a shared tokenizer, a checkpoint saved with it)
    again = choose_tool_protocol(plain)
    assert again.name == PROMPT and "the checkpoint's chat template is the prompt protocol's" in again.statement


def test_native_is_refused_for_a_template_without_tools_and_a_tokenizer_without_chatml_is_refused_outright():
    with pytest.raises(ToolProtocolError, match="ignores the tool schemas"):
        choose_tool_protocol(char_tokenizer(CONTENT_ONLY), "native")
    with pytest.raises(ToolProtocolError, match="no <\\|im_start\\|>"):
        choose_tool_protocol(char_tokenizer(CONTENT_ONLY, chatml=False))
    with pytest.raises(ToolProtocolError, match="unknown tool protocol"):
        choose_tool_protocol(char_tokenizer(CONTENT_ONLY), "hermes")


def test_the_prompt_protocol_renders_schemas_calls_results_and_null_content_and_reads_its_calls_back():
    tok = char_tokenizer(CONTENT_ONLY)
    apply_tool_protocol(tok, choose_tool_protocol(tok))
    call = {"type": "function", "function": {"name": "get_shipment", "arguments": {"shipment_id": "SH-7"}}}
    messages = [{"role": "system", "content": "You help customers."}, {"role": "user", "content": "Where is it?"},
                {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "name": "get_shipment", "content": '{"status": "in transit"}'},
                {"role": "assistant", "content": "It is in transit."}]
    text = tok.apply_chat_template(messages, tools=[TOOL], tokenize=False)
    assert json.dumps(TOOL) in text.split("<|im_end|>")[0]  # the schema, in the system message
    assert '<tool_call>\n{"name": "get_shipment", "arguments": {"shipment_id": "SH-7"}}\n</tool_call><|im_end|>' in text
    assert '<|im_start|>tool\n{"status": "in transit"}<|im_end|>' in text
    # the assistant's tokens are marked for an assistant-only loss: the call and the closing, nothing else
    enc = tok.apply_chat_template(messages, tools=[TOOL], tokenize=True, return_dict=True, return_assistant_tokens_mask=True)
    marked = tok.decode([i for i, m in zip(enc["input_ids"], enc["assistant_masks"]) if m])
    assert "SH-7" in marked and "It is in transit." in marked and "in transit\"}" not in marked and "Where" not in marked
    # what a model writes in this protocol parses back into the call (the response template TRL uses)
    prefix = tok.apply_chat_template(messages[:2], tools=[TOOL], add_generation_prompt=True, tokenize=True, return_dict=True)
    written = tok.encode('<tool_call>\n{"name": "get_shipment", "arguments": {"shipment_id": "SH-9"}}\n</tool_call><|im_end|>')
    parsed = tok.parse_response(written, prefix=prefix["input_ids"], tools=[TOOL])
    assert parsed["tool_calls"] == [{"type": "function", "function": {"name": "get_shipment", "arguments": {"shipment_id": "SH-9"}}}]


def test_trl_accepts_the_prompt_protocol_it_refuses_the_content_only_template():
    pytest.importorskip("trl")
    from trl.chat_template_utils import is_chat_template_prefix_preserving, supports_tool_calling

    tok = char_tokenizer(CONTENT_ONLY)
    assert not supports_tool_calling(tok)
    prepare_tokenizer(tok)
    assert supports_tool_calling(tok) and is_chat_template_prefix_preserving(tok)


def tiny_llama(folder, template: str):
    """A random-init Llama of a few thousand parameters with the character tokenizer, saved to ``folder``."""
    from transformers import LlamaConfig, LlamaForCausalLM

    tok = char_tokenizer(template)
    config = LlamaConfig(vocab_size=len(tok), hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
                         num_key_value_heads=1, max_position_embeddings=4096, eos_token_id=tok.eos_token_id,
                         pad_token_id=tok.pad_token_id, bos_token_id=tok.eos_token_id)
    model = LlamaForCausalLM(config)
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return model, tok


def test_the_local_agent_takes_the_prompt_protocol_and_records_an_unreadable_call_as_the_model_s(tmp_path):
    torch = pytest.importorskip("torch")
    from thinkingbox_env.agents.transformers_local import TransformersChatAgent

    torch.manual_seed(0)
    model, tok = tiny_llama(tmp_path, CONTENT_ONLY)
    agent = TransformersChatAgent(model.eval(), tok, max_new_tokens=4)
    assert agent.tool_protocol.name == PROMPT
    agent.tools = [TOOL]
    prefix = tok.apply_chat_template([{"role": "user", "content": "hi"}], tools=[TOOL], add_generation_prompt=True,
                                     tokenize=True, return_dict=True)["input_ids"]
    good = agent._parse(tok.encode('<tool_call>\n{"name": "get_shipment", "arguments": {"shipment_id": "SH-1"}}\n</tool_call>'
                                   '<|im_end|>'), prefix)
    assert good["tool_calls"] == [{"name": "get_shipment", "arguments": {"shipment_id": "SH-1"}}]
    bad = agent._parse(tok.encode('<tool_call>\n{"name": "get_shipment", "arguments": {"shipment_id": \n</tool_call><|im_end|>'),
                       prefix)
    assert len(bad["tool_calls"]) == 1 and bad["tool_calls"][0]["name"] is None
    assert "shipment_id" in bad["tool_calls"][0]["arguments"]  # the raw text goes on to the env, which records the error
    # a whole turn on the conversation shape the env sends: a call-only assistant turn (content None) in the history
    action = agent.act({"messages": [
        {"role": "system", "content": "sys"}, {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [{"type": "function", "id": "c1",
                                                              "function": {"name": "get_shipment", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "{}"}]})
    assert action["role"] == "assistant" and agent.calls[-1]["usage"]["output"] <= 4


def test_grpo_stops_before_loading_weights_when_native_is_asked_of_a_template_without_tools(tmp_path, grpo_script):
    tiny_llama(tmp_path, CONTENT_ONLY)
    (tmp_path / "model.safetensors").unlink()  # the stop must come before the weights are read
    _, _, model_args = grpo_script.parse_args(["--model_name_or_path", str(tmp_path), "--output_dir", str(tmp_path / "out"),
                                               "--use_cpu", "true", "--bf16", "false", "--tool_protocol", "native"])
    with pytest.raises(SystemExit, match="cannot carry tool calls .*ignores the tool schemas"):
        grpo_script.load_tokenizer(model_args, "native")


def test_grpo_gives_a_template_without_tools_the_prompt_protocol_and_trl_builds_its_trainer(tmp_path, grpo_script, capsys):
    pytest.importorskip("trl")
    tiny_llama(tmp_path / "init", CONTENT_ONLY)
    tb_args, grpo_args, model_args = grpo_script.parse_args([
        "--model_name_or_path", str(tmp_path / "init"), "--output_dir", str(tmp_path / "out"), "--use_cpu", "true",
        "--bf16", "false", "--domains", "retail", "--families", "retail:ST004", "--tools", "get_customer_profile", "search_tickets", "get_shipment", "update_ticket", "--include_policy", "false",
        "--variants_per_family", "2", "--num_generations", "2", "--per_device_train_batch_size", "2", "--report_to", "none"])
    assert tb_args.tool_protocol == "auto"
    model, tokenizer, peft = grpo_script.prepare_model(tb_args, grpo_args, model_args)
    assert "tool protocol: prompt" in capsys.readouterr().err
    trainer = grpo_script.grpo_trainer(tb_args, grpo_args, model, tokenizer, peft)  # TRL's tool-calling check passes
    assert trainer.processing_class.chat_template == PROMPT_TOOLS_TEMPLATE
    # the same model with its own template is what TRL refuses
    raw = char_tokenizer(CONTENT_ONLY)
    with pytest.raises(ValueError, match="does not support tool calling"):
        grpo_script.grpo_trainer(tb_args, grpo_args, model, raw, peft)
