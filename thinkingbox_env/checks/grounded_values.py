"""``grounded_values``, on every task: every amount, date and business id told to the customer comes from somewhere.

From the episode's state change, the task's own records, a tool result, the
customer's words, the policy and knowledge base, or a derivation the domain declares
(sums and differences of amounts, policy percentages, day, business-day and month
windows), so that a correct agent explaining its arithmetic is never failed. An amount
stated as an action already taken ("I've credited $25") must come from a write of
the episode itself, not from the policy's price list. The result names the value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any

from ..contracts.records import CheckResult
from ..reading.values import extract_values, keyed_leaves, money_norm, values_of
from .base import CheckKind, GradingContext
from .dialogue import DialogueContext, dialogue_context

_ACTION_CLAIM = r"\b(?:i(?:'ve| have)?|we(?:'ve| have)?|has been|have been|was|were|is being|will be)\s+(?:also\s+|just\s+|now\s+)?(?:{verbs})\b"
# columns whose numbers are amounts of money: a claimed amount must be one of them, not a count
# or a resulting balance that happens to hold the same number
_MONEY_KEY = re.compile(r"amount|fee|price|total|credit|refund|premium|charge|cost|paid|discount|subtotal", re.IGNORECASE)


def _grounding_pool(ctx: DialogueContext) -> tuple[set[tuple[str, str]], Derived, set[tuple[str, str]]]:
    """(direct, derived, reference) values: the episode's, the domain arithmetic's, the policy's.

    Direct is what the episode shows as such, derived what the domain's arithmetic makes of
    it, reference what the policy and knowledge base state.
    """
    episode: set[tuple[str, str]] = set()
    for rec in ctx.tool_results:
        episode |= values_of(rec, ctx.clock, ctx.id_patterns)
    for rec in ctx.state_records:
        episode |= values_of(rec, ctx.clock, ctx.id_patterns)
    for msg in ctx.user_messages:
        episode |= {v.key for v in extract_values(msg, ctx.clock, ctx.id_patterns)}
    episode.add(("date", ctx.clock.isoformat()))
    reference = set(_reference_keys(ctx.reference_text, ctx.clock, ctx.id_patterns))
    d = ctx.rules.derivations
    money = tuple(sorted({Decimal(n) for k, n in episode if k == "money" and Decimal(n).is_finite() and Decimal(n) > 0}))
    fees = tuple(sorted({Decimal(n) for k, n in reference if k == "money" and Decimal(n).is_finite() and Decimal(n) > 0}))
    # date windows run from today, from dates the episode wrote, and from dates the customer gave
    bases = values_of(ctx.state_records[:1], ctx.clock, ctx.id_patterns)
    for msg in ctx.user_messages:
        bases |= {v.key for v in extract_values(msg, ctx.clock, ctx.id_patterns)}
    dates = tuple(sorted({date.fromisoformat(n) for k, n in bases if k == "date"} | {ctx.clock}))
    derived = _derived(money, fees, dates, bool(d.money_sums), tuple(d.percents), tuple(sorted(set(d.day_offsets))),
                           tuple(d.business_day_offsets), frozenset(d.holidays), tuple(d.month_offsets))
    return episode, derived, reference


# An amount beyond this many digits is summed as before (listed): below it, Decimal sums are exact.
_EXACT_DIGITS = 25


@dataclass(frozen=True)
class Derived:
    """What the domain's arithmetic makes of the episode's amounts and dates, asked by membership.

    The sums and differences of two amounts (``money_sums``) are not listed: with a hundred
    amounts in a catalogue's tool results they are ten thousand keys, built for every fresh
    task to answer a handful of questions. ``v`` is such a sum or difference exactly when
    ``v - a``, ``a - v`` or ``a + v`` is an amount or fee for some episode amount ``a``;
    everything else (percentages, date windows, and sums of amounts too long to add exactly)
    is listed.
    """
    listed: frozenset[tuple[str, str]]
    money: tuple[Decimal, ...] = ()  # the episode's amounts, when their sums are asked by membership
    operands: frozenset[Decimal] = frozenset()  # the episode's amounts and the reference fees

    def __contains__(self, key: object) -> bool:
        if key in self.listed:
            return True
        if not self.money or not isinstance(key, tuple) or key[0] != "money":
            return False
        try:
            v = Decimal(key[1])
        except (InvalidOperation, TypeError, ValueError):
            return False
        # every sum or difference of two exact amounts is written with two decimals and no sign
        if not v.is_finite() or v.is_signed() or v.as_tuple().exponent != -2 or len(v.as_tuple().digits) > _EXACT_DIGITS:
            return False
        ops = self.operands
        return any(v - a in ops or a - v in ops or a + v in ops for a in self.money)


@lru_cache(maxsize=4096)
def _derived(money: tuple[Decimal, ...], fees: tuple[Decimal, ...], dates: tuple[date, ...], money_sums: bool,
             percents: tuple[Any, ...], day_offsets: tuple[int, ...], business_day_offsets: tuple[int, ...],
             holidays: frozenset[date], month_offsets: tuple[int, ...]) -> Derived:
    """What the domain's arithmetic makes of the episode's amounts and dates (memoised: episodes of a task repeat it)."""
    derived: set[tuple[str, str]] = set()
    sums = money_sums and len(money) <= 400
    exact = all(x.as_tuple().exponent == -2 and len(x.as_tuple().digits) <= _EXACT_DIGITS for x in money + fees)
    if sums and not exact:
        for i, a in enumerate(money):
            for b in money[i:] + fees:
                derived.add(("money", money_norm(a + b)))
                derived.add(("money", money_norm(abs(a - b))))
    for p in percents:
        for a in money:
            derived.add(("money", money_norm((a * Decimal(str(p)) / 100).quantize(Decimal("0.01")))))
    # forward windows, and backward ones only where the domain declares them (a negative offset)
    for day in dates:
        for off in day_offsets:
            derived.add(("date", (day + timedelta(days=off)).isoformat()))
        for off in business_day_offsets:
            derived.add(("date", _add_business_days(day, off, set(holidays)).isoformat()))
        for months in month_offsets:
            derived.add(("date", _add_months(day, months).isoformat()))
    if sums and exact and money:
        return Derived(frozenset(derived), money, frozenset(money + fees))
    return Derived(frozenset(derived))


@lru_cache(maxsize=8)
def _reference_keys(text: str, clock: date, id_patterns: tuple[str, ...]) -> frozenset[tuple[str, str]]:
    """The values the policy and knowledge base state (the same text for every task of a domain)."""
    return frozenset(v.key for v in extract_values(text, clock, id_patterns))


def _add_business_days(start: date, n: int, holidays: set[date]) -> date:
    day, step = start, (1 if n >= 0 else -1)
    left = abs(n)
    while left:
        day += timedelta(days=step)
        if day.weekday() < 5 and day not in holidays:
            left -= 1
    return day


def _add_months(start: date, months: int) -> date:
    y, m = divmod(start.month - 1 + months, 12)
    year, month = start.year + y, m + 1
    for day in (start.day, 30, 29, 28):
        try:
            return date(year, month, day)
        except ValueError:
            continue
    return start


def _written_amounts(records: list[Any]) -> set[tuple[str, str]]:
    """Money keys of the amount columns of what the episode wrote (created rows, changed values, write results)."""
    out: set[tuple[str, str]] = set()
    for key, x in keyed_leaves(records):
        if not _MONEY_KEY.search(key) or isinstance(x, bool):
            continue
        if isinstance(x, (int, float, Decimal)) or (isinstance(x, str) and re.fullmatch(r"-?\d+(\.\d+)?", x)):
            out.add(("money", money_norm(Decimal(str(x)))))
    return out


def grounded_values_result(ctx: DialogueContext) -> tuple[str, str, bool, str]:
    """(name, kind, passed, detail) for one episode: the ungrounded values named."""
    if not any(v.kind in ("money", "date", "id") for _, v in ctx.agent_values()):
        return ("grounded_values", "grounded_values", True, "no amount, date or id stated")
    direct, derived, reference = _grounding_pool(ctx)
    verbs = "|".join(re.escape(v) for v in ctx.rules.action_verbs)
    claim = re.compile(_ACTION_CLAIM.format(verbs=verbs), re.IGNORECASE)
    done = _written_amounts([ctx.state_records[:1], ctx.write_results])
    bad: list[str] = []
    for msg in ctx.agent_messages:
        claims = [(m.start(), m.end()) for m in claim.finditer(msg)]
        for v in extract_values(msg, ctx.clock, ctx.id_patterns):
            if v.kind not in ("money", "date", "id"):
                continue
            # an amount stated as an action already taken ("I've credited $25.00") is a record of
            # a write of this episode: the state change or a write's result must hold it as such
            sentence_start = max(msg.rfind(".", 0, v.start), msg.rfind("!", 0, v.start), msg.rfind(";", 0, v.start)) + 1
            in_claim = v.kind == "money" and any(sentence_start <= s <= v.start for s, _ in claims)
            if in_claim and v.key in done:
                continue
            if not in_claim and (v.key in direct or v.key in derived or v.key in reference):
                continue
            bad.append(f"{v.text!r}" + (" (stated as done, not an amount of this episode)" if in_claim else ""))
    return ("grounded_values", "grounded_values", not bad,
            "every stated amount, date and id is grounded" if not bad else f"ungrounded: {', '.join(dict.fromkeys(bad))}")




class GroundedValuesCheck(CheckKind):
    """Every amount, date and id told to the customer is grounded in the episode, the policy or a derivation."""

    name = "grounded_values"
    group = "dialogue"
    order = 420
    follows_write = True
    reward_group = "dialogue"

    def evaluate(self, context: GradingContext) -> list[CheckResult]:
        name, kind, passed, detail = grounded_values_result(dialogue_context(context))
        return [CheckResult(name=name, kind=kind, passed=passed, detail=detail)]
