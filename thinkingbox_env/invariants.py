"""Data-integrity checks a system of record enforces on every write, shared by the domains' tools.

These are not business policy (who may get a refund, which date a rule allows): a
wrong but well-formed request still succeeds and is caught by the task's checks.
They refuse what no real backend would store at all: a date in year 9999 or before
the record it belongs to existed, a negative balance, a name that is empty or made
of control characters, a malformed e-mail, an identifier with the wrong number of
digits. Each refusal is a ``ToolError`` naming the argument and the bound.
"""

from __future__ import annotations

import re
from datetime import date
from decimal import Decimal

from .tools import EARLIEST_DATE, LATEST_DATE, ToolError

MAX_NAME_LENGTH = 200
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$")


def plausible_date(value: date, name: str) -> date:
    """A date between 1900 and 2100: the range any record of these systems can hold."""
    if not EARLIEST_DATE <= value <= LATEST_DATE:
        raise ToolError(f"{name} {value.isoformat()} is outside the range a record can hold ({EARLIEST_DATE} to {LATEST_DATE})")
    return value


def not_before(value: date, floor: date, name: str, what: str) -> date:
    """A date that is not before the record it refers to began (``what`` names that start)."""
    plausible_date(value, name)
    if value < floor:
        raise ToolError(f"{name} {value.isoformat()} is before {what} ({floor.isoformat()})")
    return value


def not_after(value: date, ceiling: date, name: str, what: str) -> date:
    """A date that cannot lie in the future of ``ceiling`` (a birth, a loss that already happened)."""
    plausible_date(value, name)
    if value > ceiling:
        raise ToolError(f"{name} {value.isoformat()} is after {what} ({ceiling.isoformat()})")
    return value


def money_within(value: Decimal, name: str, maximum: Decimal) -> Decimal:
    """A positive amount no larger than the most one such transaction can move."""
    if value <= 0:
        raise ToolError(f"{name} must be positive, got {value}")
    if value > maximum:
        raise ToolError(f"{name} {value} is above the limit of {maximum} for one transaction")
    return value


def non_negative_balance(balance: int | Decimal, name: str) -> None:
    """A balance a change would leave below zero is refused: nothing can be owed in points or credit."""
    if balance < 0:
        raise ToolError(f"this change would leave {name} at {balance}; a balance cannot go below zero")


def well_formed_text(value: str, name: str, max_length: int = MAX_NAME_LENGTH) -> str:
    """Non-empty text without control characters, of a length a record field holds; returned stripped."""
    text = value.strip()
    if not text:
        raise ToolError(f"{name} must not be empty")
    if _CONTROL.search(text):
        raise ToolError(f"{name} must not contain control characters")
    if len(text) > max_length:
        raise ToolError(f"{name} is {len(text)} characters long; at most {max_length} are stored")
    return text


def well_formed_email(value: str, name: str = "email") -> str:
    """An address of the form ``local@domain.tld``; returned stripped."""
    text = well_formed_text(value, name)
    if not _EMAIL.match(text):
        raise ToolError(f"{name} {text!r} is not an e-mail address (local@domain.tld)")
    return text


def digits(value: str, name: str, count: int) -> str:
    """Exactly ``count`` digits, as an identifier fragment such as the last four of an SSN."""
    text = value.strip()
    if not (len(text) == count and text.isascii() and text.isdigit()):
        raise ToolError(f"{name} must be exactly {count} digits, got {len(text)} characters")
    return text
