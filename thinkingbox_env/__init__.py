"""Thinkingbox: stateful business-workflow tasks as Gymnasium environments for LLM agents."""

from __future__ import annotations

from .agents import NoopAgent, OpenAIChatAgent, OracleAgent, run_episode
from .authoring.family import TaskFamily
from .contracts.spec import SpecError, TaskSpec
from .envs.domain_env import DomainEnv
from .envs.env import ThinkingboxEnv
from .envs.registration import make, make_variant, register_gym_envs
from .tasks.lookup import generate_variant, list_tasks, load_task
from .toolkit.tools import ToolError, tool
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
