"""Harborlight's rules: the fee, window and compensation arithmetic the tools and the families share."""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal

from thinkingbox_env.tasks.domain import load_domain

RULES = load_domain("travel").module("rules")
TODAY = RULES.TODAY


def test_the_clock_comes_from_domain_yaml():
    assert load_domain("travel").spec.clock == RULES.NOW
    assert date(2026, 5, 14) == TODAY and TODAY.strftime("%A") == "Thursday"


def test_rates_come_from_the_seed_and_the_saver_rate_is_15_percent_off():
    assert RULES.base_rate("HTL-101", "STD") == Decimal("110.00")
    assert RULES.public_rate("HTL-101", "DLX", "flexible") == Decimal("155.00")
    assert RULES.public_rate("HTL-101", "DLX", "saver") == Decimal("131.75")
    assert RULES.CORPORATE_RATES[("CORP-201", "HTL-102", "STD")] == Decimal("100.00")


def test_same_day_changes_cost_35_unless_the_tier_or_the_account_waives_it():
    assert RULES.change_fee("flexible", "member", TODAY + timedelta(days=1)) == 0
    assert RULES.change_fee("flexible", "member", TODAY) == Decimal("35.00")
    assert RULES.change_fee("flexible", "silver", TODAY - timedelta(days=1)) == Decimal("35.00")
    assert RULES.change_fee("flexible", "gold", TODAY) == 0
    assert RULES.change_fee("corporate", "member", TODAY, "breakfast_included;no_change_fees") == 0
    assert RULES.change_fee("corporate", "member", TODAY, "late_check_out") == Decimal("35.00")


def test_cancellation_windows_by_rate_type_and_tier():
    rate, total = Decimal("150.00"), Decimal("450.00")
    assert RULES.cancellation_fee("flexible", "gold", TODAY + timedelta(days=2), rate, total) == 0
    assert RULES.cancellation_fee("flexible", "gold", TODAY + timedelta(days=1), rate, total) == rate
    assert RULES.cancellation_fee("flexible", "platinum", TODAY + timedelta(days=1), rate, total) == 0
    assert RULES.cancellation_fee("flexible", "platinum", TODAY, rate, total) == rate
    assert RULES.cancellation_fee("corporate", "member", TODAY + timedelta(days=1), rate, total) == 0
    assert RULES.cancellation_fee("saver", "platinum", TODAY + timedelta(days=40), rate, total) == total
    assert RULES.cancellation_fee("flexible", "member", TODAY - timedelta(days=1), rate, total) is None


def test_group_changes_are_free_from_14_days_and_25_a_room_closer():
    assert RULES.group_change_fee(TODAY + timedelta(days=14), 6) == 0
    assert RULES.group_change_fee(TODAY + timedelta(days=13), 6) == Decimal("150.00")


def test_travel_credit_is_10_or_15_percent_capped_at_150():
    assert RULES.travel_credit("member", Decimal("640.00")) == Decimal("64.00")
    assert RULES.travel_credit("gold", Decimal("640.00")) == Decimal("96.00")
    assert RULES.travel_credit("member", Decimal("1800.00")) == Decimal("150.00")


def test_service_prices_follow_their_unit():
    assert RULES.service_price("breakfast", 3) == Decimal("72.00")
    assert RULES.service_price("airport_transfer", 3) == Decimal("55.00")
    assert RULES.service_price("welcome_dinner", 2, guests=24) == Decimal("1008.00")
