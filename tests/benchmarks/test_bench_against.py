"""bench_env.py's draw-by-draw comparison with another checkout: two workers answer every draw in turn."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)  # its dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def test_both_trees_answer_every_draw_and_the_ratios_are_reported():
    bench = _load("bench_env_fresh")
    out = bench.bench_fresh_variants_against(str(ROOT), 3)  # this checkout against itself
    assert out["other_tree"] == str(ROOT)
    for name in ("this tree", "other"):
        first = out[name]["first_episode"]
        assert first["n"] == 3 and first["median_ms"] > 0 and out[name]["oracle_failures"] == 0
    ratios = out["other_over_this"]
    assert ratios["median"] > 0 and ratios["p95"] > 0


def test_a_path_that_is_no_checkout_is_refused_by_name(tmp_path, capsys):
    with pytest.raises(SystemExit):
        _load("bench_env").main(["--against", str(tmp_path), "--variants", "3"])
    assert f"--against {tmp_path}: not a checkout" in capsys.readouterr().err
