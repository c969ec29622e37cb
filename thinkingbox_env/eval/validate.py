"""Task validation: is a task solvable, and do its checks catch the mistakes they should?

For every task: the oracle passes; doing nothing fails; dropping any single golden
write fails, but for a note on the request's own ticket (bookkeeping, which the checks
accept done or not); repeating any single golden write fails unless the task says why that
write is idempotent; two resets give the same state hash and observations; every
identifier the user or the golden actions mention exists; the golden closing with
one stated value changed fails; the golden trajectory with a verification or a
consent moved after the write it guards fails, wherever a process rule applies.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import timedelta
from decimal import Decimal
from typing import Any

from ..agents.baselines import NoopAgent, OracleAgent, run_episode
from ..checks import trial_outcome
from ..checks._bookkeeping import bookkeeping_rule, is_bookkeeping_call
from ..checks.verdict_rules import load_verdict_rules
from ..contracts.spec import TaskSpec, ToolCall
from ..envs.env import ThinkingboxEnv
from ..reading.values import Value, extract_values
from ..state.diff import canonical_hash
from ..tasks.runtime import runtime_for


@dataclass
class ValidationResult:
    """What ``validate_task`` found about one task; an empty problem list means the task is usable."""
    task_id: str
    problems: list[str] = field(default_factory=list)
    counts: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.problems


def _run(spec: TaskSpec, calls: list[ToolCall] | None, judge: Any = None, **oracle: Any) -> dict[str, Any]:
    env = ThinkingboxEnv(spec, judge=judge, max_actions=max(50, 2 * len(spec.golden) + 5))
    try:
        return run_episode(env, OracleAgent(calls, **oracle) if calls is not None else NoopAgent(), seed=0)
    finally:
        env.close()


def changed_value(v: Value, attempt: int = 0) -> str | None:
    """The same value, wrong: an amount off by some dollars, a date some days later, an id one digit off."""
    if v.kind == "money":
        return f"${Decimal(v.norm) + (10, 7, 13)[attempt % 3]:,.2f}"
    if v.kind == "date":
        from datetime import date as _date

        return (_date.fromisoformat(v.norm) + timedelta(days=(3, 4, 11)[attempt % 3])).isoformat()
    if v.kind == "id" and v.text[-1:].isdigit():
        return v.text[:-1] + str((int(v.text[-1]) + 1 + attempt) % 10)
    return None


def change_one_value(text: str, clock: Any, id_patterns: list[str], attempt: int = 0) -> tuple[str, str] | None:
    """(closing with its first money amount, date or id changed, what was changed), or None."""
    for v in extract_values(text, clock, id_patterns):
        if v.kind in ("money", "date", "id") and "@" not in v.norm and not v.text.isalpha():
            new = changed_value(v, attempt)
            if new:
                return text[: v.start] + new + text[v.end :], f"{v.text} -> {new}"
    return None


def _process_probes(spec: TaskSpec, rt: Any, trace: list[Any] | None = None) -> list[tuple[str, list[ToolCall], dict[str, Any]]]:
    """Golden variants that break one process rule each: (label, calls, oracle options).

    With the golden ``trace``, a consent rule is probed only where one of its writes needs agreement
    there: a rule may guard a write only when it is not what the customer asked for, and moving the
    proposal after a write the customer asked for in those terms breaks no rule.
    """
    probes: list[tuple[str, list[ToolCall], dict[str, Any]]] = []
    writes = set(rt.golden_write_indices)
    for rule in load_verdict_rules(str(rt.domain.path)).process:
        guarded = [i for i in writes if spec.golden[i].name in rule.writes and rt.golden.results[i].ok]
        if not guarded:
            continue
        if rule.kind == "consent_before":
            if trace is not None and not _consent_needed(spec, rt, trace, rule):
                continue
            probes.append((f"{rule.name}: consent after the write", list(spec.golden), {"consent": "after"}))
        else:
            verify = [i for i, c in enumerate(spec.golden) if c.name == rule.verify_tool]
            last = max(guarded)
            if verify and min(verify) < last:
                kept = [c for i, c in enumerate(spec.golden) if i not in verify]
                at = kept.index(spec.golden[last]) + 1
                moved = kept[:at] + [spec.golden[i] for i in verify] + kept[at:]
                probes.append((f"{rule.name}: verification after the write", moved, {}))
    return probes


def _consent_needed(spec: TaskSpec, rt: Any, trace: list[Any], rule: Any = None) -> list[str]:
    """The golden trace's guarded writes that need the customer's agreement under the domain's consent rules (or one)."""
    from ..checks._write_terms import Reading
    from ..checks.process import runtime_rows, writes_needing_consent

    domain = rt.domain
    rules = [r for r in load_verdict_rules(str(domain.path)).process if r.kind == "consent_before" and rule in (None, r)]
    reading = Reading(str(domain.path), domain.spec.clock.date(), tuple(domain.spec.id_patterns))
    return writes_needing_consent(rules, trace, reading, runtime_rows(rt))


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
    """Check that a task discriminates: its golden calls pass, doing nothing fails, and resets are deterministic.

    Rubric questions are validated only with a ``judge``; without one they are set aside (``counts["rubric"]``
    says so) and the rest of the task is validated, so a task set with rubric tasks validates offline.
    """
    res = ValidationResult(spec.full_id)
    if spec.checks.rubric and judge is None:
        # only a judge reads a rubric: without one, everything else the task checks is validated
        checks = type(spec.checks).model_validate({**spec.checks.model_dump(mode="json"), "rubric": []})
        spec = spec.model_copy(update={"checks": checks})
        res.counts["rubric"] = "unjudged"
    elif spec.checks.rubric:
        res.counts["rubric"] = "judged"
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
    outcome = trial_outcome(oracle["verdict"], oracle["check_details"])
    res.counts["oracle"] = {"pass": "pass", "unjudged": "unjudged"}.get(outcome, "FAIL")
    if outcome == "unjudged":
        # the judge failed or gave answers that do not parse: the rubrics are not validated, nor failed
        res.counts["rubric"] = "unjudged"
    elif oracle["verdict"] != 1.0:
        failed = [n for n, v in oracle["checks"].items() if v is not True]
        res.problems.append(f"oracle fails checks {failed}")

    # a changed value can happen to equal another true fact of the episode (a different order's
    # date); the property is that a changed value is caught, so three different changes are tried
    tried = []
    for attempt in range(3):
        changed = change_one_value(spec.golden_reply, rt.domain.spec.clock.date(), rt.domain.spec.id_patterns, attempt)
        if changed is None:
            break
        tried.append(changed[1])
        probe = _run(spec, list(spec.golden), judge, closing=changed[0])
        if probe["verdict"] == 0.0:
            res.counts["value"] = "fails"
            break
        if probe.get("unverified"):  # not a verified pass: no reader decided the changed sentence
            res.counts["value"] = "unverified"
            break
    else:
        res.problems.append(f"the golden closing with a changed value still passes ({'; '.join(tried)})")
        res.counts["value"] = "PASSES"
    if not tried:
        res.counts["value"] = "n/a"

    # a consent rule may guard a write only where it is not what the customer asked for: where the golden
    # trace has no guarded write the rule applies to, moving the proposal after the writes breaks no rule
    probes = _process_probes(spec, rt, oracle.get("trace") or [])
    caught = 0
    for label, calls, options in probes:
        info = _run(spec, calls, judge, **options)
        named = [n for n, v in info["checks"].items() if n.startswith("process:") and v is False]
        if info["verdict"] == 0.0 and named:
            caught += 1
        else:
            res.problems.append(f"{label} is not failed by a process check")
    res.counts["process"] = f"{caught}/{len(probes)}" if probes else "n/a"

    noop = _run(spec, None, judge)
    res.counts["noop"] = "fails" if noop["verdict"] == 0.0 else "PASSES"
    if noop["verdict"] != 0.0:
        res.problems.append("doing nothing passes: the task checks nothing the agent must do")

    writes = rt.golden_write_indices
    dropped_ok = 0
    rule = bookkeeping_rule(rt.domain)
    for i in writes:
        if is_bookkeeping_call(spec.golden[i].name, spec.golden[i].arguments, rule):
            # a note on the request's own ticket is bookkeeping: the checks accept doing it or not (checks/_bookkeeping.py)
            dropped_ok += 1
            continue
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
            if call.expect_error is not None:
                break  # a lookup the golden expects to fail names what does not exist, on purpose
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
