"""Harborlight's business rules, shared by the tools and the task families.

Rates, fees, cancellation windows, compensation scales and the service catalogue
live here once, so that a tool quoting a price and a family drawing a task around
it read the same rule. Families import this module, never ``tools``; room rates
and catalogue prices are read from the seed, the data the tools see.
"""

from __future__ import annotations

from datetime import date, datetime
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from thinkingbox_env.authoring import domain_clock, seed_rows

NOW: datetime = domain_clock(__file__)
TODAY: date = NOW.date()

# (hotel_id, room_code) -> (name, base rate, max guests), from seed/room_types.csv
ROOMS: dict[tuple[str, str], tuple[str, Decimal, int]] = {
    (r["hotel_id"], r["room_code"]): (r["name"], Decimal(r["base_rate"]), int(r["max_guests"]))
    for r in seed_rows(__file__, "room_types")
}
# hotel_id -> the seed row of seed/hotels.csv
HOTELS: dict[str, dict[str, str]] = {r["id"]: r for r in seed_rows(__file__, "hotels")}
# code -> the seed row of seed/service_catalog.csv (name, kind, price, unit)
SERVICES: dict[str, dict[str, str]] = {r["code"]: r for r in seed_rows(__file__, "service_catalog")}

# (account, hotel, room) -> negotiated nightly rate, from seed/corporate_rates.csv
CORPORATE_RATES: dict[tuple[str, str, str], Decimal] = {
    (r["account_id"], r["hotel_id"], r["room_code"]): Decimal(r["nightly_rate"]) for r in seed_rows(__file__, "corporate_rates")
}
# account id -> the seed row of seed/corporate_accounts.csv
ACCOUNTS: dict[str, dict[str, str]] = {r["id"]: r for r in seed_rows(__file__, "corporate_accounts")}

SAVER_DISCOUNT = Decimal("0.15")
SAME_DAY_CHANGE_FEE = Decimal("35.00")
GROUP_LATE_CHANGE_FEE = Decimal("25.00")  # per room, for a group change less than 14 days before arrival
GROUP_CHANGE_NOTICE_DAYS = 14
GROUP_ESCALATE_DAYS = 7  # closer than this, group sales handles the change
PAYMENT_HOLD_HOURS = 72
MAX_FAILED_ATTEMPTS = 3
COMPLAINT_WINDOW_DAYS = 30
INVOICE_DISPUTE_DAYS = 60
CREDIT_SHARE = {"member": Decimal("0.10"), "silver": Decimal("0.10"), "gold": Decimal("0.15"), "platinum": Decimal("0.15")}
CREDIT_CAP = Decimal("150.00")
# the most one record can move: bounds of the system of record, far above anything policy grants
MAX_TRANSACTION = Decimal("20000.00")
MAX_COMPENSATION = Decimal("1000.00")
MAX_CARD_YEARS = 10  # no card issuer issues a card valid for longer
FEE_WAIVING_TIERS = ("gold", "platinum")


def cents(value: Decimal) -> Decimal:
    return value.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def to_money(value: Any) -> Decimal:
    """An amount as a ``Decimal`` rounded to cents (tools take amounts as floats)."""
    return cents(Decimal(str(value)))


def money(value: Any) -> str:
    """An amount as the two-decimal string the database and the seed hold."""
    return str(to_money(value))


def base_rate(hotel_id: str, room_code: str) -> Decimal:
    return ROOMS[(hotel_id, room_code)][1]


def public_rate(hotel_id: str, room_code: str, rate_type: str) -> Decimal:
    """The nightly rate of a public rate type: flexible is the base rate, saver 15% below it."""
    base = base_rate(hotel_id, room_code)
    return cents(base * (1 - SAVER_DISCOUNT)) if rate_type == "saver" else base


def nights(check_in: date, check_out: date) -> int:
    return (check_out - check_in).days


def days_until(check_in: date, today: date = TODAY) -> int:
    """Whole days from today to the check-in date (0 on the day of arrival, negative once it has passed)."""
    return (check_in - today).days


def change_fee(rate_type: str, tier: str, check_in: date, benefits: str = "", today: date = TODAY) -> Decimal:
    """The modification fee: free in advance; on the day of arrival $35, waived for gold and platinum
    members and for corporate accounts with the ``no_change_fees`` benefit."""
    if days_until(check_in, today) > 0:
        return Decimal("0")
    if tier in FEE_WAIVING_TIERS or "no_change_fees" in benefits.split(";"):
        return Decimal("0")
    return SAME_DAY_CHANGE_FEE


def free_cancellation_days(rate_type: str, tier: str) -> int | None:
    """How many days before arrival a booking can still be cancelled for free (None: never)."""
    if rate_type == "saver":
        return None
    if rate_type == "corporate" or tier == "platinum":
        return 1
    return 2


def cancellation_fee(rate_type: str, tier: str, check_in: date, nightly_rate: Decimal, total: Decimal,
                     today: date = TODAY) -> Decimal | None:
    """What is kept when a booking is cancelled: nothing inside the free window, one night after it,
    everything for a saver rate; None once the stay has started (no cancellation, see no-show rules)."""
    left = days_until(check_in, today)
    if left < 0:
        return None
    window = free_cancellation_days(rate_type, tier)
    if window is None:
        return total
    if left >= window:
        return Decimal("0")
    return min(nightly_rate, total)


def group_change_fee(check_in: date, rooms: int, today: date = TODAY) -> Decimal:
    """$25 a room when a group's dates change less than 14 days before arrival."""
    return Decimal("0") if days_until(check_in, today) >= GROUP_CHANGE_NOTICE_DAYS else GROUP_LATE_CHANGE_FEE * rooms


def travel_credit(tier: str, stay_total: Decimal) -> Decimal:
    """Goodwill travel credit for a verified service complaint: 10% of the stay (15% gold and platinum), at most $150."""
    return min(cents(stay_total * CREDIT_SHARE[tier]), CREDIT_CAP)


def service_price(code: str, nights_: int, guests: int = 1) -> Decimal:
    """The price of a catalogue service for a stay: per stay, per night, per day or per guest."""
    row = SERVICES[code]
    unit_price = Decimal(row["price"])
    if row["unit"] in ("per_night", "per_day"):
        return unit_price * nights_
    if row["unit"] == "per_guest":
        return unit_price * guests
    return unit_price
