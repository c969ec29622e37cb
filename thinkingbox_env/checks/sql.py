"""``sql``: a task's explicit predicates over the final state, one scalar query each.

They need the live state, so they run next to it (``on_state``) and reach grading
inside the state outcome; over MCP that means on the server. Every query already ran
once when the task was loaded; one that still fails on a final state is a spec error
and leaves its check unevaluated, which is never booked as the agent's failure.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ..contracts.records import CheckResult
from ..contracts.spec import SqlCheck as SqlCheckSpec
from .base import CheckKind, GradingContext

if TYPE_CHECKING:
    from ..contracts.spec import TaskSpec
    from ..state import EpisodeState

log = logging.getLogger(__name__)


class SqlCheck(CheckKind):
    """Queries over the final state, bound while the database is open because the verdict may be assembled after it is closed."""
    name = "sql"
    group = "state"
    order = 300
    reward_group = "effects"
    spec_section = "sql"
    spec_item = SqlCheckSpec
    section_in_every_spec = True

    def on_state(self, task: TaskSpec, state: EpisodeState) -> list[CheckResult]:
        out = []
        for chk in task.checks.sql:
            name = f"sql:{chk.name}"
            try:
                rows = state.query(chk.query)
                value = list(rows[0].values())[0] if rows and len(rows[0]) == 1 and len(rows) == 1 else None
                if value is None:
                    out.append(CheckResult(name=name, kind="sql", passed=False,
                                           detail=f"query must return one row with one value, got {len(rows)} rows"))
                else:
                    out.append(CheckResult(name=name, kind="sql", passed=bool(value), detail=f"value {value!r}"))
            except Exception as exc:  # noqa: BLE001 - a broken check is the spec's fault, never the agent's
                log.error("task %s: SQL check %s failed to run: %s", task.full_id, chk.name, exc)
                out.append(CheckResult(name=name, kind="sql", passed=None, detail=f"spec error: query failed: {exc}"))
        return out

    def evaluate(self, context: GradingContext) -> list[CheckResult]:
        return context.outcome.results_of(self.name)
