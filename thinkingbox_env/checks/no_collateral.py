"""``no_collateral``: nothing changed beyond what the golden run changed.

With the ``effect`` checks it holds exactly when the final canonical state equals
the golden one, bookkeeping aside: a note on the request's own ticket (a ticket the
golden run writes), which the domain declares under ``bookkeeping:`` in
``verdicts.yaml``, is neither collateral nor a required effect (``_bookkeeping.py``).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ..contracts.records import CheckResult
from ..state.diff import StateDiff
from ._bookkeeping import bookkeeping_rule, compared
from .base import CheckKind, GradingContext, TaskRuntimeView
from .effect import effect_label

if TYPE_CHECKING:
    from ..contracts.spec import TaskSpec


def collateral_result(golden: StateDiff, agent: StateDiff) -> CheckResult:
    """Fail on writes the golden run did not make: an agent that fixes the request but also touches other rows has broken something."""
    extra = []
    golden_updates = {(e[1], e[2]): json.loads(e[3]) for e in golden.effects if e[0] == "update"}
    for effect, count in sorted(agent.effects.items()):
        if effect[0] == "update":
            want = golden_updates.get((effect[1], effect[2]))
            got = json.loads(effect[3])
            surplus = {c: v for c, v in got.items() if want is None or c not in want}
            if surplus:
                extra.append(f"{effect_label(effect)} changed {json.dumps(surplus, default=str)}")
        elif count > golden.effects.get(effect, 0):
            n = count - golden.effects.get(effect, 0)
            extra.append(f"{effect_label(effect)} x{n}: {effect[2]}")
    detail = "no other changes" if not extra else "; ".join(extra)[:2000]
    return CheckResult(name="no_collateral", kind="no_collateral", passed=not extra, detail=detail)


class NoCollateralCheck(CheckKind):
    """Compares the agent's effects with the golden run's, so side effects outside the task fail even when every targeted check passes."""
    name = "no_collateral"
    group = "state"
    order = 200
    reward_group = "no_collateral"

    def evaluate(self, context: GradingContext) -> list[CheckResult]:
        # a note on the request's own ticket is bookkeeping the policy allows, not a side effect (_bookkeeping.py)
        return [collateral_result(*compared(context))]

    def check_task(self, task: TaskSpec, runtime: TaskRuntimeView) -> list[tuple[str, str]]:
        """The domain's ``bookkeeping:`` declaration read against its tables and tools, so a wrong one fails at load."""
        try:
            bookkeeping_rule(runtime.domain)
        except ValueError as exc:
            return [("domain", str(exc))]
        return []
