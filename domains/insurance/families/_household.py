"""A customer's household as patch rows: the policy, its billing account, drivers, vehicles and claims.

Dates are drawn from the policy outward: the policy's effective date first, then every
driver, vehicle, claim and report date from it (``between``), so no row can predate the
policy or a claim its loss.
"""

from __future__ import annotations

import random
from datetime import date, timedelta
from typing import Any

from thinkingbox_env.authoring.saying import iso

from ..rules import PLAN_FEES, PLAN_MONTHS, TODAY, money
from ._draft import InsuranceDraft
from ._people import CATALOG, COLORS, SECURITY, STATES, license_number, new_vin, person


def add_months(d: date, n: int) -> date:
    m = d.month - 1 + n
    return date(d.year + m // 12, m % 12 + 1, min(d.day, 28))


def between(rng: random.Random, lo: date, hi: date) -> date:
    """A date in [lo, hi]; every derived date in a household is drawn with this, from an earlier anchor."""
    if hi < lo:
        raise ValueError(f"empty date range {lo}..{hi}")
    return lo + timedelta(days=rng.randint(0, (hi - lo).days))


def household(
    draft: InsuranceDraft,
    *,
    tier: str | None = None,
    state: str | None = None,
    plan: str | None = None,
    n_vehicles: int = 1,
    security: bool | None = None,
    ssn: bool | None = None,
    fraud: bool = False,
    ticket_user: bool | None = None,
    exclude_states: tuple[str, ...] = (),
    eff: date | None = None,
    min_age_days: int = 60,
) -> dict[str, Any]:
    """Rows for a customer with an active policy, added to ``draft``; the policy's dates are drawn first, everything else after them."""
    rng, ids = draft.rng, draft.ids
    p = person(rng)
    tier = tier or rng.choice(["standard", "standard", "preferred", "preferred", "elite"])
    state = state or rng.choice([s for s in STATES if s not in exclude_states])
    security = rng.random() < 0.75 if security is None else security
    ssn = rng.random() < 0.6 if ssn is None else ssn
    ticket_user = rng.random() < 0.8 if ticket_user is None else ticket_user
    question, answers = rng.choice(SECURITY)
    if eff is None:
        eff = TODAY - timedelta(days=rng.randint(min_age_days, 170))
        eff = eff.replace(day=min(eff.day, 28))
    exp = add_months(eff, 12)
    premium = money(rng.randint(90, 260) * 10)
    plan = plan or rng.choice(["monthly", "quarterly", "semiannual", "full"])
    cadence = PLAN_MONTHS[plan]
    n = 12 // cadence
    base = money(premium / n)
    dues = [add_months(eff, i * cadence) for i in range(n)]
    paid_count = sum(1 for d in dues if d <= TODAY)
    next_due = next((d for d in dues if d > TODAY), exp)
    amount = base + PLAN_FEES[plan] if next_due != exp else money(0)
    cust = draft.put("customers", {
        "id": ids["customer"], "name": p["name"], "email": p["email"], "phone": f"+1-{STATES[state][1]}-555-{rng.randint(1000, 9999)}",
        "date_of_birth": iso(p["dob"]), "tier": tier, "mailing_state": state,
        "customer_since": iso(eff - timedelta(days=rng.choice([0, 0, 365, 730, 1500]))),
        "security_question": question if security else None, "security_answer": rng.choice(answers) if security else None,
        "ssn_last4": f"{rng.randint(0, 9999):04d}" if ssn else None, "fraud_flag": fraud,
    })
    if ticket_user:
        draft.put("ticket_users", {"id": ids["ticket_user"], "name": p["name"], "email": p["email"], "created_at": "2025-03-02 11:20:00"})
    pol_row = draft.put("policies", {
        "id": ids["policy"], "customer_id": ids["customer"], "state": state, "status": "active",
        "effective_date": iso(eff), "expiration_date": iso(exp), "annual_premium": str(premium),
        "grace_period_end": None, "lapse_date": None, "cancellation_date": None, "cancel_reason": None,
    })
    bill = draft.put("billing_accounts", {
        "id": ids["billing"], "policy_id": ids["policy"], "pay_plan": plan, "autopay": rng.random() < 0.4,
        "status": "current", "due_date": iso(next_due), "amount_due": str(amount), "past_due_amount": "0.00",
        "paid_to_date": str(money(base * paid_count)), "installment_fee": str(PLAN_FEES[plan]),
    })
    self_driver = draft.put("drivers", {
        "id": ids["driver"](1), "policy_id": ids["policy"], "full_name": p["name"], "date_of_birth": iso(p["dob"]),
        "license_number": license_number(rng, state), "license_state": state, "relationship": "self",
        "status": "listed", "effective_date": iso(eff), "end_date": None,
    })
    picks = rng.sample(CATALOG, n_vehicles)
    colors = rng.sample(COLORS, n_vehicles)
    vehicles = []
    kinds: dict[str, str] = {}
    for k, ((wmi, make, model, kind), color) in enumerate(zip(picks, colors), start=1):
        year = rng.randint(2013, 2025)
        vehicles.append(draft.put("vehicles", {
            "id": ids["vehicle"](k), "policy_id": ids["policy"], "vin": new_vin(rng, wmi, year), "year": year,
            "make": make, "model": model, "color": color, "coverage": "full" if year >= 2019 or rng.random() < 0.5 else "liability",
            "lienholder": None, "status": "active", "effective_date": iso(eff), "end_date": None,
        }))
        kinds[vehicles[-1]["id"]] = kind
    return {
        "p": p, "tier": tier, "state": state, "customer": cust, "policy": pol_row, "billing": bill, "self_driver": self_driver,
        "vehicles": vehicles, "ticket_user": ticket_user, "security": security, "ssn": ssn, "premium": premium, "plan": plan,
        "eff": eff, "exp": exp, "kinds": kinds,
    }


def driver_row(draft: InsuranceDraft, k: int, member: dict[str, Any], status: str = "listed", effective: date | None = None,
               state: str | None = None) -> dict[str, Any]:
    """A household member listed on the policy, never before the policy's effective date."""
    eff = draft.hd["eff"]
    when = effective or between(draft.rng, eff, max(eff, TODAY - timedelta(days=10)))
    assert when >= eff, "a driver cannot be listed before the policy exists"
    return draft.put("drivers", {
        "id": draft.ids["driver"](k), "policy_id": draft.ids["policy"], "full_name": member["full"],
        "date_of_birth": iso(member["dob"]), "license_number": license_number(draft.rng, state or draft.hd["state"]),
        "license_state": state or draft.hd["state"], "relationship": member["relationship"], "status": status,
        "effective_date": iso(when), "end_date": None,
    })


def claim_row(draft: InsuranceDraft, k: int, *, vehicle: dict[str, Any], driver: dict[str, Any] | None, not_before: date, not_after: date,
              **values: Any) -> dict[str, Any]:
    """A claim whose loss is on or after ``not_before`` (the policy and its parties) and reported on or after the loss."""
    rng = draft.rng
    dol = between(rng, max(not_before, draft.hd["eff"], date.fromisoformat(vehicle["effective_date"])), not_after)
    reported = between(rng, dol, min(dol + timedelta(days=3), TODAY))
    row = {"id": draft.ids["claim"](k), "policy_id": draft.ids["policy"], "vehicle_id": vehicle["id"],
           "driver_id": driver["id"] if driver else None, "date_of_loss": iso(dol), "loss_type": "collision", "severity": "minor",
           "injuries": False, "drivable": True, "status": "open", "description": "Loss reported by phone.",
           "reported_at": f"{iso(reported)} {rng.randint(8, 13):02d}:{rng.choice(['05', '20', '35', '50'])}:00"}
    row.update(values)
    return draft.put("claims", row)
