"""A benchmark task file (a Python test module) read with ``ast`` only: its scenario, agent and ``\"\"\"!`` test specs.

The module is never imported: a clone is data, and running its code in this process would let
it change the environment. Its configuration blocks merge in file order, then into each test's.
"""

from __future__ import annotations

import ast
import inspect
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..bounded_yaml import MAX_YAML_BYTES, BoundedYAMLError, load_bounded_yaml
from .format import TBBenchFormatError, location, merge_init


def _docstring_yaml(doc: str | None, where: str) -> Any:
    """The YAML of a ``\"\"\"!`` docstring, or None when the docstring is not one."""
    if doc is None:
        return None
    text = inspect.cleandoc(doc)
    if not text.startswith("!"):
        return None
    try:
        return load_bounded_yaml(text[1:], f"{where}: the docstring")
    except BoundedYAMLError as exc:
        raise TBBenchFormatError(str(exc)) from exc


@dataclass
class ParsedModule:
    """The parts of one benchmark test module that define tasks, read without importing or running it."""
    path: Path
    scenario: str
    agent: str | None
    tests: dict[str, dict[str, Any]]  # test name -> docstring spec


_SCENARIO_RE = re.compile(r"(?:dataset/scenario/)?([A-Za-z0-9_.-]+?)(?:\.ya?ml)?\s*$")


def _scenario_name(doc: str | None, path: Path) -> tuple[str, str | None]:
    """(scenario, agent) named by a module docstring: YAML keys or a ``scenario: NAME`` line."""
    if not doc:
        raise TBBenchFormatError(f"{location(path, fld='scenario')}: the module docstring must name the scenario")
    text = inspect.cleandoc(doc).lstrip("!")
    data: Any = None
    try:
        data = load_bounded_yaml(text, str(path))
    except BoundedYAMLError:
        data = None
    if isinstance(data, dict) and data.get("scenario"):
        scenario, agent = str(data["scenario"]), data.get("agent")
    else:
        line = re.search(r"^\s*scenario\s*[:=]\s*(\S+)", text, re.MULTILINE)
        if not line:
            raise TBBenchFormatError(f"{location(path, fld='scenario')}: the module docstring names no scenario")
        scenario, agent = line.group(1), None
    m = _SCENARIO_RE.search(scenario.strip().strip("'\""))
    return (m.group(1) if m else scenario), (str(agent) if agent else None)


def _module_blocks(tree: ast.Module, path: Path) -> dict[str, Any]:
    """Every top-level string statement starting with ``!``, merged in file order.

    The benchmark's files put their scenario block after the imports, so it is
    not the module docstring; any top-level string whose text starts with ``!``
    is read as configuration, and several are merged like a task's init.
    """
    config: dict[str, Any] = {}
    for node in tree.body:
        if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
            continue
        block = _docstring_yaml(node.value.value, location(path, fld=f"line {node.lineno}"))
        if block is None:
            continue
        if not isinstance(block, dict):
            raise TBBenchFormatError(f"{location(path, fld=f'line {node.lineno}')}: a '!' block must be a YAML mapping, "
                                     f"got {type(block).__name__}")
        config = merge_init(config, block)
    return config


def parse_task_module(path: Path) -> ParsedModule:
    """Every ``\"\"\"!`` test of a task file, read with ``ast`` only."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise TBBenchFormatError(f"{path}: task file cannot be read: {exc}") from exc
    if len(raw) > MAX_YAML_BYTES:
        raise TBBenchFormatError(f"{path}: task file is too large ({len(raw):,} bytes; the limit is {MAX_YAML_BYTES:,})")
    try:
        source = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TBBenchFormatError(f"{path}: task file is not UTF-8 text (byte {exc.start} is 0x{raw[exc.start]:02x})") from exc
    try:
        tree = ast.parse(source, filename=str(path))
    except (SyntaxError, RecursionError, MemoryError, ValueError) as exc:
        if not isinstance(exc, SyntaxError):
            raise TBBenchFormatError(f"{path}: task file cannot be parsed: {type(exc).__name__}") from exc
        raise TBBenchFormatError(f"{path}: task file is not valid Python (line {exc.lineno}): {exc.msg}") from exc
    config = _module_blocks(tree, path)
    if config.get("scenario"):
        if not isinstance(config["scenario"], str):
            raise TBBenchFormatError(f"{location(path, fld='scenario')}: must be a scenario name, got {config['scenario']!r}")
        m = _SCENARIO_RE.search(config["scenario"].strip())
        scenario, agent = (m.group(1) if m else config["scenario"]), config.get("agent")
        if agent is not None and not isinstance(agent, str):
            raise TBBenchFormatError(f"{location(path, fld='agent')}: must be an agent name, got {agent!r}")
    else:
        scenario, agent = _scenario_name(ast.get_docstring(tree, clean=False), path)
    shared = {k: v for k, v in config.items() if k not in ("scenario", "agent")}
    tests: dict[str, dict[str, Any]] = {}
    functions = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        functions += [n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for fn in functions:
        spec = _docstring_yaml(ast.get_docstring(fn, clean=False), location(path, fn.name))
        if spec is None:
            continue
        if not isinstance(spec, dict):
            raise TBBenchFormatError(f"{location(path, fn.name)}: the docstring YAML must be a mapping, got {type(spec).__name__}")
        # the file's shared block comes first and the test's own keys merge into it (lists such as tags concatenate)
        tests[fn.name] = merge_init(shared, spec) if shared else spec
    return ParsedModule(path, scenario, agent, tests)
