"""The package's parts and the arrows allowed between them, checked by parsing every import.

The engine (the modules at the package root and its sub-packages ``checks`` and ``users``)
knows no other part; agents and serving build on the engine; evaluation on the engine and
agents; integrations on those three; the external-benchmark adapter ``tbbench`` on the engine;
the command line on everything; domains on the engine only. Imports made only for type
checking count for the arrows but not for cycles.
"""

from __future__ import annotations

import ast
import shutil
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "thinkingbox_env"

PARTS_ALLOWED: dict[str, set[str]] = {
    "engine": {"engine"},
    "agents": {"engine", "agents"},
    "serving": {"engine", "serving"},
    "eval": {"engine", "agents", "eval"},
    "integrations": {"engine", "agents", "eval", "integrations"},
    "tbbench": {"engine", "tbbench"},
    "cli": {"engine", "agents", "eval", "serving", "integrations", "tbbench", "cli"},
    "facade": {"engine", "agents"},
    "domain": {"engine", "domain"},
}
SUBPACKAGE_PARTS = {"agents", "eval", "serving", "integrations", "tbbench", "cli"}


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    line: int
    type_only: bool


def part_of(module: str) -> str:
    """The part a dotted module name belongs to (``domain`` for anything under ``domains``)."""
    if not module.startswith(PACKAGE):
        return "domain"
    parts = module.split(".")
    if len(parts) == 1:
        return "facade"
    return parts[1] if parts[1] in SUBPACKAGE_PARTS else "engine"


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


def _imports(tree: ast.AST, module: str, is_package: bool) -> list[Edge]:
    edges: list[Edge] = []
    package = module if is_package else module.rpartition(".")[0]

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
                edges.append(Edge(module, alias.name, node.lineno, type_only))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            edges.append(Edge(module, target, node.lineno, type_only))
            for alias in node.names:  # `from . import x` may name a module
                edges.append(Edge(module, f"{target}.{alias.name}", node.lineno, type_only))
        visit(node, type_only)

    visit(tree, False)
    return edges


def import_graph(package_root: Path, domains_root: Path | None = None) -> tuple[set[str], list[Edge]]:
    """Every module of the package (and of the domains) and every import between them."""
    files = sorted(package_root.rglob("*.py"))
    if domains_root is not None:
        files += sorted(domains_root.rglob("*.py"))
    modules: dict[str, Path] = {_module_name(p, package_root, domains_root): p for p in files}
    edges: list[Edge] = []
    for name, path in modules.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        for edge in _imports(tree, name, path.name == "__init__.py"):
            if edge.target in modules:
                edges.append(edge)
            elif edge.target.startswith(PACKAGE) or edge.target.startswith("domains"):
                pass  # a name imported from a module, already recorded by the module edge
    return set(modules), edges


def forbidden_arrows(edges: list[Edge]) -> list[str]:
    """Each import that crosses from one part into a part it may not import (the façade is for users only)."""
    bad = []
    for e in edges:
        src, dst = part_of(e.source), part_of(e.target)
        if dst not in PARTS_ALLOWED[src]:
            bad.append(f"{e.source}:{e.line} imports {e.target} ({src} -> {dst})")
    return bad


def module_cycles(modules: set[str], edges: list[Edge]) -> list[list[str]]:
    """Strongly connected components of more than one module (runtime imports only)."""
    graph: dict[str, set[str]] = defaultdict(set)
    for e in edges:
        if not e.type_only and e.source != e.target and not e.target.startswith(e.source + "."):
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

    for v in sorted(modules):
        if v not in index:
            strongconnect(v)
    return found


def _without_facade_cycles(cycles: list[list[str]]) -> list[list[str]]:
    """A package ``__init__`` that re-exports its own sub-modules is not a cycle between parts."""
    return [c for c in cycles if not all(m == c[0] or m.startswith(c[0] + ".") for m in c[1:])]


def test_no_forbidden_arrow_between_parts():
    _, edges = import_graph(ROOT / PACKAGE, ROOT / "domains")
    assert forbidden_arrows(edges) == []


def test_no_import_cycle_between_modules():
    modules, edges = import_graph(ROOT / PACKAGE)
    assert _without_facade_cycles(module_cycles(modules, edges)) == []


@pytest.mark.parametrize(("module", "line", "expected"), [
    ("envs/env.py", "from ..eval import trial", "engine -> eval"),
    ("serving/mcp_app.py", "from ..agents import baselines", "serving -> agents"),
    ("agents/baselines.py", "from ..serving import transports", "agents -> serving"),
    ("envs/registration.py", "from ..tbbench import source", "engine -> tbbench"),
])
def test_an_added_forbidden_import_is_caught(tmp_path, module, line, expected):
    copy = tmp_path / PACKAGE
    shutil.copytree(ROOT / PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__", "_bundled"))
    target = copy / module
    target.write_text(target.read_text() + f"\n{line}\n")
    _, edges = import_graph(copy)
    assert any(expected in v for v in forbidden_arrows(edges))


def test_a_domain_importing_evaluation_is_caught(tmp_path):
    shutil.copytree(ROOT / PACKAGE, tmp_path / PACKAGE, ignore=shutil.ignore_patterns("__pycache__", "_bundled"))
    domain = tmp_path / "domains" / "toy"
    domain.mkdir(parents=True)
    (domain / "tools.py").write_text("from thinkingbox_env.eval import trial\n")
    _, edges = import_graph(tmp_path / PACKAGE, tmp_path / "domains")
    assert any("domain -> eval" in v for v in forbidden_arrows(edges))


def test_an_added_cycle_is_caught(tmp_path):
    copy = tmp_path / PACKAGE
    shutil.copytree(ROOT / PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__", "_bundled"))
    (copy / "envs/spaces.py").write_text((copy / "envs/spaces.py").read_text() + "\nfrom . import env\n")
    modules, edges = import_graph(copy)
    cycles = _without_facade_cycles(module_cycles(modules, edges))
    assert any(f"{PACKAGE}.envs.spaces" in c and f"{PACKAGE}.envs.env" in c for c in cycles)
