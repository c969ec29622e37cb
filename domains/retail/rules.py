"""Brightwell's business rules, shared by the tools and the task families.

Fees, windows, the installer calendar, promotions and the catalogue live here
once: a tool that checks a date and a family that draws a task around it read the
same rule, so the two cannot drift apart. Families import this module, never
``tools``; prices and promotions are read from the seed, the data the tools see.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from thinkingbox_env.authoring import domain_clock, seed_rows

NOW: datetime = domain_clock(__file__)
TODAY: date = NOW.date()

# sku -> (name, category, price, variant group), from seed/products.csv; services are not merchandise
CATALOG: dict[str, tuple[str, str, str, str]] = {
    r["sku"]: (r["name"], r["category"], r["price"], r["variant_group"])
    for r in seed_rows(__file__, "products") if r["category"] != "service"
}
INSTALL_SKU: tuple[str, str, str] = next(
    (r["sku"], r["name"], r["price"]) for r in seed_rows(__file__, "products") if r["sku"] == "SVC-INSTALL")
INSTALLABLE: list[str] = [r["sku"] for r in seed_rows(__file__, "products") if r["installable"] == "true"]
# code -> the seed row of seed/promotions.csv (kind, value, min_subtotal, stackable, plus_only, valid_from, valid_to)
PROMOTIONS: dict[str, dict[str, str]] = {r["code"]: r for r in seed_rows(__file__, "promotions")}

FREE_SHIPPING_FROM = Decimal("75")
STANDARD_SHIPPING_FEE = Decimal("9.99")
RESTOCKING = {"tv": Decimal("0.15"), "major_appliance": Decimal("0.15"), "computer": Decimal("0.10")}
RETURN_FEE = Decimal("9.99")
REMOVAL_FEE = Decimal("49.00")
LATE_CANCEL_CHARGE = Decimal("35.00")
INSTALL_FEE = Decimal("99.00")
# the most one record can move: bounds of the system of record, far above anything policy grants
MAX_STORE_CREDIT = Decimal("1000.00")
MAX_POINTS_ADJUSTMENT = 100_000
# the most one shipping charge (an express upgrade, a reship) can be: a bound of the billing system, far above any fee
MAX_SHIPPING_CHARGE = Decimal("100.00")


def cents(value: Decimal) -> Decimal:
    return value.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def to_money(value: Any) -> Decimal:
    """An amount as a ``Decimal`` rounded to cents (tools take amounts as floats)."""
    return cents(Decimal(str(value)))


def money(value: Any) -> str:
    """An amount as the two-decimal string the database and the seed hold."""
    return str(to_money(value))


def price(sku: str) -> Decimal:
    return Decimal(CATALOG[sku][2])


def shipping_fee(subtotal: Decimal, tier: str) -> Decimal:
    """Standard shipping is free from $75 and for Plus members."""
    return Decimal("0") if subtotal >= FREE_SHIPPING_FROM or tier == "plus" else STANDARD_SHIPPING_FEE


def discount(code: str, subtotal: Decimal) -> Decimal:
    """What a promotion takes off a subtotal that qualifies for it."""
    promo = PROMOTIONS[code]
    value = Decimal(promo["value"])
    return cents(subtotal * value / 100) if promo["kind"] == "percent" else value


def return_window_days(tier: str) -> int:
    return 60 if tier == "plus" else 30


def return_fees(lines: list[tuple[int, str, bool, bool]], reason: str, tier: str, first_order: bool) -> tuple[Decimal, Decimal, Decimal]:
    """(restocking, return shipping, removal) for returned lines (line_no, sku, opened, installed), per the returns policy."""
    if reason != "changed_mind":
        return Decimal("0"), Decimal("0"), Decimal("0")
    restocking = Decimal("0") if first_order else sum(
        (cents(price(sku) * RESTOCKING.get(CATALOG[sku][1], Decimal("0"))) for _, sku, opened, _ in lines if opened), Decimal("0"))
    shipping = Decimal("0") if first_order or tier == "plus" else RETURN_FEE
    removal = REMOVAL_FEE * sum(1 for *_, installed in lines if installed)
    return restocking, shipping, removal


def years_after(day: date, years: int = 1) -> date:
    """The same calendar day ``years`` later (29 February falls back to 365 days a year)."""
    try:
        return day.replace(year=day.year + years)
    except ValueError:  # 29 February
        return day + timedelta(days=365 * years)


def installer_works_on(day: date) -> bool:
    """Installers work Monday to Saturday."""
    return day.weekday() != 6


def day_after(days: int) -> date:
    """A working day (Monday to Saturday) ``days`` or a little more after today."""
    day = TODAY + timedelta(days=days)
    while not installer_works_on(day):
        day += timedelta(days=1)
    return day
