"""Cancellations and refunds: windows by rate type and tier, saver stays, started stays, group rooms, disputes."""

from __future__ import annotations

import random
from datetime import timedelta
from decimal import Decimal
from typing import Any

from thinkingbox_env.authoring import Openings
from thinkingbox_env.authoring.saying import iso, literal, long_date, usd

from ..rules import CORPORATE_RATES, cancellation_fee
from ._base import TravelFamily
from ._draft import TravelDraft
from ._stay import customer, stay

CANCEL_OPENINGS = Openings("TR006", {
    "plain": "Hi, I'd like to cancel a hotel booking please.",
    "upfront_id": "Please cancel booking {booking}, I won't be travelling.",
    "upset": "My trip to {hotel} fell through and I really need my money back.",
    "prefers": "I need to cancel my stay at {hotel} - hopefully with a full refund?",
    "vague": "Hello, I don't need my hotel anymore.",
    "two_facts": "I have a reservation at {hotel} from {check_in} that I have to cancel.",
    "vague_b": "Hi, my plans changed and I'm not going anymore.",
    "upset_b": "Everything went wrong with this trip. I want the hotel cancelled and refunded.",
    "id_and_hotel": "Could you cancel reservation {booking} at {hotel} for me?",
    "date_first": "My stay at {hotel} from {check_in} - I have to cancel it. What do I get back?",
    "polite_long": "Good evening. Unfortunately I need to cancel my stay at {hotel}; could you tell me how that works?",
}, held_out=("vague_b", "upset_b", "id_and_hotel", "date_first", "polite_long"))

TIMEOUT = "the payment service timed out; retry"


def refund_is_idempotent(amount: Decimal, paid: Decimal) -> bool:
    """Repeating a refund fails when what is left after the first is less than the amount."""
    return amount * 2 > paid


class Cancellation(TravelFamily):
    code = "TR006"
    name = "cancellation_and_refund"
    number = 6
    description = ("A guest cancels: free inside the window (2 days, 1 day for platinum and corporate), first night kept when late, "
                   "saver stays non-refundable, started stays and group rooms refused, disputes escalated, a refund retried after a timeout.")
    branches = ("free_flexible", "late_flexible", "platinum_late_window", "corporate_free", "saver_keep", "saver_cancel",
                "refuse_started", "group_room_refuse", "dispute_escalate", "refund_timeout")

    def compose(self, rng: random.Random, seed: int) -> TravelDraft:
        branch = self.branch(seed)
        uid = self.ids(seed)
        d = self.draft()
        arrival = {"late_flexible": rng.choice([0, 1]), "platinum_late_window": 1, "corporate_free": 1, "refuse_started": -1}.get(
            branch, rng.randint(2, 45))
        tier = "platinum" if branch == "platinum_late_window" else rng.choice(["member", "silver", "gold"])
        kw: dict[str, Any] = {}
        if branch == "corporate_free":
            account = rng.choice(["CORP-201", "CORP-202", "CORP-203"])
            hotel, room = rng.choice(sorted((h, r) for (a, h, r) in CORPORATE_RATES if a == account))
            kw = {"rate_type": "corporate", "corporate": account, "hotel": hotel, "room": room, "rate": CORPORATE_RATES[(account, hotel, room)]}
        elif branch in ("saver_keep", "saver_cancel"):
            kw = {"rate_type": "saver"}
        group = None
        if branch == "group_room_refuse":
            group = f"GRP-{uid}"
            organiser = customer(rng, d, uid + 5, "member", ticket_user=False)
            kw = {"rate_type": "group", "group": group}
        s = stay(rng, d, uid, tier=tier, arrival=arrival, length=rng.randint(2, 4), **kw)
        if group:
            d.add("payment_methods", {"id": f"PM-{uid + 5}", "customer_id": organiser[0], "brand": "visa", "last4": "4242",
                                      "expires": "2029-03", "status": "active", "created_at": "2025-09-01 08:00:00"})
            d.add("groups", {"id": group, "name": f"{organiser[1].split()[1]} family reunion", "organizer_id": organiser[0],
                             "hotel_id": s.hotel, "check_in": iso(s.check_in), "check_out": iso(s.check_out), "billing": "individual",
                             "payment_method_id": f"PM-{uid + 5}", "status": "confirmed"})
        if branch == "dispute_escalate":
            d.add("disputes", {"id": f"DSP-{uid}", "payment_id": s.payment, "reason": "customer contests the charge",
                               "status": "open", "opened_on": iso(self.now.date() - timedelta(days=1))})
        tid = self.next_ids(d.patch)["tickets"]
        if branch == "refund_timeout":
            d.fault("issue_refund", TIMEOUT)
        d.identify(s)
        d.open_booking(s)
        d.tags.append("cancellation")
        fee = cancellation_fee(s.rate_type, tier, s.check_in, s.rate, s.total, self.now.date()) if s.rate_type != "group" else None
        if branch == "refuse_started":
            d.ticket(s.requester, f"Cancellation request {s.booking}", "cancellation", "solved", s.booking)
            d.reply(f"Your stay under booking {s.booking} began on {iso(s.check_in)}, and once the arrival date has passed a booking "
                    f"cannot be cancelled: the hotel handles an unused stay as a no-show and nothing is refunded. Ticket {tid} records your request.")
            d.mention("names_booking", must=[literal(s.booking)], must_not=["refunded to", "is cancelled"])  # the refusal: claims:states_outcome
        elif branch == "group_room_refuse":
            d.ticket(s.requester, f"Group room cancellation {s.booking}", "cancellation", "solved", s.booking)
            d.reply(f"Booking {s.booking} is a room in group {group}, and group rooms are managed only by the group's organiser through "
                    f"our group sales team, so I can't cancel it for you. Please ask the organiser to contact us. Ticket {tid} records this.")
            d.mention("refers_to_organiser", must=["organiser|organizer"], must_not=["is cancelled", "refunded to"])
        elif branch == "dispute_escalate":
            d.read("get_payments", booking_id=s.booking)
            d.ticket(s.requester, f"Cancellation {s.booking} - open dispute", "cancellation", "open", s.booking, "high", "payments")
            d.reply(f"There is an open dispute with your bank on the payment of booking {s.booking}, so I can't cancel it or refund "
                    f"anything while the bank's process runs. Our payments team has the case under ticket {tid} and will contact you.")
            d.mention("no_refund_while_disputed", must=["dispute", "payments team"], must_not=["refunded to", "is cancelled"])
            d.states("handled_by")
        else:
            assert fee is not None
            d.read("get_payments", booking_id=s.booking)
            refund = s.total - fee
            if s.rate_type == "saver":
                d.propose(f"Booking {s.booking} is on a saver rate, which is non-refundable: I can cancel booking {s.booking} to "
                          f"release the room, keeping the full {usd(fee, grouped=False)}, and nothing would be refunded. "
                          "Shall I go ahead and cancel it?")
            elif fee > 0:
                d.propose(f"Arrival is less than the free-cancellation window away, so the first night is kept: I would cancel booking "
                          f"{s.booking}, keeping {usd(fee, grouped=False)}, and refund {usd(refund, grouped=False)} to your {s.brand} card "
                          f"ending {s.last4}. Shall I go ahead?")
            else:
                d.propose(f"You're inside the free-cancellation window: I would cancel booking {s.booking} with no fee and refund the full "
                          f"{usd(refund, grouped=False)} to your {s.brand} card ending {s.last4}. Shall I go ahead?")
            if branch == "saver_keep":
                d.decide(["cancel"], "refuse", reason="Then I'd rather keep the booking; maybe a friend can use it.")
                d.ticket(s.requester, f"Cancellation request {s.booking} (saver)", "cancellation", "solved", s.booking)
                d.reply(f"Understood: booking {s.booking} stays as it is. It is on a saver rate, which is non-refundable, so cancelling "
                        f"would not have returned any of the {usd(s.total, grouped=False)}. Ticket {tid} records your request.")
                d.mention("keeps_booking", must=["non-refundable|not refundable|no refund|nothing (would be |is )?refunded|"
                                                 "(would|will) not (get|be) refunded|won't (get|be) refunded"],
                          must_not=["is cancelled", "refunded to"])
            else:
                d.decide(["cancel"], "accept")
                d.write("cancel_booking", {"booking_id": "customer", "cancellation_fee": "policy#cancellation-windows"},
                        idempotent="a cancelled booking cannot be cancelled again", booking_id=s.booking, cancellation_fee=float(fee))
                if refund > 0:
                    why = {"payment_id": "record:get_payments", "amount": "policy#refunds", "reason": "policy#refunds"}
                    if branch == "refund_timeout":
                        d.failing("issue_refund", TIMEOUT, payment_id=s.payment, amount=float(refund), reason="cancellation")
                    d.write("issue_refund", why,
                            idempotent="a fully refunded payment has nothing left to refund" if refund_is_idempotent(refund, s.total) else None,
                            payment_id=s.payment, amount=float(refund), reason="cancellation")
                d.ticket(s.requester, f"Cancel {s.booking}", "cancellation", "solved", s.booking)
                if s.rate_type == "saver":
                    d.reply(f"Booking {s.booking} is cancelled. As a saver booking it is non-refundable, so the full "
                            f"{usd(s.total, grouped=False)} is kept and nothing is refunded. Ticket {tid} records the cancellation.")
                    d.mention("states_kept", must=[literal(usd(s.total, grouped=False))])
                else:
                    kept = f"{usd(fee, grouped=False)} (the first night) is kept and " if fee > 0 else "there is no cancellation fee and "
                    d.reply(f"Booking {s.booking} at {s.hotel_name} is cancelled: {kept}{usd(refund, grouped=False)} is refunded to your "
                            f"{s.brand} card ending {s.last4} within 5 to 10 business days. Ticket {tid} records the cancellation.")
                    d.mention("states_refund",
                              must=[literal(usd(refund, grouped=False))] + ([literal(usd(fee, grouped=False))] if fee > 0 else []))
                d.mention("names_booking", must=[literal(s.booking)])
        d.opening, d.origin = CANCEL_OPENINGS.pick(rng, self.split, booking=s.booking, hotel=s.hotel_name,
                                                   check_in=long_date(s.check_in, style="uk"))
        d.intent = "Cancel the booking and get back what is due."
        return d
