"""``rubric``: yes/no questions for a judge model about the transcript.

Without a judge, when the judge fails, or when its answer does not parse, the check
is not evaluated (``None``): it never counts as passed, and it is not the agent's
failure either; a trial whose only open checks are these is *unjudged*
(:func:`thinkingbox_env.checks.trial_outcome`).
"""

from __future__ import annotations

from ..contracts.records import CheckResult
from ..contracts.spec import RubricCheck as RubricCheckSpec
from .base import CheckKind, GradingContext, Judge


def ask_judge(judge: Judge, name: str, kind: str, question: str, context: GradingContext,
              facts: str | None = None, plain_question: str | None = None) -> CheckResult:
    """One judged check: the judge's yes or no, or not evaluated when it fails or its answer does not parse.

    A judge that takes the structured dialogue gets it, with the backend ``facts``
    kept out of the requirement; a plain callable gets ``plain_question`` (the
    requirement with the facts in it) and the transcript string, as it always has.
    """
    try:
        if getattr(judge, "accepts_dialogue", False):
            answer, reason = judge(question, context.transcript, dialogue=context.dialogue, facts=facts)
        else:
            answer, reason = judge(plain_question or question, context.transcript)
    except Exception as exc:  # noqa: BLE001 - an unavailable judge leaves the check unevaluated
        return CheckResult(name=name, kind=kind, passed=None, detail=f"not evaluated: judge failed ({type(exc).__name__}: {exc})")
    if answer is None:
        return CheckResult(name=name, kind=kind, passed=None, detail=f"not evaluated: {reason}")
    return CheckResult(name=name, kind=kind, passed=bool(answer), detail=reason)


class RubricCheck(CheckKind):
    """Questions only a judge can answer about the dialogue; without a judge they are reported as unevaluated rather than passed."""
    name = "rubric"
    group = "dialogue"
    order = 500
    judged = True
    reward_group = "rubric"
    spec_section = "rubric"
    spec_item = RubricCheckSpec
    section_in_every_spec = True

    def describe_spec(self, item: RubricCheckSpec) -> str:
        return f"rubric:{item.name} ({item.question})"

    def evaluate(self, context: GradingContext) -> list[CheckResult]:
        out = []
        for chk in context.task.checks.rubric:
            name = f"rubric:{chk.name}"
            if context.judge is None:
                out.append(CheckResult(name=name, kind="rubric", passed=None, detail="not evaluated: no judge configured"))
                continue
            out.append(ask_judge(context.judge, name, "rubric", chk.question, context))
        return out
