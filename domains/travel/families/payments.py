"""Payment recovery: a booking whose card payment failed, recovered inside its 72-hour hold with a new card."""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from thinkingbox_env.authoring import Openings
from thinkingbox_env.authoring.saying import iso, literal, long_date, ts, usd

from ..rules import NOW, PAYMENT_HOLD_HOURS
from ._base import TravelFamily
from ._draft import TravelDraft
from ._stay import BRANDS, stay, wrong_reference

# nothing here says the customer has another card or how often a payment failed: the facts and the record say that
RECOVERY_OPENINGS = Openings("TR005", {
    "plain": "Hi, I got an email saying the payment for my hotel booking failed.",
    "upfront_id": "Payment failed on booking {booking} - how do I fix it?",
    "upset": "Your system rejected my card and now I'm scared I'll lose my room at {hotel}!",
    "prefers": "My card was declined for {hotel}; I want to keep the booking. What do I need to do?",
    "vague": "Hello, there's a problem with paying for my booking.",
    "two_facts": "My card payment for the booking at {hotel} on {check_in} failed. What do I do?",
    "vague_b": "Hi, something went wrong when I paid.",
    "id_and_hotel": "Booking {booking} at {hotel} - the card payment didn't go through. Can we sort it out?",
    "date_first": "I'm meant to stay at {hotel} from {check_in} but the payment bounced. Is my room still held?",
    "polite_long": "Hello. I received a notice that my payment for {hotel} failed, and I'd like to understand what happens to my reservation.",
}, held_out=("vague_b", "id_and_hotel", "date_first", "polite_long"))

TIMEOUT = "the payment service timed out; retry"


def clock_time(moment: datetime) -> str:
    """A pattern for the hour of ``moment`` as a customer may be told it: 17:00, 5pm, 5:00 pm, 5 p.m."""
    hour12 = moment.hour % 12 or 12
    half = "pm" if moment.hour >= 12 else "am"
    minutes = f"{moment.minute:02d}"
    twelve = f"{hour12}(:{minutes})?" if moment.minute == 0 else f"{hour12}:{minutes}"
    clock = dict.fromkeys([f"{moment.hour:02d}:{minutes}", f"{moment.hour}:{minutes}"])  # 09:00 and 9:00; 17:00 once
    return "|".join([*(f"(?<!\\d){c}(?!\\d)" for c in clock), f"(?<!\\d){twelve} ?({half}|{half[0]}\\.m\\.)"])


class PaymentRecovery(TravelFamily):
    code = "TR005"
    name = "payment_recovery"
    number = 5
    description = ("A booking awaiting payment after a failed card: a new card recorded and charged inside the 72-hour hold (also "
                   "after a payment-service timeout or a misremembered reference), the customer without a card now, a released booking, "
                   "a booking locked after three failed attempts.")
    branches = ("recover", "recover_timeout", "recover_misremembered", "wait_no_card", "refuse_released", "escalate_locked")

    def compose(self, rng: random.Random, seed: int) -> TravelDraft:
        branch = self.branch(seed)
        uid = self.ids(seed)
        d = self.draft()
        released = branch == "refuse_released"
        s = stay(rng, d, uid, tier=rng.choice(["member", "silver", "gold"]), arrival=rng.randint(5, 60), length=rng.randint(1, 4),
                 status="released" if released else "payment_pending")
        hours = rng.randint(80, 120) if released else rng.randint(26, 60)
        created = NOW - timedelta(hours=hours)
        d.row("bookings")["created_at"] = ts(created)
        if released:  # a booking released for want of payment has no captured one, only the failed attempts below
            d.patch["insert"]["payments"] = [p for p in d.patch["insert"].get("payments", []) if p["status"] != "captured"]
        old = d.row("payment_methods")
        old["status"] = rng.choice(["expired", "declined"])
        if old["status"] == "expired":
            old["expires"] = "2026-04"
        attempts = 3 if branch == "escalate_locked" else rng.randint(1, 2)
        for k in range(attempts):
            d.add("payments", {"id": f"PAY-{uid}{k}", "booking_id": s.booking, "group_id": None, "payment_method_id": s.method,
                               "amount": d.row("bookings")["total"], "purpose": "booking", "status": "failed",
                               "created_at": ts(created + timedelta(minutes=5 * k))})
        nxt = self.next_ids(d.patch)
        tid, new_pm = nxt["tickets"], nxt["payment_methods"]
        brand = rng.choice([b for b in BRANDS if b != s.brand])
        last4, expires = f"{rng.randint(1000, 9999)}", f"20{rng.randint(27, 31)}-{rng.randint(1, 12):02d}"
        hold_end = created + timedelta(hours=PAYMENT_HOLD_HOURS)
        hold_day, hold_hour = iso(hold_end.date()), hold_end.strftime("%H:%M")
        d.tags.append("payment")
        if branch == "recover_timeout":
            d.fault("charge_payment", TIMEOUT)
        d.identify(s)
        d.open_booking(s, wrong_reference(rng, s.booking) if branch == "recover_misremembered" else None)
        d.read("get_payments", booking_id=s.booking)
        if branch == "refuse_released":
            d.ticket(s.requester, f"Payment for released booking {s.booking}", "payment", "solved", s.booking)
            d.reply(f"Booking {s.booking} was released because its payment was not completed within the 72-hour hold, and a released "
                    f"booking cannot be restored or paid now. You're welcome to make a new booking at {s.hotel_name} at the current price. "
                    f"Nothing was charged. Ticket {tid} records this.")
            d.mention("names_booking", must=[literal(s.booking)], must_not=["is confirmed", "was charged to"])  # the refusal: claims:states_outcome
        elif branch == "escalate_locked":
            d.ticket(s.requester, f"Booking {s.booking} locked after failed payments", "payment", "open", s.booking, "high", "payments")
            d.reply(f"Booking {s.booking} has had three failed payment attempts, so it needs a review by our payments team before any "
                    f"new payment can be taken. I've passed it to them under ticket {tid}; they will contact you. Nothing was charged.")
            d.mention("hands_to_payments", must=["payments team"], must_not=["is confirmed", "was charged to"])
            d.rubric("no_lock_reason", "Does the final message avoid giving any internal fraud or security reason for the review, "
                     "while telling the customer that the payments team will contact them?")
        else:
            d.read("get_payment_methods", customer_id=s.customer)
            d.ask("Your previous card can't be used again. Could you enter a new card through the secure payment link we sent, and "
                  "tell me the card details once it's saved?")
            if branch == "wait_no_card":
                d.fact("I don't have another card with me right now; I'll add one later.", "card_details", ["card", "new card"])
                d.inform(f"No problem. The booking is held until {hold_day} at {hold_hour}; after that it is released.")
                d.ticket(s.requester, f"Payment pending {s.booking}", "payment", "pending", s.booking)
                d.reply(f"Booking {s.booking} stays on hold until {hold_day} at {hold_hour}. Once you've added a new card, contact us "
                        f"and we'll take the {usd(s.total, grouped=False)} payment. Ticket {tid} is pending until then.")
                # the hold ends at an hour of that day: a closing with the right day and another hour tells the customer a wrong deadline
                d.mention("states_hold_end", must=[literal(hold_day), clock_time(hold_end)], must_not=["was charged to", "is confirmed"])
            else:
                d.fact(f"I've added a new {brand} card ending {last4}, expiring {expires}.", "card_details", ["card", "new card", "details"])
                d.write("add_payment_method", {"customer_id": "record:get_customer_profile", "brand": "customer", "last4": "customer",
                                               "expires": "customer"},
                        idempotent="the same active card cannot be stored twice",
                        customer_id=s.customer, brand=brand, last4=last4, expires=expires)
                d.propose(f"Thank you. I'll charge the booking total of {usd(s.total, grouped=False)} for booking {s.booking} to your new "
                          f"{brand} card ending {last4}; the booking is confirmed once it goes through. Shall I go ahead?")
                d.decide(["charge"], "accept")
                why = {"payment_method_id": "policy#payment-recovery", "amount": "record:get_booking", "purpose": "policy#payment-recovery",
                       "booking_id": "customer"}
                if branch == "recover_timeout":
                    d.failing("charge_payment", TIMEOUT, payment_method_id=new_pm, amount=float(s.total), purpose="balance_due", booking_id=s.booking)
                d.write("charge_payment", why, payment_method_id=new_pm, amount=float(s.total), purpose="balance_due", booking_id=s.booking)
                d.ticket(s.requester, f"Payment recovered {s.booking}", "payment", "solved", s.booking)
                d.reply(f"Booking {s.booking} at {s.hotel_name} is confirmed: {usd(s.total, grouped=False)} was charged to your new "
                        f"{brand} card ending {last4}. Ticket {tid} records the payment.")
                d.mention("states_charge", must=[literal(usd(s.total, grouped=False)), last4])
        d.opening, d.origin = RECOVERY_OPENINGS.pick(rng, self.split, booking=d.given_booking(s), hotel=s.hotel_name,
                                                     check_in=long_date(s.check_in, style="uk"))
        d.intent = "Get the booking paid and confirmed."
        return d
