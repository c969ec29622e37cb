"""The linters CI relies on, run as part of the suite so ``pytest -q`` fails on what they report.

ruff (with the docstring rules) and mypy read their configuration from pyproject.toml; the tests
only run them over the paths CI covers and print their report when they find anything.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RUFF_PATHS = ["thinkingbox_env", "thinkingbox", "thinkingbox_verifiers", "tests", "training", "examples", "benchmarks", "domains"]


def _run_tool(module: str, *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed (pip install -e '.[dev]' installs it)")
    return subprocess.run([sys.executable, "-m", module, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def test_ruff_reports_nothing() -> None:
    proc = _run_tool("ruff", "check", "--no-cache", *RUFF_PATHS, timeout=300)
    assert proc.returncode == 0, f"ruff check failed:\n{proc.stdout}{proc.stderr}"


@pytest.mark.timeout(900)
def test_mypy_reports_nothing() -> None:
    proc = _run_tool("mypy", timeout=900)  # files and strictness come from [tool.mypy] in pyproject.toml
    assert proc.returncode == 0, f"mypy failed:\n{proc.stdout}{proc.stderr}"
    assert "Success: no issues found" in proc.stdout, proc.stdout
