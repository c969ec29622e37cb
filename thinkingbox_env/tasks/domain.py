"""Finding and loading domains: a domain is a folder, never code in the engine.

Every domain folder holds the same files (``domain.yaml``, ``schema.sql``,
``seed/``, ``rules.py``, ``tools.py``, ``policy.md``, ``kb/``, ``families/``); this module
reads them, so adding a domain means adding a folder under ``domains/`` and its
frozen tasks under ``task_specs/``.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import os
import sys
import threading
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from ..contracts.spec import DomainSpec, SpecError, load_domain_spec
from ..state import DomainDatabase
from ..toolkit.kb import kb_documents
from ..toolkit.ticketing import Ticketing
from ..toolkit.tools import Toolbox

if TYPE_CHECKING:
    from ..authoring.family import TaskFamily

_PACKAGE_DIR = Path(__file__).resolve().parents[1]
PATH_VARIABLE = "THINKINGBOX_PATH"
REQUIRED_FILES = ("domain.yaml", "schema.sql", "rules.py", "tools.py", "policy.md", "verdicts.yaml", "families/__init__.py")


def data_roots() -> list[Path]:
    """Folders that hold ``domains/`` and ``task_specs/``: extra roots first, then the bundled one.

    A wheel carries them under ``thinkingbox_env/_bundled``; a source checkout
    (editable install, tests) has them beside the package.
    """
    roots = [Path(p) for p in os.environ.get(PATH_VARIABLE, "").split(os.pathsep) if p]
    bundled = _PACKAGE_DIR / "_bundled"
    roots.append(bundled if (bundled / "domains").is_dir() else _PACKAGE_DIR.parent)
    return roots


_DOMAIN_DIRS: tuple[tuple, dict[str, Path]] | None = None


def _mtime(path: Path) -> int | None:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


def domain_dirs() -> dict[str, Path]:
    """Domain folders by name across every data root; the first root wins, so a source checkout shadows the bundled copy.

    Rescanned only when a ``domains`` folder or one of its subfolders changed: agents and ``make()`` ask for it on every call.
    """
    global _DOMAIN_DIRS
    roots = data_roots()
    cached = _DOMAIN_DIRS
    if cached is not None and cached[0][0] == tuple(roots) and all(_mtime(p) == m for p, m in cached[0][1]):
        return dict(cached[1])
    found: dict[str, Path] = {}
    watched: list[tuple[Path, int | None]] = []
    for root in roots:
        base = root / "domains"
        watched.append((base, _mtime(base)))
        if not base.is_dir():
            continue
        for d in sorted(base.iterdir()):
            if not d.is_dir():
                continue
            watched.append((d, _mtime(d)))  # a domain.yaml added to or removed from it
            if (d / "domain.yaml").is_file():
                found.setdefault(d.name, d)
    _DOMAIN_DIRS = ((tuple(roots), tuple(watched)), found)
    return dict(found)


def task_spec_dir(domain: str) -> Path | None:
    """The first root's task folder of a domain; :func:`task_spec_dirs` lists all of them."""
    dirs = task_spec_dirs(domain)
    return dirs[0] if dirs else None


def task_spec_dirs(domain: str) -> list[Path]:
    """Every root's task folder of a domain, in search-path order.

    An extra root adds tasks to the bundled ones: a folder on the path must not hide
    the frozen task set it sits beside. A task id found in two roots is the first
    root's (the earlier root overrides).
    """
    return [d for root in data_roots() for d in [root / "task_specs" / domain] if d.is_dir()]


def _import_domain_module(domain: str, path: Path, module: str) -> ModuleType:
    """Import ``domains/<d>/<module>.py`` as ``thinkingbox_domains.<d>.<module>``.

    Domain folders are data, not an installed package, so they get a synthetic
    package whose ``__path__`` points at the folder (relative imports between a
    domain's own files keep working).
    """
    root_name = "thinkingbox_domains"
    if root_name not in sys.modules:
        root = ModuleType(root_name)
        root.__path__ = []
        sys.modules[root_name] = root
    pkg_name = f"{root_name}.{domain}"
    if pkg_name not in sys.modules:
        spec = importlib.machinery.ModuleSpec(pkg_name, None, is_package=True)
        spec.submodule_search_locations = [str(path)]
        pkg = importlib.util.module_from_spec(spec)
        sys.modules[pkg_name] = pkg
    return importlib.import_module(f"{pkg_name}.{module}")


@dataclass
class Domain:
    """A loaded domain: its spec, tools and families, with the seeded database built once on first use and shared by its tasks."""
    name: str
    path: Path
    spec: DomainSpec
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _db: DomainDatabase | None = field(default=None, repr=False)

    @cached_property
    def policy(self) -> str:
        return (self.path / "policy.md").read_text(encoding="utf-8")

    @cached_property
    def tools_module(self) -> ModuleType:
        return _import_domain_module(self.name, self.path, "tools")

    def module(self, name: str) -> ModuleType:
        """One of the domain's own modules (``rules``, ``tools``, ``families``), imported once."""
        return _import_domain_module(self.name, self.path, name)

    @cached_property
    def toolbox(self) -> Toolbox:
        return Toolbox.from_module(self.tools_module)

    @cached_property
    def families(self) -> dict[str, TaskFamily]:
        module = _import_domain_module(self.name, self.path, "families")
        fams = getattr(module, "FAMILIES", None)
        if not fams:
            raise SpecError(f"{self.path / 'families'}: defines no FAMILIES list")
        out = {}
        for fam in fams:
            if fam.code in out:
                raise SpecError(f"{self.path / 'families'}: family code '{fam.code}' is used twice")
            fam.domain = self.name
            out[fam.code] = fam
        return out

    def family(self, key: str) -> TaskFamily:
        for fam in self.families.values():
            if key in (fam.code, fam.name):
                return fam
        raise KeyError(f"domain '{self.name}' has no task family '{key}'; families: {', '.join(self.families)}")

    @cached_property
    def ticketing(self) -> Ticketing | None:
        """The ticketing system ``tools.py`` declares (a module-level ``Ticketing``), whose tables the database gets."""
        found = [v for v in vars(self.tools_module).values() if isinstance(v, Ticketing)]
        if len(found) > 1:
            raise SpecError(f"{self.path / 'tools.py'}: declares {len(found)} Ticketing systems; a domain has one")
        return found[0] if found else None

    @property
    def db(self) -> DomainDatabase:
        with self._lock:
            if self._db is None:
                schema_sql = (self.path / "schema.sql").read_text(encoding="utf-8")
                ticketing = self.ticketing
                if ticketing is not None:
                    schema_sql = ticketing.schema_sql() + schema_sql
                self._db = DomainDatabase(self.spec, schema_sql, self.path / "seed", self.path / "kb")
            return self._db

    def kb_documents(self) -> dict[str, str]:
        return kb_documents(self.path / "kb")


_DOMAINS: dict[str, Domain] = {}
_DOMAINS_LOCK = threading.Lock()


def load_domain(name: str) -> Domain:
    """The process-wide instance of a domain, so its tools and database are loaded once however many envs use it."""
    with _DOMAINS_LOCK:
        if name in _DOMAINS:
            return _DOMAINS[name]
        dirs = domain_dirs()
        if name not in dirs:
            raise KeyError(f"unknown domain '{name}'; known domains: {', '.join(sorted(dirs)) or '(none)'}")
        path = dirs[name]
        missing = [f for f in REQUIRED_FILES if not (path / f).is_file()]
        if missing:
            raise SpecError(f"domain folder {path} lacks {', '.join(missing)}")
        spec = load_domain_spec(path / "domain.yaml")
        if spec.name != name:
            raise SpecError(f"{path / 'domain.yaml'}: field 'name' is '{spec.name}' but the folder is '{name}'")
        domain = Domain(name, path, spec)
        _DOMAINS[name] = domain
        return domain
