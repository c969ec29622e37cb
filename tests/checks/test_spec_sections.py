"""A task spec validates the same whatever was imported first.

The sections of a task's ``checks`` are declared by the check kinds as they register
(``CheckKind.spec_section``), not listed in ``contracts/spec.py``; so a spec read before the
kinds were imported would refuse every section. It cannot be: importing any module of the package
runs the package's ``__init__`` first, and that imports every check kind (through the
environment and ``grade``). These tests hold it in fresh interpreters: a spec with every section,
and a broken one, read with only the spec module imported, then after the whole engine.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
TASK = ROOT / "task_specs" / "travel" / "TR008_008.yaml"  # injections, dialogue, states and rubric entries
SECTIONS = ["injections", "sql", "dialogue", "states", "rubric"]

_READ = r'''
import json, sys
from pathlib import Path

from thinkingbox_env.contracts.spec import SpecError, check_sections, load_task_file

def read(path):
    try:
        return {"spec": load_task_file(Path(path)).model_dump(mode="json")}
    except SpecError as exc:
        return {"error": str(exc)}

print(json.dumps({"sections": [s.name for s in check_sections()], "read": [read(p) for p in sys.argv[1:]]}))
'''

_WHOLE_ENGINE = r'''
import importlib, pkgutil
import thinkingbox_env, thinkingbox_env.checks
for package in ("thinkingbox_env.checks", "thinkingbox_env.tasks", "thinkingbox_env.envs", "thinkingbox_env.reading"):
    for info in pkgutil.walk_packages(importlib.import_module(package).__path__, package + "."):
        importlib.import_module(info.name)
'''


def _specs(tmp_path: Path) -> list[Path]:
    data = yaml.safe_load(TASK.read_text(encoding="utf-8"))
    data["checks"]["sql"] = [{"name": "one_refund", "query": "SELECT count(*) = 1 FROM refunds"}]
    assert [s for s in SECTIONS if not data["checks"].get(s)] == []  # every section has an entry
    broken_section = dict(data, checks={**data["checks"], "sqll": []})
    broken_entry = dict(data, checks={**data["checks"], "states": [{"not": "a state name"}]})
    paths = []
    for name, spec in (("every_section", data), ("unknown_section", broken_section), ("broken_entry", broken_entry)):
        path = tmp_path / f"{name}.yaml"
        path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
        paths.append(path)
    return paths


def _run(prelude: str, paths: list[Path]) -> dict:
    done = subprocess.run([sys.executable, "-c", prelude + _READ, *map(str, paths)], capture_output=True, text=True,
                          cwd=ROOT, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_spec_reads_the_same_with_only_the_spec_module_imported_as_after_the_whole_engine(tmp_path):
    paths = _specs(tmp_path)
    first = _run("", paths)
    after = _run(_WHOLE_ENGINE, paths)
    assert first == after
    assert first["sections"] == SECTIONS
    good, unknown, broken = first["read"]
    assert "spec" in good and all(good["spec"]["checks"][s] for s in SECTIONS)
    assert "unknown check section 'sqll'" in unknown["error"] and "known: " + ", ".join(SECTIONS) in unknown["error"]
    assert "states.0" in broken["error"]
