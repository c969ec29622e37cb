"""A family's phrase checks, rewritten as what a paraphrase of the closing cannot miss.

Families write the dialogue checks they mean ("states the refund", "refuses the change");
every retail task then checks them in the claims form of ``claims.yaml``, so that a
competent closing in other words passes and a wrong figure fails.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from ._draft import RetailDraft

# a phrase check's pattern that is a value (an amount, a date, a count, a street address, a place name), not wording
_VALUE = re.compile(r"^\$?\d[\d,]*(\.\d\d)?$|^\d{4}-\d{2}-\d{2}$|^\d+ [A-Z][a-z]+( [A-Z][a-z]+)*$|^[A-Z][a-z]+$")
_CLAIMS = Path(__file__).resolve().parent.parent / "claims.yaml"


@cache
def _claims() -> dict[str, Any]:
    return yaml.safe_load(_CLAIMS.read_text(encoding="utf-8"))


@cache
def action_words() -> frozenset[str]:
    """The words of claims.yaml's action phrases ("replacement", "refund", "exchange"): a closing may say them in any
    form, since the mentions check reads an outcome term through the claim reader as well."""
    return frozenset(w for action in _claims().get("actions", {}).values() for phrase in action.get("phrases", []) for w in phrase.split())


def claim_roles() -> dict[str, dict[str, Any]]:
    """The roles of claims.yaml (refund.amount, new_date, ...): the tools that hold each one's value and its kind."""
    return _claims().get("roles", {})


def _role_values(golden: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(role, value) for every argument of a golden write that holds a claims role's value ("529.00", "2026-03-16").

    A fee or charge argument ("restocking_fee", "late_cancellation_charge") holds a fee; any other amount holds
    what the role of its tool pays out (a refund, a credit).
    """
    out = []
    for role, spec in claim_roles().items():
        for call in golden:
            if call["name"] not in spec.get("tools", []) or call.get("expect_error"):
                continue
            for key, arg in call["arguments"].items():
                if spec.get("kind") == "money" and isinstance(arg, int | float) and not isinstance(arg, bool):
                    if key.endswith(("fee", "charge")) == (role == "fee.amount") and arg:
                        out.append((role, f"{arg:.2f}"))
                elif spec.get("kind") == "date" and isinstance(arg, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", arg):
                    out.append((role, arg))
    return out


def _said(value: str, text: str) -> bool:
    """Whether ``text`` states ``value`` (an amount with or without thousands separators, or an ISO date)."""
    if "-" in value:
        return value in text
    whole, cents = value.split(".")
    return bool(re.search(rf"\$(?:{whole}|{int(whole):,})\.{cents}(?!\d)", text))


def claims_form(d: RetailDraft) -> None:
    """Rewrite the draft's phrase checks as what a paraphrase cannot miss.

    A value the closing must state becomes the stated role that holds it (``states: [refund.amount]``) where a
    golden write holds it, and stays a value mention (matched after normalising money and dates) where none does.
    A single outcome word of the claim vocabulary ("replacement", "refund") stays: the mentions check reads it
    through the claim reader, in any words. Other wording ("no discount", "can't be changed") and forbidden phrases
    ("is cancelled", a bare "now" or "12.00") are dropped: the domain's claims checks read every closing for its outcome in any words
    (``claims:states_outcome``, ``claims:agrees``), ``withholds`` reads the confidential score by meaning, and the
    explanation a refusal owes is a rubric question.
    """
    held = _role_values(d.golden)
    said = [role for role, value in held if _said(value, d.golden_reply)]
    if said:
        d.states(*said)
    stated = set(d.checks.get("states", []))
    for chk in d.checks.pop("dialogue", []):
        values = []
        for pattern in chk.get("must", []):
            literal = pattern.replace("\\", "")
            if pattern in action_words():  # an outcome term, read in any words the claim reader knows
                values.append(pattern)
                continue
            if not _VALUE.match(literal) or re.search(r"[|()\[\]*+?]", literal):
                continue
            if not any(value == literal.lstrip("$").replace(",", "") and role in stated for role, value in held):
                values.append(pattern)
        if values:
            d.mention(chk["name"], must=values)
