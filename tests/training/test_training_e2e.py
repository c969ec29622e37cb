"""A tiny end-to-end GRPO run on CPU through training/grpo.py: warm start, GRPO steps, evaluation.

The model is a random-init Qwen3 of about a million parameters with a BPE tokenizer trained
here on the conversations it will see (nothing is downloaded). A random model never calls a
tool, so it is first warmed up on oracle conversations of eight retail train variants; GRPO
then plays the same variants (a model this small cannot yet copy unseen values, so fresh
variants would leave every rollout of a group failing alike, with nothing to learn from), and
the final checkpoint is evaluated on two frozen test tasks through the evaluation harness, in
the training protocol.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import ST004_TOOLS as TOOLS
from helpers import save_tiny_checkpoint

from thinkingbox_env.eval.run_files import read_rows

torch = pytest.importorskip("torch")
pytest.importorskip("trl")

ROOT = Path(__file__).resolve().parents[2]
FAMILY = "ST004"
REWARDS = ["verdict", "effects", "no_collateral", "dialogue", "progress"]


@pytest.mark.timeout(1500)
def test_warm_start_then_grpo_then_evaluation(tmp_path, monkeypatch, grpo_script):
    grpo = grpo_script
    tb_args, grpo_args, model_args = grpo.parse_args([
        "--config", str(ROOT / "training" / "configs" / "tiny_cpu.yaml"),
        "--model_name_or_path", str(tmp_path / "init"), "--output_dir", str(tmp_path / "run"),
    ])
    assert tb_args.families == [f"retail:{FAMILY}"] and tb_args.tools == TOOLS and tb_args.rewards == REWARDS
    # the tokenizer is fitted to the warm start's own conversations
    save_tiny_checkpoint(tmp_path / "init", tb_args.sft_variants_per_family, tb_args.sft_dataset_seed, vocab=4000, hidden=128, layers=2)
    out = tmp_path / "run"

    # every environment TRL builds is kept, to look at what the rollouts did to the backend
    made = []
    class_factory = grpo.environment_factory(tb_args)

    def recording_factory():
        env = class_factory()
        made.append(env)
        return env

    monkeypatch.setattr(grpo, "environment_factory", lambda args, judge=None: recording_factory)

    model, tokenizer, peft = grpo.prepare_model(tb_args, grpo_args, model_args)
    assert peft is None
    before = {name: p.detach().clone() for name, p in model.named_parameters()}
    trainer = grpo.grpo_trainer(tb_args, grpo_args, model, tokenizer, peft)
    trainer.train()

    steps = [h for h in trainer.state.log_history if "reward" in h]
    assert len(steps) == 2
    for name in REWARDS:  # every check group is logged as its own component
        assert all(f"rewards/reward_{name}/mean" in h for h in steps)
    # rewards varied within a group at least once: GRPO had a non-zero advantage to learn from
    assert any(h["frac_reward_zero_std"] < 1.0 for h in steps), [{k: v for k, v in h.items() if "reward" in k} for h in steps]
    assert any(h["reward_std"] > 0 for h in steps)

    # the rollouts' tool calls reached the episode's DuckDB state (a read that ran and returned rows)
    episodes = [e.env for e in made if e.env is not None]
    assert episodes and all(ep.task.split == "train" for ep in episodes)
    domain_calls = [c for ep in episodes for c in ep.trace if c.get("type") == "tool_call" and c["name"] in TOOLS]
    assert any(c["ok"] for c in domain_calls), domain_calls[:5]
    rows_read = [c for c in domain_calls if c["ok"] and c["name"] == "search_tickets"]
    assert rows_read and all(isinstance(c["result"], dict) and "items" in c["result"] for c in rows_read)

    changed = [name for name, p in trainer.model.named_parameters() if not torch.equal(before[name], p.detach())]
    assert changed, "GRPO did not change any weight"

    final = grpo.finish(tb_args, grpo_args, trainer, tokenizer, peft)
    assert (final / "config.json").exists()
    rows = read_rows(out / "eval.jsonl")
    assert sorted(r["task_id"] for r in rows) == ["retail/ST004_001", "retail/ST004_002"]
    assert all(r["status"] == "ok" and r["config"]["agent"]["protocol"] == "customer-tool" for r in rows), rows
    assert all(r["usage"]["model_calls"] >= 1 for r in rows)
