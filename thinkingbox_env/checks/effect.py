"""``effect``: one check per row change the golden run makes (an insert, a delete, an update of some fields)."""

from __future__ import annotations

import json
from collections import Counter

from ..contracts.records import CheckResult
from ..state.diff import StateDiff
from ._bookkeeping import compared
from .base import CheckKind, GradingContext


def effect_label(effect: tuple[str, ...]) -> str:
    """Name an effect by table and key so a failing check points at the row, not at an opaque tuple."""
    kind, table = effect[0], effect[1]
    if kind == "insert":
        return f"{table}:insert"
    key = ",".join(str(k) for k in json.loads(effect[2]))
    return f"{table}[{key}]:{kind}"


def _closest_insert(effect: tuple[str, ...], agent: StateDiff) -> str:
    """Name the fields in which the most similar created row differs from the expected one."""
    want = json.loads(effect[2])
    best, best_same = None, -1
    for other in agent.effects:
        if other[0] == "insert" and other[1] == effect[1]:
            got = json.loads(other[2])
            same = sum(1 for k, v in want.items() if got.get(k) == v)
            if same > best_same:
                best, best_same = got, same
    if best is None:
        return f"; no row was created in {effect[1]}"
    diffs = {k: {"expected": v, "actual": best.get(k)} for k, v in want.items() if best.get(k) != v}
    return f"; the closest created row differs in {json.dumps(diffs, default=str)}"


def effect_results(golden: StateDiff, agent: StateDiff) -> list[CheckResult]:
    """One result per expected effect; a repeated expected insert is numbered (``#1``, ``#2``)."""
    results: list[CheckResult] = []
    remaining: Counter = Counter(agent.effects)
    agent_updates = {(e[1], e[2]): json.loads(e[3]) for e in agent.effects if e[0] == "update"}
    seen_labels: Counter = Counter()
    for effect in sorted(golden.effects):
        for _ in range(golden.effects[effect]):
            label = effect_label(effect)
            seen_labels[label] += 1
            name = f"effect:{label}" + (f"#{seen_labels[label]}" if effect[0] == "insert" else "")
            if effect[0] == "update":
                want = json.loads(effect[3])
                got = agent_updates.get((effect[1], effect[2]), {})
                wrong = {c: {"expected": v, "actual": got.get(c, "<unchanged>")} for c, v in want.items() if got.get(c, object()) != v}
                passed = not wrong
                detail = "fields as expected" if passed else f"fields differ: {json.dumps(wrong, default=str)}"
            else:
                passed = remaining[effect] > 0
                detail = ("found" if passed else "missing") + f": {effect[2]}"
                if not passed and effect[0] == "insert":
                    detail += _closest_insert(effect, agent)
            if effect[0] != "update" and remaining[effect] > 0:
                remaining[effect] -= 1
            results.append(CheckResult(name=name, kind="effect", passed=passed, detail=detail))
    return results


class EffectCheck(CheckKind):
    """Derived from the golden diff, never written per task: the checks cannot disagree with the golden state."""

    name = "effect"
    group = "state"
    order = 100
    reward_group = "effects"

    def evaluate(self, context: GradingContext) -> list[CheckResult]:
        # a note the golden run wrote on the request's own ticket is bookkeeping, not a required effect (_bookkeeping.py)
        return effect_results(*compared(context))
