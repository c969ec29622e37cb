"""The fast path's guard rails: hit counts per statement shape, and verify mode.

Every answer Python gives instead of DuckDB claims to be exactly DuckDB's. With
``THINKINGBOX_STATE_VERIFY=1`` that claim is checked as it runs: DuckDB computes every such
answer too, and a difference raises ``FastPathMismatch``. ``benchmarks/bench_env.py`` reads
the counters to show how much each shape answers; a shape that answers under 5% of
statements costs more in code than it saves and is removed rather than extended.
"""

from __future__ import annotations

import collections
import os
from collections.abc import Sequence
from typing import Any

from .errors import FastPathMismatch

VERIFY_ENV = "THINKINGBOX_STATE_VERIFY"
FAST_PATH_HITS: collections.Counter[str] = collections.Counter()  # per statement shape, for bench_env.py
STATEMENTS: collections.Counter[str] = collections.Counter()  # reads and writes asked of episode states, the share's base


def verify_mode() -> bool:
    """Whether every fast-path answer is also computed by DuckDB and compared (``THINKINGBOX_STATE_VERIFY=1``)."""
    return os.environ.get(VERIFY_ENV, "") not in ("", "0", "false", "no")


def _same_answer(python: Sequence[tuple[Any, ...]], duck: Sequence[tuple[Any, ...]]) -> bool:
    """Equal rows with values of the very same types (1 and True, or 1 and Decimal(1), are different answers)."""
    return len(python) == len(duck) and all(
        len(a) == len(b) and all(x == y and type(x) is type(y) or (x is None and y is None) for x, y in zip(a, b))
        for a, b in zip(python, duck))


def check_fast_path(shape: str, sql: str, params: Sequence[Any], python: tuple[tuple[str, ...], list[tuple]],
                    duck: tuple[tuple[str, ...], list[tuple]]) -> None:
    """Raise ``FastPathMismatch`` unless Python's answer (names and rows) is DuckDB's."""
    if tuple(python[0]) != tuple(duck[0]) or not _same_answer(python[1], duck[1]):
        raise FastPathMismatch(f"fast path ({shape}) disagrees with DuckDB on {sql.strip()[:200]!r} with {list(params)!r}: "
                               f"Python {python[0]} {python[1]!r}; DuckDB {duck[0]} {duck[1]!r}")
