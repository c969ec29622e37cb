"""The two errors the state raises, in a module of their own so every part of the package can raise them."""

from __future__ import annotations


class StateError(RuntimeError):
    """The engine was asked to do something with the state that it must not do."""


class FastPathMismatch(StateError):
    """In verify mode, an answer computed in Python that is not the one DuckDB gives: a bug of the fast path."""
