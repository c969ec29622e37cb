"""Read a Thinkingbox-bench v1.0 clone: task files, scenarios, the agent prompt, servers and the release list.

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
"""

from __future__ import annotations

import ast
import copy
import hashlib
import inspect
import json
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..bounded_yaml import MAX_YAML_BYTES, BoundedYAMLError, load_bounded_yaml, read_bounded_yaml
from ..spec import Fact, SpecError, ToolCall, UserSpec

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

# Keys we accept for the same thing; the first one is the benchmark's own.
_NAME_KEYS = ("name", "tool", "tool_name")
_ARGUMENT_KEYS = ("arguments", "args", "parameters", "input")
_PROMPT_KEYS = ("system_instructions", "system_prompt", "instructions", "prompt")


class TBBenchFormatError(SpecError):
    """A benchmark file is missing or malformed; the message names the file, the task and the field."""


def _where(path: Path | str, test: str | None = None, fld: str | None = None) -> str:
    out = str(path)
    if test:
        out += f": task '{test}'"
    if fld:
        out += f": field '{fld}'"
    return out


def _yaml_file(path: Path, what: str) -> Any:
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


# --------------------------------------------------------------------------- task files


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
        raise TBBenchFormatError(f"{_where(path, fld='scenario')}: the module docstring must name the scenario")
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
            raise TBBenchFormatError(f"{_where(path, fld='scenario')}: the module docstring names no scenario")
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
        block = _docstring_yaml(node.value.value, _where(path, fld=f"line {node.lineno}"))
        if block is None:
            continue
        if not isinstance(block, dict):
            raise TBBenchFormatError(f"{_where(path, fld=f'line {node.lineno}')}: a '!' block must be a YAML mapping, "
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
            raise TBBenchFormatError(f"{_where(path, fld='scenario')}: must be a scenario name, got {config['scenario']!r}")
        m = _SCENARIO_RE.search(config["scenario"].strip())
        scenario, agent = (m.group(1) if m else config["scenario"]), config.get("agent")
        if agent is not None and not isinstance(agent, str):
            raise TBBenchFormatError(f"{_where(path, fld='agent')}: must be an agent name, got {agent!r}")
    else:
        scenario, agent = _scenario_name(ast.get_docstring(tree, clean=False), path)
    shared = {k: v for k, v in config.items() if k not in ("scenario", "agent")}
    tests: dict[str, dict[str, Any]] = {}
    functions = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        functions += [n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for fn in functions:
        spec = _docstring_yaml(ast.get_docstring(fn, clean=False), _where(path, fn.name))
        if spec is None:
            continue
        if not isinstance(spec, dict):
            raise TBBenchFormatError(f"{_where(path, fn.name)}: the docstring YAML must be a mapping, got {type(spec).__name__}")
        # the file's shared block comes first and the test's own keys merge into it (lists such as tags concatenate)
        tests[fn.name] = merge_init(shared, spec) if shared else spec
    return ParsedModule(path, scenario, agent, tests)


# --------------------------------------------------------------------------- servers and release list


@dataclass(frozen=True)
class ServerCommand:
    """How to start one of the benchmark's tool servers, as its servers file declares it; the env never hard-codes a command."""
    name: str
    command: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()


def load_servers(path: Path, python: str) -> dict[str, ServerCommand]:
    """``servers.yaml`` with ``{python}`` replaced by the servers' interpreter."""
    data = _yaml_file(path, "servers file")
    if isinstance(data, dict) and isinstance(data.get("servers"), dict):
        data = data["servers"]
    if not isinstance(data, dict) or not data:
        raise TBBenchFormatError(f"{path}: the servers file must map server names to their command")
    out = {}
    for name, entry in data.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("command"), list) or not entry["command"]:
            raise TBBenchFormatError(f"{_where(path, fld=f'{name}.command')}: must be a non-empty list of strings")
        env = entry.get("env") or {}
        if not isinstance(env, dict):
            raise TBBenchFormatError(f"{_where(path, fld=f'{name}.env')}: must be a mapping")
        command = tuple(str(c).replace("{python}", python) for c in entry["command"])
        out[str(name)] = ServerCommand(str(name), command,
                                       tuple((str(k), str(v).replace("{python}", python)) for k, v in env.items()))
    return out


def load_release_list(path: Path) -> list[str]:
    """``file.py:test_name`` entries of a release list (a YAML list, or a mapping holding one)."""
    data = _yaml_file(path, "release list")
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
            raise TBBenchFormatError(f"{_where(path, fld=f'[{i}]')}: expected 'file.py:test_name', got {entry!r}")
        out.append(entry.strip())
    return out


# --------------------------------------------------------------------------- tasks


@dataclass
class TBTask:
    """One benchmark task, parsed and merged: everything an episode needs, nothing executed."""

    file: str
    test: str
    scenario: str
    query: str
    user_context: Any
    system_prompt: str
    policy: str
    tools: list[str] | None  # the scenario's tool list; None: every tool the servers offer
    world_state: dict[str, dict[str, Any]]  # per server, init merged in, sources included
    domain: str = NAMESPACE
    split: str = "test"
    golden_reply: str = GOLDEN_REPLY
    builtin_tools: list[dict[str, Any]] = field(default_factory=list)  # answered by the agent loop, not a server
    user: UserSpec = field(init=False)

    def __post_init__(self) -> None:
        self.user = user_spec(self.query, self.user_context)

    @property
    def id(self) -> str:
        return f"{self.file}:{self.test}"

    @property
    def full_id(self) -> str:
        return f"{NAMESPACE}/{self.id}"

    @property
    def family(self) -> str:
        return self.scenario

    @property
    def servers(self) -> list[str]:
        return list(self.world_state)

    def server_config(self, server: str) -> dict[str, Any]:
        """What ``__reserved__init`` receives: the merged state without the KB ``sources``."""
        return {k: v for k, v in self.world_state[server].items() if k != "sources"}

    def sources(self) -> list[dict[str, str]]:
        """The knowledge-base documents of every server, as ``{"source", "text"}``."""
        out: list[dict[str, str]] = []
        for server, state in self.world_state.items():
            out += normalise_sources(state.get("sources"), f"{self.full_id}: world_state.{server}.sources")
        return out

    def golden_interactions(self, server: str) -> list[dict[str, Any]]:
        gtc = self.world_state[server].get("golden_test_case") or {}
        return list(gtc.get("tool_interactions") or []) if isinstance(gtc, dict) else []

    @property
    def golden(self) -> list[ToolCall]:
        """The golden tool calls of every server, in order: what the oracle agent replays."""
        calls = []
        for server in self.world_state:
            for i, item in enumerate(self.golden_interactions(server)):
                calls.append(golden_call(item, f"{self.full_id}: init.{server}.golden_test_case.tool_interactions[{i}]"))
        return calls

    def rubrics(self) -> list[str]:
        out: list[str] = []
        for server, state in self.world_state.items():
            for i, r in enumerate(state.get("rubrics_yesno") or []):
                out.append(rubric_text(r, f"{self.full_id}: init.{server}.rubrics_yesno[{i}]"))
        return out

    def content_key(self) -> str:
        payload = {"query": self.query, "user_context": self.user_context, "world_state": self.world_state,
                   "policy": self.policy, "system_prompt": self.system_prompt, "tools": self.tools}
        return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def golden_call(item: Any, where: str) -> ToolCall:
    """Accept the several spellings of a tool call in the benchmark files and refuse anything else with its location."""
    if isinstance(item, dict):
        name = next((item[k] for k in _NAME_KEYS if isinstance(item.get(k), str)), None)
        args: Any = next((item[k] for k in _ARGUMENT_KEYS if k in item), {})
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except json.JSONDecodeError:
                args = None
        if name and isinstance(args, dict | None):
            return ToolCall(name=name, arguments=args or {})
    raise TBBenchFormatError(f"{where}: a tool interaction needs a tool 'name' and an 'arguments' mapping, got {item!r}")


def rubric_text(item: Any, where: str) -> str:
    """A rubric question from either of the benchmark's spellings (a string or a mapping with ``question``)."""
    if isinstance(item, str) and item.strip():
        return item.strip()
    if isinstance(item, dict) and isinstance(item.get("question"), str):
        return item["question"].strip()
    raise TBBenchFormatError(f"{where}: a rubric must be a yes/no question (a string), got {item!r}")


def normalise_sources(sources: Any, where: str) -> list[dict[str, str]]:
    """KB documents given as a list of strings or mappings, or as a name -> text mapping."""
    if sources is None:
        return []
    if isinstance(sources, dict):
        return [{"source": str(k), "text": str(v)} for k, v in sources.items()]
    if not isinstance(sources, list):
        raise TBBenchFormatError(f"{where}: must be a list of documents, got {type(sources).__name__}")
    out = []
    for i, doc in enumerate(sources):
        if isinstance(doc, str):
            out.append({"source": f"source_{i}", "text": doc})
        elif isinstance(doc, dict) and "snippets" in doc:
            # the release's shape: {name, snippets: [text, ...]}; each snippet is a unit of its own for search
            extra = sorted(set(doc) - {"name", "snippets"})
            if extra:
                raise TBBenchFormatError(f"{where}[{i}].{extra[0]}: unknown field of a source document (known: name, snippets)")
            name, snippets = doc.get("name"), doc["snippets"]
            if not isinstance(name, str) or not name.strip():
                raise TBBenchFormatError(f"{where}[{i}].name: a source document needs its name (a string)")
            if not isinstance(snippets, list) or not all(isinstance(x, str) for x in snippets):
                raise TBBenchFormatError(f"{where}[{i}].snippets: must be a list of strings")
            out += [{"source": name, "text": x} for x in snippets]
        elif isinstance(doc, dict):
            text = next((doc[k] for k in ("text", "content", "body") if isinstance(doc.get(k), str)), None)
            if text is None:
                raise TBBenchFormatError(f"{where}[{i}]: a document needs its 'text'")
            name = next((str(doc[k]) for k in ("source", "name", "title", "id") if doc.get(k) is not None), f"source_{i}")
            out.append({"source": name, "text": text})
        else:
            raise TBBenchFormatError(f"{where}[{i}]: a document must be a string or a mapping")
    return out


_STOP = frozenset(["the", "and", "for", "with", "that", "this", "your", "have", "from", "what", "when", "which", "about", "please", "would", "could", "there", "their"])


# The opening of the release's user_context: instructions to the simulated user, not things the customer knows.
_RULES_HEADER = re.compile(r"^\s*rules\s*:\s*$", re.IGNORECASE)
_RULE_LINE = re.compile(r"^\s*(do not|don't|never|always|remain|if asked for the same)\b", re.IGNORECASE)
MAX_FACT_TURNS = 3


def _grouped(facts: list[Fact], groups: int) -> list[Fact]:
    """Contiguous facts joined into at most ``groups``, each released by any of its members' words.

    The reference plays the customer with a model that answers several
    questions in one turn; a question per line would spend the ten user turns
    on tasks with many facts before any tool is called.
    """
    if len(facts) <= groups:
        return facts
    size = -(-len(facts) // groups)
    out = []
    for i in range(0, len(facts), size):
        part = facts[i:i + size]
        unlock = list(dict.fromkeys(w for f in part for w in f.unlock))
        out.append(Fact(text="\n".join(f.text for f in part), unlock=unlock))
    return out


def user_spec(query: str, context: Any) -> UserSpec:
    """The scripted user's view of ``user_context``: its facts in at most three groups, each released by its key words.

    The reference harness plays the user with a model (``--user llm`` here);
    the scripted user is the offline stand-in, so it releases a group of
    context lines when the agent's message names one of their distinctive
    words. The rule block addressed to the simulated user ("Do not invent ...")
    is not a fact.
    """
    facts: list[Fact] = []
    if isinstance(context, dict):
        for key, value in context.items():
            words = [w for w in re.split(r"[^A-Za-z0-9]+", str(key)) if len(w) > 1]
            shown = value if isinstance(value, str) else json.dumps(value, default=str)
            facts.append(Fact(text=f"My {str(key).replace('_', ' ')} is {shown}.", unlock=words or [str(key)]))
    elif context:
        lines = context if isinstance(context, list) else re.split(r"(?<=[.!?])\s+|\n+", str(context))
        for line in (str(x).strip() for x in lines):
            if _RULES_HEADER.match(line) or _RULE_LINE.match(line):
                continue
            words = sorted({w.lower() for w in re.findall(r"[A-Za-z]{4,}", line)} - _STOP)
            if line and words:
                facts.append(Fact(text=line, unlock=words))
        facts = _grouped(facts, MAX_FACT_TURNS)
    intent = query if not context else f"{query}\nContext: {context if isinstance(context, str) else json.dumps(context, default=str)}"
    return UserSpec(opening=query, facts=facts, intent=intent)


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
                data = _yaml_file(path, "scenario")
                if not isinstance(data, dict):
                    raise TBBenchFormatError(f"{path}: a scenario must be a mapping")
                ws = data.get("world_state")
                if not isinstance(ws, dict) or not ws or not all(isinstance(v, dict) for v in ws.values()):
                    raise TBBenchFormatError(f"{_where(path, fld='world_state')}: must map each server to its state")
                if not isinstance(data.get("bot_instructions"), str):
                    raise TBBenchFormatError(f"{_where(path, fld='bot_instructions')}: the domain policy (a string) is missing")
                tools = data.get("tools")
                if tools is not None and not isinstance(tools, list):
                    raise TBBenchFormatError(f"{_where(path, fld='tools')}: must be a list of tool names")
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
            raise TBBenchFormatError(f"{_where(path, fld='system_instructions')}: the agent's system prompt (a string) is missing")
        return text

    def _agent_file(self, path: Path) -> Any:
        with self._lock:
            if path not in self._agents:
                self._agents[path] = _yaml_file(path, "agent file")
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
            raise TBBenchFormatError(f"{_where(path, fld='builtin_tools')}: must be a list of tools")
        out = []
        for i, t in enumerate(tools):
            if not isinstance(t, dict) or not isinstance(t.get("name"), str) or not t["name"]:
                raise TBBenchFormatError(f"{_where(path, fld=f'builtin_tools[{i}].name')}: a builtin tool needs a name (a string)")
            schema = t.get("input_schema", {"type": "object", "properties": {}})
            if not isinstance(schema, dict):
                raise TBBenchFormatError(f"{_where(path, fld=f'builtin_tools[{i}].input_schema')}: must be a JSON schema mapping")
            description = t.get("description") or ""
            if not isinstance(description, str):
                raise TBBenchFormatError(f"{_where(path, fld=f'builtin_tools[{i}].description')}: must be a string")
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
        where = _where(rel, test)
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
