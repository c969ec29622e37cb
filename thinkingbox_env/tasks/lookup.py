"""Task lookup: frozen test tasks by id, earlier task sets, and training variants.

Frozen test tasks live as ``task_specs/<domain>/<id>.yaml``. Earlier task sets stay loadable:
``task_specs/<domain>/v<N>/`` keeps version N's files as they were frozen, reached as
``retail/ST030_001@v2`` (``load_task``, ``list_tasks(task_set_version=2)``), so a result measured
on an old set can be reproduced after the set moves on. Training variants are generated on demand
by the domain's task families and never equal a test task.
"""

from __future__ import annotations

import difflib
import logging
import os
import re
import threading
from pathlib import Path

from ..contracts.spec import TaskSpec, load_task_file
from .domain import PATH_VARIABLE, data_roots, domain_dirs, load_domain, task_spec_dirs

log = logging.getLogger(__name__)

_LOCK = threading.Lock()
_SPECS: dict[str, TaskSpec] = {}


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
        from ..contracts.spec import SpecError

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
