"""Named backends (agents, simulated users, judges) that a run chooses by name, found through entry points.

One :class:`Registry` per kind of backend. Installed packages add backends through an
entry-point group, the way task sources are added (:mod:`thinkingbox_env.envs.registration`), and code
through :meth:`Registry.register`, so a new backend is one module and one entry point, never
an edit of the harness. Each :class:`Backend` states its options as a pydantic model and its
abilities as a capabilities record: the harness and the command line read the declaration
(before anything is built, and without probing the built object), and a wrong option is
refused by name before a trial starts rather than failing inside one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

C = TypeVar("C")


class Options(BaseModel):
    """The base of a backend's options: a misspelt option is refused, not silently ignored."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)


class NoOptions(Options):
    """The options of a backend that takes none."""


class UnknownBackendError(ValueError):
    """A name that no backend of the kind answers to; the message lists the names that do."""


class BackendOptionError(ValueError):
    """Options a backend refuses; names the kind, the backend and every bad field, so the fix is obvious."""

    def __init__(self, kind: str, backend: str, problems: list[tuple[str, str]]):
        self.kind = kind
        self.backend = backend
        self.fields = [name for name, _ in problems]
        super().__init__(f"{kind} '{backend}': " + "; ".join(f"option '{name}' {why}" for name, why in problems))


@dataclass(frozen=True)
class Backend(Generic[C]):
    """One named backend: what it takes (``options``), how it is made (``build``), and what it can do.

    ``build`` receives the validated options (and, per kind, what a trial adds, e.g. an
    agent's seed); ``describe`` is the one line shown by ``--help``.
    """

    name: str
    options: type[Options]
    build: Callable[..., Any]
    describe: str
    capabilities: C


class Registry(Generic[C]):
    """The backends of one kind, by name: those registered in code, then those of the entry-point group.

    Entry points are listed once and loaded on first use, so listing the names (``--help``)
    imports no backend; one that is registered in code under the same name wins.
    """

    def __init__(self, kind: str, group: str, capabilities: type[C], builtins: Mapping[str, str] | None = None) -> None:
        self.kind = kind
        self.group = group
        self.capabilities = capabilities
        # the package's own entry points, also written here: a source checkout on PYTHONPATH that was never
        # installed has no entry-point metadata, and must still find its built-in backends
        self._builtins = dict(builtins or {})
        self._lock = threading.Lock()
        self._backends: dict[str, Backend[C]] = {}
        self._entry_points: dict[str, EntryPoint] | None = None

    def register(self, backend: Backend[C], *, replace: bool = False) -> Backend[C]:
        """Add a backend; a name taken by another backend is refused unless ``replace``."""
        if not isinstance(backend.capabilities, self.capabilities):
            raise TypeError(f"{self.kind} '{backend.name}' declares {type(backend.capabilities).__name__}, "
                            f"not {self.capabilities.__name__}")
        if not backend.name or not isinstance(backend.name, str):
            raise ValueError(f"a {self.kind} needs a non-empty name, got {backend.name!r}")
        with self._lock:
            held = self._backends.get(backend.name)
            if held is not None and held is not backend and not replace:
                raise ValueError(f"a {self.kind} named '{backend.name}' is already registered; pass replace=True to replace it")
            self._backends[backend.name] = backend
        return backend

    def unregister(self, name: str) -> None:
        """Forget a backend registered in code (an entry point of the same name is found again on next use)."""
        with self._lock:
            self._backends.pop(name, None)

    def _points(self) -> dict[str, EntryPoint]:
        with self._lock:
            if self._entry_points is None:
                points = {name: EntryPoint(name, value, self.group) for name, value in self._builtins.items()}
                points.update({ep.name: ep for ep in entry_points(group=self.group)})
                self._entry_points = points
            return self._entry_points

    def names(self) -> list[str]:
        """Every name a run may give, sorted; loads nothing."""
        points = self._points()
        with self._lock:
            return sorted(set(self._backends) | set(points))

    def find(self, name: str) -> Backend[C] | None:
        """The backend of that name, loading its entry point on first use; None if there is none."""
        with self._lock:
            if name in self._backends:
                return self._backends[name]
        point = self._points().get(name)
        if point is None:
            return None
        loaded = point.load()
        backend = loaded if isinstance(loaded, Backend) else loaded()
        if not isinstance(backend, Backend) or backend.name != name:
            raise TypeError(f"entry point '{name}' of {self.group} ({point.value}) must give a Backend named '{name}', "
                            f"got {backend!r}")
        with self._lock:  # registered in code meanwhile: that one wins
            return self._backends.setdefault(name, backend)

    def get(self, name: str) -> Backend[C]:
        """The backend of that name; an unknown name is an error that lists the known ones."""
        backend = self.find(name)
        if backend is None:
            raise UnknownBackendError(f"unknown {self.kind} '{name}'; choose from {', '.join(self.names()) or 'none'}")
        return backend

    def describe_all(self) -> list[tuple[str, str]]:
        """(name, one line) for every backend; one that fails to load says so instead of hiding the others."""
        out = []
        for name in self.names():
            try:
                out.append((name, self.get(name).describe))
            except Exception as exc:  # noqa: BLE001 - a broken plugin must not take --help down with it
                out.append((name, f"(cannot be loaded: {type(exc).__name__}: {exc})"))
        return out

    def options(self, name: str, offered: Mapping[str, Any] | None = None, given: Mapping[str, Any] | None = None) -> Options:
        """The backend's validated options, from ``offered`` (the run's common settings) and ``given``.

        ``offered`` holds what every run has (a model name, an endpoint, a sampling temperature),
        of which the backend takes only the fields it declares; ``given`` is meant for this
        backend, so a name it does not declare is an error.
        """
        backend = self.get(name)
        declared = backend.options.model_fields
        values = {k: v for k, v in (offered or {}).items() if k in declared}
        values.update(given or {})
        try:
            return backend.options.model_validate(values)
        except ValidationError as exc:
            raise BackendOptionError(self.kind, name, _problems(exc, list(declared))) from None


def _problems(exc: ValidationError, declared: list[str]) -> list[tuple[str, str]]:
    out = []
    for error in exc.errors(include_url=False):
        where = ".".join(str(part) for part in error["loc"]) or "?"
        if error["type"] == "extra_forbidden":
            out.append((where, f"is not one of its options ({', '.join(declared) or 'it takes none'})"))
        elif error["type"] == "missing" or error.get("input", ...) is None:
            out.append((where, "is required"))
        else:
            out.append((where, f"{error['msg'][:1].lower()}{error['msg'][1:]} (got {error.get('input')!r})"))
    return out
