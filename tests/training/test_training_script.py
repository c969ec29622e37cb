"""training/grpo.py: its options, its YAML configs, and the errors it gives for bad ones."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("trl")

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = sorted((ROOT / "training" / "configs").glob("*.yaml"))


@pytest.fixture
def grpo(grpo_script):
    return grpo_script


def test_help_documents_every_option(grpo):
    out = subprocess.run([sys.executable, str(ROOT / "training" / "grpo.py"), "--help"], capture_output=True, text=True, check=True).stdout
    ours = [f.name for f in dataclasses.fields(grpo.ThinkingboxArguments)]
    trl_options = ["model_name_or_path", "use_peft", "lora_r", "lora_alpha", "use_vllm", "vllm_mode", "vllm_server_base_url",
                   "num_generations", "max_completion_length", "max_tool_calling_iterations", "reward_weights",
                   "chat_template_kwargs", "loss_type", "save_steps", "resume_from_checkpoint", "config"]
    for name in ours + trl_options:
        assert f"--{name}" in out, name
    for field in dataclasses.fields(grpo.ThinkingboxArguments):
        assert field.metadata.get("help"), f"{field.name} has no help text"


@pytest.mark.parametrize("path", CONFIGS, ids=[p.stem for p in CONFIGS])
def test_every_shipped_config_parses(grpo, path):
    # GPU configs ask for bf16, which transformers refuses to set up on a machine without a GPU unless told to use the CPU
    tb_args, grpo_args, model_args = grpo.parse_args(["--config", str(path), "--use_cpu", "true"])
    assert set(tb_args.rewards) <= set(grpo.REWARD_NAMES)
    assert grpo_args.chat_template_kwargs == {"enable_thinking": False}
    assert grpo_args.num_generations >= 2
    if grpo_args.reward_weights is not None:
        assert len(grpo_args.reward_weights) == len(tb_args.rewards)
    grpo.family_map(tb_args)  # families name domains of the run


def test_the_paper_lora_shape_is_what_the_lora_config_sets(grpo):
    _, grpo_args, model_args = grpo.parse_args(["--config", str(ROOT / "training/configs/qwen3_8b_lora_vllm_server.yaml"),
                                                "--use_cpu", "true"])
    assert (model_args.use_peft, model_args.lora_r, model_args.lora_alpha) == (True, 16, 32)
    assert (grpo_args.use_vllm, grpo_args.vllm_mode, grpo_args.loss_type, grpo_args.num_generations) == (True, "server", "dapo", 8)
    peft = grpo.peft_config(model_args)
    assert peft.r == 16 and peft.lora_alpha == 32


def test_flags_override_the_config_file(grpo):
    tb_args, grpo_args, _ = grpo.parse_args(["--config", str(ROOT / "training/configs/tiny_cpu.yaml"), "--max_steps", "7",
                                             "--families", "retail:ST030"])
    assert grpo_args.max_steps == 7 and tb_args.families == ["retail:ST030"]


@pytest.mark.parametrize("argv, message", [
    (["--rewards", "verdict", "vibes"], "unknown reward functions ['vibes']"),
    (["--rewards", "verdict", "dialogue", "--reward_weights", "1.0"], "has 1 values for 2 --rewards"),
    (["--domains", "retail", "insurance", "--tools", "get_order"], "give exactly one --domains"),
])
def test_bad_options_are_refused_with_the_reason(grpo, argv, message, capsys):
    with pytest.raises(SystemExit):
        grpo.parse_args(["--output_dir", "/tmp/unused", "--use_cpu", "true", *argv])
    assert message in capsys.readouterr().err


def test_a_family_outside_the_run_domains_is_refused(grpo):
    tb_args, _, _ = grpo.parse_args(["--output_dir", "/tmp/unused", "--use_cpu", "true", "--families", "insurance:IN001"])
    with pytest.raises(SystemExit, match="DOMAIN:CODE with DOMAIN among"):
        grpo.family_map(tb_args)


def test_the_dataset_holds_train_variants_of_the_chosen_families(grpo):
    tb_args, _, _ = grpo.parse_args(["--output_dir", "/tmp/unused", "--use_cpu", "true", "--families", "retail:ST030", "retail:ST004",
                                     "--variants_per_family", "3"])
    ds = grpo.grpo_dataset(tb_args)
    assert len(ds) == 6 and sorted(set(ds["family"])) == ["ST004", "ST030"]
    assert "environment" not in ds.column_names  # one domain: one environment class
    assert len(set(ds["seed"])) == 6


def test_lora_run_trains_adapters_only_and_saves_a_merged_checkpoint(grpo, tmp_path):
    pytest.importorskip("peft")
    from helpers import ST004_TOOLS as tools
    from helpers import save_tiny_checkpoint
    from transformers import AutoModelForCausalLM

    save_tiny_checkpoint(tmp_path / "init")
    tb_args, grpo_args, model_args = grpo.parse_args([
        "--model_name_or_path", str(tmp_path / "init"), "--output_dir", str(tmp_path / "run"), "--dtype", "float32",
        "--use_peft", "--lora_r", "4", "--lora_alpha", "8", "--lora_target_modules", "q_proj", "v_proj",
        "--families", "retail:ST004", "--tools", *tools, "--include_policy", "false", "--variants_per_family", "2",
        "--rewards", "verdict", "progress", "--max_steps", "1", "--num_generations", "2", "--per_device_train_batch_size", "2",
        "--max_completion_length", "24", "--use_cpu", "true", "--bf16", "false", "--gradient_checkpointing", "false",
        "--report_to", "none", "--save_strategy", "no", "--disable_tqdm", "true",
    ])
    model, tok, peft = grpo.prepare_model(tb_args, grpo_args, model_args)
    trainer = grpo.grpo_trainer(tb_args, grpo_args, model, tok, peft)
    trainable = [n for n, p in trainer.model.named_parameters() if p.requires_grad]
    assert trainable and all("lora_" in n for n in trainable)
    trainer.train()
    final = grpo.finish(tb_args, grpo_args, trainer, tok, peft)
    assert not (final / "adapter_config.json").exists()  # merged: vLLM and the harness load it as a plain model
    merged = AutoModelForCausalLM.from_pretrained(final)
    assert not any("lora_" in n for n, _ in merged.named_parameters())
