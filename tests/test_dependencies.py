"""The dependency ranges say what the code needs, and CI installs their lower bounds."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]


def _dependencies() -> dict[str, Requirement]:
    text = (ROOT / "pyproject.toml").read_text()
    block = re.search(r"^dependencies = \[(.*?)^\]", text, re.DOTALL | re.MULTILINE).group(1)
    return {r.name: r for r in map(Requirement, re.findall(r'"([^"]+)"', block))}


def _extra(name: str) -> dict[str, Requirement]:
    text = (ROOT / "pyproject.toml").read_text()
    line = re.search(rf"^{name} = \[(.*?)\]$", text, re.MULTILINE).group(1)
    return {r.name: r for r in map(Requirement, re.findall(r'"([^"]+)"', line))}


def test_mcp_is_an_extra_not_a_core_dependency():
    # only serving/ and tbbench/ import it; verifiers 0.4 pins mcp==2.0.0 and OpenEnv 0.10 needs mcp<2
    assert "mcp" not in _dependencies() and "mcp" in _extra("mcp")
    assert _extra("dev")["thinkingbox-env"].extras == {"mcp"}  # the test suite serves over MCP


def test_mcp_1_is_excluded_and_mcp_2_allowed():
    mcp = _extra("mcp")["mcp"].specifier
    assert "1.27.0" not in mcp and "2.0.1" not in mcp  # serve fails with 1.x; the stdio client needs 2.1
    assert "2.3.0" in mcp and "3.0.0" not in mcp


def test_every_direct_dependency_has_a_lower_bound_and_ci_installs_exactly_it():
    out = subprocess.run([sys.executable, str(ROOT / ".ci" / "lowest_requirements.py")], capture_output=True, text=True,
                         check=True).stdout.split()
    deps = {**_dependencies(), **_extra("mcp")}  # the smoke subset serves over MCP: the mcp extra is lowered too
    pins = dict(line.split("==") for line in out)
    assert set(pins) == set(deps)
    for name, version in pins.items():
        assert version in deps[name].specifier, f"{name}=={version} is outside {deps[name].specifier}"
    ci = (ROOT / ".ci" / "run").read_text()
    assert "lowest_requirements.py" in ci and ".venv-lowest/bin/python -m pytest" in ci


def test_the_written_openenv_package_installs_the_line_of_the_openenv_extra():
    module = (ROOT / "thinkingbox_env" / "integrations" / "openenv.py").read_text()
    written = Requirement(re.search(r'OPENENV_REQUIREMENT = "([^"]+)"', module).group(1))
    assert written == _extra("openenv")["openenv"]
    assert "0.10.0" in written.specifier and "0.3.0" in _extra("openenv-core")["openenv-core"].specifier


def test_ci_runs_every_adapter_beside_its_library_with_the_library_required():
    ci = (ROOT / ".ci" / "run").read_text()
    line = re.search(r"^declare -A adapter_extras=\((.*)\)$", ci, re.MULTILINE).group(1)
    extras = {e for part in re.findall(r"\]=([\w,-]+)", line) for e in part.split(",")}
    assert {"openenv", "verifiers", "skyrl"} <= extras <= set(_extras())
    assert "THINKINGBOX_REQUIRE_ADAPTERS=" in ci


def _extras() -> set[str]:
    text = (ROOT / "pyproject.toml").read_text()
    block = text.split("[project.optional-dependencies]", 1)[1].split("\n[", 1)[0]
    return set(re.findall(r"^([\w-]+) = \[", block, re.MULTILINE))
