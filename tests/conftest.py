"""Fixtures shared by every test folder; plain helpers live in ``helpers.py``."""

from __future__ import annotations

import os

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


# Set by .ci/run for the README's test command: the realmodel tests need packages (llama-cpp-python's server,
# SmolLM2's weights, gguf) that CI installs only afterwards, in the step that runs exactly them. Deselected here
# (pytest reports the count), they are neither failed for a missing package nor skipped unseen.
DEFER_REALMODEL = "THINKINGBOX_DEFER_REALMODEL"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get(DEFER_REALMODEL) != "1":
        return
    deferred = [item for item in items if item.get_closest_marker("realmodel")]
    if deferred:
        config.hook.pytest_deselected(items=deferred)
        items[:] = [item for item in items if not item.get_closest_marker("realmodel")]
