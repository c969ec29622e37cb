"""Ashgrove Mutual's business rules, shared by the tools and the task families.

The business calendar (holidays, business days), the tier limits, the billing
arithmetic (installments, pro-rata refunds) and the VIN check digit live here
once, so a tool that checks a request and a family that draws a task around it
compute the same answer. Families import this module, never ``tools``.
"""

from __future__ import annotations

import math
from datetime import date, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from thinkingbox_env.authoring import domain_clock

NOW: datetime = domain_clock(__file__)
TODAY: date = NOW.date()
TOMORROW: date = TODAY + timedelta(days=1)
NOW_TS: str = NOW.strftime("%Y-%m-%d %H:%M:%S")
# arrangements made on or after this date (one year back) count toward the tier limit
WINDOW_START: date = date(TODAY.year - 1, TODAY.month, TODAY.day)

HOLIDAYS: dict[date, str] = {
    date(2025, 1, 1): "New Year's Day",
    date(2025, 1, 20): "Martin Luther King Jr. Day",
    date(2025, 2, 17): "Presidents' Day",
    date(2025, 5, 26): "Memorial Day",
    date(2025, 6, 19): "Juneteenth",
    date(2025, 7, 4): "Independence Day",
    date(2025, 9, 1): "Labor Day",
    date(2025, 11, 27): "Thanksgiving Day",
    date(2025, 11, 28): "Day after Thanksgiving",
    date(2025, 12, 25): "Christmas Day",
    date(2026, 1, 1): "New Year's Day",
    date(2026, 1, 19): "Martin Luther King Jr. Day",
    date(2026, 2, 16): "Presidents' Day",
    date(2026, 5, 25): "Memorial Day",
    date(2026, 6, 19): "Juneteenth",
    date(2026, 7, 3): "Independence Day (observed)",
    date(2026, 9, 7): "Labor Day",
    date(2026, 11, 26): "Thanksgiving Day",
    date(2026, 11, 27): "Day after Thanksgiving",
    date(2026, 12, 25): "Christmas Day",
}

ARRANGEMENT_LIMITS = {"standard": 1, "preferred": 2, "elite": 3}
EXTENSION_MAX_BUSINESS_DAYS = {"standard": 7, "preferred": 10, "elite": 15}
PLAN_MONTHS = {"full": 12, "semiannual": 6, "quarterly": 3, "monthly": 1}
PLAN_FEES = {"full": Decimal("0.00"), "semiannual": Decimal("0.00"), "quarterly": Decimal("3.00"), "monthly": Decimal("5.00")}
REINSTATEMENT_FEE = Decimal("25.00")
REINSTATEMENT_WINDOW_DAYS = 30
GRACE_PERIOD_DAYS = 15
DOCS_BASE_URL = "https://docs.ashgrove-mutual.example/v1"



def is_business_day(day: date) -> bool:
    return day.weekday() < 5 and day not in HOLIDAYS


def add_business_days(start: date, n: int) -> date:
    """The n-th business day after ``start`` (``start`` itself is never counted)."""
    day = start
    while n > 0:
        day += timedelta(days=1)
        if is_business_day(day):
            n -= 1
    return day


def next_business_day(day: date) -> date:
    """``day`` itself if it is a business day, else the first business day after it."""
    while not is_business_day(day):
        day += timedelta(days=1)
    return day


def money(value: Any) -> Decimal:
    return Decimal(str(value)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def months_between(start: date, end: date) -> int:
    return (end.year - start.year) * 12 + end.month - start.month


def installment_quote(premium: Any, paid: Any, due: date, expiration: date, plan: str) -> dict[str, Any]:
    """Installments left and the amount of each under ``plan``, from the next due date to expiration."""
    remaining = max(money(premium) - money(paid), Decimal("0.00"))
    months_left = max(months_between(due, expiration), 1)
    count = max(1, math.ceil(months_left / PLAN_MONTHS[plan]))
    fee = PLAN_FEES[plan]
    return {"installments": count, "installment_fee": fee, "amount_due": money(remaining / count) + fee}


def cancellation_refund(premium: Any, paid: Any, past_due: Any, effective: date, expiration: date, cancel_on: date) -> Decimal:
    """Pro-rata: what was paid minus the premium earned up to the cancellation date, never below zero."""
    term_days = (expiration - effective).days
    used_days = min(max((cancel_on - effective).days, 0), term_days)
    earned = money(Decimal(str(premium)) * used_days / term_days)
    refund = money(paid) - earned
    if money(past_due) > 0:
        return Decimal("0.00")
    return max(refund, Decimal("0.00"))


# VINs: ISO 3779 / North American check digit (position 9).
VIN_ALPHABET = "ABCDEFGHJKLMNPRSTUVWXYZ0123456789"
_TRANSLIT = {
    **{str(d): d for d in range(10)},
    "A": 1, "B": 2, "C": 3, "D": 4, "E": 5, "F": 6, "G": 7, "H": 8,
    "J": 1, "K": 2, "L": 3, "M": 4, "N": 5, "P": 7, "R": 9,
    "S": 2, "T": 3, "U": 4, "V": 5, "W": 6, "X": 7, "Y": 8, "Z": 9,
}
_WEIGHTS = (8, 7, 6, 5, 4, 3, 2, 10, 0, 9, 8, 7, 6, 5, 4, 3, 2)
YEAR_CODES = {
    "1": 2001, "2": 2002, "3": 2003, "4": 2004, "5": 2005, "6": 2006, "7": 2007, "8": 2008, "9": 2009,
    "A": 2010, "B": 2011, "C": 2012, "D": 2013, "E": 2014, "F": 2015, "G": 2016, "H": 2017, "J": 2018,
    "K": 2019, "L": 2020, "M": 2021, "N": 2022, "P": 2023, "R": 2024, "S": 2025, "T": 2026, "V": 2027,
}
YEAR_TO_CODE = {y: c for c, y in YEAR_CODES.items()}
WMI = {
    "1HG": "Honda", "2HG": "Honda", "5FN": "Honda", "JHM": "Honda",
    "4T1": "Toyota", "JTD": "Toyota", "2T3": "Toyota", "5TD": "Toyota",
    "1FA": "Ford", "1FM": "Ford", "1FT": "Ford",
    "1G1": "Chevrolet", "1GC": "Chevrolet", "3GN": "Chevrolet",
    "JF1": "Subaru", "JF2": "Subaru", "4S4": "Subaru",
    "JM1": "Mazda", "JM3": "Mazda",
    "KM8": "Hyundai", "5NP": "Hyundai", "KNA": "Kia", "5XY": "Kia",
    "1N4": "Nissan", "5N1": "Nissan", "3VW": "Volkswagen", "1C4": "Jeep", "5YJ": "Tesla",
}


def vin_check_digit(vin: str) -> str:
    total = sum(_TRANSLIT[ch] * w for ch, w in zip(vin.upper(), _WEIGHTS))
    rem = total % 11
    return "X" if rem == 10 else str(rem)


def decode_vin(vin: str) -> dict[str, Any]:
    """Check a VIN and decode what the backend can: make (from the WMI) and model year."""
    v = vin.strip().upper()
    problems = []
    if len(v) != 17:
        problems.append(f"a VIN has 17 characters, this one has {len(v)}")
    bad = sorted({ch for ch in v if ch not in VIN_ALPHABET})
    if bad:
        problems.append(f"characters not allowed in a VIN: {', '.join(bad)} (I, O and Q are never used)")
    if not problems and vin_check_digit(v) != v[8]:
        problems.append("the check digit (9th character) does not match the rest of the VIN")
    return {
        "vin": v,
        "valid": not problems,
        "problems": problems,
        "make": WMI.get(v[:3], "Unknown") if len(v) >= 3 else "Unknown",
        "model_year": YEAR_CODES.get(v[9]) if len(v) >= 10 else None,
    }


def make_vin(wmi: str, vds: str, year: int, plant: str, serial: str) -> str:
    """Build a valid VIN: WMI (3) + VDS (5) + check digit + year code + plant + serial (6)."""
    body = f"{wmi}{vds}0{YEAR_TO_CODE[year]}{plant}{serial}"
    return body[:8] + vin_check_digit(body) + body[9:]
