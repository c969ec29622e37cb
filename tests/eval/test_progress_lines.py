"""Without a terminal, eval prints progress lines as the run goes (a log file would otherwise see nothing until the end)."""

from __future__ import annotations

import subprocess
import sys


def test_eval_into_a_pipe_logs_progress_lines_before_its_summary(tmp_path):
    done = subprocess.run([sys.executable, "-m", "thinkingbox_env.cli", "eval", "retail/ST030_001", "--agent", "oracle",
                           "-n", "3", "-o", str(tmp_path / "r.jsonl")], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    progress = [i for i, line in enumerate(lines) if line.startswith("eval: ")]
    assert [lines[i].split(";")[0] for i in progress] == ["eval: 1/3 trials", "eval: 2/3 trials", "eval: 3/3 trials"]
    summary = next(i for i, line in enumerate(lines) if "trials run" in line)
    assert progress[-1] < summary
