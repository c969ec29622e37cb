"""Thinkingbox-bench v1.0 (an external clone) run through the environment, with the reference verdicts."""

from .env import PolicySearch, TBBenchEnv
from .format import TBBench, TBBenchFormatError, TBTask, merge_init, parse_task_module
from .source import SUITE, TBBenchSource, reference_check, register_source, task_source

__all__ = [
    "SUITE",
    "PolicySearch",
    "TBBench",
    "TBBenchEnv",
    "TBBenchFormatError",
    "TBBenchSource",
    "TBTask",
    "merge_init",
    "parse_task_module",
    "reference_check",
    "register_source",
    "task_source",
]
