"""Ashgrove's business rules (calendar, VINs, billing arithmetic), shared by the tools and the families."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from thinkingbox_env.tasks.domain import load_domain

RULES = load_domain("insurance").module("rules")


def test_business_days_and_vins_follow_the_policy():
    assert RULES.add_business_days(date(2026, 5, 19), 7) == date(2026, 5, 29)  # the policy's worked example
    assert RULES.add_business_days(date(2026, 6, 10), 10) == date(2026, 6, 25)  # Juneteenth skipped
    assert not RULES.is_business_day(date(2026, 5, 25))
    assert RULES.decode_vin("1M8GDM9AXKP042788")["valid"]  # the textbook check-digit example (X)
    bad = RULES.decode_vin("1M8GDM9A1KP042788")
    assert not bad["valid"] and "check digit" in bad["problems"][0]
    assert not RULES.decode_vin("1M8GDM9AXKP04278O")["valid"]  # letter O


def test_the_clock_comes_from_domain_yaml():
    assert load_domain("insurance").spec.clock == RULES.NOW
    assert date(2025, 5, 19) == RULES.WINDOW_START  # one year before the evaluation day


def test_installments_split_what_is_left_and_add_the_plan_fee():
    quote = RULES.installment_quote("1200.00", "600.00", date(2026, 6, 1), date(2026, 12, 1), "monthly")
    assert quote == {"installments": 6, "installment_fee": Decimal("5.00"), "amount_due": Decimal("105.00")}


def test_a_cancellation_refund_is_pro_rata_and_nothing_when_past_due():
    refund = RULES.cancellation_refund("1000.00", "1000.00", "0", date(2026, 1, 1), date(2027, 1, 1), date(2026, 7, 2))
    assert refund == Decimal("1000.00") - (Decimal("1000") * 182 / 365).quantize(Decimal("0.01"))
    assert RULES.cancellation_refund("1000.00", "1000.00", "10.00", date(2026, 1, 1), date(2027, 1, 1), date(2026, 7, 2)) == 0
