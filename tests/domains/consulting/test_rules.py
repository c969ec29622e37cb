"""Halcrow & Vine's rules: one source for the tools, the families and the documents the agent reads."""

from __future__ import annotations

import re
from datetime import timedelta
from decimal import Decimal

import pytest

from thinkingbox_env.contracts.spec import heading_slug
from thinkingbox_env.tasks.domain import load_domain

DOMAIN = load_domain("consulting")
rules = DOMAIN.module("rules")


def test_the_clock_is_the_one_the_policy_states():
    assert DOMAIN.spec.clock == rules.NOW
    assert "12 May 2026" in (DOMAIN.path / "policy.md").read_text()


@pytest.mark.parametrize("level, floor, ok", [("analyst", "analyst", True), ("consultant", "senior_consultant", False),
                                              ("manager", "senior_consultant", True), ("principal", "partner", False)])
def test_levels_are_a_ladder(level, floor, ok):
    assert rules.at_least(level, floor) is ok


@pytest.mark.parametrize("held, required, ok", [("none", "none", True), ("baseline", "enhanced", False), ("enhanced", "baseline", True)])
def test_clearance_covers_its_level_and_those_below(held, required, ok):
    assert rules.clearance_covers(held, required) is ok


def test_onboarding_phases_move_one_at_a_time():
    assert [rules.next_phase(p) for p in rules.PHASES] == ["accounts", "training", "equipped", "complete", None]


def test_role_bundles_come_from_the_catalogue():
    assert rules.in_bundle("SW-TRANSCRIBE", "designer")
    assert rules.in_bundle("SW-IDE", "developer") and not rules.in_bundle("SW-IDE", "advisor")
    assert not any(rules.in_bundle("SW-MODELER", r) for r in rules.ROLES)


def test_expense_lines_are_judged_by_cap_receipt_and_age():
    today = rules.TODAY
    assert rules.expense_line_ok("meals", Decimal("60.00"), True, today) is None
    assert rules.expense_line_ok("meals", Decimal("60.01"), True, today) == "over_cap"
    assert rules.expense_line_ok("taxi", Decimal("30.00"), False, today) == "no_receipt"
    assert rules.expense_line_ok("taxi", Decimal("25.00"), False, today) is None
    assert rules.expense_line_ok("rail", Decimal("100.00"), True, today - timedelta(days=61)) == "late"
    assert rules.expense_line_ok("rail", Decimal("100.00"), True, today - timedelta(days=60)) is None


def test_a_trip_estimate_is_the_fare_plus_nights_at_the_cap():
    assert rules.trip_estimate(Decimal("200"), "europe", 3) == Decimal("860.00")
    assert rules.business_class_allowed("long_haul", "principal") and not rules.business_class_allowed("long_haul", "manager")
    assert not rules.business_class_allowed("europe", "partner")


def _table(doc: str) -> dict[str, list[str]]:
    rows = {}
    for line in (DOMAIN.path / "kb" / doc).read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells[0] and not set(cells[0]) <= {"-"}:
            rows[cells[0]] = cells[1:]
    return rows


def test_the_hardware_document_states_the_catalogue():
    table = _table("hardware.md")
    for row in rules.HARDWARE.values():
        level, price = table[row["name"]]
        assert level == row["min_level"].replace("_", " ")
        assert Decimal(price.replace(",", "")) == Decimal(row["price"])


def test_the_expense_and_travel_documents_state_the_limits():
    caps = _table("expenses.md")
    for category, row in rules.EXPENSE_CAPS.items():
        cap, receipt = caps[category.replace("_", " ")]
        assert (Decimal(cap), Decimal(receipt)) == (Decimal(row["cap"]), Decimal(row["receipt_over"]))
    travel = _table("travel.md")
    for region, row in rules.TRAVEL.items():
        cap, notice, business = travel[region]
        assert (Decimal(cap), int(notice)) == (Decimal(row["hotel_night_cap"]), int(row["advance_days"]))
        assert business == (row["business_class_from_level"] or "never")


def test_the_policy_names_the_thresholds_the_rules_use():
    text = (DOMAIN.path / "policy.md").read_text()
    for amount in (rules.EXPENSE_PRACTICE_HEAD_FROM, rules.EXPENSE_FINANCE_FROM, rules.SOFTWARE_LEAD_APPROVAL_FROM, rules.HARDWARE_PROCUREMENT_FROM):
        assert f"{int(amount):,}" in text
    assert f"{rules.EXPENSE_LATE_DAYS} days" in text


def test_every_policy_source_a_golden_write_names_resolves():
    headings = {heading_slug(m) for m in re.findall(r"^#+ (.+)$", (DOMAIN.path / "policy.md").read_text(), re.MULTILINE)}
    import thinkingbox_env as tb

    used = {s for t in tb.list_tasks(domain="consulting") for c in tb.load_task(t).golden for s in c.why.values()}
    policy = {s.split("#", 1)[1] for s in used if s.startswith("policy#")}
    assert policy and policy <= headings
    docs = {s.split("/", 1)[1] for s in used if s.startswith("kb/")}
    assert docs and all((DOMAIN.path / "kb" / d).is_file() for d in docs)
