"""Without the train extra, the scripts that need it stop with one line naming it, not a ModuleNotFoundError."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BLOCK = "import sys\nfor name in ('torch', 'transformers', 'trl', 'peft'):\n    sys.modules[name] = None\n"


@pytest.mark.parametrize(("run", "name"), [
    ("import runpy\nrunpy.run_path(sys.argv[1], run_name='__main__')", "examples/reinforce_minimal.py"),
    ("from thinkingbox_env.integrations.tiny_qwen import main\nsys.exit(main(['out', '--config', 'c.yaml']))",
     "python -m thinkingbox_env.integrations.tiny_qwen"),
])
def test_a_script_without_the_train_extra_names_it(run, name, tmp_path):
    done = subprocess.run([sys.executable, "-c", BLOCK + run, str(ROOT / "examples" / "reinforce_minimal.py")],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert f"{name} needs the train extra" in done.stderr and 'pip install -e ".[train]"' in done.stderr
