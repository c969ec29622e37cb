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
- ``consent_before``: every successful guarded (irreversible) write comes after a
  customer reply that agrees, given in the turn right after an agent message that
  described that action. Agreement is read by
  :func:`thinkingbox_env.verdict_rules.agreed`, the simulated user's dialogue-act
  reader, so that an LLM user's free wording is read the same way.

The trace must hold the episode's messages between its tool calls; the MCP server
builds it from its own call record and the dialogue the operator sends (see
:func:`thinkingbox_env.checks.grading.interleave`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..records import CheckResult
from ..verdict_rules import ProcessRule, agreed, domain_rules, normalise_phrase
from .base import CheckKind, GradingContext


def _verb(rule: ProcessRule, name: str) -> str:
    words = normalise_phrase(rule.writes[name])
    return words[0] if words else name


def _events(trace: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in trace if e.get("type") == "tool_call" or (
        e.get("type") == "message" and e.get("role") in ("user", "assistant") and e.get("content") and not e.get("tool_calls"))]


def _verified_ok(rule: ProcessRule, event: dict[str, Any]) -> bool:
    result = event.get("result")
    return bool(event.get("ok")) and isinstance(result, dict) and str(result.get(rule.verified_field)) in rule.verified_values


def _consented(rule: ProcessRule, verb: str, before: list[dict[str, Any]]) -> bool:
    for prev, reply in zip(before, before[1:]):
        if (prev.get("type") == "message" and prev.get("role") == "assistant"
                and reply.get("type") == "message" and reply.get("role") == "user"
                and verb in normalise_phrase(prev["content"]) and agreed(reply["content"]) is True):
            return True
    return False


Owner = Callable[[str, Any], "str | None"]  # (SQL, value) -> the customer id, or None when not found


def _no_owner(sql: str, value: Any) -> str | None:
    return None


def _write_owner(rule: ProcessRule, event: dict[str, Any], owner: Owner) -> tuple[str, str] | None:
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


def _verified_for(rule: ProcessRule, event: dict[str, Any]) -> str | None:
    args = event.get("arguments")
    value = args.get(rule.verify_customer_argument) if isinstance(args, dict) else None
    return str(value).strip().upper() if value is not None else None


def process_results(rules: list[ProcessRule], trace: list[dict[str, Any]], owner: Owner = _no_owner) -> list[CheckResult]:
    """One result per rule of the domain, on one trace; ``owner`` answers the rules' ``owners`` queries."""
    out: list[CheckResult] = []
    events = _events(trace)
    for rule in rules:
        violations: list[str] = []
        guarded = 0
        for i, e in enumerate(events):
            if e.get("type") != "tool_call" or e.get("name") not in rule.writes or not e.get("writes"):
                continue
            guarded += 1
            before = events[:i]
            if rule.kind == "verified_before":
                verified = [b for b in before if b.get("type") == "tool_call" and b.get("name") == rule.verify_tool
                            and _verified_ok(rule, b)]
                held = _write_owner(rule, e, owner) if rule.verify_customer_argument else None
                if not verified:
                    violations.append(f"{e['name']} before a successful {rule.verify_tool}")
                elif held is not None and not any(_verified_for(rule, b) == held[1].strip().upper() for b in verified):
                    violations.append(f"{e['name']} on {held[0]}, held by {held[1]}, with no successful "
                                      f"{rule.verify_tool} of {held[1]}")
            else:
                verb = _verb(rule, e["name"])
                if not _consented(rule, verb, before):
                    violations.append(f"{e['name']} without the customer's agreement to '{verb}' given before it")
        detail = ("not triggered" if not guarded else "respected") if not violations else "; ".join(violations)
        out.append(CheckResult(name=f"process:{rule.name}", kind="process", passed=not violations, detail=detail))
    return out


class ProcessCheck(CheckKind):
    """The domain's order rules, kept on the trace: verification and consent before the writes they guard."""

    name = "process"
    group = "process"
    order = 350

    def evaluate(self, context: GradingContext) -> list[CheckResult]:
        return process_results(domain_rules(context.task).process, context.trace, _initial_state_owner(context))


def _initial_state_owner(context: GradingContext) -> Owner:
    """Owner queries on the task's initial state, opened on the first query and answered once per grading.

    The initial state, not the final one: a removed driver still had a policy when it was removed.
    """
    answers: dict[tuple[str, str], str | None] = context.memo.setdefault("owners", {})

    def owner(sql: str, value: Any) -> str | None:
        key = (sql, str(value))
        if key not in answers:
            from ..runtime import runtime_for

            state = runtime_for(context.task).new_state()
            state.probe = True  # a lookup in the initial state, not an episode
            try:
                row = state.query_one(sql, [str(value)])
            finally:
                state.close()
            answers[key] = None if not row else str(next(iter(row.values())))
        return answers[key]

    return owner
