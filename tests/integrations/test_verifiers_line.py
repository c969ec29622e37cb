"""The verifiers adapter runs on the 0.1 line; beside verifiers 0.4 (a new API) importing it names the line to install."""

from __future__ import annotations

import importlib.util

import pytest
from packaging.version import Version

if importlib.util.find_spec("verifiers") is None:
    pytest.skip("verifiers is not installed", allow_module_level=True)

import verifiers  # noqa: E402


@pytest.mark.skipif(hasattr(verifiers, "MultiTurnEnv"), reason="a verifiers of the supported 0.1 line is installed")
def test_importing_the_adapter_beside_verifiers_0_4_names_the_supported_line():
    assert Version(verifiers.__version__) >= Version("0.2")
    with pytest.raises(ImportError, match=r"verifiers 0\.1 line .* verifiers 0\.4\.\d+ is installed.*verifiers>=0\.1\.14,<0\.2"):
        import thinkingbox_env.integrations.verifiers  # noqa: F401
