"""Task lookup: ``make()``, ``list_tasks()``, training variants and Gymnasium registration.

Frozen test tasks live as ``task_specs/<domain>/<id>.yaml``. Every one is also
registered with Gymnasium as ``thinkingbox/<domain>.<id>-v<N>``, N being the domain's
``task_set_version`` (raised whenever frozen tasks change, so results name the task set they
were measured on); the unversioned id resolves to it too. Earlier task sets stay loadable:
``task_specs/<domain>/v<N>/`` keeps version N's files as they were frozen, reached as
``retail/ST030_001@v2`` (``make``, ``load_task``, ``list_tasks(task_set_version=2)``) or as the
Gymnasium id ``thinkingbox/retail.ST030_001-v2``, so a result measured on an old set can be
reproduced after the set moves on. Training variants are generated on demand by the domain's
task families and never equal a test task.
"""

from __future__ import annotations

import difflib
import logging
import os
import re
import threading
from pathlib import Path
from typing import Any, Protocol

import gymnasium as gym

from .domain import PATH_VARIABLE, data_roots, domain_dirs, load_domain, task_spec_dirs
from .env import ThinkingboxEnv
from .spec import TaskSpec, load_task_file

log = logging.getLogger(__name__)

GYM_NAMESPACE = "thinkingbox"
TASK_SOURCE_GROUP = "thinkingbox_env.task_sources"
_LOCK = threading.Lock()
_SPECS: dict[str, TaskSpec] = {}
_SOURCES: dict[str, Any] = {}
_SOURCE_ENTRY_POINTS: dict[str, Any] | None = None


class UnknownTaskError(KeyError):
    """A task or suite id that no domain or task source provides; the message lists what is offered."""
    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0])


_INDEX: tuple[tuple, dict[str, Path]] | None = None
_VERSIONED_ID = re.compile(r"^(?P<task>[^@]+)@v(?P<version>[0-9]+)$")


def current_task_set_version(domain: str) -> int:
    """The version ``task_specs/<domain>/*.yaml`` holds (``domain.yaml``'s ``task_set_version``)."""
    return load_domain(domain).spec.task_set_version


def split_task_version(task_id: str) -> tuple[str, int | None]:
    """``"retail/ST030_001@v2"`` -> ``("retail/ST030_001", 2)``; an id without ``@v<N>`` has version None (the current set)."""
    match = _VERSIONED_ID.match(task_id)
    return (match["task"], int(match["version"])) if match else (task_id, None)


def archived_task_set_versions(domain: str) -> list[int]:
    """The earlier task-set versions kept under ``task_specs/<domain>/v<N>/``, oldest first."""
    found = {int(d.name[1:]) for base in task_spec_dirs(domain) for d in base.iterdir()
             if d.is_dir() and re.fullmatch(r"v[0-9]+", d.name)}
    return sorted(found - {current_task_set_version(domain)})


def task_set_versions(domain: str) -> list[int]:
    """Every task-set version of a domain that can be loaded: the archived ones and the current one."""
    return [*archived_task_set_versions(domain), current_task_set_version(domain)]


def _archived_task_files(domain: str, version: int) -> dict[str, Path]:
    """``{"retail/ST030_001@v2": path}`` for one archived version; an unknown version names the known ones."""
    if version not in archived_task_set_versions(domain):
        raise UnknownTaskError(f"domain '{domain}' has no task set version {version}; "
                               f"versions: {', '.join(map(str, task_set_versions(domain)))}")
    found: dict[str, Path] = {}
    for base in task_spec_dirs(domain):
        for p in sorted((base / f"v{version}").glob("*.yaml")):
            found.setdefault(f"{domain}/{p.stem}@v{version}", p)
    return found


def _index_stamp() -> tuple:
    """What the task-file index depends on: the search path and the folders' modification times.

    Adding, removing or renaming a task file or a domain folder changes the
    modification time of the folder that holds it, so a changed stamp means a
    rescan and an unchanged one means the index is still right.
    """
    stamp: list[object] = [os.environ.get(PATH_VARIABLE, "")]
    for root in data_roots():
        for sub in ("domains", "task_specs"):
            base = os.path.join(root, sub)  # plain strings: this runs on every make()
            try:
                stamp.append((base, os.stat(base).st_mtime_ns))
                if sub == "task_specs":
                    with os.scandir(base) as entries:
                        stamp.extend((e.name, e.stat().st_mtime_ns) for e in entries if e.is_dir())
            except OSError:
                stamp.append((base, None))
    return tuple(stamp)


def task_files() -> dict[str, Path]:
    """``{"retail/ST030_001": path}`` for every frozen task, without parsing any YAML.

    Built once and reused while the folders are unchanged: ``make()`` asks for it
    on every call, and a scan sorts every task file of every domain.
    """
    global _INDEX
    stamp = _index_stamp()
    index = _INDEX
    if index is not None and index[0] == stamp:
        return dict(index[1])
    out: dict[str, Path] = {}
    for domain in domain_dirs():
        found: dict[str, Path] = {}
        for d in task_spec_dirs(domain):  # every root adds its tasks; the first root wins an id
            for p in sorted(d.glob("*.yaml")):
                found.setdefault(f"{domain}/{p.stem}", p)
        out.update(sorted(found.items()))
    _INDEX = (stamp, out)
    return dict(out)


def load_task(task_id: str) -> TaskSpec:
    """Load and cache a frozen task by id; the cache makes repeated ``make`` calls in a training loop cheap.

    ``<domain>/<task>@v<N>`` loads task-set version N's file (the current set's when N is current).
    """
    with _LOCK:
        if task_id in _SPECS:
            return _SPECS[task_id]
    plain_id, version = split_task_version(task_id)
    if version is not None:
        return _load_archived(task_id, plain_id, version)
    files = task_files()
    if task_id not in files:
        close = difflib.get_close_matches(task_id, list(files), n=5, cutoff=0.5)
        hint = f"; closest matches: {', '.join(close)}" if close else ""
        if "/" not in task_id:
            hint += "; task ids look like '<domain>/<task>', e.g. 'retail/ST030_001'"
        raise UnknownTaskError(f"unknown task '{task_id}'{hint}")
    domain = task_id.split("/", 1)[0]
    spec = load_task_file(files[task_id], domain)
    if f"{spec.domain}/{spec.id}" != task_id:
        from .spec import SpecError

        raise SpecError(f"{files[task_id]}: field 'id' is '{spec.id}' but the file name says '{task_id.split('/', 1)[1]}'")
    with _LOCK:
        _SPECS[task_id] = spec
    return spec


def _load_archived(task_id: str, plain_id: str, version: int) -> TaskSpec:
    domain = plain_id.split("/", 1)[0]
    if domain not in domain_dirs():
        raise UnknownTaskError(f"unknown domain '{domain}'; known domains: {', '.join(domain_dirs())}")
    if version == current_task_set_version(domain):
        spec = load_task(plain_id)
    else:
        files = _archived_task_files(domain, version)
        if task_id not in files:
            close = difflib.get_close_matches(task_id, list(files), n=5, cutoff=0.5)
            hint = f"; closest matches: {', '.join(close)}" if close else ""
            raise UnknownTaskError(f"unknown task '{task_id}': task set version {version} of '{domain}' "
                                   f"has no task '{plain_id.split('/', 1)[1]}'{hint}")
        spec = load_task_file(files[task_id], domain)
        spec._task_set_version = version
    with _LOCK:
        _SPECS[task_id] = spec
    return spec


def list_tasks(domain: str | None = None, split: str | None = None, task_set_version: int | None = None) -> list[str]:
    """Ids of the frozen tasks (all of them ``split="test"``), optionally for one domain.

    With ``task_set_version`` (one domain only) the ids of that version, ``<domain>/<task>@v<N>``
    for an archived one.
    """
    if split not in (None, "test", "train"):
        raise ValueError(f"split must be 'test' or 'train', got {split!r}")
    if domain is not None and domain not in domain_dirs():
        raise UnknownTaskError(f"unknown domain '{domain}'; known domains: {', '.join(domain_dirs())}")
    if split == "train":
        return []  # training variants are generated, see make_variant()
    if task_set_version is not None and (domain is None or task_set_version != current_task_set_version(domain)):
        if domain is None:
            raise ValueError("list_tasks: task_set_version needs a domain (versions are per domain)")
        return list(_archived_task_files(domain, task_set_version))
    return [t for t in task_files() if domain is None or t.split("/", 1)[0] == domain]


_TEST_KEYS: dict[tuple[str, tuple[str, ...]], frozenset[str]] = {}


def test_task_keys(domain: str) -> frozenset[str]:
    """Content keys of the domain's frozen tasks, computed once per set of task files."""
    ids = tuple(list_tasks(domain))
    key = (domain, ids)
    if key not in _TEST_KEYS:
        _TEST_KEYS[key] = frozenset(load_task(t).content_key() for t in ids)
    return _TEST_KEYS[key]


def generate_variant(domain: str, family: str, seed: int, max_redraws: int = 100) -> TaskSpec:
    """A fresh training instance of a family; redrawn if it would reproduce a test task."""
    fam = load_domain(domain).family(family)
    forbidden = test_task_keys(domain)
    draw = seed
    for attempt in range(max_redraws):
        spec = fam.instance(draw, split="train")
        if spec.content_key() not in forbidden:
            if attempt:
                log.info("variant %s/%s seed %d equals a test task; used seed %d", domain, family, seed, draw)
            return spec
        draw = seed + (attempt + 1) * 1_000_003
    raise RuntimeError(f"family {domain}/{family} keeps reproducing test tasks from seed {seed}")


class TaskSource(Protocol):
    """Tasks provided outside the engine under a namespace of their own (``<namespace>/<name>``)."""

    def make(self, name: str, **kwargs: Any) -> ThinkingboxEnv: ...

    def suites(self) -> list[str]: ...

    def suite_tasks(self, suite: str, **options: Any) -> list[str]: ...


def register_task_source(namespace: str, source: TaskSource) -> None:
    """Serve ``make("<namespace>/...")`` from ``source``; installed packages use the entry-point group instead."""
    if "/" in namespace or not namespace:
        raise ValueError(f"a task namespace is one non-empty path segment, got {namespace!r}")
    with _LOCK:
        _SOURCES[namespace] = source


def task_source(namespace: str) -> TaskSource | None:
    """The source registered for a namespace, loading its ``thinkingbox_env.task_sources`` entry point on first use."""
    global _SOURCE_ENTRY_POINTS
    with _LOCK:
        if namespace in _SOURCES:
            return _SOURCES[namespace]
        if _SOURCE_ENTRY_POINTS is None:
            from importlib.metadata import entry_points

            _SOURCE_ENTRY_POINTS = {ep.name: ep for ep in entry_points(group=TASK_SOURCE_GROUP)}
        ep = _SOURCE_ENTRY_POINTS.get(namespace)
    if ep is None:
        return None
    loaded = ep.load()
    source = loaded() if not hasattr(loaded, "make") else loaded
    register_task_source(namespace, source)
    return source


def suite_tasks(suite: str, **options: Any) -> list[str]:
    """Task ids of a named suite offered by any task source (e.g. ``tbbench-v1``)."""
    task_source("")  # loads the entry-point names
    names = sorted(set(_SOURCES) | set(_SOURCE_ENTRY_POINTS or {}))
    offered = []
    for ns in names:
        source = task_source(ns)
        if source is not None and suite in source.suites():
            return source.suite_tasks(suite, **options)
        offered += source.suites() if source is not None else []
    raise UnknownTaskError(f"unknown suite '{suite}'; suites offered: {', '.join(offered) or 'none'}")


def make(task: str | TaskSpec, **kwargs: Any) -> ThinkingboxEnv:
    """Build the environment of a task: ``make("retail/ST030_001", user=..., judge=..., max_actions=...)``."""
    if isinstance(task, str) and "/" in task:
        namespace, name = task.split("/", 1)
        source = task_source(namespace)
        if source is not None:
            return source.make(name, **kwargs)
    spec = task if isinstance(task, TaskSpec) else load_task(task)
    env = ThinkingboxEnv(spec, **kwargs)
    if spec.split == "test" and not isinstance(task, TaskSpec):
        register_gym_envs()  # picks up domains added through THINKINGBOX_PATH after import
        gym_spec = gym.spec(gym_id(task))
        nondeterministic = not getattr(env.user, "deterministic", False)
        env.spec = gym_spec if not nondeterministic else _replace_spec(gym_spec, nondeterministic=True)
    return env


def make_variant(domain: str, family: str, seed: int, **kwargs: Any) -> ThinkingboxEnv:
    """An environment for a freshly drawn training variant, guaranteed to differ from every test task."""
    return ThinkingboxEnv(generate_variant(domain, family, seed), **kwargs)


def _replace_spec(spec: Any, **changes: Any) -> Any:
    import dataclasses

    return dataclasses.replace(spec, **changes)


def gym_id(task_id: str) -> str:
    """``retail/ST030_001`` -> ``thinkingbox/retail.ST030_001-v3`` (the domain's task-set version); ``...@v2`` -> ``-v2``."""
    plain_id, version = split_task_version(task_id)
    domain, name = plain_id.split("/", 1)
    return f"{GYM_NAMESPACE}/{domain}.{name}-v{version or current_task_set_version(domain)}"


def _gym_entry(task_id: str, **kwargs: Any) -> ThinkingboxEnv:
    return ThinkingboxEnv(load_task(task_id), **kwargs)


_REGISTERED_FOR: tuple | None = None


def register_gym_envs() -> None:
    """Register every frozen task with Gymnasium, again only when the set of task files changed."""
    global _REGISTERED_FOR
    stamp = _index_stamp()
    if stamp == _REGISTERED_FOR:
        return
    registered = gym.registry
    for domain in domain_dirs():  # one env for the whole domain, drawing a task per reset
        gid = f"{GYM_NAMESPACE}/{domain}-v{load_domain(domain).spec.task_set_version}"
        if gid not in registered:
            gym.register(id=gid, entry_point="thinkingbox_env.domain_env:DomainEnv", kwargs={"domain": domain},
                         disable_env_checker=False, order_enforce=True)
    archived = [t for domain in domain_dirs() for v in archived_task_set_versions(domain)
                for t in _archived_task_files(domain, v)]
    for task_id in [*task_files(), *archived]:
        gid = gym_id(task_id)
        if gid in registered:
            continue
        gym.register(
            id=gid,
            entry_point="thinkingbox_env.registry:_gym_entry",
            kwargs={"task_id": task_id},
            disable_env_checker=False,
            order_enforce=True,
        )
    _REGISTERED_FOR = stamp
