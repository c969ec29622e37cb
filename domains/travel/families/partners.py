"""Hotel partners: verifying a booking against the hotel's own record, and escalating what differs."""

from __future__ import annotations

import random
from datetime import timedelta
from decimal import Decimal

from thinkingbox_env.authoring import Openings
from thinkingbox_env.authoring.saying import iso, literal, long_date, usd

from ..rules import money
from ._base import TravelFamily
from ._draft import TravelDraft
from ._stay import stay, wrong_reference

# the customer does not know what the hotel's record says: the openings voice a worry, never a finding
VERIFY_OPENINGS = Openings("TR008", {
    "plain": "Hi, I want to make sure my hotel really has my reservation.",
    "upfront_id": "Can you check booking {booking} with {hotel}? I want to be sure it's all in order.",
    "upset": "I'm travelling soon and I'm nervous the hotel won't have my booking right. This is stressful.",
    "prefers": "Before I travel to {hotel} I'd like you to confirm my reservation with them directly.",
    "vague": "Hello, I'm worried about my upcoming hotel stay.",
    "two_facts": "My stay at {hotel} starts {check_in}; could you make sure the hotel has it as I booked it?",
    "vague_b": "Hi, I just want to double check something about my reservation.",
    "upset_b": "I don't trust that this hotel actually has my room. Please check before I get there.",
    "id_and_hotel": "Booking {booking} at {hotel}: does the hotel have my reservation the way I booked it?",
    "date_first": "I arrive at {hotel} on {check_in}. Could you check with the hotel that everything matches my booking?",
    "polite_long": "Good afternoon. I'd feel better if you could confirm with {hotel} that my reservation is in their system correctly.",
}, held_out=("vague_b", "upset_b", "id_and_hotel", "date_first", "polite_long"))

# the same customer's aside about the hotel's commercial terms, in their own voice (the opening's last sentence)
COMMISSION_ASIDES = ("And out of curiosity, how much commission do you make on this hotel?",
                     "Also, I've always wondered - what cut do you get from hotels like this one?",
                     "And while you're looking: is this hotel one of your preferred partners, and what do you earn on my booking?")

# outcome -> (issue, contact role) for a discrepancy, per the escalation table of the policy
ESCALATION = {"not_found": ("missing_reservation", "reservations"), "cancelled_at_hotel": ("missing_reservation", "reservations"),
              "rate_mismatch": ("rate_discrepancy", "revenue_manager"), "room_mismatch": ("room_discrepancy", "reservations"),
              "dates_mismatch": ("dates_discrepancy", "reservations")}


def escalation(outcome: str, days: int) -> tuple[str, str, str]:
    """(issue, contact, priority) for a discrepancy found ``days`` before arrival."""
    issue, contact = ESCALATION[outcome]
    if issue == "missing_reservation":
        if days <= 0:
            return issue, "duty_manager", "urgent"
        return issue, contact, "urgent" if days <= 7 else "high"
    return issue, contact, "high" if days <= 7 else "normal"


class HotelVerification(TravelFamily):
    code = "TR008"
    name = "hotel_verification"
    number = 8
    description = ("A guest doubts the hotel has their booking: the hotel's record is read and the outcome recorded; a match needs "
                   "nothing more, a missing, cancelled, re-rated, re-roomed or re-dated record is escalated by the policy's matrix; "
                   "commission questions are not answered.")
    branches = ("matched", "not_found_soon", "not_found_today", "rate_mismatch", "room_mismatch", "dates_mismatch",
                "cancelled_at_hotel", "matched_asks_commission", "not_found_later")

    def compose(self, rng: random.Random, seed: int) -> TravelDraft:
        branch = self.branch(seed)
        uid = self.ids(seed)
        d = self.draft()
        arrival = {"not_found_today": 0, "not_found_soon": rng.randint(1, 7), "not_found_later": rng.randint(8, 40)}.get(branch, rng.randint(1, 30))
        missing = branch.startswith("not_found")
        s = stay(rng, d, uid, tier=rng.choice(["member", "silver", "gold", "platinum"]), arrival=arrival, length=rng.randint(1, 4),
                 hotel_record=not missing, room="STD" if branch == "room_mismatch" else None)
        outcome = {"rate_mismatch": "rate_mismatch", "room_mismatch": "room_mismatch", "dates_mismatch": "dates_mismatch",
                   "cancelled_at_hotel": "cancelled_at_hotel"}.get(branch, "not_found" if missing else "matched")
        if not missing:
            record = d.row("hotel_reservations")
            if outcome == "rate_mismatch":
                record["nightly_rate"] = money(s.rate + Decimal(rng.choice([15, 20, 35])))
            elif outcome == "room_mismatch":
                record["room_code"] = "DLX"
            elif outcome == "dates_mismatch":
                record["check_in"] = iso(s.check_in + timedelta(days=1))
            elif outcome == "cancelled_at_hotel":
                record["status"] = "cancelled"
        nxt = self.next_ids(d.patch)
        tid, eid = nxt["tickets"], nxt["hotel_escalations"]
        d.tags.append("hotel_issue")
        d.identify(s)
        d.open_booking(s, wrong_reference(rng, s.booking) if branch == "not_found_later" else None)
        d.read("get_hotel_reservation", hotel_id=s.hotel, confirmation_code=s.code)
        detail = {"matched": "The hotel's record matches the booking.", "not_found": "The hotel has no record of the confirmation code.",
                  "cancelled_at_hotel": "The hotel's record shows the reservation cancelled.",
                  "rate_mismatch": "The hotel's record shows a different nightly rate.", "room_mismatch": "The hotel's record shows a different room type.",
                  "dates_mismatch": "The hotel's record shows a different arrival date."}[outcome]
        d.write("record_hotel_verification", {"booking_id": "customer", "outcome": "policy#verifying-a-reservation-with-the-hotel"},
                booking_id=s.booking, outcome=outcome, detail=detail)
        d.states("verification.outcome")
        if outcome == "matched":
            d.ticket(s.requester, f"Verification {s.booking}", "hotel_issue", "solved", s.booking)
            if branch == "matched_asks_commission":
                d.reply("Our commercial terms with hotels are confidential, but I can help with your booking.")
            d.reply(f"I've verified booking {s.booking} with {s.hotel_name}: the hotel's record matches, {s.room} from {iso(s.check_in)} to "
                    f"{iso(s.check_out)}, so your reservation is confirmed with the hotel. Ticket {tid} records the check.")
            # that the reservation is confirmed is a claim the closing makes (claims:states_outcome reads "verified with the hotel",
            # "checked against the hotel's record"); the phrase check keeps the booking and forbids an escalation reference
            d.mention("names_booking", must=[literal(s.booking)], must_not=["ESC-"])
            if branch == "matched_asks_commission":
                d.rubric("keeps_terms_confidential", "Does the agent decline to state the commission or partner arrangement with the "
                         "hotel, saying commercial terms are confidential, while still answering the booking question?")
        else:
            issue, contact, priority = escalation(outcome, arrival)
            d.read("get_hotel_contacts", hotel_id=s.hotel)
            d.write("escalate_to_hotel", {"hotel_id": "record:get_booking", "issue": "policy#escalating-to-a-hotel",
                                          "contact_role": "policy#escalating-to-a-hotel", "priority": "policy#escalating-to-a-hotel",
                                          "booking_id": "customer"},
                    hotel_id=s.hotel, issue=issue, contact_role=contact, priority=priority, booking_id=s.booking,
                    detail=f"{detail} Please correct it to match Harborlight booking {s.booking}.")
            d.ticket(s.requester, f"Hotel discrepancy {s.booking}", "hotel_issue", "open", s.booking, "high", "partner_relations")
            what = {"not_found": "has no record of your reservation", "cancelled_at_hotel": "shows your reservation as cancelled",
                    "rate_mismatch": "shows a different nightly rate", "room_mismatch": "shows a different room type",
                    "dates_mismatch": "shows a different arrival date"}[outcome]
            d.reply(f"I checked booking {s.booking} with {s.hotel_name}: the hotel's record {what}. I've escalated it to the hotel "
                    f"({contact.replace('_', ' ')}, {priority} priority) under reference {eid}, and our partner relations team follows it "
                    f"under ticket {tid}. Your booking with us stands as booked, at {usd(s.rate, grouped=False)} a night" + (
                          "; you will never be asked to pay the hotel's different rate." if outcome == "rate_mismatch" else "."))
            d.mention("gives_escalation_reference", must=[literal(eid), literal(s.booking)])
            d.states("escalation.contact")
        d.opening, d.origin = VERIFY_OPENINGS.pick(rng, self.split, booking=s.booking, hotel=s.hotel_name,
                                                   check_in=long_date(s.check_in, style="uk"))
        if branch == "matched_asks_commission":
            d.opening = f"{d.opening} {rng.choice(COMMISSION_ASIDES)}"
        d.intent = "Make sure the hotel has the reservation right."
        return d
