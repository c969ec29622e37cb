"""Thinkingbox-bench v1.0 (an external clone) run through the environment, with the reference verdicts."""

from .clone import TBBench
from .env import PolicySearch, TBBenchEnv
from .format import TBBenchFormatError, merge_init
from .source import SUITE, TBBenchSource, reference_check, register_source, task_source
from .task import TBTask
from .task_files import parse_task_module

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
