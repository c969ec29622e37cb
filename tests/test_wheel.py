"""A non-editable install ships domains/, task_specs/ and the judge-check set, and gives a working make() for every task."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(os.environ.get("THINKINGBOX_SKIP_WHEEL") == "1", reason="wheel test disabled")
def test_wheel_install_works_outside_the_source_tree(tmp_path):
    wheel_dir = tmp_path / "wheel"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(wheel_dir), str(ROOT)], check=True)
    wheels = list(wheel_dir.glob("thinkingbox_env-*.whl"))
    assert len(wheels) == 1
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheels[0])], check=True)
    script = textwrap.dedent(
        """
        import sys
        sys.path.insert(0, sys.argv[1])
        import thinkingbox_env as tb
        from thinkingbox_env.tasks.domain import domain_dirs
        assert tb.__file__.startswith(sys.argv[1]), tb.__file__
        assert str(domain_dirs()["retail"]).startswith(sys.argv[1]), domain_dirs()
        from thinkingbox_env.judging.conformance import DATA_FILE, load_items  # the judge-check set ships in the wheel
        assert str(DATA_FILE).startswith(sys.argv[1]) and len(load_items()) >= 300, DATA_FILE
        from thinkingbox_env.cli.new_domain import template_dir  # `thinkingbox new` copies the bundled template domain
        assert str(template_dir()).startswith(sys.argv[1]) and "library" not in domain_dirs(), template_dir()
        tasks = tb.list_tasks()
        assert len(tasks) >= 20, tasks
        for t in tasks:
            env = tb.make(t)
            info = tb.run_episode(env, tb.OracleAgent())
            # without a judge a rubric is unevaluated; no other check may fail (a dialogue check may be undetermined)
            assert all(v is not False for k, v in info["checks"].items() if not k.startswith("rubric:")), t
            assert info["verdict"] == 1.0 or tb.load_task(t).checks.rubric, t
            env.close()
        print("OK", len(tasks))
        """
    )
    out = subprocess.run([sys.executable, "-c", script, str(target)], cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("OK")
