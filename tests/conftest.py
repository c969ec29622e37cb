"""Fixtures shared by every test folder; plain helpers live in ``helpers.py``."""

from __future__ import annotations

import pytest

import thinkingbox_env as tb


@pytest.fixture
def st030():
    env = tb.make("retail/ST030_001")
    yield env
    env.close()


@pytest.fixture(scope="session")
def grpo_script():
    """training/grpo.py as a module (it is a script, not part of the package)."""
    import importlib.util
    import sys
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "training" / "grpo.py"
    spec = importlib.util.spec_from_file_location("thinkingbox_training_grpo", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
