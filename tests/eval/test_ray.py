"""Trials as Ray tasks on a local Ray instance give the same rows as the local pool."""

from __future__ import annotations

import os

import pytest

from thinkingbox_env.cli import main
from thinkingbox_env.eval.run_files import read_rows

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install '.[ray]'); the Ray executor is not tested")

TASKS = ["retail/ST030_001", "retail/ST004_002", "retail/ST001_001"]


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield
    ray.shutdown()


def _comparable(rows):
    """Rows keyed by (task, trial), without timings and worker process, the only parts that may differ."""
    return {(r["task_id"], r["trial"]): {k: v for k, v in r.items() if k not in ("timings", "worker")} for r in rows}


@pytest.mark.parametrize("agent", ["oracle", "noop"])
def test_ray_and_local_pool_write_the_same_rows(local_ray, tmp_path, agent):
    local, on_ray = tmp_path / "local.jsonl", tmp_path / "ray.jsonl"
    assert main(["eval", *TASKS, "--agent", agent, "-n", "2", "-c", "2", "-o", str(local)]) == 0
    assert main(["eval", *TASKS, "--agent", agent, "-n", "2", "-c", "2", "--ray", "-o", str(on_ray)]) == 0
    assert {r["worker"]["pid"] for r in read_rows(local)} == {os.getpid()}
    assert os.getpid() not in {r["worker"]["pid"] for r in read_rows(on_ray)}  # ran in Ray worker processes
    a, b = _comparable(read_rows(local)), _comparable(read_rows(on_ray))
    assert len(a) == len(TASKS) * 2 and a.keys() == b.keys()
    for key in a:
        assert a[key] == b[key], key
