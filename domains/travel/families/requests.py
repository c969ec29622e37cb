"""Special requests: complimentary ones recorded as best effort, paid extras charged, some passed to the hotel."""

from __future__ import annotations

import random
from typing import Any

from thinkingbox_env.authoring import Openings
from thinkingbox_env.authoring.saying import literal, long_date, usd

from ..rules import CORPORATE_RATES, SERVICES, service_price
from ._base import BEST_EFFORT, NO_CHARGE, TravelFamily
from ._draft import TravelDraft
from ._stay import stay

REQUEST_OPENINGS = Openings("TR009", {
    "plain": "Hi, I'd like to add a request to my hotel booking.",
    "upfront_id": "For booking {booking}, could you arrange something for me?",
    "upset": "I need something arranged for my stay and I want to be sure it is done properly.",
    "prefers": "I'm staying at {hotel} and would really like {word}.",
    "vague": "Hello, a small request about my stay.",
    "two_facts": "About my stay at {hotel} from {check_in}: I need {word}.",
    "vague_b": "Hi there, can you pass something on to my hotel?",
    "id_and_word": "For booking {booking} at {hotel}, could you arrange {word}?",
    "date_first": "I'm at {hotel} from {check_in} and would need {word}. Can you set that up?",
    "polite_long": "Good morning. Ahead of my stay at {hotel}, I'd like to ask for {word}, if that can be arranged.",
}, held_out=("vague_b", "id_and_word", "date_first", "polite_long"))

WORDS = {"early_check_in": "an early check-in", "late_check_out": "a late check-out", "high_floor": "a room on a high floor",
         "quiet_room": "a quiet room", "crib": "a crib for the baby", "accessible_bathroom": "a room with an accessible bathroom",
         "airport_transfer": "an airport transfer", "breakfast": "breakfast", "parking": "valet parking",
         "guaranteed_late_check_out": "a guaranteed late check-out"}
COMPLIMENTARY = ["early_check_in", "late_check_out", "high_floor", "quiet_room", "crib"]
PAID = ["airport_transfer", "breakfast", "parking", "guaranteed_late_check_out"]


class SpecialRequest(TravelFamily):
    code = "TR009"
    name = "special_request"
    number = 9
    description = ("A guest asks for something extra: complimentary requests recorded as best effort and never guaranteed, paid extras "
                   "charged after agreement, breakfast free for accounts that include it, arrival-day and accessibility requests passed "
                   "to the hotel, a declined price.")
    branches = ("complimentary", "paid_extra", "corporate_breakfast", "arrival_day_escalate", "accessible_escalate",
                "refuse_guarantee", "decline_paid")

    def compose(self, rng: random.Random, seed: int) -> TravelDraft:
        branch = self.branch(seed)
        uid = self.ids(seed)
        d = self.draft()
        kw: dict[str, Any] = {}
        if branch == "corporate_breakfast":
            hotel, room = rng.choice(sorted((h, r) for (a, h, r) in CORPORATE_RATES if a == "CORP-201"))
            kw = {"rate_type": "corporate", "corporate": "CORP-201", "hotel": hotel, "room": room, "rate": CORPORATE_RATES[("CORP-201", hotel, room)]}
        s = stay(rng, d, uid, tier=rng.choice(["member", "silver", "gold"]), arrival=0 if branch == "arrival_day_escalate" else rng.randint(2, 40),
                 length=rng.randint(1, 4), **kw)
        code = {"complimentary": rng.choice(COMPLIMENTARY), "arrival_day_escalate": rng.choice(COMPLIMENTARY), "accessible_escalate": "accessible_bathroom",
                "refuse_guarantee": "early_check_in", "corporate_breakfast": "breakfast"}.get(branch, rng.choice(PAID))
        word = WORDS[code]
        price = service_price(code, s.nights, s.guests)
        nxt = self.next_ids(d.patch)
        tid, eid = nxt["tickets"], nxt["hotel_escalations"]
        d.tags.append("special_request")
        d.identify(s)
        d.open_booking(s)
        if branch == "refuse_guarantee":
            d.fact("I need a guaranteed early check-in; I land at 7 in the morning. If it can't be guaranteed, please still ask the hotel.",
                   "request_details", ["request", "what would you like", "arrange"])
        else:
            d.fact(f"I'd like {word} for the stay.", "request_details", ["request", "what would you like", "arrange"])
        d.ask("What would you like us to arrange for the stay?")
        detail = f"Guest asks for {word}."
        write_why = {"booking_id": "customer", "code": "customer"}
        if code in PAID:
            if branch == "corporate_breakfast":
                d.read("get_corporate_account", account_id="CORP-201")
            d.read("get_service_catalog", kind="paid_extra")
            if branch != "corporate_breakfast":
                d.read("get_payments", booking_id=s.booking)
                unit_price = f"{usd(SERVICES[code]['price'], grouped=False)} {SERVICES[code]['unit'].replace('_', ' ')}"
                d.propose(f"{word.capitalize()} is a paid extra: {usd(price, grouped=False)} for your stay ({unit_price}). I would book it "
                          f"on booking {s.booking} and charge {usd(price, grouped=False)} to your {s.brand} card ending {s.last4}. "
                          "Shall I go ahead?")
            if branch == "decline_paid":
                d.decide(["charge", "book"], "refuse", reason="That's more than I expected; I'll manage without it.")
                d.ticket(s.requester, f"Extra quote {s.booking}", "special_request", "solved", s.booking)
                d.reply(f"Understood: nothing was added to booking {s.booking} and nothing was charged. Ticket {tid} records the quote.")
                d.mention("nothing_added", must=[literal(s.booking)],
                          must_not=["is added to booking", "charged " + literal(usd(price, grouped=False))])
            else:
                if branch != "corporate_breakfast":
                    d.decide(["charge", "book"], "accept")
                d.write("add_special_request", write_why, idempotent="the same request on the same booking is refused",
                        booking_id=s.booking, code=code, detail=detail)
                if branch == "corporate_breakfast":
                    d.ticket(s.requester, f"Breakfast {s.booking}", "special_request", "solved", s.booking)
                    d.reply(f"Breakfast is added to booking {s.booking} at no charge, because your company's account includes breakfast. "
                            f"Ticket {tid} records it.")
                    d.mention("breakfast_free", must=[NO_CHARGE], must_not=["charged " + literal(usd(price, grouped=False))])
                    d.states("request.code")
                else:
                    d.write("charge_payment", {"payment_method_id": "record:get_payments", "amount": "policy#paid-extras",
                                               "purpose": "policy#paid-extras", "booking_id": "customer"},
                            payment_method_id=s.method, amount=float(price), purpose="extra", booking_id=s.booking)
                    d.ticket(s.requester, f"Extra {s.booking}", "special_request", "solved", s.booking)
                    d.reply(f"{word.capitalize()} is added to booking {s.booking}, and {usd(price, grouped=False)} was charged to your "
                            f"{s.brand} card ending {s.last4}. Ticket {tid} records it.")
                    d.mention("states_charge", must=[literal(usd(price, grouped=False))])
                    d.states("request.code", "charge.amount")
        else:
            d.write("add_special_request", write_why, idempotent="the same request on the same booking is refused",
                    booking_id=s.booking, code=code, detail=detail)
            escalate = branch in ("arrival_day_escalate", "accessible_escalate")
            if escalate:
                contact = "front_desk" if branch == "arrival_day_escalate" else "reservations"
                heading = "policy#requests-on-the-day-of-arrival" if branch == "arrival_day_escalate" else "policy#complimentary-requests"
                d.read("get_hotel_contacts", hotel_id=s.hotel)
                d.write("escalate_to_hotel", {"hotel_id": "record:get_booking", "issue": heading, "contact_role": heading, "priority": heading,
                                              "booking_id": "customer"},
                        hotel_id=s.hotel, issue="special_request", contact_role=contact, priority="high", booking_id=s.booking, detail=detail)
                d.ticket(s.requester, f"Request passed to the hotel {s.booking}", "special_request", "open", s.booking, "high",
                         "partner_relations")
                d.reply(f"I've recorded {word} on booking {s.booking} and passed it straight to the hotel's "
                        f"{contact.replace('_', ' ')} team (reference {eid}) so that they can confirm it. It is not guaranteed until the hotel "
                        f"confirms. Ticket {tid} follows it.")
                d.mention("passes_to_hotel", must=[literal(eid), BEST_EFFORT])
                d.states("request.code", "escalation.contact")
            else:
                d.ticket(s.requester, f"Special request {s.booking}", "special_request", "solved", s.booking)
                if branch == "refuse_guarantee":
                    d.reply(f"An early check-in cannot be guaranteed: it is a complimentary request that the hotel grants when a room is "
                            f"ready. I've recorded it on booking {s.booking}, free of charge, and it is subject to availability on the day. "
                            f"Ticket {tid} records it.")
                    d.mention("no_guarantee", must=[BEST_EFFORT], must_not=["is guaranteed"])
                    d.states("request.code")
                else:
                    d.reply(f"I've recorded {word} on booking {s.booking}, free of charge. It is best effort: the hotel grants it when it "
                            f"can, so it is not guaranteed and depends on availability on the day. Ticket {tid} records it.")
                    d.mention("best_effort", must=[BEST_EFFORT], must_not=["is guaranteed"])
                    d.states("request.code")
        d.opening, d.origin = REQUEST_OPENINGS.pick(rng, self.split, booking=s.booking, hotel=s.hotel_name,
                                                    check_in=long_date(s.check_in, style="uk"), word=word)
        d.intent = "Get the request passed to the hotel."
        return d
