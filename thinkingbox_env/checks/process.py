"""``process``: the order rules of a domain's policy, evaluated on the episode's trace.

The state tells what changed, not in which order or with whose agreement. A domain
declares its order rules once, in ``domains/<d>/verdicts.yaml``, and every task of the
domain gets one ``process:<rule>`` result per rule (a rule no guarded write touched
passes as "not triggered"):

- ``verified_before``: every successful write to a guarded tool comes after a
  successful identity verification (the verify tool returned a level the rule
  accepts) in the same episode, of the customer who holds what the write touches
  where the rule says how to find that customer (``owners``: the policy of a driver,
  a vehicle or a billing account, read on the task's initial state);
- ``consent_before``: every successful guarded write comes after a customer reply that
  agrees, given in the turn right after an agent message that proposed that write. Which
  writes, and when, comes from the policy's own sentences (:mod:`thinkingbox_env.checks.policy_rules`
  reads them; the rule quotes each): always, only where the write is not what the customer
  asked for in those terms (``not_as_asked``: another date, another record, money they never
  named), or checked through another write. A proposal licenses the write when, read with the
  claim reader (:mod:`thinkingbox_env.reading.claims`), it names the write's action in any ordinary
  wording, the record it touches (its id or identifying attributes, the rule's ``objects``) and
  every value it uses (each date the description names, the exact amount). Agreement is read by
  :func:`thinkingbox_env.checks.agreement.agreed`, the simulated user's dialogue-act reader.

  The check fails only on a finding: no agreement at all before a write the policy guards, or
  agreement to a proposal naming another of the customer's records or other values. Where the
  customer agreed to words the reader cannot read for this write (no action recognised, no
  record named), or where it cannot tell whether the write is what the customer asked, the
  result is undetermined (``passed`` None, ``undetermined``), which does not zero the verdict.

The trace must hold the episode's messages between its tool calls; the MCP server
builds it from its own call record and the dialogue the operator sends (see
:func:`thinkingbox_env.checks.grading.interleave`).

This module holds the kind, the per-rule results and the lookups on the task's initial state;
the consent rule's reading is beside it: ``_write_terms.py`` (what a write carries and touches),
``_proposals.py`` (the proposals the customer agreed to) and ``_consent.py`` (one write's finding).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..contracts.events import ToolCallEvent, TraceEvent, is_message, is_tool_call, tool_calls
from ..contracts.records import CheckResult
from ._consent import consent_applies, consent_result, other_writes_dates
from ._write_terms import Reading, Rows, no_rows
from .base import CheckKind, GradingContext
from .verdict_rules import ProcessRule, domain_rules


def _events(trace: Sequence[TraceEvent]) -> list[TraceEvent]:
    """The tool calls and the plain user and assistant messages, in order: what the order rules are about."""
    return [e for e in trace if is_tool_call(e) or (
        is_message(e) and e["role"] in ("user", "assistant") and e.get("content") and not e.get("tool_calls"))]


def _verified_ok(rule: ProcessRule, event: ToolCallEvent) -> bool:
    result = event.get("result")
    return bool(event.get("ok")) and isinstance(result, dict) and str(result.get(rule.verified_field)) in rule.verified_values


Owner = Callable[["str | list[str]", Any], "str | None"]  # (SQL or chain, value) -> the customer id, or None when not found


def _no_owner(sql: str | list[str], value: Any) -> str | None:
    return None


def _write_owner(rule: ProcessRule, event: ToolCallEvent, owner: Owner) -> tuple[str, str] | None:
    """(what the write touches, the customer who holds it), where the rule can tell."""
    args = event.get("arguments")
    if not isinstance(args, dict):
        return None
    for arg, sql in rule.owners.items():
        if args.get(arg) is not None:
            held_by = owner(sql, args[arg])
            if held_by is not None:
                return f"{arg} {args[arg]}", held_by
    return None


def _verified_for(rule: ProcessRule, event: ToolCallEvent) -> str | None:
    args = event.get("arguments")
    value = args.get(rule.verify_customer_argument) if isinstance(args, dict) else None
    return str(value).strip().upper() if value is not None else None


def process_results(rules: list[ProcessRule], trace: Sequence[TraceEvent], owner: Owner = _no_owner,
                    reading: Reading | None = None, rows: Rows = no_rows) -> list[CheckResult]:
    """One result per rule of the domain, on one trace; ``owner`` and ``rows`` answer the rules' lookups.

    A rule is failed by any violation; with none, it is undetermined where the reader could not
    decide for some guarded write (:func:`consent_result`), and passed otherwise.
    """
    out: list[CheckResult] = []
    events = _events(trace)
    for rule in rules:
        violations: list[str] = []
        unsure: list[str] = []
        notes: list[str] = []
        guarded = 0
        for i, e in enumerate(events):
            if not is_tool_call(e) or e.get("name") not in rule.writes or not e.get("writes"):
                continue
            guarded += 1
            before = events[:i]
            if rule.kind == "verified_before":
                verified = [b for b in tool_calls(before) if b.get("name") == rule.verify_tool and _verified_ok(rule, b)]
                held = _write_owner(rule, e, owner) if rule.verify_customer_argument else None
                if not verified:
                    violations.append(f"{e['name']} before a successful {rule.verify_tool}")
                elif held is not None and not any(_verified_for(rule, b) == held[1].strip().upper() for b in verified):
                    violations.append(f"{e['name']} on {held[0]}, held by {held[1]}, with no successful "
                                      f"{rule.verify_tool} of {held[1]}")
            else:
                ok, why = consent_result(rule, e, before, reading or Reading(), rows, other_writes_dates(events, i, reading))
                if ok is False:
                    violations.append(f"{e['name']} without the customer's agreement to a proposal of it ({why})")
                elif ok is None:
                    unsure.append(f"{e['name']}: {why}")
                elif why.startswith("not required"):
                    notes.append(f"{e['name']}: {why}")
        name = f"process:{rule.name}"
        if violations:
            out.append(CheckResult(name=name, kind="process", passed=False, detail="; ".join(violations)))
        elif unsure:
            out.append(CheckResult(name=name, kind="process", passed=None, undetermined=True,
                                   detail="undetermined: " + "; ".join(unsure)))
        else:
            detail = "not triggered" if not guarded else "respected" + (f" ({'; '.join(notes)})" if notes else "")
            out.append(CheckResult(name=name, kind="process", passed=True, detail=detail))
    return out


class ProcessCheck(CheckKind):
    """The domain's order rules, kept on the trace: verification and consent before the writes they guard."""

    name = "process"
    group = "process"
    order = 350
    follows_write = True
    reward_group = "process"

    def evaluate(self, context: GradingContext) -> list[CheckResult]:
        domain = context.domain
        reading = Reading(str(domain.path), domain.spec.clock.date(), tuple(domain.spec.id_patterns))
        return process_results(domain_rules(domain).process, context.trace, _initial_state_owner(context), reading,
                               _initial_state_rows(context))


def _initial_state_owner(context: GradingContext) -> Owner:
    """Owner queries on the task's initial state, opened on the first query and answered once per grading.

    The initial state, not the final one: a removed driver still had a policy when it was removed.
    """
    answers: dict[tuple[str, str], tuple[bool, Any]] = context.memo.setdefault("owners", {})

    def lookup(sql: str, value: str) -> tuple[bool, Any]:
        """(whether a row was found, its first value)."""
        key = (sql, value)
        if key not in answers:
            state = context.task_runtime().new_state()
            state.probe = True  # a lookup in the initial state, not an episode
            try:
                row = state.query_one(sql, [value])
            finally:
                state.close()
            answers[key] = (False, None) if not row else (True, next(iter(row.values())))
        return answers[key]

    def owner(sql: str | list[str], value: Any) -> str | None:
        steps = [sql] if isinstance(sql, str) else sql
        found: Any = value
        for i, step in enumerate(steps):  # a chain: each lookup given what the one before found
            if i and found is None:  # as a join on NULL, a missing link finds no one
                return None
            ok, found = lookup(step, str(found))
            if not ok:
                return None
        return str(found)

    return owner


def runtime_rows(runtime: Any, answers: dict[tuple[str, str], list[dict[str, Any]]] | None = None) -> Rows:
    """Row lookups on a task runtime's initial state (the records a proposal names), each answered once."""
    answers = {} if answers is None else answers

    def rows(sql: str, value: Any) -> list[dict[str, Any]]:
        key = (sql, str(value))
        if key not in answers:
            state = runtime.new_state()
            state.probe = True  # a lookup in the initial state, not an episode
            try:
                answers[key] = [dict(r) for r in state.query(sql, [str(value)])]
            finally:
                state.close()
        return answers[key]

    return rows


def _initial_state_rows(context: GradingContext) -> Rows:
    """Row lookups on the task's initial state, answered once per grading."""
    return runtime_rows(context.task_runtime(), context.memo.setdefault("object_rows", {}))


def writes_needing_consent(rules: list[ProcessRule], trace: Sequence[TraceEvent], reading: Reading,
                           rows: Rows = no_rows) -> list[str]:
    """The guarded writes of a trace whose consent rule applies to them (not exempt as what the customer asked)."""
    events = _events(trace)
    out = []
    for rule in rules:
        if rule.kind != "consent_before":
            continue
        for i, e in enumerate(events):
            if is_tool_call(e) and e.get("name") in rule.writes and e.get("writes") \
                    and consent_applies(rule, e, events[:i], reading, rows, other_writes_dates(events, i, reading)):
                out.append(str(e["name"]))
    return out
