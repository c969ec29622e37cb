"""Tidewell's IT rules (approval chains, role defaults, reserved levels, tiers, windows), shared by the tools and the families."""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal

from thinkingbox_env.tasks.domain import load_domain

DOMAIN = load_domain("neobank")
RULES = DOMAIN.module("rules")


def test_the_clock_comes_from_domain_yaml():
    assert DOMAIN.spec.clock == RULES.NOW and date(2026, 9, 14) == RULES.TODAY


def test_approval_chains_grow_with_classification_and_level():
    assert RULES.chain("APP-WIKI", "read") == ()
    assert RULES.chain("APP-GIT", "write") == ("manager",)
    assert RULES.chain("APP-CRM", "write") == ("manager", "app_owner")
    assert RULES.chain("APP-LEDGER", "read") == ("manager", "app_owner")
    assert RULES.chain("APP-LEDGER", "write") == ("manager", "app_owner", "security")
    assert RULES.security_approver() == "EMP-10007" and RULES.finance_approver() == "EMP-10004"


def test_role_defaults_cover_lower_levels_only():
    assert RULES.covered_by_role("ROLE-SWE", "APP-GIT", "read") and RULES.covered_by_role("ROLE-SWE", "APP-GIT", "write")
    assert not RULES.covered_by_role("ROLE-SWE", "APP-GIT", "admin")
    assert not RULES.covered_by_role("ROLE-CSA", "APP-LEDGER", "read")


def test_admin_on_restricted_applications_is_reserved():
    assert RULES.may_hold("ROLE-SRE", "APP-K8S", "admin") and RULES.may_hold("ROLE-SEC", "APP-LEDGER", "admin")
    assert not RULES.may_hold("ROLE-SWE", "APP-K8S", "admin")
    assert RULES.may_hold("ROLE-SWE", "APP-GIT", "admin")  # internal: not reserved


def test_contractors_get_internal_and_confidential_read_only():
    assert RULES.contractor_allowed("APP-GIT", "write") and RULES.contractor_allowed("APP-CRM", "read")
    assert not RULES.contractor_allowed("APP-CRM", "write") and not RULES.contractor_allowed("APP-LEDGER", "read")
    assert not any(RULES.contractor_allowed(a, "admin") for a in RULES.APPLICATIONS)


def test_procurement_tiers_at_their_boundaries():
    assert RULES.procurement_tier(Decimal("500.00")) == "manager"
    assert RULES.procurement_tier(Decimal("500.01")) == "director"
    assert RULES.procurement_tier(Decimal("3000.00")) == "director"
    assert RULES.procurement_tier(Decimal("3000.01")) == "finance"


def test_emergency_windows_and_expiries():
    assert RULES.emergency_hours("SEV1") == 8 and RULES.emergency_hours("SEV2") == 4 and RULES.emergency_hours("SEV3") is None
    assert RULES.max_days("APP-LEDGER", "admin") == 30 and RULES.max_days("APP-GIT", "write") is None
    assert RULES.expiry(30) == "2026-10-14 10:00:00" and RULES.expiry(None) is None


def test_licence_reclaim_after_45_idle_days():
    assert RULES.reclaimable(RULES.TODAY - timedelta(days=45)) and RULES.reclaimable(None)
    assert not RULES.reclaimable(RULES.TODAY - timedelta(days=44))


def test_the_policy_states_the_numbers_the_rules_use():
    text = DOMAIN.policy
    for phrase in ("at most 8 hours on a SEV1", "at most 4 hours on a SEV2", "$500.00", "$3,000.00", "45 days", "4 or more years"):
        assert phrase in text, phrase
    assert str(RULES.SUSPICIOUS_FAILED_LOGINS) not in text.split("## Account lockouts")[1].split("##")[0]  # the threshold stays in the KB
