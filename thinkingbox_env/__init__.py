"""Thinkingbox: stateful business-workflow tasks as Gymnasium environments for LLM agents."""

from __future__ import annotations

from .agents import NoopAgent, OpenAIChatAgent, OracleAgent, run_episode
from .domain_env import DomainEnv
from .env import ThinkingboxEnv
from .family import TaskFamily
from .registry import (
    generate_variant,
    list_tasks,
    load_task,
    make,
    make_variant,
    register_gym_envs,
)
from .spec import SpecError, TaskSpec
from .tools import ToolError, tool
from .users import LLMUser, ScriptedUser
from .version import __version__ as __version__

__all__ = [
    "DomainEnv",
    "LLMUser",
    "NoopAgent",
    "OpenAIChatAgent",
    "OracleAgent",
    "ScriptedUser",
    "SpecError",
    "TaskFamily",
    "TaskSpec",
    "ThinkingboxEnv",
    "ToolError",
    "generate_variant",
    "list_tasks",
    "load_task",
    "make",
    "make_variant",
    "run_episode",
    "tool",
]

register_gym_envs()
