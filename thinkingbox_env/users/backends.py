"""The built-in simulated users, registered under ``thinkingbox_env.users`` in ``pyproject.toml``."""

from __future__ import annotations

from pydantic import Field, field_validator

from ..llm.client import EndpointOptions
from ..plugins import Backend, Options
from .llm import PERSONA_NOTES, LLMUser
from .registry import UserCapabilities
from .scripted import PERSONAS, ScriptedUser


def _known_persona(value: str, personas: tuple[str, ...] | list[str]) -> str:
    if value not in personas:
        raise ValueError(f"unknown persona {value!r}; choose from {', '.join(personas)}")
    return value


class ScriptedOptions(Options):
    """How the scripted customer behaves."""

    persona: str = "plain"

    @field_validator("persona")
    @classmethod
    def _persona(cls, value: str) -> str:
        return _known_persona(value, PERSONAS)


class LLMUserOptions(EndpointOptions):
    """The customer's model, its endpoint, sampling temperature and reply token cap, and how it behaves."""

    persona: str = "plain"
    temperature: float = 0.3
    max_tokens: int = Field(default=512, ge=1)  # a small model on a CPU: a lower cap bounds each reply's time

    @field_validator("persona")
    @classmethod
    def _persona(cls, value: str) -> str:
        return _known_persona(value, list(PERSONA_NOTES))


def _scripted(options: ScriptedOptions) -> ScriptedUser:
    return ScriptedUser(persona=options.persona)


def _llm(options: LLMUserOptions) -> LLMUser:
    return LLMUser(model=options.model, base_url=options.base_url, api_key=options.api_key, temperature=options.temperature,
                   max_tokens=options.max_tokens, persona=options.persona, timeout=options.timeout, max_retries=options.max_retries)


SCRIPTED = Backend("scripted", ScriptedOptions, _scripted, "answers from the task's typed facts, offline and deterministic",
                   UserCapabilities(deterministic=True, can_end=True, binds_domain=True))
LLM = Backend("llm", LLMUserOptions, _llm, "a model behind an OpenAI-compatible endpoint, --user-base-url and --user-model",
              UserCapabilities(needs_endpoint=True))
