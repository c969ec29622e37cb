"""``make()``, task sources and Gymnasium registration: the environments of the tasks ``tasks.lookup`` finds.

Every frozen test task is registered with Gymnasium as ``thinkingbox/<domain>.<id>-v<N>``, N being
the domain's ``task_set_version`` (raised whenever frozen tasks change, so results name the task set
they were measured on); the unversioned id resolves to it too. An archived task set's task is the
Gymnasium id ``thinkingbox/retail.ST030_001-v2``. Tasks provided outside the engine (a published
benchmark) come from task sources under a namespace of their own.
"""

from __future__ import annotations

import threading
from typing import Any, Protocol

import gymnasium as gym

from ..contracts.spec import TaskSpec
from ..tasks.domain import domain_dirs, load_domain
from ..tasks.lookup import (
    UnknownTaskError,
    _archived_task_files,
    _index_stamp,
    archived_task_set_versions,
    current_task_set_version,
    generate_variant,
    load_task,
    split_task_version,
    task_files,
)
from .env import ThinkingboxEnv

GYM_NAMESPACE = "thinkingbox"
TASK_SOURCE_GROUP = "thinkingbox_env.task_sources"
_LOCK = threading.Lock()
_SOURCES: dict[str, Any] = {}
_SOURCE_ENTRY_POINTS: dict[str, Any] | None = None


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
            gym.register(id=gid, entry_point="thinkingbox_env.envs.domain_env:DomainEnv", kwargs={"domain": domain},
                         disable_env_checker=False, order_enforce=True)
    archived = [t for domain in domain_dirs() for v in archived_task_set_versions(domain)
                for t in _archived_task_files(domain, v)]
    for task_id in [*task_files(), *archived]:
        gid = gym_id(task_id)
        if gid in registered:
            continue
        gym.register(
            id=gid,
            entry_point="thinkingbox_env.envs.registration:_gym_entry",
            kwargs={"task_id": task_id},
            disable_env_checker=False,
            order_enforce=True,
        )
    _REGISTERED_FOR = stamp
