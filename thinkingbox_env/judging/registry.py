"""The judges a run can name (``--judge NAME``), from the ``thinkingbox_env.judges`` entry points.

A backend's ``build(options)`` returns a :class:`Judge`. The built-in ``rubric`` judge is
:class:`~thinkingbox_env.judging.judge.RubricJudge`; it is registered here rather than in ``judge.py``
so that the prompt and parsing stay apart from how a run picks its judge.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from ..llm.client import EndpointOptions
from ..plugins import Backend, Registry
from .judge import RubricJudge

JUDGE_GROUP = "thinkingbox_env.judges"
DEFAULT_JUDGE = "rubric"


class Judge(Protocol):
    """``(question, transcript, dialogue=, facts=) -> (answer or None, reason)``, and what it said last, for the row."""

    last_raw: str | None
    last_usage: dict[str, int] | None

    def identity(self) -> dict[str, Any]: ...

    def __call__(self, question: str, transcript: str, dialogue: list[dict[str, Any]] | None = None,
                 facts: str | None = None) -> tuple[bool | None, str]: ...


@dataclass(frozen=True)
class JudgeCapabilities:
    """What grading and the harness may rely on.

    Attributes:
        accepts_dialogue: it takes the structured dialogue and the backend facts, not only the
            transcript string (which cannot tell a forged speaker label from a real one).
        needs_endpoint: it asks a model; without ``--judge-model``/``--judge-base-url`` no judge
            runs and rubric checks stay unevaluated. A judge that needs none runs whenever named.
    """

    accepts_dialogue: bool = False
    needs_endpoint: bool = False


JUDGES: Registry[JudgeCapabilities] = Registry("judge", JUDGE_GROUP, JudgeCapabilities,
                                               builtins={"rubric": "thinkingbox_env.judging.registry:RUBRIC"})


def register_judge(backend: Backend[JudgeCapabilities], *, replace: bool = False) -> Backend[JudgeCapabilities]:
    """Make a judge available by name in this process; installed packages use the entry-point group instead."""
    return JUDGES.register(backend, replace=replace)


def _rubric(options: EndpointOptions) -> RubricJudge:
    return RubricJudge(model=options.model, base_url=options.base_url, api_key=options.api_key, timeout=options.timeout,
                       max_retries=options.max_retries)


RUBRIC = Backend(DEFAULT_JUDGE, EndpointOptions, _rubric, "a yes/no rubric question asked of a model over a fenced transcript",
                 JudgeCapabilities(accepts_dialogue=True, needs_endpoint=True))
