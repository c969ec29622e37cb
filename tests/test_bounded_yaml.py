"""YAML a user did not write is read within bounds: an alias bomb, deep nesting and non-UTF-8 bytes are refused by
name (file and problem) before they cost memory or raise an unnamed error."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from thinkingbox_env.bounded_yaml import MAX_YAML_DEPTH, BoundedYAMLError, load_bounded_yaml
from thinkingbox_env.contracts.spec import SpecError, load_task_file
from thinkingbox_env.tbbench import TBBench, TBBenchFormatError

TBBENCH = Path(__file__).resolve().parent / "data" / "tbbench"
TASK_FILE = "dataset/tests/toy_shop_tasks.py"


def alias_bomb(levels: int = 9, width: int = 9) -> str:
    """About a kilobyte that expands to width**levels strings."""
    lines = ['a0: &a0 [' + ", ".join(['"lol"'] * width) + "]"]
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


def deep(levels: int) -> str:
    return "".join("  " * i + f"k{i}:\n" for i in range(levels)) + "  " * levels + "leaf\n"


@pytest.mark.timeout(60)
def test_an_alias_bomb_in_a_task_spec_is_refused_naming_the_file(tmp_path):
    path = tmp_path / "ST999_001.yaml"
    path.write_text("id: ST999_001\n" + alias_bomb())
    assert path.stat().st_size < 2_000
    with pytest.raises(SpecError, match="expands to more than") as err:
        load_task_file(path)
    assert str(path) in str(err.value)


def test_deep_nesting_and_self_reference_are_refused_by_name(tmp_path):
    path = tmp_path / "deep.yaml"
    path.write_text(deep(MAX_YAML_DEPTH + 5))
    with pytest.raises(SpecError, match=f"nests deeper than {MAX_YAML_DEPTH}") as err:
        load_task_file(path)
    assert str(path) in str(err.value)
    with pytest.raises(BoundedYAMLError, match="nests deeper"):
        load_bounded_yaml("x: &x [*x]\n", "inline")


def test_bytes_that_are_not_utf8_are_named_with_their_offset(tmp_path):
    path = tmp_path / "latin1.yaml"
    path.write_bytes("id: caf\u00e9\n".encode("latin-1"))
    with pytest.raises(SpecError, match=r"not UTF-8 text \(byte 7 is 0xe9\)") as err:
        load_task_file(path)
    assert str(path) in str(err.value)


def test_ordinary_yaml_with_aliases_still_loads():
    data = load_bounded_yaml("base: &b {a: 1, b: [1, 2]}\nother: *b\nmore: {<<: *b, c: 3}\n", "inline")
    assert data["other"] == {"a": 1, "b": [1, 2]} and data["more"] == {"a": 1, "b": [1, 2], "c": 3}


@pytest.fixture
def clone(tmp_path):
    target = tmp_path / "clone"
    shutil.copytree(TBBENCH, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


@pytest.mark.timeout(60)
def test_an_alias_bomb_in_a_benchmark_scenario_is_refused_naming_the_file(clone):
    scenario = clone / "dataset" / "scenario" / "toy_shop.yaml"
    scenario.write_text(scenario.read_text() + "\nbomb:\n" + "".join("  " + line + "\n" for line in alias_bomb().splitlines()))
    with pytest.raises(TBBenchFormatError, match="expands to more than") as err:
        TBBench(clone, "python").task(f"{TASK_FILE}:test_lookup_shipped")
    assert "toy_shop.yaml" in str(err.value)


def test_a_benchmark_task_file_that_is_not_utf8_is_named(clone):
    path = clone / TASK_FILE
    path.write_bytes(path.read_bytes() + b"\n# \xff\xfe\n")
    with pytest.raises(TBBenchFormatError, match="not UTF-8") as err:
        TBBench(clone, "python").task(f"{TASK_FILE}:test_lookup_shipped")
    assert "toy_shop_tasks.py" in str(err.value)
