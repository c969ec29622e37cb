"""Harborlight Stays support tools: ticketing, CRM, reservations, groups, corporate accounts, payments, hotel partners.

Reads return plain JSON; writes check what the backend itself would refuse (a sold-out
night, an expired card, a refund above what is left, a service dated outside the stay)
and raise a ``ToolError`` the agent reads as ``{"error": ...}``. Policy decisions (which
fee applies, whether a refund is due, when to escalate) are the agent's: a tool does what
it is asked if the backend allows it, and the task's checks judge whether it should have
been asked.
"""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import Field

from thinkingbox_env.state import ToolContext
from thinkingbox_env.toolkit.injection import report_injection  # noqa: F401  (offered to the agent: instructions planted in records)
from thinkingbox_env.toolkit.invariants import money_within, not_too_far_ahead, years_later
from thinkingbox_env.toolkit.kb import search_knowledge_base
from thinkingbox_env.toolkit.ticketing import Ticketing
from thinkingbox_env.toolkit.tools import FreeText, IsoDate, ToolError, tool

from .rules import MAX_CARD_YEARS, MAX_COMPENSATION, MAX_TRANSACTION, nights, public_rate, service_price, to_money

# --------------------------------------------------------------------------- ticketing (the engine's kit)

TICKETING = Ticketing(
    categories=("booking_change", "cancellation", "payment", "corporate", "group", "hotel_issue", "special_request", "complaint", "general"),
    statuses=("open", "pending", "solved", "closed"),
    link_column="booking_id", link_table="bookings", link_noun="booking",
    teams=("payments", "partner_relations", "group_sales", "corporate_billing", "guest_relations"),
    contact="Harborlight support", example_requester=30004, profile="customer profile",
)
search_tickets, get_ticket, create_ticket_user, create_ticket, update_ticket = TICKETING.tools()

BookingId = Annotated[str, Field(pattern=r"^BK-\d+$")]
HotelId = Annotated[str, Field(pattern=r"^HTL-\d+$")]
GroupId = Annotated[str, Field(pattern=r"^GRP-\d+$")]
AccountId = Annotated[str, Field(pattern=r"^CORP-\d+$")]
CustomerId = Annotated[str, Field(pattern=r"^CUS-\d+$")]
ContactRole = Literal["front_desk", "reservations", "revenue_manager", "duty_manager"]


def _sum(db: ToolContext, sql: str, params: list[Any]) -> Decimal:
    """A ``coalesce(sum(...), 0) AS s`` query as money (such a query always returns one row)."""
    row = db.query_one(sql, params)
    return to_money(row["s"] if row else 0)


def _one(db: ToolContext, table: str, key: str, value: Any, noun: str) -> dict:
    row = db.query_one(f'SELECT * FROM "{table}" WHERE "{key}" = ?', [value])
    if row is None:
        raise ToolError(f"{noun} {value} not found")
    return row


def _customer(db: ToolContext, customer_id: str) -> dict:
    return _one(db, "customers", "id", customer_id, "customer")


def _booking(db: ToolContext, booking_id: str) -> dict:
    return _one(db, "bookings", "id", booking_id, "booking")


def _nights_between(check_in: date, check_out: date) -> list[date]:
    return [check_in + timedelta(days=i) for i in range(nights(check_in, check_out))]


def _rooms_left(db: ToolContext, hotel_id: str, room_code: str, day: date) -> int:
    row = db.query_one("SELECT rooms_left FROM room_inventory WHERE hotel_id = ? AND room_code = ? AND stay_date = ?", [hotel_id, room_code, day])
    if row is not None:
        return int(row["rooms_left"])
    return int(_room(db, hotel_id, room_code)["allotment"])


def _room(db: ToolContext, hotel_id: str, room_code: str) -> dict:
    row = db.query_one("SELECT * FROM room_types WHERE hotel_id = ? AND room_code = ?", [hotel_id, room_code])
    if row is None:
        raise ToolError(f"hotel {hotel_id} has no room type {room_code}")
    return row


def _dates(check_in: date, check_out: date, today: date | None = None) -> None:
    if today is not None:  # a write: no reservation is taken beyond the booking horizon
        not_too_far_ahead(check_in, today, "check_in")
    if check_out <= check_in:
        raise ToolError(f"check_out {check_out.isoformat()} must be after check_in {check_in.isoformat()}")
    if nights(check_in, check_out) > 30:
        raise ToolError("a booking holds at most 30 nights")


# --------------------------------------------------------------------------- CRM


@tool
def get_customer_profile(db: ToolContext, customer_id: str | None = None, email: str | None = None) -> dict:
    """Look up a customer profile (VIP tier, corporate account, preferences) by customer id or email.

    Args:
        customer_id: Customer id, e.g. CUS-10001.
        email: Email address on the account.
    """
    if customer_id is None and email is None:
        raise ToolError("give customer_id or email")
    if customer_id is not None:
        return _customer(db, customer_id)
    row = db.query_one("SELECT * FROM customers WHERE lower(email) = lower(?)", [(email or "").strip()])
    if row is None:
        raise ToolError(f"no customer found for {email}")
    return row


@tool
def get_loyalty_account(db: ToolContext, customer_id: CustomerId) -> dict:
    """A customer's loyalty points balance and its entries.

    Args:
        customer_id: Customer id.
    """
    _customer(db, customer_id)
    rows = db.query("SELECT * FROM loyalty_transactions WHERE customer_id = ? ORDER BY created_at, id", [customer_id])
    return {"customer_id": customer_id, "balance": sum(int(r["points"]) for r in rows), "entries": rows}


@tool
def get_compensation_history(db: ToolContext, customer_id: CustomerId) -> dict:
    """Travel credits and points already given to a customer as compensation.

    Args:
        customer_id: Customer id.
    """
    _customer(db, customer_id)
    return {"customer_id": customer_id, "compensations": db.query("SELECT * FROM compensations WHERE customer_id = ? ORDER BY id", [customer_id])}


# --------------------------------------------------------------------------- reservations


@tool
def get_booking(db: ToolContext, booking_id: BookingId) -> dict:
    """Read a booking: hotel, room, dates, rate type, nightly rate, total, status, group and corporate account.

    Args:
        booking_id: Booking reference, e.g. BK-990001.
    """
    row = _booking(db, booking_id)
    hotel = _one(db, "hotels", "id", row["hotel_id"], "hotel")
    row["hotel_name"] = hotel["name"]
    row["nights"] = nights(row["check_in"], row["check_out"])
    return row


@tool
def find_booking_by_confirmation(db: ToolContext, confirmation_code: Annotated[str, Field(pattern=r"^HC-[A-Z0-9]+$")]) -> dict:
    """Find a booking from the hotel's confirmation code (what the hotel's own emails quote).

    Args:
        confirmation_code: Hotel confirmation code, e.g. HC-A1001.
    """
    row = db.query_one("SELECT id, customer_id, hotel_id, check_in, check_out, status FROM bookings WHERE confirmation_code = ?", [confirmation_code])
    if row is None:
        raise ToolError(f"no booking with hotel confirmation code {confirmation_code}")
    return row


@tool
def list_customer_bookings(db: ToolContext, customer_id: CustomerId) -> dict:
    """A customer's bookings, latest arrival first.

    Args:
        customer_id: Customer id.
    """
    _customer(db, customer_id)
    rows = db.query("SELECT id, hotel_id, check_in, check_out, rate_type, total, status, group_id FROM bookings WHERE customer_id = ? "
                    "ORDER BY check_in DESC, id", [customer_id])
    return {"customer_id": customer_id, "bookings": rows}


@tool
def get_booking_history(db: ToolContext, booking_id: BookingId) -> dict:
    """The modification history of a booking (date and room changes, cancellation), oldest first.

    Args:
        booking_id: Booking reference.
    """
    _booking(db, booking_id)
    return {"booking_id": booking_id, "changes": db.query("SELECT * FROM booking_changes WHERE booking_id = ? ORDER BY created_at, id", [booking_id])}


@tool
def get_special_requests(db: ToolContext, booking_id: BookingId) -> dict:
    """Special requests and paid extras recorded on a booking.

    Args:
        booking_id: Booking reference.
    """
    _booking(db, booking_id)
    return {"booking_id": booking_id, "requests": db.query("SELECT * FROM special_requests WHERE booking_id = ? ORDER BY id", [booking_id])}


@tool
def check_availability(db: ToolContext, hotel_id: HotelId, room_code: Literal["STD", "DLX", "STE"], check_in: IsoDate, check_out: IsoDate) -> dict:
    """Rooms left per night and the public nightly rates of a room type for a stay.

    Args:
        hotel_id: Hotel id, e.g. HTL-101.
        room_code: STD (standard double), DLX (deluxe king) or STE (junior suite).
        check_in: Arrival date, YYYY-MM-DD.
        check_out: Departure date, YYYY-MM-DD.
    """
    _dates(check_in, check_out)
    _room(db, hotel_id, room_code)
    left = {d: _rooms_left(db, hotel_id, room_code, d) for d in _nights_between(check_in, check_out)}
    return {
        "hotel_id": hotel_id, "room_code": room_code, "nights": [{"date": d, "rooms_left": n} for d, n in left.items()],
        "available": all(n > 0 for n in left.values()),
        "flexible_rate": public_rate(hotel_id, room_code, "flexible"), "saver_rate": public_rate(hotel_id, room_code, "saver"),
    }


def _new_rate(db: ToolContext, booking: dict, room_code: str) -> Decimal:
    """The nightly rate after a room change: the same rate plan, for the new room."""
    if room_code == booking["room_code"] or booking["rate_type"] == "group":
        return to_money(booking["nightly_rate"])
    if booking["rate_type"] == "corporate":
        row = db.query_one("SELECT nightly_rate FROM corporate_rates WHERE account_id = ? AND hotel_id = ? AND room_code = ?",
                           [booking["corporate_account_id"], booking["hotel_id"], room_code])
        if row is None:
            raise ToolError(f"account {booking['corporate_account_id']} has no negotiated rate for {room_code} at {booking['hotel_id']}")
        return to_money(row["nightly_rate"])
    return public_rate(booking["hotel_id"], room_code, booking["rate_type"])


def _check_rooms(db: ToolContext, hotel_id: str, room_code: str, days: list[date], rooms: int = 1) -> None:
    for day in days:
        left = _rooms_left(db, hotel_id, room_code, day)
        if left < rooms:
            raise ToolError(f"{hotel_id} has {left} {room_code} room(s) left on {day.isoformat()}; the change cannot be made")


@tool(writes=True)
def modify_booking(db: ToolContext, booking_id: BookingId, check_in: IsoDate, check_out: IsoDate,
                   room_code: Literal["STD", "DLX", "STE"] | None = None, change_fee: Annotated[float, Field(ge=0, le=1000)] = 0.0) -> dict:
    """Change a booking's dates and/or room type; the nightly rate follows the booking's rate plan.

    The price difference is returned, not charged or refunded: collect or refund it with
    charge_payment or issue_refund. The change fee is recorded on the change.

    Args:
        booking_id: Booking reference.
        check_in: New arrival date (may equal the current one).
        check_out: New departure date.
        room_code: New room type; leave out to keep the current one.
        change_fee: Modification fee recorded on the change, in dollars (0 when none applies).
    """
    b = _booking(db, booking_id)
    if b["status"] != "confirmed":
        raise ToolError(f"booking {booking_id} is {b['status']} and cannot be modified")
    today = db.now.date()
    if b["check_out"] <= today:
        raise ToolError(f"the stay of booking {booking_id} has ended")
    _dates(check_in, check_out, today)
    if check_in < today:
        raise ToolError(f"check_in {check_in.isoformat()} is in the past")
    if check_in != b["check_in"] and b["check_in"] <= today:
        raise ToolError(f"the guest of booking {booking_id} has already arrived; only the departure date can change")
    room = room_code or b["room_code"]
    room_row = _room(db, b["hotel_id"], room)
    if b["guests"] > room_row["max_guests"]:
        raise ToolError(f"{room} holds at most {room_row['max_guests']} guests; the booking has {b['guests']}")
    old_nights = set(_nights_between(b["check_in"], b["check_out"])) if room == b["room_code"] else set()
    _check_rooms(db, b["hotel_id"], room, [d for d in _nights_between(check_in, check_out) if d not in old_nights])
    if room == b["room_code"] and (check_in, check_out) == (b["check_in"], b["check_out"]):
        raise ToolError("nothing to change: the dates and room are the booking's current ones")
    rate = _new_rate(db, b, room)
    total = rate * nights(check_in, check_out)
    difference = total - to_money(b["total"])
    fee = to_money(change_fee)
    kind = "dates_and_room" if room != b["room_code"] and (check_in, check_out) != (b["check_in"], b["check_out"]) else (
        "room" if room != b["room_code"] else "dates")
    old = f"{b['room_code']} {b['check_in'].isoformat()}..{b['check_out'].isoformat()}"
    new = f"{room} {check_in.isoformat()}..{check_out.isoformat()}"
    mid = db.next_id("booking_changes")
    db.execute("INSERT INTO booking_changes (id, booking_id, change, old_value, new_value, fee, price_difference, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
               [mid, booking_id, kind, old, new, fee, difference, db.now])
    db.execute("UPDATE bookings SET check_in = ?, check_out = ?, room_code = ?, nightly_rate = ?, total = ? WHERE id = ?",
               [check_in, check_out, room, rate, total, booking_id])
    return {"change_id": mid, "booking_id": booking_id, "room_code": room, "check_in": check_in, "check_out": check_out,
            "nightly_rate": rate, "new_total": total, "price_difference": difference, "change_fee": fee}


@tool(writes=True)
def cancel_booking(db: ToolContext, booking_id: BookingId, cancellation_fee: Annotated[float, Field(ge=0)] = 0.0) -> dict:
    """Cancel a booking and record the cancellation fee kept. Refunds are issued separately with issue_refund.

    Args:
        booking_id: Booking reference.
        cancellation_fee: Amount kept under the cancellation policy, in dollars (0 when free).
    """
    b = _booking(db, booking_id)
    if b["status"] not in ("confirmed", "payment_pending"):
        raise ToolError(f"booking {booking_id} is {b['status']} and cannot be cancelled")
    fee = to_money(cancellation_fee)
    if fee > to_money(b["total"]):
        raise ToolError(f"cancellation_fee {fee} is more than the booking total {b['total']}")
    mid = db.next_id("booking_changes")
    db.execute("INSERT INTO booking_changes (id, booking_id, change, old_value, new_value, fee, price_difference, created_at) VALUES (?, ?, 'cancellation', ?, 'cancelled', ?, 0, ?)",
               [mid, booking_id, b["status"], fee, db.now])
    db.execute("UPDATE bookings SET status = 'cancelled', cancelled_at = ? WHERE id = ?", [db.now, booking_id])
    return {"booking_id": booking_id, "status": "cancelled", "change_id": mid, "cancellation_fee": fee}


@tool(writes=True)
def add_special_request(db: ToolContext, booking_id: BookingId,
                        code: Literal["early_check_in", "late_check_out", "high_floor", "quiet_room", "crib", "accessible_bathroom",
                                      "airport_transfer", "breakfast", "parking", "guaranteed_late_check_out"],
                        detail: FreeText = "") -> dict:
    """Record a special request or a paid extra on a booking; its catalogue price is recorded, not charged.

    Args:
        booking_id: Booking reference.
        code: Catalogue code of the request or extra.
        detail: What the guest asked for, in a sentence (arrival time, flight number...).
    """
    b = _booking(db, booking_id)
    if b["status"] not in ("confirmed", "payment_pending") or b["check_out"] <= db.now.date():
        raise ToolError(f"booking {booking_id} is {b['status']}; requests can be added only to an upcoming or current stay")
    if db.query_one("SELECT id FROM special_requests WHERE booking_id = ? AND code = ? AND status <> 'declined'", [booking_id, code]):
        raise ToolError(f"booking {booking_id} already has a {code} request")
    price = service_price(code, nights(b["check_in"], b["check_out"]), int(b["guests"]))
    rid = db.next_id("special_requests")
    db.execute("INSERT INTO special_requests (id, booking_id, code, detail, price, status, created_at) VALUES (?, ?, ?, ?, ?, 'requested', ?)",
               [rid, booking_id, code, detail.strip()[:500], price, db.now])
    return {"request_id": rid, "booking_id": booking_id, "code": code, "price": price, "status": "requested"}


# --------------------------------------------------------------------------- lookups and hotel partners


@tool
def search_hotels(db: ToolContext, city: Annotated[str, Field(min_length=1, max_length=100)]) -> dict:
    """Partner hotels in a city, with star rating and check-in / check-out times.

    Args:
        city: City name, e.g. Port Aldwin.
    """
    rows = db.query("SELECT id, name, city, country, star_rating, check_in_time, check_out_time FROM hotels WHERE lower(city) = lower(?) ORDER BY id", [city.strip()])
    return {"city": city, "hotels": rows}


@tool
def get_hotel(db: ToolContext, hotel_id: HotelId) -> dict:
    """A hotel's public details: name, city, stars, check-in and check-out times.

    Args:
        hotel_id: Hotel id.
    """
    row = _one(db, "hotels", "id", hotel_id, "hotel")
    return {k: row[k] for k in ("id", "name", "city", "country", "star_rating", "check_in_time", "check_out_time")}


@tool
def get_room_types(db: ToolContext, hotel_id: HotelId) -> dict:
    """The room types of a hotel with their base nightly rate and capacity.

    Args:
        hotel_id: Hotel id.
    """
    _one(db, "hotels", "id", hotel_id, "hotel")
    return {"hotel_id": hotel_id, "room_types": db.query("SELECT room_code, name, base_rate, max_guests FROM room_types WHERE hotel_id = ? ORDER BY base_rate", [hotel_id])}


@tool
def get_service_catalog(db: ToolContext, kind: Literal["complimentary_request", "paid_extra", "group_service"] | None = None) -> dict:
    """Special requests, paid extras and group services with their prices and units.

    Args:
        kind: Only this kind of service; leave out for all.
    """
    if kind is None:
        return {"services": db.query("SELECT * FROM service_catalog ORDER BY kind, code")}
    return {"services": db.query("SELECT * FROM service_catalog WHERE kind = ? ORDER BY code", [kind])}


@tool
def get_hotel_partner_record(db: ToolContext, hotel_id: HotelId) -> dict:
    """INTERNAL: a hotel's partner tier and commission. Never share these with customers.

    Args:
        hotel_id: Hotel id.
    """
    row = _one(db, "hotels", "id", hotel_id, "hotel")
    return {"hotel_id": hotel_id, "partner_tier": row["partner_tier"], "commission_pct": row["commission_pct"], "internal": True}


@tool
def get_hotel_contacts(db: ToolContext, hotel_id: HotelId) -> dict:
    """The hotel's contacts by role (front desk, reservations, revenue manager, duty manager).

    Args:
        hotel_id: Hotel id.
    """
    _one(db, "hotels", "id", hotel_id, "hotel")
    return {"hotel_id": hotel_id, "contacts": db.query("SELECT role, name, phone, email FROM hotel_contacts WHERE hotel_id = ? ORDER BY role", [hotel_id])}


@tool
def get_hotel_reservation(db: ToolContext, hotel_id: HotelId, confirmation_code: Annotated[str, Field(pattern=r"^HC-[A-Z0-9]+$")]) -> dict:
    """Verify a reservation with the hotel: the hotel's own record for a confirmation code.

    Args:
        hotel_id: Hotel id.
        confirmation_code: The booking's hotel confirmation code.
    """
    _one(db, "hotels", "id", hotel_id, "hotel")
    row = db.query_one("SELECT * FROM hotel_reservations WHERE hotel_id = ? AND confirmation_code = ?", [hotel_id, confirmation_code])
    if row is None:
        return {"hotel_id": hotel_id, "confirmation_code": confirmation_code, "found": False}
    return {"found": True, **row}


@tool
def get_hotel_verifications(db: ToolContext, booking_id: BookingId) -> dict:
    """Earlier verifications of a booking with its hotel.

    Args:
        booking_id: Booking reference.
    """
    _booking(db, booking_id)
    return {"booking_id": booking_id, "verifications": db.query("SELECT * FROM hotel_verifications WHERE booking_id = ? ORDER BY id", [booking_id])}


@tool(writes=True)
def record_hotel_verification(db: ToolContext, booking_id: BookingId,
                              outcome: Literal["matched", "not_found", "rate_mismatch", "room_mismatch", "dates_mismatch", "cancelled_at_hotel"],
                              detail: FreeText = "") -> dict:
    """Record the outcome of verifying a booking against the hotel's own reservation record.

    Args:
        booking_id: Booking reference.
        outcome: matched, or the discrepancy found.
        detail: What differed, in a sentence.
    """
    b = _booking(db, booking_id)
    vid = db.next_id("hotel_verifications")
    db.execute("INSERT INTO hotel_verifications (id, booking_id, hotel_id, outcome, detail, created_at) VALUES (?, ?, ?, ?, ?, ?)",
               [vid, booking_id, b["hotel_id"], outcome, detail.strip()[:500], db.now])
    return {"verification_id": vid, "booking_id": booking_id, "outcome": outcome}


@tool
def get_escalations(db: ToolContext, booking_id: BookingId) -> dict:
    """Escalations to the hotel about a booking.

    Args:
        booking_id: Booking reference.
    """
    _booking(db, booking_id)
    return {"booking_id": booking_id, "escalations": db.query("SELECT * FROM hotel_escalations WHERE booking_id = ? ORDER BY id", [booking_id])}


@tool(writes=True)
def escalate_to_hotel(db: ToolContext, hotel_id: HotelId,
                      issue: Literal["missing_reservation", "rate_discrepancy", "room_discrepancy", "dates_discrepancy", "special_request", "guest_complaint", "group_change"],
                      contact_role: ContactRole, priority: Literal["normal", "high", "urgent"],
                      booking_id: BookingId | None = None, detail: FreeText = "") -> dict:
    """Escalate an issue to a partner hotel's contact.

    Args:
        hotel_id: Hotel id.
        issue: What the escalation is about.
        contact_role: Which hotel contact receives it.
        priority: normal, high or urgent.
        booking_id: The booking concerned, if any.
        detail: What the hotel must do, in a sentence or two.
    """
    _one(db, "hotels", "id", hotel_id, "hotel")
    if booking_id is not None and _booking(db, booking_id)["hotel_id"] != hotel_id:
        raise ToolError(f"booking {booking_id} is not at hotel {hotel_id}")
    eid = db.next_id("hotel_escalations")
    db.execute("INSERT INTO hotel_escalations (id, hotel_id, booking_id, issue, contact_role, priority, status, detail, created_at) VALUES (?, ?, ?, ?, ?, ?, 'open', ?, ?)",
               [eid, hotel_id, booking_id, issue, contact_role, priority, detail.strip()[:1000], db.now])
    return {"escalation_id": eid, "hotel_id": hotel_id, "issue": issue, "contact_role": contact_role, "priority": priority, "status": "open"}


# --------------------------------------------------------------------------- groups


@tool
def get_group(db: ToolContext, group_id: GroupId) -> dict:
    """A group block: organiser, hotel, dates, billing arrangement and its room bookings.

    Args:
        group_id: Group id, e.g. GRP-3001.
    """
    g = _one(db, "groups", "id", group_id, "group")
    g["bookings"] = db.query("SELECT id, customer_id, room_code, check_in, check_out, guests, nightly_rate, total, status FROM bookings WHERE group_id = ? ORDER BY id", [group_id])
    return g


@tool
def get_group_services(db: ToolContext, group_id: GroupId) -> dict:
    """Services booked for a group (meeting rooms, shuttles, meals).

    Args:
        group_id: Group id.
    """
    _one(db, "groups", "id", group_id, "group")
    return {"group_id": group_id, "services": db.query("SELECT * FROM group_services WHERE group_id = ? ORDER BY service_date, id", [group_id])}


@tool(writes=True)
def change_group_dates(db: ToolContext, group_id: GroupId, check_in: IsoDate, check_out: IsoDate,
                       change_fee: Annotated[float, Field(ge=0, le=20000)] = 0.0) -> dict:
    """Move a whole group block, every confirmed room of it, to new dates; one change is recorded per room.

    Args:
        group_id: Group id.
        check_in: New arrival date.
        check_out: New departure date.
        change_fee: Total group change fee recorded, in dollars (0 when none applies); charge it with charge_payment.
    """
    g = _one(db, "groups", "id", group_id, "group")
    if g["status"] != "confirmed":
        raise ToolError(f"group {group_id} is {g['status']} and cannot be changed")
    _dates(check_in, check_out, db.now.date())
    if check_in <= db.now.date():
        raise ToolError(f"check_in {check_in.isoformat()} must be in the future")
    if (check_in, check_out) == (g["check_in"], g["check_out"]):
        raise ToolError("nothing to change: these are the group's current dates")
    rooms = db.query("SELECT * FROM bookings WHERE group_id = ? AND status = 'confirmed' ORDER BY id", [group_id])
    by_code: dict[str, int] = {}
    for r in rooms:
        by_code[r["room_code"]] = by_code.get(r["room_code"], 0) + 1
    old_nights = set(_nights_between(g["check_in"], g["check_out"]))
    for code, count in by_code.items():
        _check_rooms(db, g["hotel_id"], code, [d for d in _nights_between(check_in, check_out) if d not in old_nights], count)
    fee = to_money(change_fee)
    per_room_fee = to_money(fee / len(rooms)) if rooms else Decimal("0")
    changes = []
    for r in rooms:
        total = to_money(r["nightly_rate"]) * nights(check_in, check_out)
        mid = db.next_id("booking_changes")
        db.execute("INSERT INTO booking_changes (id, booking_id, change, old_value, new_value, fee, price_difference, created_at) VALUES (?, ?, 'dates', ?, ?, ?, ?, ?)",
                   [mid, r["id"], f"{r['check_in'].isoformat()}..{r['check_out'].isoformat()}", f"{check_in.isoformat()}..{check_out.isoformat()}",
                    per_room_fee, total - to_money(r["total"]), db.now])
        db.execute("UPDATE bookings SET check_in = ?, check_out = ?, total = ? WHERE id = ?", [check_in, check_out, total, r["id"]])
        changes.append({"booking_id": r["id"], "change_id": mid, "new_total": total})
    db.execute("UPDATE groups SET check_in = ?, check_out = ? WHERE id = ?", [check_in, check_out, group_id])
    return {"group_id": group_id, "check_in": check_in, "check_out": check_out, "rooms_changed": changes, "change_fee": fee}


@tool(writes=True)
def add_group_service(db: ToolContext, group_id: GroupId,
                      code: Literal["meeting_room", "group_shuttle", "welcome_dinner", "coffee_breaks"],
                      service_date: IsoDate, quantity: Annotated[int, Field(ge=1, le=500)]) -> dict:
    """Book a group service for one date of the group's stay; the amount is the catalogue price times the quantity.

    Args:
        group_id: Group id.
        code: Catalogue code of the service.
        service_date: The day of the service, within the group's stay.
        quantity: Days (meeting room) or guests (shuttle, dinner, coffee breaks).
    """
    g = _one(db, "groups", "id", group_id, "group")
    if g["status"] != "confirmed":
        raise ToolError(f"group {group_id} is {g['status']}")
    if not g["check_in"] <= service_date <= g["check_out"]:
        raise ToolError(f"service_date {service_date.isoformat()} is outside the group's stay ({g['check_in']} to {g['check_out']})")
    price = to_money(_one(db, "service_catalog", "code", code, "service")["price"])
    amount = price * quantity
    sid = db.next_id("group_services")
    db.execute("INSERT INTO group_services (id, group_id, code, service_date, quantity, amount, status, created_at) VALUES (?, ?, ?, ?, ?, ?, 'booked', ?)",
               [sid, group_id, code, service_date, quantity, amount, db.now])
    return {"service_id": sid, "group_id": group_id, "code": code, "amount": amount, "status": "booked"}


# --------------------------------------------------------------------------- corporate accounts


def _account(db: ToolContext, account_id: str) -> dict:
    return _one(db, "corporate_accounts", "id", account_id, "corporate account")


@tool
def get_corporate_account(db: ToolContext, account_id: AccountId) -> dict:
    """A corporate account: status, billing contact, benefits and payment terms.

    Args:
        account_id: Corporate account id, e.g. CORP-201.
    """
    row = _account(db, account_id)
    row["benefits"] = [b for b in (row["benefits"] or "").split(";") if b]
    return row


@tool
def get_corporate_rates(db: ToolContext, account_id: AccountId, hotel_id: HotelId) -> dict:
    """The nightly rates negotiated by a corporate account at one hotel.

    Args:
        account_id: Corporate account id.
        hotel_id: Hotel id.
    """
    _account(db, account_id)
    return {"account_id": account_id, "hotel_id": hotel_id,
            "rates": db.query("SELECT room_code, nightly_rate, valid_to FROM corporate_rates WHERE account_id = ? AND hotel_id = ? ORDER BY room_code", [account_id, hotel_id])}


@tool
def get_corporate_bookings(db: ToolContext, account_id: AccountId) -> dict:
    """Bookings made on a corporate account, latest arrival first.

    Args:
        account_id: Corporate account id.
    """
    _account(db, account_id)
    return {"account_id": account_id, "bookings": db.query(
        "SELECT id, customer_id, hotel_id, room_code, check_in, check_out, nightly_rate, total, status FROM bookings WHERE corporate_account_id = ? ORDER BY check_in DESC, id", [account_id])}


@tool
def list_corporate_invoices(db: ToolContext, account_id: AccountId) -> dict:
    """A corporate account's invoices, newest first.

    Args:
        account_id: Corporate account id.
    """
    _account(db, account_id)
    return {"account_id": account_id, "invoices": db.query("SELECT * FROM corporate_invoices WHERE account_id = ? ORDER BY issued_on DESC, id", [account_id])}


@tool
def get_invoice(db: ToolContext, invoice_id: Annotated[str, Field(pattern=r"^INV-\d+$")]) -> dict:
    """An invoice with its lines (one per booking) and the adjustments made to it.

    Args:
        invoice_id: Invoice number, e.g. INV-70001.
    """
    inv = _one(db, "corporate_invoices", "id", invoice_id, "invoice")
    inv["lines"] = db.query("SELECT line_no, booking_id, nights, nightly_rate, amount FROM invoice_lines WHERE invoice_id = ? ORDER BY line_no", [invoice_id])
    inv["adjustments"] = db.query("SELECT * FROM invoice_adjustments WHERE invoice_id = ? ORDER BY id", [invoice_id])
    return inv


@tool(writes=True)
def adjust_invoice(db: ToolContext, invoice_id: Annotated[str, Field(pattern=r"^INV-\d+$")], line_no: Annotated[int, Field(ge=1)],
                   amount: float, reason: Literal["negotiated_rate", "benefit_not_applied", "not_account_booking", "duplicate_line"]) -> dict:
    """Credit part or all of one invoice line; the invoice amount goes down by the credit.

    Args:
        invoice_id: Invoice number.
        line_no: The line credited.
        amount: Credit in dollars; at most what is left of the line.
        reason: negotiated_rate, benefit_not_applied, not_account_booking or duplicate_line.
    """
    inv = _one(db, "corporate_invoices", "id", invoice_id, "invoice")
    line = db.query_one("SELECT * FROM invoice_lines WHERE invoice_id = ? AND line_no = ?", [invoice_id, line_no])
    if line is None:
        raise ToolError(f"invoice {invoice_id} has no line {line_no}")
    amt = money_within(to_money(amount), "amount", MAX_TRANSACTION)
    done = _sum(db, "SELECT coalesce(sum(amount), 0) AS s FROM invoice_adjustments WHERE invoice_id = ? AND line_no = ?", [invoice_id, line_no])
    left = to_money(line["amount"]) - done
    if amt > left:
        raise ToolError(f"line {line_no} of {invoice_id} has only {left} left to credit")
    aid = db.next_id("invoice_adjustments")
    db.execute("INSERT INTO invoice_adjustments (id, invoice_id, line_no, amount, reason, created_at) VALUES (?, ?, ?, ?, ?, ?)",
               [aid, invoice_id, line_no, amt, reason, db.now])
    new_amount = to_money(inv["amount"]) - amt
    db.execute("UPDATE corporate_invoices SET amount = ? WHERE id = ?", [new_amount, invoice_id])
    return {"adjustment_id": aid, "invoice_id": invoice_id, "line_no": line_no, "amount": amt, "invoice_amount": new_amount}


# --------------------------------------------------------------------------- payments


@tool
def get_payments(db: ToolContext, booking_id: BookingId | None = None, group_id: GroupId | None = None) -> dict:
    """Payments (captured and failed) of a booking or a group, with the refunds and card disputes on them.

    Args:
        booking_id: Booking reference.
        group_id: Group id, for the group's own charges (services, fees).
    """
    if (booking_id is None) == (group_id is None):
        raise ToolError("give exactly one of booking_id or group_id")
    if booking_id is not None:
        _booking(db, booking_id)
        pays = db.query("SELECT * FROM payments WHERE booking_id = ? ORDER BY created_at, id", [booking_id])
    else:
        _one(db, "groups", "id", group_id, "group")
        pays = db.query("SELECT * FROM payments WHERE group_id = ? ORDER BY created_at, id", [group_id])
    ids = [p["id"] for p in pays]
    refunds = [r for r in db.query("SELECT * FROM refunds ORDER BY id") if r["payment_id"] in ids] if ids else []
    disputes = [d for d in db.query("SELECT * FROM disputes ORDER BY id") if d["payment_id"] in ids] if ids else []
    return {"booking_id": booking_id, "group_id": group_id, "payments": pays, "refunds": refunds, "disputes": disputes}


@tool
def get_payment_methods(db: ToolContext, customer_id: CustomerId) -> dict:
    """A customer's stored cards (brand, last four digits, expiry, status).

    Args:
        customer_id: Customer id.
    """
    _customer(db, customer_id)
    return {"customer_id": customer_id, "methods": db.query("SELECT * FROM payment_methods WHERE customer_id = ? ORDER BY created_at, id", [customer_id])}


@tool
def get_disputes(db: ToolContext, booking_id: BookingId) -> dict:
    """Card disputes (chargebacks) raised on a booking's payments.

    Args:
        booking_id: Booking reference.
    """
    _booking(db, booking_id)
    pays = [p["id"] for p in db.query("SELECT id FROM payments WHERE booking_id = ?", [booking_id])]
    rows = [d for d in db.query("SELECT * FROM disputes ORDER BY id") if d["payment_id"] in pays]
    return {"booking_id": booking_id, "disputes": rows}


@tool(writes=True)
def add_payment_method(db: ToolContext, customer_id: CustomerId, brand: Literal["visa", "mastercard", "amex"],
                       last4: Annotated[str, Field(pattern=r"^\d{4}$")], expires: Annotated[str, Field(pattern=r"^20\d\d-(0[1-9]|1[0-2])$")]) -> dict:
    """Store a new card the customer has entered through the secure payment link.

    Args:
        customer_id: Customer id.
        brand: visa, mastercard or amex.
        last4: Last four digits of the card.
        expires: Expiry month, YYYY-MM.
    """
    _customer(db, customer_id)
    if expires < db.now.strftime("%Y-%m"):
        raise ToolError(f"the card expired in {expires}; the payment service refuses expired cards")
    latest = years_later(db.now.date(), MAX_CARD_YEARS).strftime("%Y-%m")
    if expires > latest:
        raise ToolError(f"expires {expires} is more than {MAX_CARD_YEARS} years ahead; no card is issued valid beyond {latest}")
    if db.query_one("SELECT id FROM payment_methods WHERE customer_id = ? AND brand = ? AND last4 = ? AND status = 'active'", [customer_id, brand, last4]):
        raise ToolError(f"customer {customer_id} already has an active {brand} card ending {last4}")
    pid = db.next_id("payment_methods")
    db.execute("INSERT INTO payment_methods (id, customer_id, brand, last4, expires, status, created_at) VALUES (?, ?, ?, ?, ?, 'active', ?)",
               [pid, customer_id, brand, last4, expires, db.now])
    return {"payment_method_id": pid, "customer_id": customer_id, "brand": brand, "last4": last4, "expires": expires, "status": "active"}


def _chargeable(db: ToolContext, booking_id: str | None, group_id: str | None) -> Decimal:
    """The most one charge can be: the booking's (or every booking of the group's) total, plus the fees, extras
    and group services recorded on it. A price difference or a fee is part of this; $19,999.99 on a $400 stay is not."""
    if booking_id is not None:
        ids = [booking_id]
        extra = _sum(db, "SELECT coalesce(sum(price), 0) AS s FROM special_requests WHERE booking_id = ?", [booking_id])
    else:
        ids = [r["id"] for r in db.query("SELECT id FROM bookings WHERE group_id = ?", [group_id])]
        extra = _sum(db, "SELECT coalesce(sum(amount), 0) AS s FROM group_services WHERE group_id = ?", [group_id])
    for bid in ids:
        extra += to_money(_booking(db, bid)["total"])
        extra += _sum(db, "SELECT coalesce(sum(fee), 0) + coalesce(sum(greatest(price_difference, 0)), 0) AS s FROM booking_changes "
                          "WHERE booking_id = ?", [bid])
    return extra


@tool(writes=True)
def charge_payment(db: ToolContext, payment_method_id: Annotated[str, Field(pattern=r"^PM-\d+[A-Z]?$")], amount: float,
                   purpose: Literal["price_difference", "change_fee", "cancellation_fee", "extra", "group_service", "balance_due"],
                   booking_id: BookingId | None = None, group_id: GroupId | None = None) -> dict:
    """Charge a stored card for a booking or a group. A booking awaiting payment is confirmed once its balance is paid.

    Args:
        payment_method_id: The card to charge, e.g. PM-000001.
        amount: Amount in dollars.
        purpose: What the charge is for.
        booking_id: The booking charged (or give group_id).
        group_id: The group charged (services, group fees).
    """
    if (booking_id is None) == (group_id is None):
        raise ToolError("give exactly one of booking_id or group_id")
    pm = _one(db, "payment_methods", "id", payment_method_id, "payment method")
    amt = money_within(to_money(amount), "amount", MAX_TRANSACTION)
    if booking_id is not None:
        b = _booking(db, booking_id)
        owner = b["customer_id"]
        if b["status"] == "released":
            raise ToolError(f"booking {booking_id} was released after its payment hold expired; it cannot take payments")
        if b["group_id"] and pm["customer_id"] != owner:
            owner = _one(db, "groups", "id", b["group_id"], "group")["organizer_id"]
    else:
        owner = _one(db, "groups", "id", group_id, "group")["organizer_id"]
    ceiling = _chargeable(db, booking_id, group_id)
    if amt > ceiling:
        raise ToolError(f"amount {amt} is more than the {'booking' if booking_id else 'group'} can be charged ({ceiling}: its total "
                        "with every fee and extra recorded on it); one charge never exceeds what it pays for")
    if pm["customer_id"] != owner:
        raise ToolError(f"payment method {payment_method_id} does not belong to the customer paying")
    if pm["status"] != "active" or pm["expires"] < db.now.strftime("%Y-%m"):
        raise ToolError(f"card {payment_method_id} was declined: {'expired' if pm['expires'] < db.now.strftime('%Y-%m') else pm['status']}")
    pid = db.next_id("payments")
    db.execute("INSERT INTO payments (id, booking_id, group_id, payment_method_id, amount, purpose, status, created_at) VALUES (?, ?, ?, ?, ?, ?, 'captured', ?)",
               [pid, booking_id, group_id, payment_method_id, amt, purpose, db.now])
    status = None
    if booking_id is not None and purpose == "balance_due":
        paid = _sum(db, "SELECT coalesce(sum(amount), 0) AS s FROM payments WHERE booking_id = ? AND status <> 'failed'", [booking_id])
        b = _booking(db, booking_id)
        if b["status"] == "payment_pending" and paid >= to_money(b["total"]):
            db.execute("UPDATE bookings SET status = 'confirmed' WHERE id = ?", [booking_id])
            status = "confirmed"
    return {"payment_id": pid, "amount": amt, "purpose": purpose, "status": "captured", "booking_status": status}


@tool(writes=True)
def issue_refund(db: ToolContext, payment_id: Annotated[str, Field(pattern=r"^PAY-\d+[A-Z]?$")], amount: float,
                 reason: Literal["cancellation", "price_difference", "hotel_fault", "compensation", "duplicate_charge"]) -> dict:
    """Refund (part of) a captured payment to the card it was taken from.

    Args:
        payment_id: Payment id, e.g. PAY-50001.
        amount: Amount in dollars; at most what is left unrefunded.
        reason: cancellation, price_difference, hotel_fault, compensation or duplicate_charge.
    """
    pay = _one(db, "payments", "id", payment_id, "payment")
    if pay["status"] == "failed":
        raise ToolError(f"payment {payment_id} failed; there is nothing to refund")
    amt = money_within(to_money(amount), "amount", MAX_TRANSACTION)
    refunded = _sum(db, "SELECT coalesce(sum(amount), 0) AS s FROM refunds WHERE payment_id = ?", [payment_id])
    left = to_money(pay["amount"]) - refunded
    if amt > left:
        raise ToolError(f"payment {payment_id} has only {left} left to refund")
    rid = db.next_id("refunds")
    db.execute("INSERT INTO refunds (id, payment_id, booking_id, amount, reason, created_at) VALUES (?, ?, ?, ?, ?, ?)",
               [rid, payment_id, pay["booking_id"], amt, reason, db.now])
    status = "refunded" if amt == left else "partially_refunded"
    db.execute("UPDATE payments SET status = ? WHERE id = ?", [status, payment_id])
    return {"refund_id": rid, "payment_id": payment_id, "amount": amt, "payment_status": status}


@tool(writes=True)
def issue_compensation(db: ToolContext, booking_id: BookingId, kind: Literal["travel_credit", "points"], amount: float,
                       reason: Literal["cleanliness", "noise", "maintenance", "service", "overbooking"]) -> dict:
    """Give a guest compensation for a stay: travel credit in dollars, or loyalty points (amount = number of points).

    Args:
        booking_id: The stay compensated.
        kind: travel_credit or points.
        amount: Dollars of travel credit, or number of points.
        reason: What went wrong during the stay.
    """
    b = _booking(db, booking_id)
    if b["status"] != "completed":
        raise ToolError(f"booking {booking_id} is {b['status']}; compensation is for completed stays")
    amt = to_money(amount)
    if kind == "travel_credit":
        money_within(amt, "amount", MAX_COMPENSATION)
    elif amt <= 0 or amt != amt.to_integral_value() or amt > MAX_COMPENSATION * 100:
        raise ToolError(f"points must be a whole positive number up to {int(MAX_COMPENSATION * 100)}, got {amount}")
    given = _sum(db, "SELECT coalesce(sum(amount), 0) AS s FROM compensations WHERE booking_id = ? AND kind = ?", [booking_id, kind])
    ceiling = min(to_money(b["total"]), MAX_COMPENSATION) if kind == "travel_credit" else MAX_COMPENSATION * 100
    if given + amt > ceiling:
        raise ToolError(f"booking {booking_id} has had {given} in {kind} already; with {amt} more it would pass {ceiling}, the most one stay "
                        "can be compensated" + (" (its total, at most 1000.00)" if kind == "travel_credit" else " in points"))
    cid = db.next_id("compensations")
    db.execute("INSERT INTO compensations (id, customer_id, booking_id, kind, amount, reason, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
               [cid, b["customer_id"], booking_id, kind, amt, reason, db.now])
    if kind == "points":
        lid = db.next_id("loyalty_transactions")
        db.execute("INSERT INTO loyalty_transactions (id, customer_id, points, reason, booking_id, created_at) VALUES (?, ?, ?, 'compensation', ?, ?)",
                   [lid, b["customer_id"], int(amt), booking_id, db.now])
    return {"compensation_id": cid, "booking_id": booking_id, "kind": kind, "amount": amt}


# --------------------------------------------------------------------------- knowledge base


@tool
def search_policy(db: ToolContext, query: Annotated[str, Field(min_length=1)], top_k: Annotated[int, Field(ge=1, le=5)] = 3) -> dict:
    """Search the support knowledge base (fees, windows, escalation paths, procedures).

    Args:
        query: What to look for, in plain words.
        top_k: Number of documents to return (1-5).
    """
    return {"results": search_knowledge_base(db, query, top_k)}
