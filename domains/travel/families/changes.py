"""Booking changes: individual and corporate stays moved to other dates or another room type."""

from __future__ import annotations

import random
from datetime import timedelta
from decimal import Decimal
from typing import Any

from thinkingbox_env.authoring import Openings
from thinkingbox_env.authoring.saying import iso, literal, long_date, usd

from ..rules import CORPORATE_RATES, SAME_DAY_CHANGE_FEE, nights, public_rate
from ._base import TravelFamily
from ._draft import TravelDraft
from ._stay import Stay, stay, wrong_reference

# {topic} is what the customer wants changed, true to the branch: "change the dates" or "change the room"
CHANGE_OPENINGS = Openings("TR001", {
    "plain": "Hello, I need to {topic} on my hotel booking.",
    "upfront_id": "Hi, booking {booking} - can I {topic}? My plans have moved.",
    "upset": "Plans changed at the last minute and my hotel booking no longer suits me. I need to {topic}.",
    "prefers": "I'd like to {topic} on my reservation at {hotel}, ideally without paying much more.",
    "vague": "Hi, something about my stay needs to change.",
    "two_facts": "Hello, this is about my stay at {hotel} from {check_in}: I'd like to {topic}.",
    "vague_b": "Hey, quick question about a reservation I made with you.",
    "upset_b": "I've been going back and forth with my travel plans all week, please tell me you can {topic} on my hotel booking.",
    "id_and_hotel": "Reservation {booking} at {hotel} - is it possible to {topic}?",
    "date_first": "I'm due at {hotel} on {check_in} and would need to {topic}. Can you help?",
    "polite_long": "Good morning. I have a booking with you at {hotel} and I was hoping to {topic}. What are my options?",
}, held_out=("vague_b", "upset_b", "id_and_hotel", "date_first", "polite_long"))



class ChangeMixin(TravelFamily):
    """The change conversation shared by individual and corporate bookings."""

    def change_request(self, d: TravelDraft, s: Stay, want: str, *, fee: Decimal, new_rate: Decimal,
                       decline: bool = False, full_night: Any = None, dispute: bool = False, wrong: str | None = None,
                       account: str | None = None) -> None:
        """``want`` is extend, earlier, upgrade, shorten; ``account`` adds the corporate reads."""
        d.identify(s)
        d.open_booking(s, wrong)
        if account is not None:
            d.read("get_corporate_account", account_id=account)
            d.read("get_corporate_rates", account_id=account, hotel_id=s.hotel)
        new_in, new_out, room = s.check_in, s.check_out, s.room
        if want == "extend":
            new_out = s.check_out + timedelta(days=1)
        elif want == "earlier":
            new_in = s.check_in - timedelta(days=1)
        elif want == "shorten":
            new_out = s.check_out - timedelta(days=1)
        elif want == "upgrade":
            room = "DLX" if s.room == "STD" else "STE"
        if want == "upgrade":
            d.fact(f"I'd like to move to a {'Deluxe King' if room == 'DLX' else 'Junior Suite'} ({room}) for the same dates.", "room_type",
                   ["room", "room type"], value=room)
            d.ask("Which room type would you like instead?")
        else:
            d.fact(f"The new dates would be check-in {iso(new_in)} and check-out {iso(new_out)}.", "stay_dates", ["dates", "check-in", "check-out"])
            d.ask("What are the new check-in and check-out dates you would like?")
        new_total = new_rate * nights(new_in, new_out)
        diff = new_total - s.total
        if dispute:
            d.read("get_payments", booking_id=s.booking)
            d.ticket(s.requester, f"Change {s.booking} - open card dispute", "booking_change", "open", s.booking, "high", "payments")
            return
        d.read("get_payments", booking_id=s.booking)
        d.read("check_availability", hotel_id=s.hotel, room_code=room, check_in=iso(new_in), check_out=iso(new_out))
        if full_night is not None:
            d.inform(f"I'm sorry: the {room} rooms at {s.hotel_name} are fully booked on {iso(full_night)}, so the stay cannot be "
                     "changed to those dates. Would other dates suit you?")
            return
        amounts = []
        if diff > 0:
            amounts.append(f"charge {usd(diff, grouped=False)} (the price difference) to your {s.brand} card ending {s.last4}")
        elif diff < 0:
            amounts.append(f"refund {usd(-diff, grouped=False)} (the price difference) to your {s.brand} card ending {s.last4}")
        if fee > 0:
            amounts.append(f"charge the same-day change fee of {usd(fee, grouped=False)} to the same card")
        plan = (f"I can change booking {s.booking} to {room} from {iso(new_in)} to {iso(new_out)}; the new total is "
                f"{usd(new_total, grouped=False)}" + (", and I would " + " and ".join(amounts) if amounts else ", with nothing to pay")
                + ". Shall I go ahead?")
        d.propose(plan)
        if decline:
            d.decide(["charge", "change"], "refuse", reason="That's more than I want to pay; I'll keep the booking as it is.")
            return
        d.decide(["charge", "change", "refund"], "accept")
        why_dates = "customer" if want != "upgrade" else "record:get_booking"
        d.write("modify_booking", {"booking_id": "customer", "check_in": why_dates, "check_out": why_dates,
                                   "room_code": "customer" if want == "upgrade" else "record:get_booking",
                                   "change_fee": "policy#advance-and-same-day-modifications"},
                idempotent="the second identical change is refused as nothing to change",
                booking_id=s.booking, check_in=iso(new_in), check_out=iso(new_out), room_code=room, change_fee=float(fee))
        if diff > 0:
            d.write("charge_payment", {"payment_method_id": "record:get_payments", "amount": "policy#price-differences",
                                       "purpose": "policy#price-differences", "booking_id": "customer"},
                    payment_method_id=s.method, amount=float(diff), purpose="price_difference", booking_id=s.booking)
        elif diff < 0:
            d.write("issue_refund", {"payment_id": "record:get_payments", "amount": "policy#price-differences", "reason": "policy#price-differences"},
                    payment_id=s.payment, amount=float(-diff), reason="price_difference")
        if fee > 0:
            d.write("charge_payment", {"payment_method_id": "record:get_payments", "amount": "policy#advance-and-same-day-modifications",
                                       "purpose": "policy#advance-and-same-day-modifications", "booking_id": "customer"},
                    payment_method_id=s.method, amount=float(fee), purpose="change_fee", booking_id=s.booking)

    def change_task(self, d: TravelDraft, rng: random.Random, s: Stay, want: str, fee: Decimal, new_rate: Decimal,
                    openings: Openings, *, decline: bool = False, full_night: Any = None, dispute: bool = False,
                    saver: bool = False, wrong: str | None = None, account: str | None = None) -> TravelDraft:
        """The change the customer asks for on ``s``, written on ``d``: refused, escalated, waiting, declined or made."""
        tid = self.next_ids(d.patch)["tickets"]
        if saver:
            d.identify(s)
            d.open_booking(s, wrong)
            d.fact(f"I'd like to arrive a day later, on {iso(s.check_in + timedelta(days=1))}.", "stay_dates", ["dates", "arrive", "check-in"])
            d.ticket(s.requester, f"Change request {s.booking} (saver rate)", "booking_change", "solved", s.booking)
            d.reply(f"Booking {s.booking} is on a saver rate, so I can't change its dates: it was sold on the condition that the dates and "
                    f"room stay as booked, even for a fee. The booking stays as it is; you're free to make a new booking at today's prices "
                    f"if your plans have changed. Ticket {tid} records this.")
            # the refusal is a claim the closing makes (claims:states_outcome), whatever words say it
            d.mention("names_booking", must=[literal(s.booking)], must_not=["is now (a |from)"])
        elif dispute:
            self.change_request(d, s, want, fee=fee, new_rate=new_rate, dispute=True, wrong=wrong, account=account)
            d.reply(f"Booking {s.booking} has an open card dispute with your bank on its payment, so while the bank's process runs I "
                    f"can't change the stay or move any money on it. I've handed the case to our payments team under ticket {tid}; "
                    "they will contact you once the dispute is settled.")
            d.mention("no_change_while_disputed", must=["dispute", "payments team"], must_not=["refunded to", "is now (a |from)"])
            d.states("handled_by")
        elif full_night is not None:
            self.change_request(d, s, want, fee=fee, new_rate=new_rate, full_night=full_night, wrong=wrong, account=account)
            d.fact("I can only travel on those dates; I'll check with my colleagues and come back to you.", "fact:other_dates",
                   ["other dates", "other date", "different dates"])
            d.ticket(s.requester, f"Change {s.booking} - dates full", "booking_change", "pending", s.booking)
            d.reply(f"Ticket {tid} is pending for booking {s.booking}: the {s.room} rooms at {s.hotel_name} are fully booked on "
                    f"{iso(full_night)}, so the booking cannot be changed to those dates and stays as it is for now. Tell us other dates "
                    "when you have them and we'll check again.")
            d.mention("states_full_night", must=[literal(iso(full_night))], must_not=["is now (a |from)"])
        else:
            self.change_request(d, s, want, fee=fee, new_rate=new_rate, decline=decline, wrong=wrong, account=account)
            new_in, new_out = s.check_in, s.check_out
            if want == "extend":
                new_out += timedelta(days=1)
            elif want == "earlier":
                new_in -= timedelta(days=1)
            elif want == "shorten":
                new_out -= timedelta(days=1)
            diff = new_rate * nights(new_in, new_out) - s.total
            if decline:
                d.ticket(s.requester, f"Change quote {s.booking}", "booking_change", "solved", s.booking)
                d.reply(f"Understood: booking {s.booking} stays exactly as it is and nothing was charged. Ticket {tid} records the quote.")
                d.mention("nothing_charged", must=[literal(s.booking)],
                          must_not=["is now (a |from)", "charged " + literal(usd(diff, grouped=False))])
            else:
                d.ticket(s.requester, f"Change {s.booking}", "booking_change", "solved", s.booking)
                new_room = ("a " + ("Deluxe King" if s.room == "STD" else "Junior Suite") + " ") if want == "upgrade" else ""
                d.reply(f"Booking {s.booking} is now {new_room}from {long_date(new_in, style='uk')} ({iso(new_in)}) to "
                        f"{long_date(new_out, style='uk')} ({iso(new_out)}), new total {usd(s.total + diff, grouped=False)}.")
                if diff > 0:
                    d.reply(f"I charged the price difference of {usd(diff, grouped=False)} to your {s.brand} card ending {s.last4}.")
                elif diff < 0:
                    d.reply(f"The price difference of {usd(-diff, grouped=False)} is refunded to your {s.brand} card ending {s.last4} "
                            "within 5 to 10 business days.")
                if fee > 0:
                    d.reply(f"The same-day change fee of {usd(fee, grouped=False)} was charged separately.")
                elif s.check_in <= self.now.date():
                    d.reply("No same-day change fee applies to you.")
                d.reply(f"Ticket {tid} records the change.")
                amounts = [usd(abs(diff), grouped=False)] + ([usd(fee, grouped=False)] if fee > 0 else [])
                d.mention("states_amounts", must=[literal(amount) for amount in amounts])
                d.mention("names_booking", must=[literal(s.booking)])
        d.tags.append("booking_change")
        topic = "change the room" if want == "upgrade" and not saver else "change the dates"
        d.opening, d.origin = openings.pick(rng, self.split, booking=d.given_booking(s), hotel=s.hotel_name,
                                            check_in=long_date(s.check_in, style="uk"), topic=topic)
        d.intent = "Change the booking's room." if topic == "change the room" else "Change the booking's dates."
        return d


class IndividualChange(ChangeMixin):
    code = "TR001"
    name = "individual_booking_change"
    number = 1
    description = "An individual guest changes dates or room: advance changes free, same-day fee unless gold/platinum, saver refused, full nights, declined quotes, disputes escalated."
    branches = ("advance_extend", "advance_upgrade", "same_day_fee", "same_day_waived", "shorten_refund", "refuse_saver",
                "wait_full", "decline_price", "escalate_dispute", "earlier_misremembered")

    def compose(self, rng: random.Random, seed: int) -> TravelDraft:
        branch = self.branch(seed)
        uid = self.ids(seed)
        d = self.draft()
        same_day = branch in ("same_day_fee", "same_day_waived")
        tier = rng.choice(["gold", "platinum"]) if branch == "same_day_waived" else rng.choice(["member", "silver"])
        arrival = 0 if same_day else rng.randint(4, 40)
        # a declined quote is never written, so its amounts must be grounded by the rates read: one night
        length = rng.randint(3, 4) if branch == "shorten_refund" else 1 if branch == "decline_price" else rng.randint(1, 3)
        s = stay(rng, d, uid, tier=tier, arrival=arrival, length=length,
                 rate_type="saver" if branch == "refuse_saver" else "flexible",
                 room="STD" if branch in ("advance_upgrade", "decline_price") else None)
        want = {"advance_upgrade": "upgrade", "decline_price": "upgrade", "shorten_refund": "shorten", "escalate_dispute": "shorten",
                "earlier_misremembered": "earlier"}.get(branch, "extend")
        fee = SAME_DAY_CHANGE_FEE if branch == "same_day_fee" else Decimal("0")
        new_rate = public_rate(s.hotel, "DLX" if s.room == "STD" else "STE", "flexible") if want == "upgrade" else s.rate
        full = None
        if branch == "wait_full":
            full = s.check_out
            d.add("room_inventory", {"hotel_id": s.hotel, "room_code": s.room, "stay_date": iso(full), "rooms_left": 0})
        if branch == "escalate_dispute":
            d.add("disputes", {"id": f"DSP-{uid}", "payment_id": s.payment, "reason": "customer says the stay is shorter",
                               "status": "open", "opened_on": iso(self.now.date() - timedelta(days=2))})
        wrong = wrong_reference(rng, s.booking) if branch == "earlier_misremembered" else None
        return self.change_task(d, rng, s, want, fee, new_rate, CHANGE_OPENINGS, decline=branch == "decline_price",
                                full_night=full, dispute=branch == "escalate_dispute", saver=branch == "refuse_saver", wrong=wrong)


CORPORATE_OPENINGS = Openings("TR002", {
    "plain": "Hi, I'm travelling for work and need to {topic} on my company hotel booking.",
    "upfront_id": "Booking {booking} is on our company account - I need to {topic}.",
    "upset": "My meeting got moved again and my work hotel no longer fits. I need to {topic}.",
    "prefers": "Hello, my business trip to {hotel} changed; I'd like to {topic} and keep the company rate if possible.",
    "vague": "Hello, it's about a work trip.",
    "two_facts": "My company booked me into {hotel} from {check_in}, and I need to {topic}.",
    "vague_b": "Hi there, I have a question on a business booking.",
    "upset_b": "Third change of plans this week. Please, I just need to {topic} on my work hotel.",
    "id_and_hotel": "Company booking {booking} at {hotel}: could I {topic}?",
    "date_first": "I'm at {hotel} for work from {check_in} and have to {topic}. What can you do?",
    "polite_long": "Good afternoon. I'm on a business trip booked through our corporate account at {hotel}, and I would like to {topic}.",
}, held_out=("vague_b", "upset_b", "id_and_hotel", "date_first", "polite_long"))

# a private booking the traveller wants on the company's rate: openings that ask for exactly that
REPRICE_OPENINGS = Openings("TR002", {
    "reprice_plain": "Hi, I booked a hotel for a work trip myself; can it go on my company's rate?",
    "reprice_upfront_id": "Booking {booking}: I'm travelling for work, could you switch it to our corporate rate?",
    "reprice_upset": "I only just found out my company has a negotiated rate and I paid the public price for {hotel}. Can you fix that?",
    "reprice_prefers": "My stay at {hotel} is for business, so I'd like the company rate applied to it.",
    "reprice_vague": "Hello, a question about the rate on a business trip.",
    "reprice_two_facts": "I'm at {hotel} from {check_in} for work and booked it myself. Can you reprice it to our corporate rate?",
    "reprice_id_and_hotel": "Can booking {booking} at {hotel} be moved onto my employer's negotiated rate?",
    "reprice_date_first": "Arriving at {hotel} on {check_in} for my company. I booked it privately - can I still get the corporate price?",
    "reprice_polite_long": "Good afternoon. My company has an account with you, and I'd like my own booking at {hotel} to be charged at that rate instead.",
}, held_out=("reprice_id_and_hotel", "reprice_date_first", "reprice_polite_long"))



class CorporateChange(ChangeMixin):
    code = "TR002"
    name = "corporate_booking_change"
    number = 2
    description = ("A corporate traveller changes a company booking: negotiated rate for a new room, the no_change_fees benefit, "
                   "private bookings never repriced to the corporate rate, full nights, declined quotes, disputes escalated.")
    branches = ("corp_upgrade", "corp_extend", "corp_same_day_waived", "corp_same_day_fee", "corp_shorten_refund",
                "refuse_private_reprice", "corp_wait_full", "corp_decline", "corp_escalate_dispute")

    def compose(self, rng: random.Random, seed: int) -> TravelDraft:
        branch = self.branch(seed)
        uid = self.ids(seed)
        d = self.draft()
        account = {"corp_same_day_waived": rng.choice(["CORP-201", "CORP-203"]), "corp_same_day_fee": "CORP-202"}.get(
            branch, rng.choice(["CORP-201", "CORP-202", "CORP-203"]))
        same_day = branch in ("corp_same_day_waived", "corp_same_day_fee")
        room = "STD" if branch in ("corp_upgrade", "corp_decline") else rng.choice(["STD", "DLX"])
        hotel = rng.choice(sorted({h for (_, h, _) in CORPORATE_RATES}))
        private = branch == "refuse_private_reprice"
        length = rng.randint(3, 4) if branch == "corp_shorten_refund" else 1 if branch == "corp_decline" else rng.randint(1, 3)
        s = stay(rng, d, uid, tier=rng.choice(["member", "silver"]), arrival=0 if same_day else rng.randint(4, 30), length=length,
                 rate_type="flexible" if private else "corporate", room=room, hotel=hotel,
                 corporate=None if private else account, rate=None if private else CORPORATE_RATES[(account, hotel, room)])
        d.row("customers")["corporate_account_id"] = account
        tid = self.next_ids(d.patch)["tickets"]
        if private:
            d.identify(s)
            d.open_booking(s)
            d.read("get_corporate_account", account_id=account)
            d.ticket(s.requester, f"Corporate rate request {s.booking}", "corporate", "solved", s.booking)
            d.reply(f"Booking {s.booking} was made privately at the flexible rate of {usd(s.rate, grouped=False)} a night, not on your "
                    f"company's account, so it cannot be repriced to the corporate rate; your company books through its own account. The "
                    f"booking stays as it is. Ticket {tid} records your request.")
            # no claim names a repricing, so the judge reads the refusal; the check keeps the booking and forbids the wrong outcome
            d.mention("names_booking", must=[literal(s.booking)], must_not=["now at the corporate rate"])
            d.mention("keeps_the_booking", must=["stays|remains|unchanged|(nothing|not) (has been |was |is )?changed|as (it is|it was|booked)"])
            d.tags.append("booking_change")
            d.opening, d.origin = REPRICE_OPENINGS.pick(rng, self.split, booking=s.booking, hotel=s.hotel_name,
                                                        check_in=long_date(s.check_in, style="uk"))
            d.intent = "Get the company rate on the booking."
            return d
        want = {"corp_upgrade": "upgrade", "corp_decline": "upgrade", "corp_shorten_refund": "shorten", "corp_escalate_dispute": "shorten"}.get(branch, "extend")
        fee = SAME_DAY_CHANGE_FEE if branch == "corp_same_day_fee" else Decimal("0")
        new_room = ("DLX" if room == "STD" else "STE") if want == "upgrade" else room
        new_rate = CORPORATE_RATES[(account, hotel, new_room)] if want == "upgrade" else s.rate
        full = None
        if branch == "corp_wait_full":
            full = s.check_out
            d.add("room_inventory", {"hotel_id": s.hotel, "room_code": s.room, "stay_date": iso(full), "rooms_left": 0})
        if branch == "corp_escalate_dispute":
            d.add("disputes", {"id": f"DSP-{uid}", "payment_id": s.payment, "reason": "duplicate billing claimed",
                               "status": "open", "opened_on": iso(self.now.date() - timedelta(days=3))})
        return self.change_task(d, rng, s, want, fee, new_rate, CORPORATE_OPENINGS, decline=branch == "corp_decline",
                                full_night=full, dispute=branch == "corp_escalate_dispute", account=account)
