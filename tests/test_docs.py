"""The README's example runs as printed, and CI runs the README's commands."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_readme_python_example_runs_and_prints_what_it_says():
    readme = (ROOT / "README.md").read_text()
    code = re.search(r"```python\n(.*?)```", readme, re.DOTALL).group(1)
    assert len(code.strip().splitlines()) <= 12
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("My email address is")
    assert lines[1] == "0.0 no_state_changing_action"


def test_ci_runs_the_readme_commands():
    out = subprocess.run(
        ["bash", "-c", "source <(sed -n '/^readme_command()/,/^}/p' .ci/run); readme_command setup; readme_command test"],
        capture_output=True, text=True, cwd=ROOT,
    )
    setup, tests = out.stdout.splitlines()
    assert "pip install -e ." in setup and "thinkingbox run" in setup  # editable: commands read the checkout
    assert "pytest" in tests


def test_step_loop_example_reaches_reward_1():
    out = subprocess.run([sys.executable, str(ROOT / "examples" / "step_loop.py")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "reward: 1.0 | finish: done_marker" in out.stdout
