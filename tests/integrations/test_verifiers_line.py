"""``thinkingbox_env.integrations.verifiers`` serves whichever verifiers line is installed; the 0.4 module names its line."""

from __future__ import annotations

import importlib.util

import pytest

if importlib.util.find_spec("verifiers") is None:
    pytest.skip("verifiers is not installed", allow_module_level=True)

import verifiers  # noqa: E402

LINE_01 = hasattr(verifiers, "MultiTurnEnv")


def test_the_entry_module_serves_the_installed_line():
    import thinkingbox_env.integrations.verifiers as entry

    if LINE_01:
        from thinkingbox_env.integrations import verifiers_multiturn as line
    else:
        from thinkingbox_env.integrations import verifiers_v1 as line
    assert entry.load_environment is line.load_environment


@pytest.mark.skipif(not LINE_01, reason="verifiers 0.4 is installed: its module imports")
def test_importing_the_0_4_module_beside_verifiers_0_1_names_the_line_it_needs():
    with pytest.raises(ImportError, match=r"verifiers>=0\.4, but verifiers 0\.1\.\d+ is installed.*verifiers04"):
        import thinkingbox_env.integrations.verifiers_v1  # noqa: F401
