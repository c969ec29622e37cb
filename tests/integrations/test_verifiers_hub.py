"""environments/thinkingbox_tasks: the Environments Hub package of the verifiers adapter, loaded by its Hub id."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from adapter_helpers import require_adapter
from packaging.requirements import Requirement

from thinkingbox_env.version import __version__

require_adapter("verifiers", "verifiers.envs.multiturn_env", 'pip install -e ".[verifiers]" (verifiers 0.1)')
tomllib = pytest.importorskip("tomllib", reason="Python 3.11's TOML reader")

HUB = Path(__file__).resolve().parents[2] / "environments" / "thinkingbox_tasks"


def test_the_package_has_the_layout_vf_init_writes():
    project = tomllib.loads((HUB / "pyproject.toml").read_text())
    name = project["project"]["name"]
    module = name.replace("-", "_")  # how verifiers turns an environment id into the module it imports
    assert (HUB / f"{module}.py").is_file() and f"{module}.py" in project["tool"]["hatch"]["build"]["include"]
    (dep,) = map(Requirement, project["project"]["dependencies"])
    assert dep.name == "thinkingbox-env" and dep.extras == {"verifiers"} and __version__ in dep.specifier
    assert project["tool"]["verifiers"]["eval"]["num_examples"] >= 1 and (HUB / "README.md").is_file()


def test_verifiers_loads_the_environment_by_its_hub_id(monkeypatch):
    import verifiers

    monkeypatch.syspath_prepend(str(HUB))
    env = verifiers.load_environment("thinkingbox-tasks", domain="retail", tasks=["retail/ST030_001"])
    from thinkingbox_env.integrations.verifiers import ThinkingboxVerifiersEnv

    assert isinstance(env, ThinkingboxVerifiersEnv) and len(env.get_eval_dataset()) == 1
    # vf-eval's env-server workers load the environment again by env_id: the adapter's module, importable anywhere
    assert env.env_id == "thinkingbox_env.integrations.verifiers"
    sys.modules.pop("thinkingbox_tasks", None)
