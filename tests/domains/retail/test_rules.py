"""Brightwell's business rules (fees, windows, the installer calendar, the catalogue), shared by the tools and the families."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from thinkingbox_env.tasks.domain import load_domain

DOMAIN = load_domain("retail")
RULES = DOMAIN.module("rules")


def test_the_clock_comes_from_domain_yaml():
    assert DOMAIN.spec.clock == RULES.NOW and date(2026, 3, 2) == RULES.TODAY


def test_the_catalogue_is_the_seed_without_services():
    assert "SVC-INSTALL" not in RULES.CATALOG and RULES.INSTALL_SKU == ("SVC-INSTALL", "Installation service", "99.00")
    assert RULES.CATALOG["BW-LAP-14"] == ("Corvid 14 laptop", "computer", "999.00", "corvid-14")
    assert RULES.INSTALLABLE == ["BW-TV55-Q", "BW-TV65-Q", "BW-DW45", "BW-WM-8"]


def test_shipping_is_free_from_75_dollars_or_for_plus_members():
    assert RULES.shipping_fee(Decimal("74.99"), "standard") == Decimal("9.99")
    assert RULES.shipping_fee(Decimal("75"), "standard") == 0
    assert RULES.shipping_fee(Decimal("10"), "plus") == 0


def test_promotions_come_from_the_seed():
    assert RULES.discount("SPRING15", Decimal("300.00")) == Decimal("45.00")
    assert RULES.discount("FREEHDMI", Decimal("999.00")) == Decimal("19")
    assert RULES.PROMOTIONS["WINTER25"]["valid_to"] == "2026-02-15"


def test_return_fees_follow_the_returns_policy():
    opened_laptop = [(1, "BW-LAP-14", True, False)]
    assert RULES.return_fees(opened_laptop, "changed_mind", "standard", first_order=False) == (
        Decimal("99.90"), Decimal("9.99"), Decimal("0"))
    assert RULES.return_fees(opened_laptop, "changed_mind", "plus", first_order=True) == (0, 0, 0)
    assert RULES.return_fees(opened_laptop, "defective", "standard", first_order=False) == (0, 0, 0)
    installed_tv = [(1, "BW-TV55-Q", False, True)]
    assert RULES.return_fees(installed_tv, "changed_mind", "standard", first_order=False)[2] == Decimal("49.00")
    assert (RULES.return_window_days("plus"), RULES.return_window_days("standard")) == (60, 30)


def test_installers_work_monday_to_saturday():
    assert not RULES.installer_works_on(date(2026, 3, 8))  # a Sunday
    assert RULES.installer_works_on(date(2026, 3, 7))
    assert RULES.day_after(6) == date(2026, 3, 9)  # today + 6 is a Sunday: the next working day
    assert RULES.years_after(date(2024, 2, 29)) == date(2025, 2, 28)
