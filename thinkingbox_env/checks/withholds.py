"""``withholds``: what the customer is never told, read over every assistant message of the episode.

Forbidden values are matched as whole values (``23`` is never found in ``2023``);
a forbidden action word is forbidden when affirmed, not when denied; and the domain's
confidential concepts and internal columns (``domains/<d>/verdicts.yaml``) give one
more result, ``withholds:confidential``, on every task of a domain that declares them.
"""

from __future__ import annotations

import re
from typing import Any

from ..records import CheckResult
from ..values import Value, parse_value, same_value
from ..verdict_rules import DialogueContext, Withhold, dialogue_context, phrase_polarity, typed_dialogue
from .base import CheckKind, GradingContext


def _internal_values(ctx: DialogueContext, columns: list[str], records: list[Any]) -> list[Value]:
    wanted = {c.split(".")[-1] for c in columns}
    vals: list[Value] = []

    def walk(x: Any) -> None:
        if isinstance(x, dict):
            for k, v in x.items():
                if k in wanted and v is not None and not isinstance(v, (dict, list)):
                    pv = parse_value(str(v), ctx.clock, ctx.id_patterns)
                    if pv is not None:
                        vals.append(pv)
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(records)
    return vals


def _leaked(ctx: DialogueContext, w: Withhold, stated: list[Value]) -> bool:
    if w.regex is not None and any(re.search(w.regex, m, re.IGNORECASE) for m in ctx.agent_messages):
        return True
    if w.values and any(same_value(v, s) for v in w.values for s in stated):
        return True
    for m in ctx.agent_messages:
        for term in w.terms:
            pols = phrase_polarity(m, term)
            if (True in pols) if w.affirmed_only else bool(pols):
                return True
    return False


class WithholdsCheck(CheckKind):
    """Nothing the task or the domain keeps internal was said to the customer."""

    name = "withholds"
    group = "dialogue"
    order = 410

    def evaluate(self, context: GradingContext) -> list[CheckResult]:
        ctx = dialogue_context(context)
        stated = [v for _, v in ctx.agent_values()]
        out = []
        for t in typed_dialogue(context) if context.task.checks.dialogue else []:
            if not t.withholds:
                continue
            leaked = [w.label for w in t.withholds if _leaked(ctx, w, stated)]
            out.append(CheckResult(name=f"withholds:{t.name}", kind="withholds", passed=not leaked,
                                   detail="nothing withheld was said" if not leaked else f"said: {leaked}"))
        conf = ctx.rules.confidential
        if conf.concepts or conf.columns:
            found = [p for p in conf.concepts if any(phrase_polarity(m, p) for m in ctx.agent_messages)]
            # internal values stay internal even though a tool showed them to the agent
            for v in _internal_values(ctx, conf.columns, ctx.state_records):
                if any(s.kind == v.kind and s.norm == v.norm for s in stated):
                    found.append(f"{v.norm} (internal value)")
            out.append(CheckResult(name="withholds:confidential", kind="withholds", passed=not found,
                                   detail="no confidential value or concept said" if not found
                                   else f"said: {sorted(set(found))}"))
        return out
