"""The package's parts and the arrows allowed between them, checked by parsing every import.

Each folder of ``thinkingbox_env`` is one part with one job, and the parts are layered: a part
imports only the parts below it (``PARTS_ALLOWED``). Every import counts, the ones inside
functions (lazy) as well; an import made only for type checking counts for the arrows but not for
cycles. No module may take part in an import cycle, lazy imports included. Every module has a row
in ``docs/architecture.md``. No Python module of the project is over ``MAX_MODULE_LINES`` lines,
except the domains' tool files (``domains/*/tools.py``).
"""

from __future__ import annotations

import ast
import re
import shutil
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "thinkingbox_env"

# The root keeps the façade (``__init__``) and the plumbing every part may use.
PLUMBING = {"version", "extras", "bounded_yaml", "plugins"}

# The engine's parts, bottom to top: each may import the parts listed for it (and itself).
_BASE = {"plumbing", "contracts"}
ENGINE_ALLOWED: dict[str, set[str]] = {
    "plumbing": set(),
    "contracts": {"plumbing"},
    "llm": _BASE,
    "state": _BASE,
    "toolkit": _BASE | {"state"},
    "users": _BASE | {"llm"},
    "judging": _BASE | {"llm"},
    "reading": _BASE | {"llm", "judging"},
    "authoring": _BASE,
    "checks": _BASE | {"llm", "state", "toolkit", "users", "judging", "reading"},
    "tasks": _BASE | {"state", "toolkit", "authoring", "checks"},
    "envs": _BASE | {"llm", "state", "toolkit", "users", "judging", "reading", "authoring", "checks", "tasks"},
}
ENGINE = set(ENGINE_ALLOWED)

# The outer parts build on the engine; the command line assembles them all.
PARTS_ALLOWED: dict[str, set[str]] = {
    **{part: allowed | {part} for part, allowed in ENGINE_ALLOWED.items()},
    "agents": ENGINE | {"agents"},
    "serving": ENGINE | {"serving"},
    "eval": ENGINE | {"agents", "eval"},
    "integrations": ENGINE | {"agents", "eval", "integrations"},
    "tbbench": ENGINE | {"tbbench"},
    "cli": ENGINE | {"agents", "eval", "serving", "integrations", "tbbench", "cli"},
    "facade": ENGINE | {"agents"},
    "domains": {"plumbing", "contracts", "state", "toolkit", "authoring", "domains"},
}
FOLDERS = set(PARTS_ALLOWED) - {"plumbing", "facade", "domains"}


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    line: int
    type_only: bool
    implied: bool = False  # a package its import runs on the way to the module named


def part_of(module: str) -> str:
    """The part a dotted module name belongs to (``domains`` for anything under ``domains/``)."""
    if not module.startswith(PACKAGE):
        return "domains"
    parts = module.split(".")
    if len(parts) == 1:
        return "facade"
    if parts[1] in FOLDERS:
        return parts[1]
    if len(parts) == 2 and parts[1] in PLUMBING:
        return "plumbing"
    return "unplaced"  # a module at the root that is neither façade nor plumbing: a test below fails on it


def _module_name(path: Path, package_root: Path, domains_root: Path | None) -> str:
    if domains_root is not None and path.is_relative_to(domains_root):
        rel = path.relative_to(domains_root.parent).with_suffix("")
    else:
        rel = path.relative_to(package_root.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST, module: str, is_package: bool, modules: set[str]) -> list[Edge]:
    """Every import of a module, at the top or inside a function, as edges to the modules it runs.

    Importing ``a.b.c`` runs the packages ``a.b`` and ``a`` first, so an edge to a module implies
    edges to its packages, except to the package root (the façade, which every module's import
    runs) and to the packages the importing module is itself inside (already running).
    """
    edges: list[Edge] = []
    package = module if is_package else module.rpartition(".")[0]
    own = {".".join(module.split(".")[:i]) for i in range(1, module.count(".") + 1)}
    if is_package:
        own.add(module)

    def add(target: str, line: int, type_only: bool) -> None:
        if target not in modules:
            return
        edges.append(Edge(module, target, line, type_only))
        parts = target.split(".")
        for i in range(2, len(parts)):
            parent = ".".join(parts[:i])
            if parent not in own and parent in modules:
                edges.append(Edge(module, parent, line, type_only, implied=True))

    def visit(node: ast.AST, type_only: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                for sub in child.body:
                    visit_stmt(sub, True)
                for sub in child.orelse:
                    visit_stmt(sub, type_only)
                continue
            visit_stmt(child, type_only)

    def visit_stmt(node: ast.AST, type_only: bool) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name, node.lineno, type_only)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            submodules = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in modules]
            for sub in submodules:  # `from . import x` names a module
                add(sub, node.lineno, type_only)
            if len(submodules) < len(node.names) or target not in own:
                add(target, node.lineno, type_only)  # a name read from the module (or a package run on the way)
        visit(node, type_only)

    visit(tree, False)
    return edges


def import_graph(package_root: Path, domains_root: Path | None = None) -> tuple[set[str], list[Edge]]:
    """Every module of the package (and of the domains) and every import between them."""
    files = sorted(p for p in package_root.rglob("*.py") if "_bundled" not in p.parts)
    if domains_root is not None:
        files += sorted(domains_root.rglob("*.py"))
    paths: dict[str, Path] = {_module_name(p, package_root, domains_root): p for p in files}
    modules = set(paths)
    edges: list[Edge] = []
    for name, path in paths.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        edges += _imports(tree, name, path.name == "__init__.py", modules)
    return modules, edges


def upward_arrows(edges: list[Edge]) -> dict[tuple[str, str], list[str]]:
    """Each import that crosses from one part into a part it may not import, by (source, target) module."""
    bad: dict[tuple[str, str], list[str]] = defaultdict(list)
    for e in edges:
        src, dst = part_of(e.source), part_of(e.target)
        if not e.implied and dst not in PARTS_ALLOWED.get(src, set()):
            bad[(e.source, e.target)].append(f"{e.source}:{e.line} imports {e.target} ({src} -> {dst})")
    return bad


def forbidden_arrows(edges: list[Edge]) -> list[str]:
    """Every upward arrow, one line per import."""
    return [line for lines in upward_arrows(edges).values() for line in lines]


def module_cycles(modules: set[str], edges: list[Edge]) -> list[list[str]]:
    """Strongly connected components of more than one module, over every import that runs (lazy ones too)."""
    graph: dict[str, set[str]] = defaultdict(set)
    for e in edges:
        if not e.type_only and e.source != e.target:
            graph[e.source].add(e.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def strongconnect(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                strongconnect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        for v in sorted(modules):
            if v not in index:
                strongconnect(v)
    finally:
        sys.setrecursionlimit(limit)
    return found


def test_every_module_belongs_to_a_part():
    modules, _ = import_graph(ROOT / PACKAGE)
    assert sorted(m for m in modules if part_of(m) == "unplaced") == []


def test_no_upward_arrow_between_parts():
    _, edges = import_graph(ROOT / PACKAGE, ROOT / "domains")
    assert forbidden_arrows(edges) == []


def test_no_import_cycle_between_modules():
    modules, edges = import_graph(ROOT / PACKAGE)
    assert module_cycles(modules, edges) == []


def _copy(tmp_path: Path) -> Path:
    copy = tmp_path / PACKAGE
    shutil.copytree(ROOT / PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__", "_bundled"))
    return copy


@pytest.mark.parametrize(("module", "line", "expected"), [
    ("envs/env.py", "from ..eval import trial", "envs -> eval"),
    ("serving/mcp_app.py", "from ..agents import baselines", "serving -> agents"),
    ("agents/baselines.py", "from ..serving import transports", "agents -> serving"),
    ("envs/registration.py", "from ..tbbench import source", "envs -> tbbench"),
    ("contracts/records.py", "from ..state import EpisodeState", "contracts -> state"),
    ("state/diff.py", "def f():\n    from ..checks import grade", "state -> checks"),
    ("checks/grading.py", "def f():\n    from ..envs.env import ThinkingboxEnv", "checks -> envs"),
    ("tasks/lookup.py", "from ..envs import registration", "tasks -> envs"),
    ("llm/client.py", "if TYPE_CHECKING:\n    from ..users import LLMUser", "llm -> users"),
    ("version.py", "from .contracts import spec", "plumbing -> contracts"),
])
def test_a_planted_upward_import_is_caught(tmp_path, module, line, expected):
    copy = _copy(tmp_path)
    target = copy / module
    target.write_text(target.read_text() + f"\n{line}\n")
    _, edges = import_graph(copy)
    assert any(expected in v for v in forbidden_arrows(edges))


def test_a_module_added_at_the_root_is_caught(tmp_path):
    copy = _copy(tmp_path)
    (copy / "helpers.py").write_text('"""A module outside every part."""\n')
    modules, _ = import_graph(copy)
    assert [m for m in modules if part_of(m) == "unplaced"] == [f"{PACKAGE}.helpers"]


def test_a_domain_importing_evaluation_is_caught(tmp_path):
    _copy(tmp_path)
    domain = tmp_path / "domains" / "toy"
    domain.mkdir(parents=True)
    (domain / "tools.py").write_text("from thinkingbox_env.eval import trial\n")
    _, edges = import_graph(tmp_path / PACKAGE, tmp_path / "domains")
    assert any("domains -> eval" in v for v in forbidden_arrows(edges))


def test_an_added_cycle_is_caught(tmp_path):
    copy = _copy(tmp_path)
    spaces = copy / "envs" / "spaces.py"
    spaces.write_text(spaces.read_text() + "\nfrom . import env\n")
    modules, edges = import_graph(copy)
    assert any(f"{PACKAGE}.envs.spaces" in c and f"{PACKAGE}.envs.env" in c for c in module_cycles(modules, edges))


def test_an_added_lazy_cycle_through_a_package_is_caught(tmp_path):
    copy = _copy(tmp_path)
    diff = copy / "state" / "diff.py"
    diff.write_text(diff.read_text() + "\n\ndef _late():\n    from ..toolkit import tools\n")
    modules, edges = import_graph(copy)
    assert any(f"{PACKAGE}.state.diff" in c and f"{PACKAGE}.toolkit.tools" in c for c in module_cycles(modules, edges))


def test_an_import_made_for_type_checking_is_no_cycle(tmp_path):
    copy = _copy(tmp_path)
    diff = copy / "state" / "diff.py"
    diff.write_text(diff.read_text() + "\nif TYPE_CHECKING:\n    from ..toolkit import tools\n")
    modules, edges = import_graph(copy)
    assert not any(f"{PACKAGE}.state.diff" in c for c in module_cycles(modules, edges))


_ROW = re.compile(r"^\|\s*(.+?)\s*\|")


def documented_modules() -> set[str]:
    """The module paths (relative to the package) named in the first cell of a table row of docs/architecture.md."""
    named: set[str] = set()
    for line in (ROOT / "docs" / "architecture.md").read_text().splitlines():
        match = _ROW.match(line)
        if match:
            named.update(re.findall(r"`([\w/]+(?:\.py|/))`", match.group(1)))
    return named


def test_every_module_has_a_row_in_the_architecture_doc():
    named = documented_modules()
    missing = []
    for path in sorted((ROOT / PACKAGE).rglob("*.py")):
        if "_bundled" in path.parts:
            continue
        rel = path.relative_to(ROOT / PACKAGE).as_posix()
        if rel == "__init__.py":
            continue  # the façade, described by the parts table
        if path.name == "__init__.py":
            rel = rel[: -len("__init__.py")]  # a package's row names its folder
        if rel not in named:
            missing.append(rel)
    assert missing == []


def test_every_part_has_a_row_in_the_parts_table():
    text = (ROOT / "docs" / "architecture.md").read_text()
    parts_rows = {m.group(1) for m in re.finditer(r"^\| (\w+) \| ", text, re.M)}
    assert sorted(set(PARTS_ALLOWED) - parts_rows) == []


# Python files of these folders are held to the size limit; a domain's tools.py (its whole tool surface) is not.
SIZED_FOLDERS = ("thinkingbox_env", "thinkingbox", "thinkingbox_verifiers", "domains", "training", "benchmarks", "examples")
MAX_MODULE_LINES = 600


def long_modules(root: Path, limit: int = MAX_MODULE_LINES) -> list[str]:
    """'path: N lines' for every .py file under ``root``'s sized folders over ``limit`` lines, domains/*/tools.py aside."""
    found = []
    for folder in SIZED_FOLDERS:
        for path in sorted((root / folder).rglob("*.py")):
            rel = path.relative_to(root)
            if "__pycache__" in rel.parts or (len(rel.parts) == 3 and rel.parts[0] == "domains" and rel.name == "tools.py"):
                continue
            lines = len(path.read_text(encoding="utf-8").splitlines())
            if lines > limit:
                found.append(f"{rel.as_posix()}: {lines} lines")
    return found


def test_no_module_is_over_the_size_limit():
    too_long = long_modules(ROOT)
    assert not too_long, f"over {MAX_MODULE_LINES} lines (split by job):\n" + "\n".join(too_long)


def test_a_planted_long_module_is_caught(tmp_path):
    def plant(rel: str, lines: int) -> None:
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n" * lines, encoding="utf-8")

    plant("training/experiments/long.py", MAX_MODULE_LINES + 1)
    plant("benchmarks/just_fits.py", MAX_MODULE_LINES)
    plant("domains/retail/tools.py", MAX_MODULE_LINES + 300)  # a domain's tool file may be longer
    plant("domains/retail/checks/tools.py", MAX_MODULE_LINES + 2)  # only the domain's own tools.py
    plant("docs/long.py", MAX_MODULE_LINES + 1)  # outside the sized folders
    assert long_modules(tmp_path) == [f"domains/retail/checks/tools.py: {MAX_MODULE_LINES + 2} lines",
                                      f"training/experiments/long.py: {MAX_MODULE_LINES + 1} lines"]
