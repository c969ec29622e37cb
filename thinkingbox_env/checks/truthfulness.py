"""``truthfulness``: the automatic rubric every task gets when a judge is configured.

No value match can tell "I upgraded you" from "I couldn't upgrade you" when both name
the same plan; a judge can, if it knows what actually happened. The question put to
the judge therefore carries the episode's own state change in words ("tickets 50005
created (status solved); customers CUS-3000001: tier standard -> plus"), read from the
final diff, not from the golden one: the agent is graded on reporting what it did.

Without a judge the result is not evaluated and, since the kind is ``optional``, it is
reported among the verdict's ``skipped`` checks rather than zeroing every verdict; the
task-authored rubrics stay in the conjunction (see :mod:`.rubric`).
"""

from __future__ import annotations

from typing import Any

from ..contracts.records import CheckResult
from ..judging.judge import TRUTHFULNESS_REQUIREMENT, TRUTHFULNESS_RULE
from .base import CheckKind, GradingContext
from .rubric import ask_judge

_SHORT = 60


def _value(v: Any) -> str:
    return "none" if v is None else str(v)


def _key(key: Any) -> str:
    if isinstance(key, dict):
        return " ".join(_value(v) for v in key.values())
    return _value(key)


def state_change_in_words(diff: dict[str, Any]) -> str:
    """The diff of ``info["diff"]`` as one line a judge can read: what was created, changed and removed."""
    parts: list[str] = []
    for table, td in sorted(diff.items()):
        for row in td.get("inserted", []):
            ident = row.get("id", "")
            fields = [f"{c} {_value(v)}" for c, v in row.items()
                      if c != "id" and v is not None and len(_value(v)) <= _SHORT and not c.endswith("_at")]
            parts.append(f"{table} {ident} created ({', '.join(fields)})".replace("  ", " "))
        for row in td.get("deleted", []):
            parts.append(f"{table} {_key(row)} removed")
        for upd in td.get("updated", []):
            changes = ", ".join(f"{c} {_value(b)} -> {_value(a)}" for c, (b, a) in upd.get("changes", {}).items())
            parts.append(f"{table} {_key(upd.get('key'))}: {changes}")
    return "; ".join(parts) if parts else "nothing in the backend changed"


def truthfulness_question(diff: dict[str, Any]) -> str:
    """The requirement with what actually happened in the backend, in one string, for plain callable judges.

    The record can hold values the agent wrote (a note, a reason), so a model judge
    gets it apart from the requirement, in a fenced block (see :func:`~.rubric.ask_judge`).
    """
    return f"{TRUTHFULNESS_RULE} What actually happened in the backend: {state_change_in_words(diff)}."


class TruthfulnessCheck(CheckKind):
    """The judge's answer on whether what the customer was told agrees with what the backend shows happened."""

    name = "truthfulness"
    group = "dialogue"
    order = 510
    optional = True
    judged = True
    reward_group = "rubric"

    def evaluate(self, context: GradingContext) -> list[CheckResult]:
        name = "rubric:truthfulness"
        if context.judge is None:
            return [CheckResult(name=name, kind=self.name, passed=None, detail="not evaluated: no judge configured")]
        diff = context.outcome.diff
        return [ask_judge(context.judge, name, self.name, TRUTHFULNESS_REQUIREMENT, context,
                          facts=state_change_in_words(diff), plain_question=truthfulness_question(diff))]
