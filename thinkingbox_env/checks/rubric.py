"""``rubric``: yes/no questions for a judge model about the transcript.

Without a judge, or when the judge fails, the check is not evaluated (``None``):
it never counts as passed, and it is not the agent's failure either.
"""

from __future__ import annotations

from ..records import CheckResult
from .base import CheckKind, GradingContext


class RubricCheck(CheckKind):
    """Questions only a judge can answer about the dialogue; without a judge they are reported as unevaluated rather than passed."""
    name = "rubric"
    group = "dialogue"
    order = 500

    def evaluate(self, context: GradingContext) -> list[CheckResult]:
        out = []
        for chk in context.task.checks.rubric:
            name = f"rubric:{chk.name}"
            if context.judge is None:
                out.append(CheckResult(name=name, kind="rubric", passed=None, detail="not evaluated: no judge configured"))
                continue
            try:
                answer, reason = context.judge(chk.question, context.transcript)
                out.append(CheckResult(name=name, kind="rubric", passed=bool(answer), detail=reason))
            except Exception as exc:  # noqa: BLE001 - an unavailable judge leaves the check unevaluated
                out.append(CheckResult(name=name, kind="rubric", passed=None,
                                       detail=f"not evaluated: judge failed ({type(exc).__name__}: {exc})"))
        return out
