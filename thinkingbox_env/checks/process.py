"""``process``: the order rules of a domain's policy, evaluated on the episode's trace.

The state tells what changed, not in which order or with whose agreement. A domain
declares its order rules once, in ``domains/<d>/verdicts.yaml``, and every task of the
domain gets one ``process:<rule>`` result per rule (a rule no guarded write touched
passes as "not triggered"):

- ``verified_before``: every successful write to a guarded tool comes after a
  successful identity verification (the verify tool returned a level the rule
  accepts) in the same episode;
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


def process_results(rules: list[ProcessRule], trace: list[dict[str, Any]]) -> list[CheckResult]:
    """One result per rule of the domain, on one trace."""
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
                if not any(b.get("type") == "tool_call" and b.get("name") == rule.verify_tool and _verified_ok(rule, b)
                           for b in before):
                    violations.append(f"{e['name']} before a successful {rule.verify_tool}")
            else:
                verb = _verb(rule, e["name"])
                if not _consented(rule, verb, before):
                    violations.append(f"{e['name']} without the customer's agreement to '{verb}' given before it")
        detail = ("not triggered" if not guarded else "respected") if not violations else "; ".join(violations)
        out.append(CheckResult(name=f"process:{rule.name}", kind="process", passed=not violations, detail=detail))
    return out


class ProcessCheck(CheckKind):
    name = "process"
    group = "process"
    order = 350

    def evaluate(self, context: GradingContext) -> list[CheckResult]:
        return process_results(domain_rules(context.task).process, context.trace)
