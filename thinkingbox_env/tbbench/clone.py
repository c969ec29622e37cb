"""``TBBench``: a clone of the benchmark read on demand, each scenario, agent file and task module once.

It resolves the release list's entries to task files and builds each task (``task.py``) from
its module (``task_files.py``), its scenario and the agent file, naming the file, task and
field of anything malformed.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from .format import (
    AGENT_DIR,
    NAMESPACE,
    RELEASE_LIST,
    SCENARIO_DIR,
    SERVERS_FILE,
    TEST_CASE_DIR,
    ServerCommand,
    TBBenchFormatError,
    load_release_list,
    load_servers,
    location,
    merge_init,
    read_yaml_file,
)
from .task import TBTask
from .task_files import ParsedModule, parse_task_module

_PROMPT_KEYS = ("system_instructions", "system_prompt", "instructions", "prompt")


class TBBench:
    """A clone of the benchmark plus the interpreter of its servers' virtualenv.

    Parsed files are cached per instance, so a suite of hundreds of tasks reads
    each scenario and task module once.
    """

    def __init__(self, data_dir: str | Path, server_python: str):
        self.data_dir = Path(data_dir).expanduser().resolve()
        if not self.data_dir.is_dir():
            raise TBBenchFormatError(f"{self.data_dir}: the benchmark data directory does not exist")
        self.server_python = str(server_python)
        self._lock = threading.Lock()
        self._modules: dict[Path, ParsedModule] = {}
        self._resolved: dict[str, Path] = {}
        self._agents: dict[Path, Any] = {}
        self._scenarios: dict[str, dict[str, Any]] = {}
        self._servers: dict[str, ServerCommand] | None = None
        self.tool_listings: dict[str, list[dict[str, Any]]] = {}  # filled by the episode code, per server
        self.pool_size: int | None = None  # warm server processes per server command; None: THINKINGBOX_TBBENCH_POOL or 2
        self._pool: Any = None  # the tbbench.pool.ServerPool of this clone, made by pool.bench_pool on first use

    def release_tasks(self) -> list[str]:
        return load_release_list(self.data_dir / RELEASE_LIST)

    @property
    def servers(self) -> dict[str, ServerCommand]:
        if self._servers is None:
            self._servers = load_servers(self.data_dir / SERVERS_FILE, self.server_python)
        return self._servers

    def resolve_task_file(self, rel: str) -> Path:
        """The task file a release entry names.

        A path relative to the clone is taken as it is; a bare file name (the
        release list's form) is looked up under ``dataset/test_case/`` and its
        scenario folders, and must be found exactly once.
        """
        if rel in self._resolved:
            return self._resolved[rel]
        direct = (self.data_dir / rel).resolve()
        if not direct.is_relative_to(self.data_dir):
            raise TBBenchFormatError(f"{rel}: task files must lie inside {self.data_dir}")
        if direct.is_file() or "/" in rel:
            return direct
        folder = self.data_dir / TEST_CASE_DIR
        found = sorted({p.resolve() for p in folder.rglob(rel) if p.is_file()}) if folder.is_dir() else []
        if len(found) == 1:
            self._resolved[rel] = found[0]
            return found[0]
        if not found:
            raise TBBenchFormatError(f"{rel}: no such task file in {self.data_dir} or under {folder}")
        raise TBBenchFormatError(f"{rel}: the name is ambiguous under {folder}: "
                                 f"{', '.join(str(p.relative_to(self.data_dir)) for p in found)}")

    def _module(self, rel: str) -> ParsedModule:
        path = self.resolve_task_file(rel)
        with self._lock:
            if path not in self._modules:
                self._modules[path] = parse_task_module(path)
            return self._modules[path]

    def scenario(self, name: str) -> dict[str, Any]:
        with self._lock:
            if name not in self._scenarios:
                path = self.data_dir / SCENARIO_DIR / f"{name}.yaml"
                data = read_yaml_file(path, "scenario")
                if not isinstance(data, dict):
                    raise TBBenchFormatError(f"{path}: a scenario must be a mapping")
                ws = data.get("world_state")
                if not isinstance(ws, dict) or not ws or not all(isinstance(v, dict) for v in ws.values()):
                    raise TBBenchFormatError(f"{location(path, fld='world_state')}: must map each server to its state")
                if not isinstance(data.get("bot_instructions"), str):
                    raise TBBenchFormatError(f"{location(path, fld='bot_instructions')}: the domain policy (a string) is missing")
                tools = data.get("tools")
                if tools is not None and not isinstance(tools, list):
                    raise TBBenchFormatError(f"{location(path, fld='tools')}: must be a list of tool names")
                data["_path"] = str(path)
                self._scenarios[name] = data
            return self._scenarios[name]

    def _agent_path(self, name: str | None, scenario: dict[str, Any], where: str) -> Path:
        name = name or scenario.get("agent")
        folder = self.data_dir / AGENT_DIR
        if name:
            return folder / (name if str(name).endswith((".yaml", ".yml")) else f"{name}.yaml")
        found = sorted(folder.glob("*.yaml")) if folder.is_dir() else []
        if len(found) != 1:
            raise TBBenchFormatError(f"{where}: no agent named and {folder} holds {len(found)} agent files, not one")
        return found[0]

    def agent_prompt(self, name: str | None, scenario: dict[str, Any], where: str) -> str:
        path = self._agent_path(name, scenario, where)
        data = self._agent_file(path)
        text = next((data[k] for k in _PROMPT_KEYS if isinstance(data, dict) and isinstance(data.get(k), str)), None)
        if text is None:
            raise TBBenchFormatError(f"{location(path, fld='system_instructions')}: the agent's system prompt (a string) is missing")
        return text

    def _agent_file(self, path: Path) -> Any:
        with self._lock:
            if path not in self._agents:
                self._agents[path] = read_yaml_file(path, "agent file")
            return self._agents[path]

    def builtin_tools(self, name: str | None, scenario: dict[str, Any], where: str) -> list[dict[str, Any]]:
        """The agent file's ``builtin_tools`` (tools the agent loop answers itself, such as the injection report).

        Called after :meth:`agent_prompt`, so the file is known to exist and to be
        a mapping; each entry needs a ``name`` and an ``input_schema`` mapping.
        """
        self.agent_prompt(name, scenario, where)
        path = self._agent_path(name, scenario, where)
        tools = self._agent_file(path).get("builtin_tools") or []
        if not isinstance(tools, list):
            raise TBBenchFormatError(f"{location(path, fld='builtin_tools')}: must be a list of tools")
        out = []
        for i, t in enumerate(tools):
            if not isinstance(t, dict) or not isinstance(t.get("name"), str) or not t["name"]:
                raise TBBenchFormatError(f"{location(path, fld=f'builtin_tools[{i}].name')}: a builtin tool needs a name (a string)")
            schema = t.get("input_schema", {"type": "object", "properties": {}})
            if not isinstance(schema, dict):
                raise TBBenchFormatError(f"{location(path, fld=f'builtin_tools[{i}].input_schema')}: must be a JSON schema mapping")
            description = t.get("description") or ""
            if not isinstance(description, str):
                raise TBBenchFormatError(f"{location(path, fld=f'builtin_tools[{i}].description')}: must be a string")
            out.append({"name": t["name"], "description": description.strip(), "parameters": schema,
                        "is_end_turn": bool(t.get("is_end_turn"))})
        return out

    def task(self, task_id: str) -> TBTask:
        """``file.py:test_name`` (with or without the ``tbbench/`` prefix) as a parsed, merged task."""
        if task_id.startswith(NAMESPACE + "/"):
            task_id = task_id[len(NAMESPACE) + 1:]
        rel, sep, test = task_id.rpartition(":")
        if not sep or not rel.endswith(".py") or not test:
            raise TBBenchFormatError(f"task '{task_id}': expected 'file.py:test_name'")
        module = self._module(rel)
        if test not in module.tests:
            known = ", ".join(sorted(module.tests)) or "none"
            raise TBBenchFormatError(f"{rel}: task '{test}': no test function with a '\"\"\"!' docstring of that name (found: {known})")
        spec = module.tests[test]
        where = location(rel, test)
        query = spec.get("query")
        if not isinstance(query, str) or not query.strip():
            raise TBBenchFormatError(f"{where}: field 'query': the user's opening request (a string) is missing")
        init = spec.get("init") or {}
        if not isinstance(init, dict) or not all(isinstance(v, dict | None) for v in init.values()):
            raise TBBenchFormatError(f"{where}: field 'init': must map server names to their init block")
        scenario = self.scenario(module.scenario)
        world = scenario["world_state"]
        unknown = sorted(set(init) - set(world))
        if unknown:
            raise TBBenchFormatError(f"{where}: field 'init.{unknown[0]}': no such server in scenario '{module.scenario}' "
                                     f"(servers: {', '.join(world)})")
        merged = {server: merge_init(state, init.get(server)) for server, state in world.items()}
        missing = [s for s in merged if s not in self.servers]
        if missing:
            raise TBBenchFormatError(f"{scenario['_path']}: field 'world_state.{missing[0]}': no such server in "
                                     f"{self.data_dir / SERVERS_FILE} (servers: {', '.join(self.servers)})")
        task = TBTask(file=rel, test=test, scenario=module.scenario, query=query.strip(),
                      user_context=spec.get("user_context"),
                      system_prompt=self.agent_prompt(module.agent, scenario, where),
                      builtin_tools=self.builtin_tools(module.agent, scenario, where),
                      policy=scenario["bot_instructions"],
                      tools=[t if isinstance(t, str) else str((t or {}).get("name")) for t in scenario["tools"]]
                      if scenario.get("tools") is not None else None,
                      world_state=merged)
        # surface malformed golden calls, rubrics and sources now, not mid-episode
        task.golden  # noqa: B018
        task.rubrics()
        task.sources()
        return task
