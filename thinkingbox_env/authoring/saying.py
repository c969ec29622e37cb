"""How families write values into openings, turns, closings and dialogue patterns.

One set of formatting helpers for every domain, so that a date or an amount is written
the same way wherever a domain writes it in the same style, and a dialogue pattern built
from a value matches that value literally.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

CENT = Decimal("0.01")


def cents(value: Any) -> Decimal:
    """An amount rounded half up to cents (the rounding the domains' databases hold)."""
    return Decimal(str(value)).quantize(CENT, rounding=ROUND_HALF_UP)


def amount(value: Any, *, grouped: bool = True) -> str:
    """``1,234.50`` (``1234.50`` with ``grouped=False``): an amount where no currency sign is written."""
    return f"{cents(value):,.2f}" if grouped else f"{cents(value)}"


def usd(value: Any, *, grouped: bool = True) -> str:
    """``$1,234.50`` (``$1234.50`` with ``grouped=False``, as a record prints it)."""
    return "$" + amount(value, grouped=grouped)


def iso(day: date) -> str:
    """``2026-05-22``."""
    return day.isoformat()


def ts(value: datetime) -> str:
    """``2026-05-22 14:30:00``: a timestamp as the domains' tables hold it."""
    return value.strftime("%Y-%m-%d %H:%M:%S")


def long_date(day: date, *, style: str = "us") -> str:
    """``Friday, May 22, 2026`` (``us``) or ``Friday 22 May`` (``uk``, as customers write it in a chat)."""
    if style == "us":
        return f"{day.strftime('%A')}, {day.strftime('%B')} {day.day}, {day.year}"
    if style == "uk":
        return f"{day.strftime('%A')} {day.day} {day.strftime('%B')}"
    raise ValueError(f"long_date: style is 'us' or 'uk', not {style!r}")


def short_date(day: date) -> str:
    """``May 22``."""
    return f"{day.strftime('%B')} {day.day}"


def cap_first(text: str) -> str:
    """``text`` with its first letter upper-cased and the rest as written (``str.capitalize`` lowers the rest)."""
    return text[:1].upper() + text[1:]


def slug(text: str) -> str:
    """``Tickets and record keeping`` -> ``tickets-and-record-keeping``: a heading as an anchor."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def policy_ref(heading: str) -> str:
    """``policy#<slug>``: the source of a written value that a policy section decides."""
    return f"policy#{slug(heading)}"


def record_ref(tool: str) -> str:
    """``record:<tool>``: the source of a written value read from an earlier call's result."""
    return f"record:{tool}"


def literal(text: str) -> str:
    """``text`` as a dialogue pattern that matches it literally (spaces and hyphens left readable)."""
    return re.escape(text).replace("\\ ", " ").replace("\\-", "-")


def amount_pattern(text: str) -> str:
    """An amount or a plain phrase as a dialogue pattern: ``$`` and ``.`` escaped, nothing else."""
    return text.replace("$", r"\$").replace(".", r"\.")


__all__ = ["CENT", "amount", "amount_pattern", "cap_first", "cents", "iso", "literal", "long_date", "policy_ref", "record_ref", "short_date", "slug", "ts", "usd"]
