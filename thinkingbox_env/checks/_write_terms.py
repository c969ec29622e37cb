"""What a guarded write carries and touches, and whether a message names it: the terms the ``process`` check reads.

A write's amounts, dates, ids and yes/no flags come from its arguments; the records it touches
(``ObjectFacts``) from the task's initial state, where the rule says how to find them. Both the
reading of proposals (``_proposals.py``) and of the customer's request (``_consent.py``) compare
messages with these terms, so they are read here once.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Any

from ..reading.values import Value, extract_values, parse_value
from .verdict_rules import ProcessRule


@dataclass(frozen=True)
class Reading:
    """How proposals are read in a task's domain: its claim vocabulary, clock and id formats."""

    domain_path: str = ""
    clock: date | None = None
    id_patterns: tuple[str, ...] = ()


def argument_values(arguments: Any, reading: Reading, money_keys: set[str],
                date_keys: set[str] | None = None) -> tuple[list[Decimal], list[Value], list[Value]]:
    """(amounts, dates, ids) a write's arguments carry: what a proposal must have named for it.

    With ``date_keys`` only those arguments count as dates the write sets (its effective date, not a
    driver's date of birth): the ones the rule's description of the write names.
    """
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
            if date_keys is None or key in date_keys:
                dates.append(pv)
        elif pv is not None and pv.kind == "id":
            ids.append(pv)
        elif isinstance(v, str) and re.search(r"\d", v) and len(v) <= 40:
            ids.append(Value("id", v.strip().lower(), v))  # an identifier the domain's id formats do not cover
    return amounts, dates, ids


@dataclass(frozen=True)
class ObjectFacts:
    """What one id argument of a write touches, as a message can name it.

    Its identifying attributes (those no other record of the holder shares), and those of the
    holder's other records of the same kind, each with only what tells it apart from this one.
    """

    argument: str
    value: str
    names: tuple[str, ...]
    must_name: bool = True
    others: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (the other object's first attribute, what tells it apart)


_STOP = frozenset({"the", "and", "for", "with", "from", "your", "plan", "card", "account", "policy", "order", "booking"})


def _attribute_names(row: Mapping[str, Any]) -> tuple[str, ...]:
    """The strings a message may name an object by: each attribute whole, and the words of a multi-word one."""
    out: list[str] = []
    for v in row.values():
        if v is None or isinstance(v, (bool, float, Decimal, date)):
            continue  # amounts and dates are the write's values, not what names the object
        text = str(v).strip()
        if not text:
            continue
        out.append(text.lower())
        words = re.findall(r"[A-Za-z][A-Za-z'-]{2,}", text)
        if len(words) > 1:
            out += [w.lower() for w in words if w.lower() not in _STOP]
    return tuple(dict.fromkeys(out))


def says(text: str, name: str) -> bool:
    """Whether the text names this attribute as a whole word or id (not inside an amount, an id, a word or an e-mail address)."""
    text = re.sub(r"\S+@\S+", " ", text)
    if re.search(rf"(?<![\w$.-]){re.escape(name)}(?![\w-]|\.\d)", text, re.IGNORECASE):
        return True
    # an id by its last digits, as an agent reads a long number out ("the order ending in 0006")
    tail = re.fullmatch(r"[a-z]+-?\d*?(\d{4})", name)
    return tail is not None and re.search(rf"\bending (?:in |with )?{tail.group(1)}\b", text, re.IGNORECASE) is not None


Rows = Callable[[str, Any], "list[dict[str, Any]]"]  # (SQL with one '?', value) -> rows on the task's initial state


def no_rows(sql: str, value: Any) -> list[dict[str, Any]]:
    return []


def object_facts(rule: ProcessRule, event: Mapping[str, Any], rows: Rows) -> list[ObjectFacts]:
    """The objects a guarded write touches, where the rule says how a message names them."""
    args = event.get("arguments")
    out: list[ObjectFacts] = []
    for arg, spec in rule.objects.items():
        value = args.get(arg) if isinstance(args, dict) else None
        if value is None:
            continue
        found = rows(spec.identify, value)
        if not found:
            continue
        names = _attribute_names(found[0])
        if str(value).lower() not in names:
            names = (str(value).lower(), *names)
        others: list[tuple[str, tuple[str, ...]]] = []
        shared: set[str] = set()
        for row in rows(spec.others, value) if spec.others else []:
            theirs = _attribute_names(row)
            if not theirs or theirs[0] == names[0] or str(value).lower() in theirs:
                continue  # the object itself
            shared.update(n for n in theirs if n in names)
            apart = tuple(n for n in theirs if n not in names)
            if apart:
                others.append((theirs[0], apart))
        # what names this record is what tells it apart: not a surname the household shares, not the make of two cars
        own = tuple(n for n in names if n not in shared) or names
        out.append(ObjectFacts(arg, str(value), own, others=tuple(others), must_name=spec.must_name))
    return out


def _same_kind_ids(text: str, value: str) -> list[str]:
    """Ids in the text written like ``value`` (the same letters before the number: another booking, another order)."""
    prefix = re.match(r"([A-Za-z]+-)\d", value)
    if not prefix:
        return []
    return [m.group(0) for m in re.finditer(rf"(?<![\w-]){re.escape(prefix.group(1))}\d+\b", text, re.IGNORECASE)
            if m.group(0).upper() != value.upper()]


def object_finding(text: str, facts: list[ObjectFacts]) -> tuple[str, str]:
    """("named" | "other" | "unnamed", why) for a message and the objects a write touches."""
    for f in facts:
        if any(says(text, n) for n in f.names):
            continue
        other = next((o for o, apart in f.others if any(says(text, n) for n in apart)), None)
        if other is None and f.must_name:
            other = next(iter(_same_kind_ids(text, f.value)), None)
        if other is not None:
            return "other", f"names {other}, another of the customer's records, not {f.value} that the write touches"
        if f.must_name:
            return "unnamed", f"does not name {f.value} ({f.argument})"
    return "named", ""


def money_arguments(template: str) -> set[str]:
    """The arguments that are money: those the rule's description writes as an amount ("${amount:.2f}")."""
    pairs = re.findall(r"\$\{(\w+)|\{(\w+):\.2f\}", template) if template else []
    return {k for pair in pairs for k in pair if k} if template else {"amount"}


def flags_set(event: Mapping[str, Any], template: str) -> list[str]:
    """The yes/no arguments the write turns on that the rule's description names ("autopay"), as words."""
    keys = template_arguments(template) or set()
    raw = event.get("arguments")
    args: dict[str, Any] = raw if isinstance(raw, dict) else {}
    return [k.replace("_", " ") for k, v in args.items() if v is True and k in keys]


def template_arguments(template: str) -> set[str] | None:
    """The arguments the rule's description of a write names (None without a description: all of them)."""
    return set(re.findall(r"\{(\w+)", template)) if template else None


def amounts_said(text: str, reading: Reading) -> list[Decimal]:
    """Amounts a message states: money, or where the domain writes none with a currency ("estimated at 557.00"), decimals."""
    said = extract_values(text, reading.clock, reading.id_patterns)
    money = [Decimal(v.norm) for v in said if v.kind == "money" and Decimal(v.norm).is_finite()]
    return money or [Decimal(v.norm) for v in said if v.kind == "number" and "." in v.text and Decimal(v.norm).is_finite()]
