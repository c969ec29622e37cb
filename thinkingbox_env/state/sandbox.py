"""The one in-memory DuckDB database of the process, locked down, and the few facts read from it once.

Spec SQL (checks, patches) and tool queries run here with the process's privileges, so the
database itself refuses to reach outside memory: no files, no network, no extensions, no
Python objects by name, and no query can turn any of it back on. Every domain, template and
episode lives in a schema of this one database (see ``thinkingbox_env.state``).
"""

from __future__ import annotations

import itertools
import re
import threading
from typing import Any

import duckdb

from .errors import StateError

SANDBOX_CONFIG: dict[str, Any] = {
    "threads": 1,
    "enable_external_access": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "python_enable_replacements": False,
    "lock_configuration": True,
}

# Optimizer passes kept on: those that choose a join's order and sides or a top-n, the ones
# that decide in which order rows without an ORDER BY come out. Every other pass is turned
# off: on tables of tens of rows they cost more than half of a statement's planning (about
# 0.3 ms a statement on a 2-core machine) and can save nothing; no pass changes a result.
KEPT_OPTIMIZERS = frozenset({
    "join_order", "build_side_probe_side", "top_n", "late_materialization", "statistics_propagation", "filter_pushdown",
})


def _open_database() -> duckdb.DuckDBPyConnection:
    """The sandboxed in-memory database, with the optimizer passes that only cost time on small tables off."""
    unlocked = {k: v for k, v in SANDBOX_CONFIG.items() if k != "lock_configuration"}
    con = duckdb.connect(":memory:", config=unlocked)
    names = [r[0] for r in con.execute("SELECT name FROM duckdb_optimizers() ORDER BY name").fetchall()]
    off = ",".join(n for n in names if n not in KEPT_OPTIMIZERS)
    con.execute(f"SET disabled_optimizers = '{off}'")
    if SANDBOX_CONFIG.get("lock_configuration"):
        con.execute("SET lock_configuration = true")
    return con


class _Process:
    """The process-wide database, created lazily, shared by every domain and episode."""

    _lock = threading.RLock()
    _con: duckdb.DuckDBPyConnection | None = None
    _parser: duckdb.DuckDBPyConnection | None = None
    _counter = itertools.count(1)

    @classmethod
    def connection(cls) -> duckdb.DuckDBPyConnection:
        with cls._lock:
            if cls._con is None:
                cls._con = _open_database()
            return cls._con

    @classmethod
    def parser(cls) -> duckdb.DuckDBPyConnection:
        """A cursor of its own for parsing and catalog reads, so a failure there never touches an episode's transaction."""
        with cls._lock:
            if cls._parser is None:
                cls._parser = cls.connection().cursor()
            return cls._parser

    @classmethod
    def next_name(cls, prefix: str) -> str:
        """A schema name never used before in this process (``t_<n>``, ``e_<n>``, ``c_<n>``)."""
        return f"{prefix}{next(cls._counter)}"


def _quote(name: str) -> str:
    """A table or column name quoted for SQL; anything but a plain identifier is refused."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise StateError(f"illegal identifier {name!r}")
    return f'"{name}"'


_RESERVED: list[frozenset[str]] = []


def reserved_words() -> frozenset[str]:
    """DuckDB's reserved keywords, read from the database once (an unquoted one is DuckDB's to interpret)."""
    if not _RESERVED:
        with _Process._lock:
            words = _Process.parser().execute(
                "SELECT keyword_name FROM duckdb_keywords() WHERE keyword_category = 'reserved'").fetchall()
        _RESERVED.append(frozenset(w[0].lower() for w in words))
    return _RESERVED[0]
