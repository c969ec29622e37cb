"""Task validation: is a task solvable, and do its checks catch the mistakes they should?

For every task: the oracle passes; doing nothing fails; dropping any single golden
write fails; repeating any single golden write fails unless the task says why that
write is idempotent; two resets give the same state hash and observations; every
identifier the user or the golden actions mention exists.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..agents.baselines import NoopAgent, OracleAgent, run_episode
from ..diff import canonical_hash
from ..env import ThinkingboxEnv
from ..runtime import runtime_for
from ..spec import TaskSpec, ToolCall


@dataclass
class ValidationResult:
    """What ``validate_task`` found about one task; an empty problem list means the task is usable."""
    task_id: str
    problems: list[str] = field(default_factory=list)
    counts: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.problems


def _run(spec: TaskSpec, calls: list[ToolCall] | None, judge: Any = None) -> dict[str, Any]:
    env = ThinkingboxEnv(spec, judge=judge, max_actions=max(50, 2 * len(spec.golden) + 5))
    try:
        return run_episode(env, OracleAgent(calls) if calls is not None else NoopAgent(), seed=0)
    finally:
        env.close()


def _values(obj: Any) -> Iterable[str]:
    if isinstance(obj, dict):
        for v in obj.values():
            yield from _values(v)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _values(v)
    elif obj is not None:
        yield str(obj)


def _is_id_argument(name: str) -> bool:
    return name == "id" or name.endswith("_id")


def validate_task(spec: TaskSpec, judge: Any = None) -> ValidationResult:
    """Check that a task discriminates: its golden calls pass, doing nothing fails, and resets are deterministic."""
    res = ValidationResult(spec.full_id)
    try:
        rt = runtime_for(spec)
        golden = rt.golden
    except Exception as exc:  # noqa: BLE001 - any failure here is the finding
        res.problems.append(f"golden run: {exc}")
        return res

    # reset determinism: two fresh episodes, same hash and same opening observation
    env_a, env_b = ThinkingboxEnv(spec), ThinkingboxEnv(spec)
    try:
        obs_a, _ = env_a.reset(seed=1)
        obs_b, _ = env_b.reset(seed=1)
        h_a, h_b = canonical_hash(env_a.state), canonical_hash(env_b.state)  # type: ignore[arg-type]
        if h_a != h_b or obs_a != obs_b:
            res.problems.append("reset is not deterministic")
        initial_values: set[str] = set()
        for table in env_a.state.tables:  # type: ignore[union-attr]
            for row in env_a.state.rows(table):  # type: ignore[union-attr]
                initial_values.update(_values(row))
    finally:
        env_a.close()
        env_b.close()
    res.counts["reset"] = "ok" if "reset is not deterministic" not in res.problems else "FAIL"

    oracle = _run(spec, list(spec.golden), judge)
    res.counts["oracle"] = "pass" if oracle["verdict"] == 1.0 else "FAIL"
    if oracle["verdict"] != 1.0:
        failed = [n for n, v in oracle["checks"].items() if v is not True]
        res.problems.append(f"oracle fails checks {failed}")

    noop = _run(spec, None, judge)
    res.counts["noop"] = "fails" if noop["verdict"] == 0.0 else "PASSES"
    if noop["verdict"] != 0.0:
        res.problems.append("doing nothing passes: the task checks nothing the agent must do")

    writes = rt.golden_write_indices
    dropped_ok = 0
    for i in writes:
        calls = [c for j, c in enumerate(spec.golden) if j != i]
        if _run(spec, calls, judge)["verdict"] == 0.0:
            dropped_ok += 1
        else:
            res.problems.append(f"dropping golden write {i} ({spec.golden[i].name}) still passes")
    res.counts["drop"] = f"{dropped_ok}/{len(writes)}"

    repeated_ok = 0
    for i in writes:
        calls = list(spec.golden[: i + 1]) + [spec.golden[i]] + list(spec.golden[i + 1 :])
        passed = _run(spec, calls, judge)["verdict"] == 1.0
        declared = i in spec.idempotent_writes
        if passed == declared:
            repeated_ok += 1
        elif passed:
            res.problems.append(f"repeating golden write {i} ({spec.golden[i].name}) still passes; declare why in idempotent_writes")
        else:
            res.problems.append(f"golden write {i} ({spec.golden[i].name}) is declared idempotent but repeating it fails")
    res.counts["repeat"] = f"{repeated_ok}/{len(writes)}"
    for i in spec.idempotent_writes:
        if i not in writes:
            res.problems.append(f"idempotent_writes names index {i}, which is not a golden write")

    # every identifier resolves: in the initial state, or created by an earlier golden call
    domain = rt.domain
    patterns = [re.compile(p) for p in domain.spec.id_patterns]
    known = set(initial_values)
    unresolved = []
    for i, call in enumerate(spec.golden):
        for name, value in call.arguments.items():
            if _is_id_argument(name) and value is not None and str(value) not in known:
                unresolved.append(f"golden[{i}].{name}={value}")
        known.update(_values(golden.results[i].content))
    for fact in spec.user.facts:
        for pattern in patterns:
            for m in pattern.finditer(fact.text):
                token = m.group().rstrip(".")
                if token not in initial_values:
                    unresolved.append(f"user fact mentions {token}")
    res.counts["ids"] = "ok" if not unresolved else "FAIL"
    if unresolved:
        res.problems.append("unresolved ids: " + ", ".join(unresolved))
    return res
