"""Evaluation: trial runner and run files, metrics, reports, task validation, and ``evaluate()``. May import the engine and agents."""

from __future__ import annotations

from .api import EvalSummary, evaluate, select_tasks
from .config import EndpointConfig, EvalConfig

__all__ = ["EndpointConfig", "EvalConfig", "EvalSummary", "evaluate", "select_tasks"]
