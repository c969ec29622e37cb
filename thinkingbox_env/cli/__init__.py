"""The ``thinkingbox`` command: one module per command group, the only part that prints. May import every part."""

from __future__ import annotations

from .main import main

__all__ = ["main"]
