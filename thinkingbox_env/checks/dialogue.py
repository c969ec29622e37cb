"""``dialogue``: patterns the closing message must contain or must not contain."""

from __future__ import annotations

import re

from ..records import CheckResult
from .base import CheckKind, GradingContext


class DialogueCheck(CheckKind):
    """Checks on what the agent said, graded after the dialogue because the final state cannot show whether the customer was told."""
    name = "dialogue"
    group = "dialogue"
    order = 400

    def evaluate(self, context: GradingContext) -> list[CheckResult]:
        out = []
        text = context.final_message
        for chk in context.task.checks.dialogue:
            missing = [p for p in chk.must if not re.search(p, text, re.IGNORECASE)]
            forbidden = [p for p in chk.must_not if re.search(p, text, re.IGNORECASE)]
            passed = not missing and not forbidden
            detail = "ok" if passed else f"missing {missing} forbidden {forbidden}"
            out.append(CheckResult(name=f"dialogue:{chk.name}", kind="dialogue", passed=passed, detail=detail))
        return out
