"""Two requests in one conversation about one booking: a change, a verification or a request, then another."""

from __future__ import annotations

import random
from datetime import timedelta
from decimal import Decimal
from typing import Any

from thinkingbox_env.authoring import Openings, TaskBody, combine

from ..rules import money, service_price
from ._base import BEST_EFFORT, Request, Stay, iso, pretty, rx, usd
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


def body(req: Request, patch: dict[str, Any], opening: str, description: str, intent: str, rubrics: bool) -> TaskBody:
    """A request as the engine's task body, so that two of them are joined by ``authoring.combine``."""
    return TaskBody(description=description, opening=opening, golden_reply=" ".join(req.replies), facts=req.facts, intent=intent,
                    patch=patch, golden=[{k: v for k, v in c.items()} for c in req.calls],
                    checks={"dialogue": req.checks, **({"rubric": req.rubrics} if req.rubrics and rubrics else {})},
                    idempotent_writes=dict(req.idempotent), tags=list(req.tags), dialogue=req.dialogue, faults=req.faults)


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

    # the second request, on the stay as the first left it --------------------------------------
    def request_part(self, rng: random.Random, s: Stay, paid: bool, nights: int, look: bool = False) -> Request:
        """A complimentary request or a paid extra; ``look`` reads what the booking already has first."""
        req = Request()
        code = rng.choice(PAID if paid else COMPLIMENTARY)
        word = WORDS[code]
        req.fact(f"I'd also like {word} for the stay.", "request_details", ["request", "what would you like", "arrange", "also"])
        req.ask("What else would you like us to arrange for the stay?")
        if look:
            req.read("get_special_requests", booking_id=s.booking)
        if paid:
            price = service_price(code, nights, s.guests)
            req.read("get_service_catalog", kind="paid_extra")
            req.propose(f"{word.capitalize()} is a paid extra: {usd(price)} for your stay. I would book it on booking {s.booking} and charge "
                        f"{usd(price)} to your {s.brand} card ending {s.last4}. Shall I go ahead?")
            req.decide(["book", "extra"], "accept")
            req.write("add_special_request", {"booking_id": "customer", "code": "customer"}, idempotent="the same request on the same booking is refused",
                      booking_id=s.booking, code=code, detail=f"Guest asks for {word}.")
            req.write("charge_payment", {"payment_method_id": "record:get_payments", "amount": "policy#paid-extras", "purpose": "policy#paid-extras",
                                         "booking_id": "customer"},
                      payment_method_id=s.method, amount=float(price), purpose="extra", booking_id=s.booking)
            req.reply(f"{word.capitalize()} is added, and {usd(price)} was charged for it.")
            req.check("states_extra", must=[rx(usd(price))])
            return req
        req.write("add_special_request", {"booking_id": "customer", "code": "customer"}, idempotent="the same request on the same booking is refused",
                  booking_id=s.booking, code=code, detail=f"Guest asks for {word}.")
        req.reply(f"I've also recorded {word}, free of charge; it is not guaranteed and depends on the hotel's availability on the day.")
        req.check("best_effort", must=[BEST_EFFORT], must_not=["is guaranteed"])
        return req

    def verify_part(self, s: Stay, outcome: str, eid: str) -> Request:
        req = Request()
        req.fact("Could you also check that the hotel really has my reservation?", "fact:hotel_check", ["hotel", "check", "anything else", "also"])
        req.read("get_hotel_reservation", hotel_id=s.hotel, confirmation_code=s.code)
        req.write("record_hotel_verification", {"booking_id": "customer", "outcome": "policy#verifying-a-reservation-with-the-hotel"},
                  booking_id=s.booking, outcome=outcome, detail="Checked against the hotel's record.")
        if outcome == "matched":
            req.reply(f"I also checked booking {s.booking} with {s.hotel_name}: the reservation is confirmed with the hotel.")
            return req  # the verification is a claim the closing makes (claims:states_outcome), not a phrase
        days = (s.check_in - self.now.date()).days
        issue, contact, priority = escalation(outcome, days)
        req.read("get_hotel_contacts", hotel_id=s.hotel)
        req.write("escalate_to_hotel", {"hotel_id": "record:get_booking", "issue": "policy#escalating-to-a-hotel",
                                        "contact_role": "policy#escalating-to-a-hotel", "priority": "policy#escalating-to-a-hotel",
                                        "booking_id": "customer"},
                  hotel_id=s.hotel, issue=issue, contact_role=contact, priority=priority, booking_id=s.booking,
                  detail=f"The hotel's record shows a different nightly rate for booking {s.booking}.")
        req.reply(f"The hotel's record shows a different nightly rate, so I escalated it to the hotel under reference {eid}; you keep the "
                  f"rate of your booking, {usd(s.rate)} a night.")
        req.check("gives_escalation_reference", must=[rx(eid)])
        return req

    def compose(self, rng: random.Random, seed: int) -> dict[str, Any]:
        branch = self.branch(seed)
        uid = self.ids(seed)
        patch: dict[str, Any] = {"insert": {}, "update": []}
        s = self.stay(rng, patch, uid, tier=rng.choice(["member", "silver", "gold"]), arrival=rng.randint(5, 40), length=rng.randint(1, 3))
        mismatch = "mismatch" in branch
        if mismatch:
            patch["insert"]["hotel_reservations"][0]["nightly_rate"] = money(s.rate + Decimal(rng.choice([12, 25, 40])))
        nxt = self.next_ids(patch)
        tid, eid = nxt["tickets"], nxt["hotel_escalations"]
        first_kind, second_kind = branch.split("_then_")
        three = first_kind == "change_and_extra"
        # a misremembered reference on even seeds, and always in the three-request conversation
        wrong = self.wrong_reference(rng, s.booking) if seed % 2 == 0 or three else None
        if first_kind.startswith("change"):  # the change conversation identifies the customer itself
            first = self.change_request(rng, s, "extend", fee=Decimal("0"), new_rate=s.rate, wrong=wrong)
            new_out = s.check_out + timedelta(days=1)
            first.reply(f"Booking {s.booking} now runs from {iso(s.check_in)} to {iso(new_out)}; the extra night, {usd(s.rate)}, was charged "
                        f"to your {s.brand} card ending {s.last4}.")
            first.check("states_new_dates", must=[rx(iso(new_out)), rx(usd(s.rate))])
            nights = s.nights + 1
            if three:  # a paid extra too, after a look at what the booking already has
                extra = self.request_part(rng, s, True, nights, look=True)
                first = first.then(extra)
        else:
            first = Request()
            self.identify(first, s)
            self.open_booking(first, s, wrong)
            if second_kind in ("extra", "paid_extra"):
                first.read("get_payments", booking_id=s.booking)
            part = self.verify_part(s, "rate_mismatch" if first_kind == "verify_mismatch" else "matched", eid) \
                if first_kind.startswith("verify") else self.request_part(rng, s, False, s.nights)
            first = first.then(part)
            nights = s.nights
        if second_kind.startswith("verify"):
            second = self.verify_part(s, "rate_mismatch" if "mismatch" in second_kind else "matched", eid)
        else:
            second = self.request_part(rng, s, second_kind in ("extra", "paid_extra"), nights)
        escalated = mismatch
        self.ticket(second, s.requester, f"Two requests on {s.booking}", TICKET_CATEGORY[first_kind], "open" if escalated else "solved", s.booking,
                    "high" if escalated else "normal", "partner_relations" if escalated else None)
        second.reply(f"Ticket {tid} records {'all three' if three else 'both'} requests.")
        second.rubric("both_requests_answered", "Does the final message report the outcome of each of the customer's requests, each "
                      "consistent with what was actually done?")
        said_first, said_second = REQUEST_WORDS[first_kind], REQUEST_WORDS[second_kind]
        opening, origin = TWO_OPENINGS.pick(rng, self.split, booking=s.booking, hotel=s.hotel_name, check_in=pretty(s.check_in),
                                            first=said_first, second=said_second)
        test = self.split == "test"  # judged questions are for the frozen test set
        merged = combine(body(first, patch, opening, f"{self.name}: first request", f"First, {said_first}.", test),
                         body(second, patch, opening, "the second request", f"Then {said_second}.", test), opening=opening)
        data = merged.to_dict()
        data["description"] = f"{self.name}, branch '{branch}'."
        data["origin"] = {"opening": origin, "branches": [f"{self.code}:{branch}"]}
        decisions = first.decisions + second.decisions
        if decisions:
            data["user"]["decisions"] = decisions
        data["tags"] = list(dict.fromkeys([*data["tags"], "two_requests", branch]))
        return data
