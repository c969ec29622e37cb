"""The Thinkingbox-bench v1.0 file format: a clone's layout, its merge rule, its errors, the servers file and release list.

The task files are Python test modules, but they are only ever *parsed* (with
``ast``), never imported: a benchmark clone is data, and running its code in our
process would let it change our environment. A task ``file.py:test_name`` takes
its spec from the YAML in the test function's docstring (it starts with ``!``);
the module docstring names the scenario, whose YAML holds the world state of
every tool server, the tool list and the domain policy. The task's ``init``
block is merged into the scenario's world state, and the merged state of each
server is what the server receives at episode start.

Every error names the file, the task and the field, because a user who points us
at the wrong folder or a modified clone must be able to tell which file is off.

The parts that read a clone sit beside this module: ``task_files.py`` (the task modules,
parsed with ``ast``), ``task.py`` (one merged task), ``user_facts.py`` (the scripted user's
view of a task's ``user_context``) and ``clone.py`` (``TBBench``, a clone read and cached).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..bounded_yaml import BoundedYAMLError, read_bounded_yaml
from ..contracts.spec import SpecError

NAMESPACE = "tbbench"
RELEASE_LIST = Path("releases/thinkingbox_bench_v1/testlist_thinkingbox_bench_v1.yaml")
SCENARIO_DIR = Path("dataset/scenario")
AGENT_DIR = Path("dataset/agent")
TEST_CASE_DIR = Path("dataset/test_case")
SERVERS_FILE = Path("servers/servers.yaml")
SEARCH_TOOL = "search_policy"
RESERVED_PREFIX = "__reserved__"
RESERVED_TOOLS = ("__reserved__init", "__reserved__geteffects", "__reserved__teardown")
GOLDEN_REPLY = "Your request has been handled."


class TBBenchFormatError(SpecError):
    """A benchmark file is missing or malformed; the message names the file, the task and the field."""


def location(path: Path | str, test: str | None = None, fld: str | None = None) -> str:
    """Where an error is: the file, then the task and the field where known."""
    out = str(path)
    if test:
        out += f": task '{test}'"
    if fld:
        out += f": field '{fld}'"
    return out


def read_yaml_file(path: Path, what: str) -> Any:
    """A YAML file of the clone, read bounded; a missing or malformed one is a ``TBBenchFormatError`` naming it."""
    if not path.is_file():
        raise TBBenchFormatError(f"{path}: {what} not found")
    try:
        return read_bounded_yaml(path, what)
    except BoundedYAMLError as exc:
        raise TBBenchFormatError(str(exc)) from exc


def merge_init(base: Any, override: Any) -> Any:
    """The benchmark's merge of a task's init into the scenario state.

    Mappings merge key by key, lists are concatenated (base first), a null on
    either side gives way to the other value, and any other value is replaced
    by the override. Neither input is modified.
    """
    if override is None:
        return copy.deepcopy(base)
    if base is None:
        return copy.deepcopy(override)
    if isinstance(base, dict) and isinstance(override, dict):
        out = {k: copy.deepcopy(v) for k, v in base.items()}
        for k, v in override.items():
            out[k] = merge_init(base.get(k), v) if k in base else copy.deepcopy(v)
        return out
    if isinstance(base, list) and isinstance(override, list):
        return copy.deepcopy(base) + copy.deepcopy(override)
    return copy.deepcopy(override)


@dataclass(frozen=True)
class ServerCommand:
    """How to start one of the benchmark's tool servers, as its servers file declares it; the env never hard-codes a command."""
    name: str
    command: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()


def load_servers(path: Path, python: str) -> dict[str, ServerCommand]:
    """``servers.yaml`` with ``{python}`` replaced by the servers' interpreter."""
    data = read_yaml_file(path, "servers file")
    if isinstance(data, dict) and isinstance(data.get("servers"), dict):
        data = data["servers"]
    if not isinstance(data, dict) or not data:
        raise TBBenchFormatError(f"{path}: the servers file must map server names to their command")
    out = {}
    for name, entry in data.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("command"), list) or not entry["command"]:
            raise TBBenchFormatError(f"{location(path, fld=f'{name}.command')}: must be a non-empty list of strings")
        env = entry.get("env") or {}
        if not isinstance(env, dict):
            raise TBBenchFormatError(f"{location(path, fld=f'{name}.env')}: must be a mapping")
        command = tuple(str(c).replace("{python}", python) for c in entry["command"])
        out[str(name)] = ServerCommand(str(name), command,
                                       tuple((str(k), str(v).replace("{python}", python)) for k, v in env.items()))
    return out


def load_release_list(path: Path) -> list[str]:
    """``file.py:test_name`` entries of a release list (a YAML list, or a mapping holding one)."""
    data = read_yaml_file(path, "release list")
    if isinstance(data, dict):
        lists = [v for v in data.values() if isinstance(v, list)]
        if len(lists) != 1:
            raise TBBenchFormatError(f"{path}: a release list must be a list of 'file.py:test' entries")
        data = lists[0]
    if not isinstance(data, list):
        raise TBBenchFormatError(f"{path}: a release list must be a list of 'file.py:test' entries")
    out = []
    for i, entry in enumerate(data):
        if not isinstance(entry, str) or ".py:" not in entry:
            raise TBBenchFormatError(f"{location(path, fld=f'[{i}]')}: expected 'file.py:test_name', got {entry!r}")
        out.append(entry.strip())
    return out
