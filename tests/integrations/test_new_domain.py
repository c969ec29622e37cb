"""``thinkingbox new``: a domain written from the template under a data root validates, runs and refuses clashes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml


def thinkingbox(*args: str, root: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The command in a fresh process: a domain is loaded once per process, so each step gets its own."""
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}
    env.pop("THINKINGBOX_PATH", None)
    if root is not None:
        env["THINKINGBOX_PATH"] = str(root)
    return subprocess.run([sys.executable, "-m", "thinkingbox_env.cli", *args], capture_output=True, text=True, env=env,
                          timeout=600)


def test_a_new_domain_is_written_frozen_validated_and_played(tmp_path):
    made = thinkingbox("new", "stacks", "--root", str(tmp_path), "--title", "Stacks desk")
    assert made.returncode == 0, made.stderr + made.stdout
    assert "export THINKINGBOX_PATH=" in made.stdout
    manifest = yaml.safe_load((tmp_path / "domains" / "stacks" / "domain.yaml").read_text())
    assert manifest["name"] == "stacks" and manifest["title"] == "Stacks desk"
    frozen = sorted(p.name for p in (tmp_path / "task_specs" / "stacks").glob("*.yaml"))
    assert frozen and all(yaml.safe_load((tmp_path / "task_specs" / "stacks" / n).read_text())["domain"] == "stacks"
                          for n in frozen)
    valid = thinkingbox("validate", "stacks", "--variants", "3", root=tmp_path)
    assert valid.returncode == 0, valid.stdout + valid.stderr
    families = {n.split("_")[0] for n in frozen}
    assert f"{len(frozen) + 3 * len(families)}/{len(frozen) + 3 * len(families)} tasks valid" in valid.stdout, valid.stdout
    script = ("import thinkingbox_env as tb; env = tb.make('stacks/" + frozen[0][:-5] + "'); "
              "print(tb.run_episode(env, tb.OracleAgent())['verdict'])")
    env = {**os.environ, "THINKINGBOX_PATH": str(tmp_path)}
    played = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert played.stdout.strip().splitlines()[-1] == "1.0", played.stderr


def test_names_and_folders_already_taken_are_refused_and_nothing_is_written(tmp_path):
    taken = thinkingbox("new", "retail", "--root", str(tmp_path))
    assert taken.returncode == 2 and "already exists" in taken.stdout + taken.stderr
    bad = thinkingbox("new", "Stacks!", "--root", str(tmp_path))
    assert bad.returncode == 2 and "lowercase" in bad.stdout + bad.stderr
    assert not (tmp_path / "domains").exists()
    (tmp_path / "task_specs" / "shelves").mkdir(parents=True)
    (tmp_path / "task_specs" / "shelves" / "keep.yaml").write_text("kept: true\n")
    clash = thinkingbox("new", "shelves", "--root", str(tmp_path))
    assert clash.returncode == 2 and "not empty" in clash.stdout + clash.stderr
    assert not (tmp_path / "domains" / "shelves").exists()
    assert (tmp_path / "task_specs" / "shelves" / "keep.yaml").read_text() == "kept: true\n"
