"""examples/reinforce_minimal.py: a custom policy-gradient loop needs only reset() and step()."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("trl")

ROOT = Path(__file__).resolve().parents[2]


def test_reinforce_example_runs_episodes_and_updates_the_model(tmp_path):
    from helpers import save_tiny_checkpoint
    from transformers import AutoModelForCausalLM

    save_tiny_checkpoint(tmp_path / "init")

    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "reinforce_minimal.py"), "--model", str(tmp_path / "init"), "--family", "ST004",
         "--episodes", "2", "--max-new-tokens", "12", "--max-actions", "3", "--lr", "1e-2", "--output", str(tmp_path / "trained")],
        capture_output=True, text=True, timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    episodes = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    assert [e["episode"] for e in episodes] == [0, 1]
    for e in episodes:
        assert 0.0 <= e["return"] <= 1.0 and e["verdict"] == 0.0  # a random model solves nothing ...
        assert e["finish"] in ("action_limit", "done_marker", "user_turn_limit") and e["actions"] <= 3
    assert episodes[0]["return"] > 0  # ... but the per-check mean rewards touching nothing, so the first step has a gradient
    before = AutoModelForCausalLM.from_pretrained(tmp_path / "init").state_dict()
    after = AutoModelForCausalLM.from_pretrained(tmp_path / "trained").state_dict()
    assert any(not torch.equal(before[k], after[k]) for k in before)
