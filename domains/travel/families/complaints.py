"""Post-stay complaints: goodwill credit by tier (or points), downgrades refunded when the hotel's record shows them."""

from __future__ import annotations

import random
from datetime import timedelta

from thinkingbox_env.authoring import Openings
from thinkingbox_env.authoring.saying import iso, literal, long_date, usd

from ..rules import base_rate, money, travel_credit
from ._base import TravelFamily
from ._draft import TravelDraft
from ._stay import stay, wrong_reference

# an overbooked guest never stayed at the hotel, and a late complaint is about a stay weeks ago: the openings speak of the
# booking, not of a night spent there or of a recent return
COMPLAINT_OPENINGS = Openings("TR010", {
    "plain": "Hello, I want to complain about a hotel booking.",
    "upfront_id": "Booking {booking} was not acceptable and I want it looked at.",
    "upset": "My trip to {hotel} was honestly the worst I've had, and I paid good money for it.",
    "prefers": "I'd like some compensation for what happened with my booking at {hotel}.",
    "vague": "Hi, I'm not happy about a trip I booked with you.",
    "two_facts": "My booking at {hotel} ended on {check_out}, and something went badly wrong.",
    "vague_b": "Hello, some feedback about a stay, and I'd like it taken seriously.",
    "upset_b": "I'm still angry about that hotel. What are you going to do about it?",
    "id_and_hotel": "Booking {booking} at {hotel} was a bad experience and I want to raise it.",
    "date_first": "My booking at {hotel} ended on {check_out} and I need to complain about it.",
    "polite_long": "Good afternoon. I'm writing about my booking at {hotel}; it did not go as it should have and I'd like you to look into it.",
}, held_out=("vague_b", "upset_b", "id_and_hotel", "date_first", "polite_long"))

PROBLEMS = {"cleanliness": "the room was dirty when we arrived, with stained sheets and dust on every surface",
            "noise": "there was loud construction noise outside the room every morning",
            "maintenance": "the air conditioning was broken for the whole stay",
            "service": "the front desk was rude and lost our luggage for a day"}


class PostStayComplaint(TravelFamily):
    code = "TR010"
    name = "post_stay_complaint"
    number = 10
    description = ("A guest complains after a stay: travel credit of 10% (15% gold and platinum) capped at $150, or points at 100 per "
                   "dollar; downgrades verified with the hotel and refunded; late complaints and second compensations refused; "
                   "overbooking escalated to guest relations; a declined credit.")
    branches = ("credit", "credit_vip", "points", "capped", "downgrade_refund", "downgrade_matched", "refuse_late",
                "refuse_already", "escalate_overbooking", "decline_credit")

    def compose(self, rng: random.Random, seed: int) -> TravelDraft:
        branch = self.branch(seed)
        uid = self.ids(seed)
        d = self.draft()
        tier = rng.choice(["gold", "platinum"]) if branch == "credit_vip" else rng.choice(["member", "silver"])
        length = rng.randint(6, 8) if branch == "capped" else rng.randint(1, 4)
        ago = rng.randint(31, 60) if branch == "refuse_late" else rng.randint(1, 28)
        room = "STE" if branch == "capped" else "DLX" if branch.startswith("downgrade") else None
        s = stay(rng, d, uid, tier=tier, arrival=-(ago + length), length=length, status="completed", room=room)
        reason = rng.choice(sorted(PROBLEMS))
        if branch == "downgrade_refund":
            record = d.row("hotel_reservations")
            record["room_code"] = "STD"
            record["nightly_rate"] = money(base_rate(s.hotel, "STD"))
        if branch == "escalate_overbooking":  # the hotel walked the guest: its own record must not show a stay
            d.row("hotel_reservations")["status"] = "cancelled"
        if branch == "refuse_already":
            d.add("compensations", {"id": f"CMP-{uid}", "customer_id": s.customer, "booking_id": s.booking, "kind": "travel_credit",
                                    "amount": "20.00", "reason": reason, "created_at": iso(s.check_out + timedelta(days=1)) + " 10:00:00"})
        nxt = self.next_ids(d.patch)
        tid, eid = nxt["tickets"], nxt["hotel_escalations"]
        d.tags.append("complaint")
        d.identify(s)
        d.open_booking(s, wrong_reference(rng, s.booking) if branch == "credit" else None)
        if branch.startswith("downgrade"):
            d.fact("We booked a Deluxe King but were given a standard room for the whole stay.", "stay_problem", ["what went wrong", "problem"])
        elif branch == "escalate_overbooking":
            d.fact("When we arrived the hotel said it was overbooked and sent us to another hotel across town at midnight.", "stay_problem",
                   ["what went wrong", "problem"])
        else:
            d.fact(f"During the stay {PROBLEMS[reason]}.", "stay_problem", ["what went wrong", "problem"])
        d.ask("I'm sorry to hear that. What went wrong during your stay?")
        if branch == "refuse_late":
            d.ticket(s.requester, f"Late complaint {s.booking}", "complaint", "solved", s.booking)
            d.reply(f"I'm sorry about your stay. You checked out on {iso(s.check_out)}, more than 30 days ago, and complaints are considered "
                    f"within 30 days of check-out, so I can't offer compensation for booking {s.booking}. Ticket {tid} records your feedback.")
            d.mention("refuses_late", must=["30 days"], must_not=["credited", "refunded to"])
        elif branch == "escalate_overbooking":
            d.read("get_hotel_contacts", hotel_id=s.hotel)
            d.write("escalate_to_hotel", {"hotel_id": "record:get_booking", "issue": "policy#serious-incidents", "contact_role": "policy#serious-incidents",
                                          "priority": "policy#serious-incidents", "booking_id": "customer"},
                    hotel_id=s.hotel, issue="guest_complaint", contact_role="duty_manager", priority="high", booking_id=s.booking,
                    detail="Guest was turned away on arrival because the hotel was overbooked.")
            d.ticket(s.requester, f"Overbooking complaint {s.booking}", "complaint", "open", s.booking, "high", "guest_relations")
            d.reply(f"Being turned away on arrival is serious. I've escalated it to the hotel's duty manager (reference {eid}) and opened "
                    f"ticket {tid} for our guest relations team: a guest relations manager will contact you within two business days "
                    f"about booking {s.booking}.")
            d.mention("escalates", must=[literal(eid), "guest relations"], must_not=["credited", "refunded to"])
            d.states("handled_by", "escalation.contact")
        elif branch.startswith("downgrade"):
            d.read("get_hotel_reservation", hotel_id=s.hotel, confirmation_code=s.code)
            matched = branch == "downgrade_matched"
            d.write("record_hotel_verification", {"booking_id": "customer", "outcome": "policy#room-downgrades"},
                    booking_id=s.booking, outcome="matched" if matched else "room_mismatch",
                    detail="Hotel record shows the booked room." if matched else "Hotel record shows a standard room at a lower rate.")
            if matched:
                d.ticket(s.requester, f"Downgrade complaint {s.booking}", "complaint", "solved", s.booking)
                d.reply(f"I checked with {s.hotel_name}: its record for booking {s.booking} shows the Deluxe King you booked, so no refund "
                        f"for a downgrade is due and I can't refund anything for it. Ticket {tid} records your complaint.")
                d.mention("names_booking", must=[literal(s.booking)], must_not=["refunded to"])  # the refusal: claims:states_outcome
            else:
                refund = (s.rate - base_rate(s.hotel, "STD")) * s.nights
                d.read("get_payments", booking_id=s.booking)
                d.propose(f"The hotel's record confirms a standard room at {usd(base_rate(s.hotel, 'STD'), grouped=False)} a night "
                          f"instead of the {usd(s.rate, grouped=False)} you paid, so I would refund the difference for {s.nights} night(s), "
                          f"{usd(refund, grouped=False)}, to your {s.brand} card ending {s.last4}. Shall I go ahead?")
                d.decide(["refund"], "accept")
                d.write("issue_refund", {"payment_id": "record:get_payments", "amount": "policy#room-downgrades", "reason": "policy#room-downgrades"},
                        idempotent="nothing is left to refund" if refund * 2 > s.total else None,
                        payment_id=s.payment, amount=float(refund), reason="hotel_fault")
                d.ticket(s.requester, f"Downgrade refund {s.booking}", "complaint", "solved", s.booking)
                d.reply(f"The hotel's record confirms the downgrade on booking {s.booking}, so {usd(refund, grouped=False)} is refunded to "
                        f"your {s.brand} card ending {s.last4} within 5 to 10 business days. Ticket {tid} records it.")
                d.mention("states_refund", must=[literal(usd(refund, grouped=False))])
                d.states("verification.outcome", "refund.amount")
        else:
            d.read("get_compensation_history", customer_id=s.customer)
            if branch == "refuse_already":
                d.ticket(s.requester, f"Second complaint {s.booking}", "complaint", "solved", s.booking)
                d.reply(f"Booking {s.booking} has already been compensated once, and each stay is compensated at most once, so I can't credit "
                        f"anything more for it. Ticket {tid} records your feedback.")
                d.mention("names_booking", must=[literal(s.booking)], must_not=["credited", "refunded to"])  # the refusal: claims:states_outcome
            else:
                credit = travel_credit(tier, s.total)
                points = int(credit * 100)
                share = "15%" if tier in ("gold", "platinum") else "10%"
                basis = "capped at $150.00" if credit == 150 else f"{share} of your stay's {usd(s.total, grouped=False)}"
                d.propose(f"I'm sorry. I can give you travel credit of {usd(credit, grouped=False)} ({basis}) for booking {s.booking}, "
                          "or the same value as loyalty points, at 100 points per dollar. Which would you prefer?")
                if branch == "decline_credit":
                    d.decide(["credit", "points"], "refuse", reason="That's not enough; I don't want anything then.")
                    d.ticket(s.requester, f"Complaint {s.booking}", "complaint", "solved", s.booking)
                    d.reply(f"Understood: no compensation was given for booking {s.booking}. Ticket {tid} records your complaint and the offer.")
                    d.mention("nothing_given", must=[literal(s.booking)],
                              must_not=["credited " + literal(usd(credit, grouped=False)), "points have been added"])
                else:
                    as_points = branch == "points"
                    d.decide(["credit", "points"], "accept", prefer=["points"] if as_points else ["travel credit"])
                    d.write("issue_compensation", {"booking_id": "customer", "kind": "customer", "amount": "policy#compensation-scale",
                                                   "reason": "customer"},
                            booking_id=s.booking, kind="points" if as_points else "travel_credit",
                            amount=float(points) if as_points else float(credit), reason=reason)
                    d.ticket(s.requester, f"Complaint {s.booking}", "complaint", "solved", s.booking)
                    given = (f"{points} loyalty points were added to your account" if as_points
                             else f"{usd(credit, grouped=False)} of travel credit was added to your account")
                    d.reply(f"I'm sorry about the stay. For booking {s.booking}, {given}. Ticket {tid} records your complaint.")
                    d.mention("states_compensation", must=[str(points)] if as_points else [literal(usd(credit, grouped=False))])
                    d.states("compensation.kind", "credit.amount")
        d.opening, d.origin = COMPLAINT_OPENINGS.pick(rng, self.split, booking=d.given_booking(s), hotel=s.hotel_name,
                                                      check_out=long_date(s.check_out, style="uk"))
        d.intent = "Get the bad stay put right."
        return d
