"""Two requests in one conversation about one booking: a change, a verification or a request, then another."""

from __future__ import annotations

import random
from datetime import timedelta
from decimal import Decimal

from thinkingbox_env.authoring import Openings, TaskDraft
from thinkingbox_env.authoring.dimensions import carries
from thinkingbox_env.authoring.saying import iso, literal, long_date, usd

from ..rules import money, service_price
from ._base import BEST_EFFORT
from ._dimensions import RECOVERY
from ._draft import TravelDraft
from ._stay import Stay, stay, wrong_reference
from .changes import ChangeMixin
from .partners import escalation
from .requests import COMPLIMENTARY, PAID, WORDS

# One message naming both requests in the order they are to be handled, so the ticket's category (the first
# request's, by the policy) is determined by what the customer wrote; {first} and {second} come from REQUEST_WORDS.
TWO_OPENINGS = Openings("TR011", {
    "plain": "Hi, two things about my hotel booking: first I need to {first}, and then I'd like to {second}.",
    "upfront_id": "Booking {booking}: could you {first}? After that, I'd also like to {second}.",
    "upset": "Planning this trip has been a headache. I need to {first} and, once that's done, to {second}.",
    "prefers": "About my stay at {hotel}: I'd like to {first} first, then {second}.",
    "two_facts": "My stay at {hotel} from {check_in}: please {first}, and after that I'd like to {second}.",
    "short": "Need to {first}, then {second}. Can you help?",
    "id_and_hotel": "For booking {booking} at {hotel} I'd like to {first}, and when that's sorted, {second}.",
    "date_first": "I arrive at {hotel} on {check_in}. Two things, in this order: {first}, then {second}.",
    "polite_long": "Good morning. I have a reservation at {hotel} and would like your help with two things: to begin with, to {first}; "
                   "after that, to {second}.",
}, held_out=("id_and_hotel", "date_first", "polite_long"))

# what each kind of request is called in an opening (never the details the agent must ask for)
REQUEST_WORDS = {
    "change": "change my dates",
    "change_and_extra": "change my dates and book a paid extra",
    "verify": "check that the hotel has my reservation right",
    "verify_mismatch": "check that the hotel has my reservation right",
    "request": "pass a request on to the hotel",
    "extra": "add a paid extra to the stay",
    "paid_extra": "add a paid extra to the stay",
}
# the ticket's category: the first request's (policy, "Tickets")
TICKET_CATEGORY = {"change": "booking_change", "change_and_extra": "booking_change", "verify": "hotel_issue",
                   "verify_mismatch": "hotel_issue", "request": "special_request"}


class TwoRequests(ChangeMixin):
    code = "TR011"
    name = "two_requests"
    number = 11
    test_count = 12
    description = ("One conversation, two requests on the same booking (a date change, a verification with the hotel, a complimentary "
                   "request or a paid extra): one ticket for both, in the first request's category; some combinations are test-only.")
    branches = ("change_then_request", "verify_then_extra", "request_then_verify_mismatch", "change_then_verify",
                "change_then_paid_extra", "verify_mismatch_then_request", "change_and_extra_then_verify_mismatch")
    held_out_branches = ("change_then_paid_extra", "verify_mismatch_then_request", "change_and_extra_then_verify_mismatch")

    # a further request, on the stay as the earlier ones left it --------------------------------------
    def request_part(self, d: TravelDraft, rng: random.Random, s: Stay, paid: bool, nights: int, look: bool = False) -> None:
        """A complimentary request or a paid extra; ``look`` reads what the booking already has first."""
        code = rng.choice(PAID if paid else COMPLIMENTARY)
        word = WORDS[code]
        d.fact(f"I'd also like {word} for the stay.", "request_details", ["request", "what would you like", "arrange", "also"])
        d.ask("What else would you like us to arrange for the stay?")
        if look:
            d.read("get_special_requests", booking_id=s.booking)
        if paid:
            price = service_price(code, nights, s.guests)
            d.read("get_service_catalog", kind="paid_extra")
            d.propose(f"{word.capitalize()} is a paid extra: {usd(price, grouped=False)} for your stay. I would book it on booking "
                      f"{s.booking} and charge {usd(price, grouped=False)} to your {s.brand} card ending {s.last4}. Shall I go ahead?")
            d.decide(["book", "extra"], "accept")
            d.write("add_special_request", {"booking_id": "customer", "code": "customer"}, idempotent="the same request on the same booking is refused",
                    booking_id=s.booking, code=code, detail=f"Guest asks for {word}.")
            d.write("charge_payment", {"payment_method_id": "record:get_payments", "amount": "policy#paid-extras", "purpose": "policy#paid-extras",
                                       "booking_id": "customer"},
                    payment_method_id=s.method, amount=float(price), purpose="extra", booking_id=s.booking)
            d.reply(f"{word.capitalize()} is added, and {usd(price, grouped=False)} was charged for it.")
            d.mention("states_extra", must=[literal(usd(price, grouped=False))])
            d.states("request.code", "charge.amount")
            return
        d.write("add_special_request", {"booking_id": "customer", "code": "customer"}, idempotent="the same request on the same booking is refused",
                booking_id=s.booking, code=code, detail=f"Guest asks for {word}.")
        d.reply(f"I've also recorded {word}, free of charge; it is not guaranteed and depends on the hotel's availability on the day.")
        d.mention("best_effort", must=[BEST_EFFORT], must_not=["is guaranteed"])
        d.states("request.code")

    def verify_part(self, d: TravelDraft, s: Stay, outcome: str, eid: str) -> None:
        """The booking checked against the hotel's record, and a rate discrepancy escalated to the hotel."""
        d.fact("Could you also check that the hotel really has my reservation?", "fact:hotel_check", ["hotel", "check", "anything else", "also"])
        d.read("get_hotel_reservation", hotel_id=s.hotel, confirmation_code=s.code)
        d.write("record_hotel_verification", {"booking_id": "customer", "outcome": "policy#verifying-a-reservation-with-the-hotel"},
                booking_id=s.booking, outcome=outcome, detail="Checked against the hotel's record.")
        d.states("verification.outcome")
        if outcome == "matched":
            d.reply(f"I also checked booking {s.booking} with {s.hotel_name}: the reservation is confirmed with the hotel.")
            return  # the verification is a claim the closing makes (claims:states_outcome), not a phrase
        days = (s.check_in - self.now.date()).days
        issue, contact, priority = escalation(outcome, days)
        d.read("get_hotel_contacts", hotel_id=s.hotel)
        d.write("escalate_to_hotel", {"hotel_id": "record:get_booking", "issue": "policy#escalating-to-a-hotel",
                                      "contact_role": "policy#escalating-to-a-hotel", "priority": "policy#escalating-to-a-hotel",
                                      "booking_id": "customer"},
                hotel_id=s.hotel, issue=issue, contact_role=contact, priority=priority, booking_id=s.booking,
                detail=f"The hotel's record shows a different nightly rate for booking {s.booking}.")
        d.reply(f"The hotel's record shows a different nightly rate, so I escalated it to the hotel under reference {eid}; you keep the "
                f"rate of your booking, {usd(s.rate, grouped=False)} a night.")
        d.mention("gives_escalation_reference", must=[literal(eid)])

    def compose(self, rng: random.Random, seed: int) -> TaskDraft:
        branch = self.branch(seed)
        uid = self.ids(seed)
        first = self.draft()
        s = stay(rng, first, uid, tier=rng.choice(["member", "silver", "gold"]), arrival=rng.randint(5, 40), length=rng.randint(1, 3))
        mismatch = "mismatch" in branch
        if mismatch:
            first.row("hotel_reservations")["nightly_rate"] = money(s.rate + Decimal(rng.choice([12, 25, 40])))
        nxt = self.next_ids(first.patch)
        tid, eid = nxt["tickets"], nxt["hotel_escalations"]
        first_kind, second_kind = branch.split("_then_")
        three = first_kind == "change_and_extra"
        # a misremembered reference on the seeds the recovery schedule picks (even ones), and always in the three-request conversation
        wrong = wrong_reference(rng, s.booking) if carries(RECOVERY, code=self.code, seed=seed) or three else None
        if first_kind.startswith("change"):  # the change conversation identifies the customer itself
            self.change_request(first, s, "extend", fee=Decimal("0"), new_rate=s.rate, wrong=wrong)
            new_out = s.check_out + timedelta(days=1)
            first.reply(f"Booking {s.booking} now runs from {iso(s.check_in)} to {iso(new_out)}; the extra night, "
                        f"{usd(s.rate, grouped=False)}, was charged to your {s.brand} card ending {s.last4}.")
            first.mention("states_new_dates", must=[literal(iso(new_out)), literal(usd(s.rate, grouped=False))])
            first.states("charge.amount")
            nights = s.nights + 1
            if three:  # a paid extra too, after a look at what the booking already has
                self.request_part(first, rng, s, True, nights, look=True)
        else:
            first.identify(s)
            first.open_booking(s, wrong)
            if second_kind in ("extra", "paid_extra"):
                first.read("get_payments", booking_id=s.booking)
            if first_kind.startswith("verify"):
                self.verify_part(first, s, "rate_mismatch" if first_kind == "verify_mismatch" else "matched", eid)
            else:
                self.request_part(first, rng, s, False, s.nights)
            nights = s.nights
        second = self.draft()
        if second_kind.startswith("verify"):
            self.verify_part(second, s, "rate_mismatch" if "mismatch" in second_kind else "matched", eid)
        else:
            self.request_part(second, rng, s, second_kind in ("extra", "paid_extra"), nights)
        escalated = mismatch
        second.ticket(s.requester, f"Two requests on {s.booking}", TICKET_CATEGORY[first_kind], "open" if escalated else "solved", s.booking,
                      "high" if escalated else "normal", "partner_relations" if escalated else None)
        second.reply(f"Ticket {tid} records {'all three' if three else 'both'} requests.")
        # each request's outcome is a stated role of its part (request.code, verification.outcome, charge.amount): no judge needed
        said_first, said_second = REQUEST_WORDS[first_kind], REQUEST_WORDS[second_kind]
        opening, origin = TWO_OPENINGS.pick(rng, self.split, booking=first.given_booking(s), hotel=s.hotel_name, check_in=long_date(s.check_in, style="uk"),
                                            first=said_first, second=said_second)
        first.intent, second.intent = f"First, {said_first}.", f"Then {said_second}."
        both = first.then(second, opening)
        both.origin = origin
        return both

