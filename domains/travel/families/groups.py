"""Group blocks: moving a whole block, group services and their billing, who may ask."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal

from thinkingbox_env.authoring import Openings
from thinkingbox_env.authoring.saying import iso, literal, long_date, usd

from ..rules import GROUP_LATE_CHANGE_FEE, HOTELS, SERVICES, TODAY, base_rate, cents, money
from ._base import TravelFamily
from ._draft import TravelDraft
from ._stay import HOTEL_IDS, customer

GROUP_NAMES = ["Kestrel Choir tour", "Ostrava Nova chess open", "Marrowland beekeepers' weekend", "Eastvale alumni reunion",
               "Hollin Cross cycling club", "Port Aldwin book fair team", "Seravian film society retreat", "Caldera Sands wedding party"]


@dataclass
class Block:
    """A group block and its organiser, as the task starts."""

    group: str
    name: str
    hotel: str
    check_in: date
    check_out: date
    rooms: list[str]  # room codes, one per confirmed booking
    guests: int
    billing: str
    method: str
    organiser: str
    email: str
    requester: int
    caller: str
    caller_email: str
    caller_requester: int

    @property
    def codes(self) -> list[str]:
        return sorted(set(self.rooms))


def block(rng: random.Random, d: TravelDraft, uid: int, arrival: int, *, guest_calls: bool = False, billing: str | None = None) -> Block:
    """A group block at one hotel with its organiser (and, when ``guest_calls``, a guest of the block who calls instead)."""
    oid, oname, oemail, oreq = customer(rng, d, uid, rng.choice(["member", "silver", "gold"]))
    hotel = rng.choice(HOTEL_IDS)
    check_in = TODAY + timedelta(days=arrival)
    check_out = check_in + timedelta(days=rng.randint(2, 3))
    group = f"GRP-{uid}"
    billing = billing or rng.choice(["master_account", "individual"])
    method = f"PM-{uid}"
    d.add("payment_methods", {"id": method, "customer_id": oid, "brand": rng.choice(["visa", "mastercard"]),
                              "last4": f"{rng.randint(1000, 9999)}", "expires": "2029-06", "status": "active",
                              "created_at": "2025-08-14 10:00:00"})
    d.add("groups", {"id": group, "name": rng.choice(GROUP_NAMES), "organizer_id": oid, "hotel_id": hotel,
                     "check_in": iso(check_in), "check_out": iso(check_out), "billing": billing,
                     "payment_method_id": method, "status": "confirmed"})
    count = rng.randint(3, 7)
    rooms = [rng.choice(["STD", "STD", "DLX"]) for _ in range(count)]
    n = (check_out - check_in).days
    for k, code in enumerate(rooms):
        rate = cents(base_rate(hotel, code) * Decimal("0.9"))
        d.add("bookings", {"id": f"BK-{uid}{k}", "customer_id": oid, "hotel_id": hotel, "room_code": code,
                           "confirmation_code": f"HC-{hotel[-1]}{uid}{k}", "check_in": iso(check_in), "check_out": iso(check_out),
                           "guests": 2, "rate_type": "group", "nightly_rate": money(rate), "total": money(rate * n),
                           "status": "confirmed", "group_id": group, "corporate_account_id": None,
                           "created_at": "2026-02-02 10:00:00", "cancelled_at": None})
    caller, cemail, creq = oid, oemail, oreq
    if guest_calls:
        caller, _, cemail, creq = customer(rng, d, uid + 7, "member")
    return Block(group, HOTELS[hotel]["name"], hotel, check_in, check_out, rooms, 2 * count, billing, method, oid, oemail, oreq,
                 caller, cemail, creq)


def identify_caller(d: TravelDraft, b: Block) -> None:
    """The caller's profile, ticketing user and tickets, then the group they name."""
    d.email_fact(b.caller_email)
    d.ask("I can help with the group. What is the email address on your Harborlight account?")
    d.read("get_customer_profile", email=b.caller_email)
    d.read("search_tickets", table="users", filter=f"email eq '{b.caller_email}'")
    d.read("search_tickets", table="tickets", filter=f"requester_id eq {b.caller_requester}")
    d.fact(f"The group reference is {b.group}.", "group_reference", ["group", "group reference"], value=b.group)
    d.ask("What is the group reference?")
    d.read("get_group", group_id=b.group)


def group_ticket(d: TravelDraft, b: Block, subject: str, status: str, team: str | None = None, priority: str = "normal") -> int:
    """The conversation's ticket, in the group category, for whoever called."""
    return d.ticket(b.caller_requester, subject, "group", status, None, priority, team)


# {topic} is the move asked for, true to the facts: the whole block, or only some of its rooms; the caller may be a guest
GROUP_CHANGE_OPENINGS = Openings("TR003", {
    "plain": "Hello, it's about a group booking: we need to {topic}.",
    "upfront_id": "Hi, group {group} - we need to {topic}, please.",
    "upset": "Our event plans just changed on us and now the group's hotel doesn't fit. We need to {topic}.",
    "prefers": "We'd like to {topic} for our group at {hotel}, hopefully without extra charges.",
    "vague": "Hi, it's about the rooms for our group.",
    "two_facts": "Our group at {hotel} arriving {check_in} needs to {topic}.",
    "vague_b": "Hello, question about a block of rooms.",
    "id_and_hotel": "Group {group} at {hotel}: is it possible to {topic}?",
    "date_first": "We're a group due at {hotel} on {check_in}, and we have to {topic}. What can you do?",
    "polite_long": "Good morning. I'm writing about the group stay at {hotel}; we would need to {topic} and I'd like to know how that works.",
}, held_out=("vague_b", "id_and_hotel", "date_first", "polite_long"))


class GroupChange(TravelFamily):
    code = "TR003"
    name = "group_booking_change"
    number = 3
    description = ("A group's dates move: the whole block together, free from 14 days before arrival, $25 a room from 7 days, "
                   "group sales under 7 days; only the organiser; a partial move refused; full nights; a declined fee.")
    branches = ("move_free", "move_fee", "refuse_not_organiser", "escalate_close", "refuse_partial", "wait_full", "decline_fee")

    def compose(self, rng: random.Random, seed: int) -> TravelDraft:
        branch = self.branch(seed)
        uid = self.ids(seed)
        d = self.draft()
        arrival = {"move_fee": rng.randint(7, 13), "decline_fee": rng.randint(7, 13), "escalate_close": rng.randint(2, 6)}.get(
            branch, rng.randint(14, 60))
        b = block(rng, d, uid, arrival, guest_calls=branch == "refuse_not_organiser")
        shift = rng.randint(1, 3)
        new_in, new_out = b.check_in + timedelta(days=shift), b.check_out + timedelta(days=shift)
        if branch == "wait_full":
            d.add("room_inventory", {"hotel_id": b.hotel, "room_code": b.rooms[0], "stay_date": iso(new_out - timedelta(days=1)),
                                     "rooms_left": 0})
        tid = self.next_ids(d.patch)["tickets"]
        d.tags.append("group")
        identify_caller(d, b)
        dates_fact = f"The whole group would now arrive on {iso(new_in)} and leave on {iso(new_out)}."
        if branch == "refuse_partial":
            d.fact(f"Only two of our rooms need to arrive a day later, on {iso(b.check_in + timedelta(days=1))}; the rest stay as booked.",
                   "stay_dates", ["dates", "which rooms"])
        else:
            d.fact(dates_fact, "stay_dates", ["dates", "arrive", "leave"])
        if branch == "refuse_not_organiser":
            group_ticket(d, b, f"Group {b.group} change request from a guest", "solved")
            d.reply(f"Only the organiser of group {b.group} can change the group's dates, so I can't make this change for you. Please ask "
                    f"the organiser to contact us. Nothing was changed; ticket {tid} records your request.")
            d.mention("refers_to_organiser", must=["organiser|organizer"], must_not=["now stays at"])
        elif branch == "refuse_partial":
            d.ask("Which dates would you like for the group?")
            group_ticket(d, b, f"Partial date change {b.group}", "solved")
            d.reply(f"The rooms of group {b.group} move together, so I can't change the dates of only some of them; the block stays from "
                    f"{iso(b.check_in)} to {iso(b.check_out)}. Guests who need to arrive later or leave early can arrange it with the hotel. "
                    f"Ticket {tid} records your request.")
            d.mention("refuses_partial", must=["together|all (of )?(the |your )?rooms|whole (group|block)|entire (group|block)|every room"],
                      must_not=["now stays at"])
        else:
            d.ask("What are the new arrival and departure dates for the group?")
            if branch == "escalate_close":
                group_ticket(d, b, f"Group {b.group} date change under 7 days", "open", "group_sales", "high")
                d.reply(f"Group {b.group} arrives in less than 7 days, so the change of dates is handled by our group sales team: I've "
                        f"passed it to them under ticket {tid}, and they will contact you about {iso(new_in)} to {iso(new_out)}. Nothing is "
                        "changed yet.")
                d.mention("hands_to_group_sales", must=["group sales"], must_not=["now stays at"])
                d.states("handled_by")
            else:
                for code in b.codes:
                    d.read("check_availability", hotel_id=b.hotel, room_code=code, check_in=iso(new_in), check_out=iso(new_out))
                if branch == "wait_full":
                    full = new_out - timedelta(days=1)
                    d.inform(f"I'm sorry: there are not enough {b.rooms[0]} rooms at {b.name} on {iso(full)}, so the group can't move to "
                             "those dates. Would other dates work for the group?")
                    d.fact("We can only do those dates; I'll talk to the venue and get back to you.", "fact:other_dates",
                           ["other dates", "other date", "different dates"])
                    group_ticket(d, b, f"Group {b.group} dates full", "pending")
                    d.reply(f"Ticket {tid} is pending for group {b.group}: the hotel is full for part of the block on {iso(full)}, so the "
                            "group stays on its current dates for now. Send us other dates when you have them.")
                    d.mention("states_full_night", must=[literal(iso(full))], must_not=["now stays at"])
                else:
                    fee = GROUP_LATE_CHANGE_FEE * len(b.rooms) if branch in ("move_fee", "decline_fee") else Decimal("0")
                    # a declined quote is never written, so it is stated as the policy's unit price and the count it applies to
                    charge = ((f", and charge the change fee of $25.00 a room for {len(b.rooms)} rooms to the group's card"
                               if branch == "decline_fee" else
                               f", and charge the change fee of {usd(fee, grouped=False)} ({len(b.rooms)} rooms at $25.00) to the group's card")
                              if fee else ", with no fee")
                    d.propose(f"I can move group {b.group} to {iso(new_in)} - {iso(new_out)}: all {len(b.rooms)} rooms move together{charge}. "
                              "Room charges stay on the final group invoice. Shall I go ahead?")
                    if branch == "decline_fee":
                        d.decide(["move", "fee", "charge"], "refuse", reason="We won't pay a fee for this; we'll keep our dates.")
                        group_ticket(d, b, f"Group {b.group} change quote", "solved")
                        d.reply(f"Understood: group {b.group} keeps its dates, {iso(b.check_in)} to {iso(b.check_out)}, and nothing was "
                                f"charged. Ticket {tid} records the quote.")
                        d.mention("keeps_dates", must=[literal(b.group)],
                                  must_not=["now stays at", "charged " + literal(usd(fee, grouped=False))])
                    else:
                        d.decide(["move", "fee", "charge"], "accept")
                        d.write("change_group_dates", {"group_id": "customer", "check_in": "customer", "check_out": "customer",
                                                       "change_fee": "policy#group-changes"},
                                idempotent="moving the group to its current dates again is refused",
                                group_id=b.group, check_in=iso(new_in), check_out=iso(new_out), change_fee=float(fee))
                        if fee:
                            d.write("charge_payment", {"payment_method_id": "record:get_group", "amount": "policy#group-changes",
                                                       "purpose": "policy#group-changes", "group_id": "customer"},
                                    payment_method_id=b.method, amount=float(fee), purpose="change_fee", group_id=b.group)
                        group_ticket(d, b, f"Group {b.group} new dates", "solved")
                        paid = (f"The change fee of {usd(fee, grouped=False)} ({len(b.rooms)} rooms) is charged to the group's card." if fee
                                else "There is no fee, as the change is 14 or more days before arrival.")
                        d.reply(f"Group {b.group} now stays at {b.name} from {long_date(new_in, style='uk')} ({iso(new_in)}) to "
                                f"{long_date(new_out, style='uk')} ({iso(new_out)}): all {len(b.rooms)} rooms moved together. {paid} "
                                f"Ticket {tid} records the change.")
                        d.mention("states_new_dates",
                                  must=[literal(iso(new_in)), literal(iso(new_out))] + ([literal(usd(fee, grouped=False))] if fee else []))
        topic = "move some of our rooms to other dates" if branch == "refuse_partial" else "move our dates"
        d.opening, d.origin = GROUP_CHANGE_OPENINGS.pick(rng, self.split, group=b.group, hotel=b.name,
                                                         check_in=long_date(b.check_in, style="uk"), topic=topic)
        d.intent = "Move the group's stay to new dates."
        return d


# {service} comes with its article ("a welcome dinner", "coffee breaks"); the caller may be a guest of the block
SERVICE_OPENINGS = Openings("TR004", {
    "plain": "Hello, I'd like to add a service to our group booking.",
    "upfront_id": "Hi, for group {group} we want to book something extra.",
    "upset": "Our group trip is coming up and nothing extra is arranged yet. I need {service} sorted out.",
    "prefers": "We're coming to {hotel} as a group and would love {service} if the price is reasonable.",
    "vague": "Hi, I have a question about extras for a group.",
    "two_facts": "Our group at {hotel} from {check_in} needs {service}.",
    "vague_b": "Hello, can you help me plan something for our group stay?",
    "id_and_service": "Group {group}: could we add {service} at {hotel}?",
    "date_first": "We arrive at {hotel} on {check_in} as a group - is {service} something you can book for us?",
    "polite_long": "Good afternoon. I'm writing on behalf of our group at {hotel}; we would like to arrange {service} during the stay.",
}, held_out=("vague_b", "id_and_service", "date_first", "polite_long"))

def with_article(word: str) -> str:
    """A service as a customer names it in a sentence: "a welcome dinner", "an airport shuttle", "coffee breaks"."""
    if word.endswith("s"):
        return word
    return f"{'an' if word[0] in 'aeiou' else 'a'} {word}"


SERVICE_WORDS = {"welcome_dinner": "welcome dinner", "meeting_room": "meeting room", "group_shuttle": "airport shuttle",
                 "coffee_breaks": "coffee breaks"}


class GroupServices(TravelFamily):
    code = "TR004"
    name = "group_services_and_billing"
    number = 4
    description = ("An organiser books group services: catalogue price times quantity, charged to the group's card whatever the room "
                   "billing; short notice escalated to the hotel; dates outside the stay and non-organisers refused; a declined price.")
    branches = ("book_dinner", "book_meeting_room", "book_individual_billing", "escalate_short_notice", "refuse_outside_stay",
                "refuse_not_organiser", "decline_amount")

    def compose(self, rng: random.Random, seed: int) -> TravelDraft:
        branch = self.branch(seed)
        uid = self.ids(seed)
        d = self.draft()
        arrival = rng.randint(0, 1) if branch == "escalate_short_notice" else rng.randint(5, 50)
        b = block(rng, d, uid, arrival, guest_calls=branch == "refuse_not_organiser",
                  billing="individual" if branch == "book_individual_billing" else None)
        code = {"book_meeting_room": "meeting_room", "book_individual_billing": "coffee_breaks"}.get(
            branch, rng.choice(["welcome_dinner", "group_shuttle"]))
        word = SERVICE_WORDS[code]
        day = b.check_out + timedelta(days=1) if branch == "refuse_outside_stay" else b.check_in + timedelta(days=rng.randint(0, 1))
        quantity = rng.randint(1, 2) if code == "meeting_room" else rng.randint(max(4, b.guests - 4), b.guests)
        amount = Decimal(SERVICES[code]["price"]) * quantity
        tid = self.next_ids(d.patch)["tickets"]
        d.tags.append("group")
        identify_caller(d, b)
        unit = "days" if code == "meeting_room" else "guests"
        d.fact(f"We'd like the {word} on {iso(day)} for {quantity} {unit}.", "service_date", ["which day", "how many", "date", "guests"])
        if branch == "refuse_not_organiser":
            group_ticket(d, b, f"Group service request {b.group} from a guest", "solved")
            d.reply(f"Only the organiser of group {b.group} can book services for the group, so I can't add the {word} for you. Please ask "
                    f"the organiser to contact us. Ticket {tid} records your request.")
            d.mention("refers_to_organiser", must=["organiser|organizer"], must_not=["is booked on"])
        else:
            d.ask(f"On which day would you like the {word}, and for how many {unit}?")
            if branch == "refuse_outside_stay":
                group_ticket(d, b, f"Group service outside the stay {b.group}", "solved")
                d.reply(f"Group {b.group} stays from {iso(b.check_in)} to {iso(b.check_out)}, and a group service must fall within the stay, "
                        f"so the {word} on {iso(day)} can't be booked through us. Ticket {tid} records your request.")
                d.mention("refuses_outside_stay", must=[literal(iso(b.check_out))], must_not=["is booked on", "was charged to"])
            elif branch == "escalate_short_notice":
                eid = self.next_ids(d.patch)["hotel_escalations"]
                d.read("get_hotel_contacts", hotel_id=b.hotel)
                d.write("escalate_to_hotel", {"hotel_id": "record:get_group", "issue": "policy#group-services-and-billing",
                                              "contact_role": "policy#group-services-and-billing", "priority": "policy#group-services-and-billing"},
                        hotel_id=b.hotel, issue="special_request", contact_role="reservations", priority="high",
                        detail=f"Group {b.group} asks for a {word} on {iso(day)} for {quantity} {unit}; please confirm with the organiser.")
                group_ticket(d, b, f"Group service at short notice {b.group}", "open", "partner_relations", "high")
                d.reply(f"The {word} on {iso(day)} is less than 3 days away, so it can't be booked through us: I've escalated it to the "
                        f"hotel's reservations team (reference {eid}), who will confirm directly with you. Nothing was charged. "
                        f"Ticket {tid} follows it for group {b.group}.")
                d.mention("escalates_to_hotel", must=[literal(eid)], must_not=["is booked on", "charged " + literal(usd(amount, grouped=False))])
                d.states("escalation.contact")
            else:
                d.read("get_service_catalog", kind="group_service")
                total = "" if branch == "decline_amount" else f", {usd(amount, grouped=False)} in total"  # a declined quote is never written
                d.propose(f"I can book the {word} for group {b.group} on {iso(day)}: {quantity} {unit} at "
                          f"{usd(SERVICES[code]['price'], grouped=False)} each{total}, which I would charge to the group's card on file. "
                          "Shall I go ahead?")
                if branch == "decline_amount":
                    d.decide(["book", "charge"], "refuse", reason="That's too expensive for our budget; leave it.")
                    group_ticket(d, b, f"Group service quote {b.group}", "solved")
                    d.reply(f"Understood: nothing is booked or charged for group {b.group}. Ticket {tid} records the quote.")
                    d.mention("nothing_booked", must=[literal(b.group)],
                              must_not=["is booked on", "charged " + literal(usd(amount, grouped=False))])
                else:
                    d.decide(["book", "charge"], "accept")
                    d.write("add_group_service", {"group_id": "customer", "code": "customer", "service_date": "customer", "quantity": "customer"},
                            group_id=b.group, code=code, service_date=iso(day), quantity=quantity)
                    d.write("charge_payment", {"payment_method_id": "record:get_group", "amount": "policy#group-services-and-billing",
                                               "purpose": "policy#group-services-and-billing", "group_id": "customer"},
                            payment_method_id=b.method, amount=float(amount), purpose="group_service", group_id=b.group)
                    group_ticket(d, b, f"Group service {b.group}", "solved")
                    d.reply(f"The {word} for group {b.group} is booked on {iso(day)} for {quantity} {unit}, and "
                            f"{usd(amount, grouped=False)} was charged to the group's card. Ticket {tid} records the booking.")
                    d.mention("states_amount", must=[literal(usd(amount, grouped=False)), literal(iso(day))])
        d.opening, d.origin = SERVICE_OPENINGS.pick(rng, self.split, group=b.group, hotel=b.name, check_in=long_date(b.check_in, style="uk"),
                                                    service=with_article(word))
        d.intent = "Book a service for the group."
        return d
