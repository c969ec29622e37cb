"""The rows a travel task starts from: a customer, their ticketing user, a booking with its payment and the hotel's record.

Drawn into the draft's patch from the seed's random stream, so a family adds one stay (or a
customer alone) in one call and reads back what the golden run will call it. Rates and nights
come from ``rules``; names are generation data and live here.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal

from thinkingbox_env.authoring import TaskDraft
from thinkingbox_env.authoring.saying import iso, ts

from ..rules import HOTELS, NOW, TODAY, money, nights, public_rate

FIRST_NAMES = ["Oriane", "Bastian", "Leocadia", "Thabo", "Ysolde", "Casimir", "Marisol", "Eero", "Noor", "Fintan",
               "Agnieszka", "Ruairi", "Soledad", "Ivo", "Petronella", "Kofi", "Ingrid", "Dario", "Yuki", "Hester"]
LAST_NAMES = ["Vallancourt", "Ostergaard", "Mbeki", "Trevethan", "Castellanos", "Aaltonen", "Farouk", "Kilbride", "Szymanska",
              "Delacroix", "Okafor", "Lindqvist", "Pemberton", "Rautio", "Quintero", "Hallorann", "Ambrose", "Nakagawa", "Ferro", "Bellweather"]
HOTEL_IDS = sorted(HOTELS)
BRANDS = ("visa", "mastercard", "amex")

Customer = tuple[str, str, str, int]  # (customer id, name, email, ticketing user id)


@dataclass
class Stay:
    """The rows of one booking a task starts from, and what the golden run will call them."""

    customer: str
    name: str
    email: str
    tier: str
    requester: int
    booking: str
    hotel: str
    room: str
    code: str
    check_in: date
    check_out: date
    guests: int
    rate_type: str
    rate: Decimal
    total: Decimal
    method: str
    payment: str
    brand: str
    last4: str

    @property
    def nights(self) -> int:
        return nights(self.check_in, self.check_out)

    @property
    def hotel_name(self) -> str:
        return HOTELS[self.hotel]["name"]


def person(rng: random.Random) -> tuple[str, str]:
    """A (name, email) pair no seed row uses."""
    first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
    return f"{first} {last}", f"{first.lower()}.{last.lower()}{rng.randint(1, 99)}@{rng.choice(['example.com', 'example.org', 'example.net'])}"


def customer(rng: random.Random, d: TaskDraft, uid: int, tier: str = "member", corporate: str | None = None,
             ticket_user: bool = True) -> Customer:
    """A customer profile (and, unless told otherwise, their ticketing user with the same id number)."""
    name, email = person(rng)
    cid = f"CUS-{uid}"
    d.add("customers", {"id": cid, "name": name, "email": email, "phone": f"+44-7700-{rng.randint(100000, 999999)}",
                        "vip_tier": tier, "corporate_account_id": corporate, "preferences": None,
                        "member_since": f"202{rng.randint(1, 5)}-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}"})
    if ticket_user:
        d.add("ticket_users", {"id": uid, "name": name, "email": email, "created_at": "2026-01-20 09:30:00"})
    return cid, name, email, uid


def stay(rng: random.Random, d: TaskDraft, uid: int, *, tier: str = "member", arrival: int, length: int,
         rate_type: str = "flexible", room: str | None = None, hotel: str | None = None, status: str = "confirmed",
         corporate: str | None = None, rate: Decimal | None = None, group: str | None = None, guests: int | None = None,
         hotel_record: bool = True) -> Stay:
    """A customer with one booking arriving ``arrival`` days from today for ``length`` nights, paid in full."""
    cid, name, email, requester = customer(rng, d, uid, tier, corporate)
    hotel = hotel or rng.choice(HOTEL_IDS)
    room = room or rng.choice(["STD", "DLX"])
    check_in = TODAY + timedelta(days=arrival)
    check_out = check_in + timedelta(days=length)
    nightly = rate if rate is not None else public_rate(hotel, room, rate_type if rate_type in ("flexible", "saver") else "flexible")
    total = nightly * length
    booking, code = f"BK-{uid}", f"HC-{hotel[-1]}{uid}"
    method, payment = f"PM-{uid}", f"PAY-{uid}"
    brand, last4 = rng.choice(BRANDS), f"{rng.randint(1000, 9999)}"
    created = NOW - timedelta(days=max(3, 20 - min(arrival, 0)), hours=rng.randint(1, 9))
    guests = guests or rng.randint(1, 2)
    d.add("bookings", {"id": booking, "customer_id": cid, "hotel_id": hotel, "room_code": room, "confirmation_code": code,
                       "check_in": iso(check_in), "check_out": iso(check_out), "guests": guests, "rate_type": rate_type,
                       "nightly_rate": money(nightly), "total": money(total), "status": status, "group_id": group,
                       "corporate_account_id": corporate, "created_at": ts(created), "cancelled_at": None})
    if hotel_record:
        d.add("hotel_reservations", {"hotel_id": hotel, "confirmation_code": code, "guest_name": name, "room_code": room,
                                     "check_in": iso(check_in), "check_out": iso(check_out), "nightly_rate": money(nightly),
                                     "status": "checked_out" if status == "completed" else "confirmed"})
    if group is None:
        d.add("payment_methods", {"id": method, "customer_id": cid, "brand": brand, "last4": last4, "expires": "2028-11",
                                  "status": "active", "created_at": "2025-10-02 08:00:00"})
        if status != "payment_pending":
            d.add("payments", {"id": payment, "booking_id": booking, "group_id": None, "payment_method_id": method,
                               "amount": money(total), "purpose": "booking", "status": "captured", "created_at": ts(created)})
    return Stay(cid, name, email, tier, requester, booking, hotel, room, code, check_in, check_out, guests, rate_type, nightly, total,
                method, payment, brand, last4)


def wrong_reference(rng: random.Random, booking: str) -> str:
    """A reference the customer may misremember: two digits swapped or one changed."""
    digits = list(booking)
    a, b = len(digits) - 2, len(digits) - 1
    if digits[a] != digits[b]:
        digits[a], digits[b] = digits[b], digits[a]
    else:
        digits[b] = str((int(digits[b]) + rng.randint(1, 8)) % 10)
    return "".join(digits)


__all__ = ["BRANDS", "HOTEL_IDS", "Customer", "Stay", "customer", "person", "wrong_reference", "stay"]
