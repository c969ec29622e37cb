"""The fast path: statements answered in Python, from the rows an episode already holds, where that is certain.

Each evaluator answers ``(statement, params, view) -> Answer | None``: None means "not a
statement of my shape, or not one I can be sure of", and the next evaluator, then DuckDB,
is asked. ``EpisodeState`` asks the memo first, then ``answer_read`` or ``answer_write``,
then DuckDB. Every answer is counted per shape (``FAST_PATH_HITS``, shown by
``benchmarks/bench_env.py``) and, in verify mode, also computed by DuckDB and compared.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..verify import FAST_PATH_HITS
from . import equality_read, one_row_write
from .view import Answer, View

Evaluator = Callable[[str, Sequence[Any], View], Answer | None]

# in the order they are asked; the shapes of one family exclude each other, so the order only saves time
READS: tuple[Evaluator, ...] = (equality_read.by_key, equality_read.by_equality, equality_read.by_folded_equality)
WRITES: tuple[Evaluator, ...] = (one_row_write.insert, one_row_write.update)


def _ask(evaluators: Sequence[Evaluator], sql: str, params: Sequence[Any], view: View) -> Answer | None:
    for evaluate in evaluators:
        found = evaluate(sql, params, view)
        if found is not None:
            FAST_PATH_HITS[found.shape] += 1
            return found
    return None


def answer_read(sql: str, params: Sequence[Any], view: View) -> Answer | None:
    """A read's answer from the rows the view holds, or None: DuckDB must answer."""
    return _ask(READS, sql, params, view)


def answer_write(sql: str, params: Sequence[Any], view: View) -> Answer | None:
    """A write's returned rows (``RETURNING *``) computed in Python, or None: DuckDB must run it."""
    return _ask(WRITES, sql, params, view)


__all__ = ["READS", "WRITES", "Answer", "Evaluator", "View", "answer_read", "answer_write"]
