"""Data-integrity invariants of every domain's write tools: absurd but well-formed writes are refused, naming the rule.

Two kinds of test. A table of named invariants, one test each, each starting from a real golden
call of a frozen task (so every other argument is valid) and changing what the rule bounds; and a
hypothesis property per write tool that appears in a golden trajectory: the golden call itself is
accepted, and the same call with one date pushed years past the horizon, one amount blown up to
sums no record holds, or one identifying text blanked is refused and leaves the state exactly as
it was. Plausible mistakes (a refund without restock, a date outside a policy window) are not
here: the families' tests show that the backend accepts them and a check catches them.
"""

from __future__ import annotations

import functools
from datetime import date, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import thinkingbox_env as tb
from thinkingbox_env.state.diff import canonical_hash
from thinkingbox_env.tasks.domain import domain_dirs, load_domain
from thinkingbox_env.toolkit.tools import FREE_TEXT

DOMAINS = sorted(domain_dirs())


@functools.cache
def _golden_calls(domain: str, tool: str) -> list[tuple[str, int]]:
    """(task id, golden index) of each frozen task whose golden calls ``tool`` successfully."""
    found = []
    for task_id in tb.list_tasks(domain=domain):
        spec = tb.load_task(task_id)
        for i, c in enumerate(spec.golden):
            if c.name == tool and c.expect_error is None:
                found.append((task_id, i))
                break
    return found


class Before:
    """The state of a task just before one of its golden calls: every earlier golden call replayed, no faults."""

    def __init__(self, task_id: str, index: int):
        self.spec = tb.load_task(task_id)
        self.runtime = tb.make(task_id).runtime
        self.box = self.runtime.domain.toolbox
        self.state = self.runtime.template.new_episode()  # no fault plan: a transient error is no invariant
        for c in self.spec.golden[:index]:
            if c.expect_error is None:
                res = self.box.call(self.state, c.name, c.arguments)
                assert res.ok, (task_id, c.name, res.content)
        self.call = self.spec.golden[index]

    def run(self, **changes: Any):
        return self.box.call(self.state, self.call.name, {**self.call.arguments, **changes})

    def hash(self) -> str:
        return canonical_hash(self.state)

    def close(self) -> None:
        self.state.close()


def _before(domain: str, tool: str, where=None) -> Before:
    for task_id, index in _golden_calls(domain, tool):
        b = Before(task_id, index)
        if where is None or where(b):
            return b
        b.close()
    pytest.skip(f"no frozen {domain} task calls {tool} as needed")


def _refused(b: Before, rule: str, **changes: Any) -> None:
    before = b.hash()
    res = b.run(**changes)
    assert not res.ok, f"{b.call.name}({changes}) was accepted: {res.content}"
    assert rule.lower() in str(res.content.get("error", "")).lower(), res.content
    assert b.hash() == before, "a refused write changed the state"


def _far(b: Before, years: int = 3) -> str:
    return (b.state.now.date() + timedelta(days=365 * years + 1)).isoformat()


# ----------------------------------------------------------------------------------------------- named invariants
# (domain, tool, what the test changes, the words of the refusal)

def _plus(b: Before, what: str) -> dict[str, Any]:
    """The changed arguments of an invariant test, computed from the golden call's state."""
    a, today = b.call.arguments, b.state.now.date()
    if what == "self_approval":
        r = b.state.query_one("SELECT employee_id FROM access_requests WHERE id = ?", [a["request_id"]])
        return {"approver_id": r["employee_id"]}
    if what == "self_purchase":
        return {"approver_id": a["employee_id"]}
    if what in ("far_check_in", "far_group"):
        start = date.fromisoformat(_far(b))
        return {"check_in": start.isoformat(), "check_out": (start + timedelta(days=2)).isoformat()}
    if what == "far_card":
        return {"expires": f"{today.year + 15}-01"}
    if what in ("far_expiry", "far_depart", "far_effective", "far_new_date", "far_visit", "far_due"):
        key = {"far_expiry": "expires_on", "far_depart": "depart_on", "far_effective": "effective_date", "far_new_date": "new_date",
               "far_visit": "visit_date", "far_due": "new_due_date"}[what]
        day = date.fromisoformat(_far(b))
        while day.weekday() >= 5:  # business and installer days: only the horizon refuses it
            day += timedelta(days=1)
        changes: dict[str, Any] = {key: day.isoformat()}
        if what == "far_depart":
            changes["return_on"] = (day + timedelta(days=3)).isoformat()
        return changes
    if what == "long_trip":
        return {"return_on": (date.fromisoformat(a["depart_on"]) + timedelta(days=400)).isoformat()}
    if what == "huge_charge":
        return {"amount": 19_999.99}
    if what == "huge_fee":
        return {next(k for k in ("upgrade_fee", "reship_fee") if k in b.box[b.call.name].model.model_fields): 1e9}
    if what == "blank_address":
        return {"shipping_address": "   "}
    if what == "late_charge":
        return {"late_cancellation_charge": 5_000.0}
    if what == "licence_state":
        return {"license_state": "ZZ"}
    if what == "infant_driver":
        eff = date.fromisoformat(a["effective_date"])
        return {"date_of_birth": (eff - timedelta(days=30)).isoformat()}
    if what == "overpayment":
        return {"amount": 19_999.0}
    raise AssertionError(what)


INVARIANTS = [
    ("neobank", "request_approval", "self_approval", "cannot approve their own request"),
    ("neobank", "create_procurement_request", "self_purchase", "cannot approve a purchase for themselves"),
    ("neobank", "provision_access", "far_expiry", "years ahead"),
    ("consulting", "grant_system_access", "far_expiry", "years ahead"),
    ("consulting", "create_vpn_profile", "far_expiry", "years ahead"),
    ("consulting", "create_travel_request", "far_depart", "years ahead"),
    ("consulting", "create_travel_request", "long_trip", "at most 180 days"),
    ("travel", "modify_booking", "far_check_in", "years ahead"),
    ("travel", "change_group_dates", "far_group", "years ahead"),
    ("travel", "add_payment_method", "far_card", "no card is issued valid beyond"),
    ("travel", "charge_payment", "huge_charge", "more than the booking can be charged"),
    ("retail", "change_shipping_speed", "huge_fee", "the most one shipping charge can be"),
    ("retail", "create_replacement_order", "huge_fee", "the most one shipping charge can be"),
    ("retail", "create_replacement_order", "blank_address", "shipping_address must not be empty"),
    ("retail", "cancel_installation", "late_charge", "the installation fee it is kept from"),
    ("retail", "reschedule_installation", "far_new_date", "years ahead"),
    ("retail", "schedule_revisit", "far_visit", "years ahead"),
    ("insurance", "add_driver", "licence_state", "is not a US state code"),
    ("insurance", "add_driver", "infant_driver", "minimum age"),
    ("insurance", "add_driver", "far_effective", "years ahead"),
    ("insurance", "add_vehicle", "far_effective", "years ahead"),
    ("insurance", "remove_vehicle", "far_effective", "years ahead"),
    ("insurance", "record_payment", "overpayment", "more than the account can owe"),
    ("insurance", "grant_extension", "far_due", "years ahead"),
]


@pytest.mark.parametrize(("domain", "tool", "what", "rule"), INVARIANTS, ids=[f"{d}-{t}-{w}" for d, t, w, _ in INVARIANTS])
def test_an_absurd_write_is_refused_naming_the_rule_and_the_golden_one_accepted(domain, tool, what, rule):
    b = _before(domain, tool, where=(lambda b: "booking_id" in b.call.arguments) if what == "huge_charge" else None)
    try:
        _refused(b, rule, **_plus(b, what))
        assert b.run().ok, "the golden call itself must still be accepted"
    finally:
        b.close()


def test_compensation_per_stay_is_bounded_across_calls():
    """Each call under the per-call cap, but the stay's total compensation never passes the stay's cost (or $1,000)."""
    b = _before("travel", "issue_compensation", where=lambda b: b.call.arguments["kind"] == "travel_credit")
    try:
        booking = b.state.query_one("SELECT total FROM bookings WHERE id = ?", [b.call.arguments["booking_id"]])
        ceiling = min(float(booking["total"]), 1000.0)
        assert b.run().ok
        given_so_far = float(b.call.arguments["amount"])
        while given_so_far + 100 <= ceiling:
            assert b.run(amount=100.0).ok
            given_so_far += 100
        _refused(b, "the most one stay can be compensated", amount=100.0)
    finally:
        b.close()


def test_a_plausible_but_wrong_driver_is_still_accepted():
    """A 16-year-old from a real state, a date a week out: policy questions for the checks, not the backend."""
    b = _before("insurance", "add_driver")
    try:
        eff = date.fromisoformat(b.call.arguments["effective_date"])
        res = b.run(license_state="nv", date_of_birth=(eff - timedelta(days=16 * 366)).isoformat(),
                    effective_date=(eff + timedelta(days=7)).isoformat())
        assert res.ok, res.content
    finally:
        b.close()


# ----------------------------------------------------------------------------------------------- property per write tool


def _write_tools() -> list[tuple[str, str]]:
    out = []
    for d in DOMAINS:
        box = load_domain(d).toolbox
        # identity checks record a failed guess by design (the lockout counts them): not a write an invariant refuses
        out += [(d, name) for name, t in box.tools.items() if t.writes and t.identity is None and _golden_calls(d, name)]
    return out


WRITE_TOOLS = _write_tools()


def _kind(b: Before, argument: str) -> str | None:
    """How ``argument`` of the golden call can be made absurd: a date, an amount, or an identifying text."""
    field = b.box[b.call.name].model.model_fields[argument]
    value = b.call.arguments[argument]
    if any(m is FREE_TEXT for m in field.metadata) or "FreeText" in repr(field.annotation):
        return None
    if isinstance(value, str):
        try:
            date.fromisoformat(value)
            return "date"
        except ValueError:
            return None if "Literal" in repr(field.annotation) else "text"
    if isinstance(value, float) and value > 0:
        return "amount"
    return None


def test_every_domain_has_write_tools_under_the_property():
    by_domain = {d: [t for dd, t in WRITE_TOOLS if dd == d] for d in DOMAINS}
    assert all(len(tools) >= 3 for tools in by_domain.values()), by_domain


@pytest.mark.parametrize(("domain", "tool"), WRITE_TOOLS, ids=[f"{d}-{t}" for d, t in WRITE_TOOLS])
def test_absurd_arguments_of_a_write_tool_are_refused_and_change_nothing(domain, tool):
    b = _before(domain, tool)
    try:
        kinds = {a: k for a in b.call.arguments if (k := _kind(b, a)) is not None}
        if not kinds:
            pytest.skip(f"{tool}: the golden call has no date, amount or identifying text to make absurd")
        today = b.state.now.date()
        absurd = {
            "date": st.integers(3 * 366, 70 * 365).map(lambda n: (today + timedelta(days=n)).isoformat()),
            "amount": st.one_of(st.just(1e9), st.floats(1e6, 1e15)),
            "text": st.sampled_from(["", "   ", "\t", "\n \n"]),
        }
        before = b.hash()

        @settings(max_examples=15, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
        @given(st.sampled_from(sorted(kinds)).flatmap(lambda a: st.tuples(st.just(a), absurd[kinds[a]])))
        def prop(change):
            argument, value = change
            res = b.run(**{argument: value})
            assert not res.ok, f"{tool}({argument}={value!r}) was accepted: {res.content}"
            assert res.error_kind in ("precondition", "arguments"), res.content
            assert b.hash() == before

        prop()
        assert b.run().ok, "the golden call itself is accepted"
    finally:
        b.close()
