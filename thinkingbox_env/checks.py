"""Executable checks, the conjunctive verdict, the reward vector and the failure category.

State checks are derived from the golden outcome rather than written per task:
one ``effect`` check per expected canonical effect and one ``no_collateral``
check for everything else the agent changed. Together they hold exactly when the
final canonical state equals the golden one. Explicit checks add SQL predicates,
dialogue patterns and rubric questions. A check that could not be evaluated (a
rubric with no judge) is ``None``: it never counts as passed.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from .diff import StateDiff, canonical_hash, compute_diff
from .spec import TaskSpec
from .state import EpisodeState

CheckKind = Literal["effect", "no_collateral", "sql", "dialogue", "rubric"]
STATE_KINDS = ("effect", "no_collateral", "sql")

FAILURE_CATEGORIES = (
    "tool_usage",
    "no_state_changing_action",
    "incomplete_user_resolution",
    "wrong_state_update",
)

Judge = Callable[[str, str], tuple[bool, str]]  # (question, transcript) -> (answer, reason)


@dataclass
class CheckResult:
    name: str
    kind: CheckKind
    passed: bool | None  # None: not evaluated
    detail: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "passed": self.passed, "detail": self.detail}


def _effect_label(effect: tuple[str, ...]) -> str:
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


def state_checks(golden: StateDiff, agent: StateDiff) -> list[CheckResult]:
    """Effect checks (one per expected effect) and the no-collateral check."""
    results: list[CheckResult] = []
    remaining: Counter = Counter(agent.effects)
    agent_updates = {(e[1], e[2]): json.loads(e[3]) for e in agent.effects if e[0] == "update"}
    seen_labels: Counter = Counter()
    for effect in sorted(golden.effects):
        for _ in range(golden.effects[effect]):
            label = _effect_label(effect)
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
            results.append(CheckResult(name, "effect", passed, detail))
    # collateral: every agent effect not accounted for by the golden set
    extra = []
    golden_updates = {(e[1], e[2]): json.loads(e[3]) for e in golden.effects if e[0] == "update"}
    for effect, count in sorted(agent.effects.items()):
        if effect[0] == "update":
            want = golden_updates.get((effect[1], effect[2]))
            got = json.loads(effect[3])
            surplus = {c: v for c, v in got.items() if want is None or c not in want}
            if surplus:
                extra.append(f"{_effect_label(effect)} changed {json.dumps(surplus, default=str)}")
        elif count > golden.effects.get(effect, 0):
            n = count - golden.effects.get(effect, 0)
            extra.append(f"{_effect_label(effect)} x{n}: {effect[2]}")
    results.append(
        CheckResult("no_collateral", "no_collateral", not extra, "no other changes" if not extra else "; ".join(extra)[:2000])
    )
    return results


def sql_checks(spec: TaskSpec, state: EpisodeState) -> list[CheckResult]:
    out = []
    for chk in spec.checks.sql:
        try:
            rows = state.query(chk.query)
            value = list(rows[0].values())[0] if rows and len(rows[0]) == 1 and len(rows) == 1 else None
            if value is None:
                out.append(CheckResult(f"sql:{chk.name}", "sql", False, f"query must return one row with one value, got {len(rows)} rows"))
            else:
                out.append(CheckResult(f"sql:{chk.name}", "sql", bool(value), f"value {value!r}"))
        except Exception as exc:  # noqa: BLE001 - a broken check is a failed check, named
            out.append(CheckResult(f"sql:{chk.name}", "sql", False, f"query failed: {exc}"))
    return out


def dialogue_checks(spec: TaskSpec, final_message: str) -> list[CheckResult]:
    out = []
    for chk in spec.checks.dialogue:
        missing = [p for p in chk.must if not re.search(p, final_message, re.IGNORECASE)]
        forbidden = [p for p in chk.must_not if re.search(p, final_message, re.IGNORECASE)]
        passed = not missing and not forbidden
        detail = "ok" if passed else f"missing {missing} forbidden {forbidden}"
        out.append(CheckResult(f"dialogue:{chk.name}", "dialogue", passed, detail))
    return out


def rubric_checks(spec: TaskSpec, transcript: str, judge: Judge | None) -> list[CheckResult]:
    out = []
    for chk in spec.checks.rubric:
        name = f"rubric:{chk.name}"
        if judge is None:
            out.append(CheckResult(name, "rubric", None, "not evaluated: no judge configured"))
            continue
        try:
            answer, reason = judge(chk.question, transcript)
            out.append(CheckResult(name, "rubric", bool(answer), reason))
        except Exception as exc:  # noqa: BLE001 - an unavailable judge leaves the check unevaluated
            out.append(CheckResult(name, "rubric", None, f"not evaluated: judge failed ({type(exc).__name__}: {exc})"))
    return out


@dataclass
class StateOutcome:
    """What the checks need from the final backend state, in a form that can cross a process.

    Computed next to the state (in-process, or by the MCP server that holds it)
    and turned into check results next to the golden outcome.
    """

    effects: Counter
    diff: dict[str, Any]
    state_hash: str
    sql: list[CheckResult]

    def as_diff(self) -> StateDiff:
        return StateDiff(tables={}, effects=self.effects, created_keys={})

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
            sql=[CheckResult(r["name"], r["kind"], r["passed"], r["detail"]) for r in data["sql"]],
        )


def state_outcome(spec: TaskSpec, state: EpisodeState) -> StateOutcome:
    diff = compute_diff(state)
    return StateOutcome(diff.effects, diff.to_json(state.tables), canonical_hash(state, diff), sql_checks(spec, state))


def verdict(results: list[CheckResult]) -> float:
    return 1.0 if results and all(r.passed is True for r in results) else 0.0


def reward_vector(results: list[CheckResult]) -> np.ndarray:
    return np.array([1.0 if r.passed else 0.0 for r in results], dtype=np.float32)


def failure_category(
    results: list[CheckResult],
    trace: list[dict[str, Any]],
    finish_reason: str,
    golden_has_effects: bool,
) -> str | None:
    """The dominant failure signature, by the fixed precedence of the paper's appendix D.3."""
    if all(r.passed is True for r in results):
        return None
    if not any(r.passed is False for r in results):
        return None  # only unevaluated checks: not an agent failure
    calls = [e for e in trace if e.get("type") == "tool_call"]
    for i, call in enumerate(calls):
        if not call["ok"] and not any(later["ok"] and later["name"] == call["name"] for later in calls[i + 1 :]):
            return "tool_usage"
    state_failed = any(r.passed is False for r in results if r.kind in STATE_KINDS)
    wrote = any(c["ok"] and c["writes"] for c in calls)
    if state_failed and golden_has_effects and not wrote:
        return "no_state_changing_action"
    dialogue_failed = any(r.passed is False for r in results if r.kind in ("dialogue", "rubric"))
    if finish_reason not in ("done_marker", "end_tool") or dialogue_failed:
        return "incomplete_user_resolution"
    return "wrong_state_update" if wrote else "no_state_changing_action"
