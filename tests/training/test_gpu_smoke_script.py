"""training/gpu_smoke.py runs (on CPU here, with a tiny model) and reports what the GPU run records."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("trl")

ROOT = Path(__file__).resolve().parents[2]


def test_smoke_script_reports_speed_and_environment_share(tmp_path):
    result_file = tmp_path / "smoke.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, str(ROOT / "training" / "gpu_smoke.py"), "--cpu", "--hidden", "32", "--layers", "1", "--heads", "2",
         "--kv-heads", "1", "--vocab", "1000", "--sft-steps", "3", "--steps", "2", "--generations", "2",
         "--completion-length", "32", "--output", str(result_file)],
        capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(result_file.read_text())
    assert result["device"] == "cpu" and result["grpo_steps"] == 2
    assert result["steps_per_second"] > 0 and abs(result["seconds_per_step"] * result["steps_per_second"] - 1) < 0.05
    # every rollout reset an episode and was scored: at least two environment entries per completion
    assert result["env_calls"] >= 2 * 2 * 2
    assert 0 < result["env_share"] < 1


def test_smoke_script_refuses_to_measure_without_a_gpu_unless_told():
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    out = subprocess.run([sys.executable, str(ROOT / "training" / "gpu_smoke.py")], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode != 0 and "no CUDA GPU" in out.stderr


def test_the_shell_entry_point_checks_for_a_gpu_before_anything_else():
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    out = subprocess.run(["bash", str(ROOT / "training" / "gpu_smoke.sh")], capture_output=True, text=True,
                         env={**os.environ, "PYTHON": sys.executable})
    assert out.returncode != 0 and "no CUDA GPU visible to torch" in out.stderr
