"""What grading needs from the final backend state, in a form that can cross a process."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from ..contracts.records import CheckResult
from ..contracts.spec import TaskSpec
from ..state import EpisodeState
from ..state.diff import StateDiff, canonical_hash, compute_diff
from .base import kinds


@dataclass
class StateOutcome:
    """The agent's canonical effects, the readable diff, the state hash and the state-bound check results.

    Computed next to the state (in-process, or by the MCP server that holds it)
    and turned into a verdict next to the golden outcome by ``grade``.
    """

    effects: Counter
    diff: dict[str, Any]
    state_hash: str
    sql: list[CheckResult]  # every state-bound result (``CheckKind.on_state``), in kind order

    def as_diff(self) -> StateDiff:
        return StateDiff(tables={}, effects=self.effects, created_keys={})

    def results_of(self, kind: str) -> list[CheckResult]:
        return [r for r in self.sql if r.kind == kind]

    def to_json(self) -> dict[str, Any]:
        return {
            "effects": [[list(effect), count] for effect, count in sorted(self.effects.items())],
            "diff": self.diff,
            "state_hash": self.state_hash,
            "sql": [r.to_json() for r in self.sql],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> StateOutcome:
        return cls(
            effects=Counter({tuple(effect): count for effect, count in data["effects"]}),
            diff=data["diff"],
            state_hash=data["state_hash"],
            sql=[CheckResult.from_json(r) for r in data["sql"]],
        )


def state_outcome(spec: TaskSpec, state: EpisodeState) -> StateOutcome:
    """What grading needs from the database, read while it is open, so the verdict can be assembled after it is closed."""
    diff = compute_diff(state)
    bound: list[CheckResult] = []
    for k in kinds():
        results = k.on_state(spec, state)
        if results is not None:
            bound += results
    return StateOutcome(diff.effects, diff.to_json(state.tables), canonical_hash(state, diff), bound)
