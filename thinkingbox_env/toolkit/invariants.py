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


MAX_YEARS_AHEAD = 2
"""How far ahead of the episode's today any booking, access expiry, trip or visit can be recorded.

No system of these domains takes a reservation, a grant or an appointment beyond two years out;
a date in 2100 that the calendar range allows is still no record a backend would keep."""

US_STATES = frozenset(
    ["AL", "AK", "AZ", "AR", "CA", "CO", "CT", "DE", "DC", "FL", "GA", "HI", "ID", "IL", "IN", "IA", "KS", "KY", "LA", "ME", "MD", "MA", "MI", "MN", "MS", "MO", "MT", "NE", "NV", "NH", "NJ", "NM", "NY", "NC", "ND", "OH", "OK", "OR", "PA", "RI", "SC", "SD", "TN", "TX", "UT", "VT", "VA", "WA", "WV", "WI", "WY", "AS", "GU", "MP", "PR", "VI"]
)
"""The two-letter codes a US licensing agency (a state, DC or a territory) issues under."""

MINIMUM_DRIVING_AGE = 14  # the youngest age any US state issues a learner's permit at


def years_later(day: date, years: int) -> date:
    """The same calendar day ``years`` later (28 February for 29 February in a common year)."""
    try:
        return day.replace(year=day.year + years)
    except ValueError:
        return day.replace(year=day.year + years, day=28)


def not_too_far_ahead(value: date, today: date, name: str, years: int = MAX_YEARS_AHEAD) -> date:
    """A date at most ``years`` after ``today``: the horizon of a reservation, a grant or an appointment."""
    plausible_date(value, name)
    horizon = years_later(today, years)
    if value > horizon:
        raise ToolError(f"{name} {value.isoformat()} is more than {years} years ahead of today ({today.isoformat()}); "
                        f"the backend records nothing beyond {horizon.isoformat()}")
    return value


def us_state(value: str, name: str) -> str:
    """A US state, DC or territory code (upper-cased): ``ZZ`` issues no licence."""
    code = value.strip().upper()
    if code not in US_STATES:
        raise ToolError(f"{name} {value.strip()!r} is not a US state code (two letters such as CA, WA or NY)")
    return code


def old_enough(birth: date, on: date, years: int, name: str, what: str) -> date:
    """A date of birth at least ``years`` before ``on``: someone born last month holds no licence."""
    if years_later(birth, years) > on:
        raise ToolError(f"{name} {birth.isoformat()} makes the person younger than {years} on {on.isoformat()}, "
                        f"the minimum age {what}")
    return birth


def different_people(first: str, second: str, rule: str) -> None:
    """Two roles the system of record keeps apart (a requester and their approver) held by one person is refused."""
    if first.strip().upper() == second.strip().upper():
        raise ToolError(rule)
