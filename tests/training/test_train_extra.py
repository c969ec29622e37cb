"""A training script without the train extra stops with the install command, not a raw ModuleNotFoundError."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("script", ["training/grpo.py", "training/gpu_smoke.py", "training/experiments/shaping.py",
                                    "training/pretrained.py"])
def test_a_training_script_without_trl_names_the_extra_to_install(script):
    # sys.modules[name] = None makes every import of it fail, as on an install without the extra
    code = ("import runpy, sys; sys.modules['trl'] = None; "
            f"sys.argv = [{script!r}, '--help']; runpy.run_path({script!r}, run_name='__main__')")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stderr
    assert 'pip install -e ".[train]"' in done.stderr and "trl not installed" in done.stderr
    assert "Traceback" not in done.stderr
