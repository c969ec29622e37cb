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
  proposed that write: read with the claim reader (:mod:`thinkingbox_env.claims`), the
  message names the write's action in any ordinary wording, what it acts on (its id, or a
  noun of the action's objects), every date the write sets and an amount not below the
  one the write uses. A blanket proposal ("cancel and refund whatever is needed") licenses
  nothing specific. Agreement is read by
  :func:`thinkingbox_env.verdict_rules.agreed`, the simulated user's dialogue-act
  reader, so that an LLM user's free wording is read the same way.

The trace must hold the episode's messages between its tool calls; the MCP server
builds it from its own call record and the dialogue the operator sends (see
:func:`thinkingbox_env.checks.grading.interleave`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Any

from ..claims import actions_for_tool, read_claims
from ..events import ToolCallEvent, TraceEvent, is_message, is_tool_call, tool_calls
from ..records import CheckResult
from ..values import Value, extract_values, parse_value, same_value
from ..verdict_rules import ProcessRule, agreed, domain_rules, normalise_phrase
from .base import CheckKind, GradingContext


def _verb(rule: ProcessRule, name: str) -> str:
    words = normalise_phrase(rule.writes[name])
    return words[0] if words else name


def _events(trace: Sequence[TraceEvent]) -> list[TraceEvent]:
    """The tool calls and the plain user and assistant messages, in order: what the order rules are about."""
    return [e for e in trace if is_tool_call(e) or (
        is_message(e) and e["role"] in ("user", "assistant") and e.get("content") and not e.get("tool_calls"))]


def _verified_ok(rule: ProcessRule, event: ToolCallEvent) -> bool:
    result = event.get("result")
    return bool(event.get("ok")) and isinstance(result, dict) and str(result.get(rule.verified_field)) in rule.verified_values


@dataclass(frozen=True)
class Reading:
    """How proposals are read in a task's domain: its claim vocabulary, clock and id formats."""

    domain_path: str = ""
    clock: date | None = None
    id_patterns: tuple[str, ...] = ()


def _arg_values(arguments: Any, reading: Reading, money_keys: set[str]) -> tuple[list[Decimal], list[Value], list[Value]]:
    """(amounts, dates, ids) a write's arguments carry: what a proposal must have named for it."""
    amounts: list[Decimal] = []
    dates: list[Value] = []
    ids: list[Value] = []
    for key, v in (arguments or {}).items() if isinstance(arguments, dict) else []:
        if isinstance(v, bool) or v is None:
            continue
        if isinstance(v, (int, float, Decimal)) or (isinstance(v, str) and re.fullmatch(r"-?\d+(\.\d+)?", v)):
            if key in money_keys and Decimal(str(v)) > 0:  # a zero amount moves no money: nothing to name
                amounts.append(Decimal(str(v)))
            continue
        pv = parse_value(str(v), reading.clock, reading.id_patterns)
        if pv is not None and pv.kind == "date":
            dates.append(pv)
        elif pv is not None and pv.kind == "id":
            ids.append(pv)
        elif isinstance(v, str) and re.search(r"\d", v) and len(v) <= 40:
            ids.append(Value("id", v.strip().lower(), v))  # an identifier the domain's id formats do not cover
    return amounts, dates, ids


def proposal_licenses(text: str, event: Mapping[str, Any], reading: Reading, template: str = "") -> tuple[bool, str]:
    """Whether an agent message proposed this write: its action, on its object, with the values it uses.

    Read with the claim reader, so any ordinary wording of the action counts; a message
    that names the action but not what it acts on, or no amount where the write moves
    money, or a lower amount than the write uses, or not the date it sets, is too vague
    to license it.
    """
    actions = actions_for_tool(reading.domain_path, str(event.get("name")))
    claims = [c for c in read_claims(text, reading.domain_path, reading.clock, reading.id_patterns)
              if c.action in actions and c.outcome != "refused"]
    if not claims:
        return False, f"no proposal of the action of {event.get('name')}"
    said = extract_values(text, reading.clock, reading.id_patterns)
    # the arguments that are money: those the rule's description writes as an amount ("${amount:.2f}")
    money_keys = set(re.findall(r"\$\{(\w+)|\{(\w+):\.2f\}", template)) if template else set()
    money_keys = {k for pair in money_keys for k in pair if k} if template else {"amount"}
    amounts, dates, ids = _arg_values(event.get("arguments"), reading, money_keys)
    if amounts:
        # amounts as money; where the domain writes none with a currency ("estimated at 557.00"), decimals
        # the amounts said in the proposal of this action ("charge $114.75"), not a total quoted beside it
        own = [rv.value for c in claims for rv in c.values]
        pool = own if any(v.kind == "money" for v in own) else said
        proposed = [Decimal(v.norm) for v in pool if v.kind == "money" and Decimal(v.norm).is_finite()] or [
            Decimal(v.norm) for v in pool if v.kind == "number" and "." in v.text and Decimal(v.norm).is_finite()]
        if not proposed or max(amounts) > max(proposed):
            return False, f"the write uses {max(amounts):.2f}; the proposal named {[str(p) for p in proposed] or 'no amount'}"
    for d in dates:
        if not any(same_value(d, v) for v in said):
            return False, f"the write sets {d.norm}; the proposal did not name it"
    named = any(same_value(i, v) or i.text.lower() in text.lower() for i in ids for v in [*said, i]) \
        or any(c.objects for c in claims)
    if not named:
        return False, "the proposal does not say what the action acts on"
    return True, "proposed"


def _consented(rule: ProcessRule, event: ToolCallEvent, before: list[TraceEvent], reading: Reading) -> tuple[bool, str]:
    why = "no agent message proposed it"
    use_claims = bool(reading.domain_path) and bool(actions_for_tool(reading.domain_path, str(event.get("name"))))
    verb = _verb(rule, event["name"])
    for prev, reply in zip(before, before[1:]):
        if not (is_message(prev) and prev["role"] == "assistant" and is_message(reply) and reply["role"] == "user"):
            continue
        proposal, answer = prev["content"] or "", reply["content"] or ""  # never empty: _events keeps texts only
        if use_claims:
            ok, why_here = proposal_licenses(proposal, event, reading, rule.writes.get(event["name"], ""))
        else:
            ok, why_here = verb in normalise_phrase(proposal), f"no message described '{verb}'"
        if ok and agreed(answer) is True:
            return True, "agreed"
        if ok:
            why = "the customer did not agree to the proposal"
        elif why_here != f"no proposal of the action of {event.get('name')}":
            why = why_here
    return False, why


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
                    reading: Reading | None = None) -> list[CheckResult]:
    """One result per rule of the domain, on one trace; ``owner`` answers the rules' ``owners`` queries."""
    out: list[CheckResult] = []
    events = _events(trace)
    for rule in rules:
        violations: list[str] = []
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
                ok, why = _consented(rule, e, before, reading or Reading())
                if not ok:
                    violations.append(f"{e['name']} without the customer's agreement to a proposal of it ({why})")
        detail = ("not triggered" if not guarded else "respected") if not violations else "; ".join(violations)
        out.append(CheckResult(name=f"process:{rule.name}", kind="process", passed=not violations, detail=detail))
    return out


class ProcessCheck(CheckKind):
    """The domain's order rules, kept on the trace: verification and consent before the writes they guard."""

    name = "process"
    group = "process"
    order = 350
    follows_write = True
    reward_group = "process"

    def evaluate(self, context: GradingContext) -> list[CheckResult]:
        from ..domain import load_domain

        domain = load_domain(context.task.domain)
        reading = Reading(str(domain.path), domain.spec.clock.date(), tuple(domain.spec.id_patterns))
        return process_results(domain_rules(context.task).process, context.trace, _initial_state_owner(context), reading)


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
