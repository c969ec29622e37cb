"""Bookkeeping on the request's own ticket, left out of the ``effect`` and ``no_collateral`` comparison.

A domain's policy asks for notes on the ticket a request is tracked on, and allows them
wherever the agent works on that ticket. A note changes the ticket's text (a volatile
column) and stamps its ``updated_at`` (a compared one), so without this rule an agent that
notes what it did on a ticket the golden run also writes, but leaves alone otherwise, would
fail ``no_collateral``, and one that skips a note the golden run wrote would fail an
``effect`` check: the state checks would grade a trajectory, not an outcome.

The domain declares the rule once, under ``bookkeeping:`` in ``verdicts.yaml``
(:class:`~thinkingbox_env.checks.verdict_rules.BookkeepingSpec`): the table, the columns a note
changes, and the tool and arguments that write one. The rows it covers are the request's own:
the rows of that table the golden run writes. On them, and only on them, the declared columns
are dropped from both runs' update effects (an update left with no change is no effect at
all); every other change, and any change to another row, is compared as before.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import TYPE_CHECKING, Any

from ..state.diff import StateDiff
from .verdict_rules import BookkeepingSpec, load_verdict_rules

if TYPE_CHECKING:
    from .base import GradingContext


def bookkeeping_problems(rule: BookkeepingSpec, domain: Any) -> list[str]:
    """What is wrong with a domain's ``bookkeeping:`` declaration, read against its tables and tools (``domain``: a loaded domain)."""
    info = domain.db.tables.get(rule.table)
    if info is None:
        return [f"table '{rule.table}' is not a table of domain '{domain.name}'"]
    problems = []
    for column in rule.columns:
        if column not in info.columns:
            problems.append(f"column '{column}' is not a column of {rule.table}")
        elif column in info.primary_key:
            problems.append(f"column '{column}' is the key of {rule.table}: it names the row, it is no note")
        elif column not in info.compared_columns:
            problems.append(f"column '{column}' is volatile in {rule.table}: no diff compares it, so it needs no exemption")
    tool = domain.toolbox.tools.get(rule.tool)
    if tool is None:
        problems.append(f"tool '{rule.tool}' is not a tool of domain '{domain.name}'")
    else:
        if not tool.writes:
            problems.append(f"tool '{rule.tool}' writes nothing: it cannot add a note")
        params = tool.parameters.get("properties", {})
        for role, name in (("key", rule.key), ("note", rule.note)):
            if name not in params:
                problems.append(f"{role} '{name}' is not an argument of {rule.tool}")
    return problems


_RULES: dict[str, BookkeepingSpec | None] = {}


def bookkeeping_rule(domain: Any) -> BookkeepingSpec | None:
    """The domain's declared bookkeeping, checked against its tables and tools once; ``None`` where it declares none."""
    key = str(domain.path)
    if key not in _RULES:
        rule = load_verdict_rules(key).bookkeeping
        if rule is not None:
            problems = bookkeeping_problems(rule, domain)
            if problems:
                raise ValueError(f"{domain.path / 'verdicts.yaml'}: bookkeeping: {'; '.join(problems)}")
        _RULES[key] = rule
    return _RULES[key]


def is_bookkeeping_call(name: str, arguments: dict[str, Any], rule: BookkeepingSpec | None) -> bool:
    """Whether a call only adds a note (the declared tool with nothing but the row's key and the note's text)."""
    return rule is not None and name == rule.tool and bool(arguments.get(rule.note)) and \
        not {k for k, v in arguments.items() if v is not None} - {rule.key, rule.note}


def own_rows(golden: StateDiff, rule: BookkeepingSpec) -> set[str]:
    """The keys (as effects spell them) of the rows of the bookkeeping table that the golden run updates: the request's own.

    A row the golden run creates is the request's own too, but a note on it changes no
    compared column from the template (it is stamped at the same frozen time), so only the
    updated rows need naming.
    """
    return {e[2] for e in golden.effects if e[0] == "update" and e[1] == rule.table}


def _strip(effects: Counter, rule: BookkeepingSpec, own: set[str]) -> Counter:
    out: Counter = Counter()
    for effect, count in effects.items():
        if effect[0] == "update" and effect[1] == rule.table and effect[2] in own:
            changes = {c: v for c, v in json.loads(effect[3]).items() if c not in rule.columns}
            if not changes:
                continue
            effect = (effect[0], effect[1], effect[2], json.dumps(changes, sort_keys=True, separators=(",", ":"), default=str))
        out[effect] += count
    return out


def without_bookkeeping(golden: StateDiff, agent: StateDiff, rule: BookkeepingSpec | None) -> tuple[StateDiff, StateDiff]:
    """Both runs' effects with the bookkeeping on the request's own rows left out (unchanged where the domain declares none)."""
    if rule is None:
        return golden, agent
    own = own_rows(golden, rule)
    if not own:
        return golden, agent
    return (StateDiff(tables={}, effects=_strip(golden.effects, rule, own), created_keys={}),
            StateDiff(tables={}, effects=_strip(agent.effects, rule, own), created_keys={}))


def compared(context: GradingContext) -> tuple[StateDiff, StateDiff]:
    """The golden and agent effects the ``effect`` and ``no_collateral`` checks compare for a graded episode."""
    return without_bookkeeping(context.golden, context.outcome.as_diff(), bookkeeping_rule(context.domain))
