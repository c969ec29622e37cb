"""The published release for the tests that need it, and the ``tbbench_full`` marker for the slow run over all of it.

The release archive is looked for beside the checkout (``../shared/thinkingbox-data/``, where CI puts it) or at
``THINKINGBOX_TBBENCH_ARCHIVE``; it is unpacked into a cache folder (``THINKINGBOX_TBBENCH_CACHE``, default
``~/.cache/thinkingbox-env/tbbench-v1.0``), and the servers' virtualenv is built there from PyPI once, unless
``THINKINGBOX_TBBENCH_PYTHON`` names one. Tests marked ``tbbench_full`` run only when selected with
``-m tbbench_full``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARCHIVE_NAME = "thinkingbox-data-v1.0.tar.gz"
SERVERS_PACKAGE = "servers/tb_business_ops_servers_202606"
SERVER_PINS = ("fastmcp<4", "mcp<2")


def pytest_configure(config):
    config.addinivalue_line("markers", "tbbench_full: the reference check over all 507 release tasks (slow; run with -m tbbench_full)")


def pytest_collection_modifyitems(config, items):
    if "tbbench_full" in (config.getoption("-m") or ""):
        return
    skip = pytest.mark.skip(reason="slow full run over the release; select it with -m tbbench_full")
    for item in items:
        if "tbbench_full" in item.keywords:
            item.add_marker(skip)


def release_archive() -> Path | None:
    named = os.environ.get("THINKINGBOX_TBBENCH_ARCHIVE")
    candidates = [Path(named)] if named else [d / "shared" / "thinkingbox-data" / ARCHIVE_NAME for d in (ROOT.parent, ROOT.parent.parent)]
    return next((p for p in candidates if p.is_file()), None)


@dataclass(frozen=True)
class Release:
    """An unpacked release and the interpreter its servers are installed for."""
    data_dir: Path
    server_python: str


def _unpack(archive: Path, cache: Path) -> Path:
    data = cache / "thinkingbox-data"
    stamp = cache / f".unpacked-{archive.stat().st_size}-{int(archive.stat().st_mtime)}"
    if not stamp.is_file():
        cache.mkdir(parents=True, exist_ok=True)
        with tarfile.open(archive) as tar:
            tar.extractall(cache, filter="data")
        stamp.touch()
    return data


def _server_python(data: Path, cache: Path) -> str:
    named = os.environ.get("THINKINGBOX_TBBENCH_PYTHON")
    if named:
        return named
    venv = cache / "servers-venv"
    python = venv / "bin" / "python"
    stamp = venv / ".installed"
    if not stamp.is_file():
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "-e", str(data / SERVERS_PACKAGE), *SERVER_PINS], check=True)
        stamp.touch()
    return str(python)


@pytest.fixture(scope="session")
def release() -> Release:
    archive = release_archive()
    if archive is None:
        pytest.skip(f"the release archive {ARCHIVE_NAME} is not in ../shared/thinkingbox-data/ beside the checkout "
                    "(or at THINKINGBOX_TBBENCH_ARCHIVE)")
    cache = Path(os.environ.get("THINKINGBOX_TBBENCH_CACHE", Path.home() / ".cache" / "thinkingbox-env" / "tbbench-v1.0"))
    data = _unpack(archive, cache)
    return Release(data, _server_python(data, cache))
