"""Corporate invoices and account benefits: corrections by the billing contact within 60 days."""

from __future__ import annotations

import random
from datetime import timedelta
from decimal import Decimal

from thinkingbox_env.authoring import Openings
from thinkingbox_env.authoring.saying import iso, literal, ts, usd

from ..rules import TODAY, cents, money, public_rate
from ._base import TravelFamily
from ._draft import TravelDraft
from ._stay import HOTEL_IDS, customer

# the caller may be the billing contact or a traveller, and the wrong line a rate, a booking or a duplicate: none is assumed
INVOICE_OPENINGS = Openings("TR007", {
    "plain": "Hello, one of our company's hotel invoices looks wrong.",
    "upfront_id": "Invoice {invoice} has a line I don't recognise or agree with.",
    "upset": "We are being overcharged on our corporate invoice and I need it corrected today.",
    "prefers": "Could you credit a line on our invoice {invoice}? I don't think we owe it.",
    "vague": "Hi, I have a billing question for a company account.",
    "two_facts": "About our account {account}: the latest invoice doesn't look right.",
    "vague_b": "Hello, I have a query about a company invoice.",
    "upset_b": "Finance is chasing me about your invoice again. Something on it is wrong.",
    "id_and_account": "Account {account}, invoice {invoice}: one of the lines should not be there as it is.",
    "polite_long": "Good morning. I'm writing about invoice {invoice} on our corporate account; a line on it looks wrong to me and I'd like it checked.",
}, held_out=("vague_b", "upset_b", "id_and_account", "polite_long"))

COMPANIES = ["Brackwater Logistics", "Ferrantine Bio", "Oldmere Insurance Brokers", "Halcyon Grid", "Vossberg Acoustics", "Tidewright Ports"]


class CorporateInvoice(TravelFamily):
    code = "TR007"
    name = "corporate_invoice_correction"
    number = 7
    description = ("A corporate billing contact disputes an invoice line: negotiated-rate, wrong-account and duplicate credits within "
                   "60 days; late disputes refused; a traveller who is not the billing contact waits; a suspended account is escalated.")
    branches = ("rate_credit", "not_account_credit", "duplicate_credit", "refuse_late", "wait_traveller", "escalate_suspended",
                "rate_credit_new_contact")

    def compose(self, rng: random.Random, seed: int) -> TravelDraft:
        branch = self.branch(seed)
        uid = self.ids(seed)
        d = self.draft()
        account, invoice = f"CORP-{uid}", f"INV-{uid}"
        company = rng.choice(COMPANIES)
        first = rng.choice(["Maren", "Obadiah", "Lucia", "Tamsin", "Ravi", "Greta"])
        contact_name = f"{first} {rng.choice(['Holt', 'Varga', 'Nwosu', 'Eklund', 'Prieto'])}"
        contact_email = f"billing.{uid}@{company.split()[0].lower()}.example.com"
        hotel = rng.choice(HOTEL_IDS)
        negotiated = {code: cents(public_rate(hotel, code, "flexible") * Decimal("0.82")) for code in ("STD", "DLX")}
        d.add("corporate_accounts", {"id": account, "name": company, "status": "suspended" if branch == "escalate_suspended" else "active",
                                     "billing_contact_email": contact_email, "benefits": rng.choice(["no_change_fees", "breakfast_included", ""]),
                                     "payment_terms_days": 30})
        for code, rate in negotiated.items():
            d.add("corporate_rates", {"account_id": account, "hotel_id": hotel, "room_code": code, "nightly_rate": money(rate),
                                      "valid_to": "2026-12-31"})
        traveller = customer(rng, d, uid, rng.choice(["member", "silver"]), corporate=account,
                             ticket_user=branch == "wait_traveller")
        if branch not in ("wait_traveller", "rate_credit_new_contact"):
            d.add("ticket_users", {"id": uid + 1, "name": contact_name, "email": contact_email, "created_at": "2025-11-11 11:00:00"})
        issued = TODAY - timedelta(days=rng.randint(61, 90) if branch == "refuse_late" else rng.randint(5, 55))
        lines, bookings = [], []
        count = rng.randint(2, 3)
        for k in range(count):
            code = rng.choice(["STD", "DLX"])
            n = rng.randint(1, 4)
            check_in = issued - timedelta(days=rng.randint(8, 25) + 5 * k)
            bid = f"BK-{uid}{k}"
            bookings.append({"id": bid, "customer_id": traveller[0], "hotel_id": hotel, "room_code": code, "confirmation_code": f"HC-{hotel[-1]}{uid}{k}",
                             "check_in": iso(check_in), "check_out": iso(check_in + timedelta(days=n)), "guests": 1, "rate_type": "corporate",
                             "nightly_rate": money(negotiated[code]), "total": money(negotiated[code] * n), "status": "completed",
                             "group_id": None, "corporate_account_id": account, "created_at": ts(TODAY - timedelta(days=120)), "cancelled_at": None})
            lines.append({"invoice_id": invoice, "line_no": k + 1, "booking_id": bid, "nights": n, "nightly_rate": money(negotiated[code]),
                          "amount": money(negotiated[code] * n), "code": code})
        target = rng.randrange(count)
        line = lines[target]
        credit, reason = Decimal("0"), ""
        if branch in ("rate_credit", "rate_credit_new_contact", "refuse_late", "wait_traveller", "escalate_suspended"):
            billed = public_rate(hotel, line["code"], "flexible")
            line["nightly_rate"], line["amount"] = money(billed), money(billed * line["nights"])
            credit, reason = (billed - negotiated[line["code"]]) * line["nights"], "negotiated_rate"
        elif branch == "not_account_credit":
            bookings[target]["corporate_account_id"] = None
            bookings[target]["rate_type"] = "flexible"
            credit, reason = Decimal(line["amount"]), "not_account_booking"
        elif branch == "duplicate_credit":
            dup = {**line, "line_no": count + 1}
            lines.append(dup)
            target, line = count, dup
            credit, reason = Decimal(dup["amount"]), "duplicate_line"
        for row in lines:
            row.pop("code", None)
        d.add("bookings", *bookings)
        d.add("invoice_lines", *lines)
        total = sum(Decimal(r["amount"]) for r in lines)
        d.add("corporate_invoices", {"id": invoice, "account_id": account, "issued_on": iso(issued), "due_on": iso(issued + timedelta(days=30)),
                                     "amount": money(total), "status": "open" if (TODAY - issued).days <= 30 else "paid"})
        nxt = self.next_ids(d.patch)
        tid = nxt["tickets"]
        d.tags.append("corporate")
        is_traveller = branch == "wait_traveller"
        email = traveller[2] if is_traveller else contact_email
        d.email_fact(email)
        d.fact(f"Our corporate account number is {account}.", "account_reference", ["account", "account number"], value=account)
        d.ask("I can look into the invoice. What is your email address and the corporate account number?")
        if is_traveller:
            d.read("get_customer_profile", email=email)
        d.read("get_corporate_account", account_id=account)
        d.read("search_tickets", table="users", filter=f"email eq '{email}'")
        requester = traveller[3] if is_traveller else uid + 1
        if branch == "rate_credit_new_contact":
            d.fact(f"My name is {contact_name}.", "full_name", ["name"], value=contact_name)
            d.ask("You're not in our ticketing system yet; what is your full name?")
            d.write("create_ticket_user", {"name": "customer", "email": "customer"},
                    idempotent="a second ticketing user with the same email is refused", name=contact_name, email=contact_email)
            requester = nxt["ticket_users"]
        else:
            d.read("search_tickets", table="tickets", filter=f"requester_id eq {requester}")
        src = "record:search_tickets" if branch != "rate_credit_new_contact" else "customer"
        if is_traveller:
            d.ticket(requester, f"Invoice query {invoice} from a traveller", "corporate", "pending", requester_source=src)
            d.reply(f"Only the billing contact of account {account} can ask for a correction of an invoice, so I can't change invoice "
                    f"{invoice} for you. Please ask your billing contact to write to us from the billing address. Ticket {tid} is pending until then.")
            d.mention("asks_for_billing_contact", must=["billing contact"], must_not=["credited"])
        elif branch == "escalate_suspended":
            d.ticket(requester, f"Invoice query {invoice} - suspended account", "corporate", "open", None, "high", "corporate_billing")
            d.reply(f"Account {account} is suspended, so I can't adjust or credit invoice {invoice} from support. I've passed your query "
                    f"to our corporate billing team under ticket {tid}; the account team will contact you.")
            d.mention("hands_to_corporate_billing", must=["corporate billing|account team"], must_not=["credited"])
            d.states("handled_by")
        else:
            d.fact(f"The invoice is {invoice}; line {line['line_no']} for booking {line['booking_id']} is the one I question.", "invoice_number",
                   ["invoice", "invoice number", "line"], value=invoice)
            d.ask("Which invoice and which line is it about?")
            d.read("get_invoice", invoice_id=invoice)
            if branch == "refuse_late":
                d.ticket(requester, f"Late invoice dispute {invoice}", "corporate", "solved", requester_source=src)
                d.reply(f"Invoice {invoice} was issued on {iso(issued)}, more than 60 days ago, so it is final and can no longer be "
                        f"corrected. Ticket {tid} records your query.")
                d.mention("refuses_late", must=["60 days"], must_not=["credited"])
            else:
                d.read("get_booking", booking_id=line["booking_id"])
                if reason == "negotiated_rate":
                    d.read("get_corporate_rates", account_id=account, hotel_id=hotel)
                idem = "nothing is left of the line to credit again" if credit * 2 > Decimal(line["amount"]) else None
                d.write("adjust_invoice", {"invoice_id": "customer", "line_no": "customer", "amount": "policy#corporate-invoices",
                                           "reason": "policy#corporate-invoices"},
                        idempotent=idem, invoice_id=invoice, line_no=line["line_no"], amount=float(credit), reason=reason)
                d.ticket(requester, f"Invoice correction {invoice}", "corporate", "solved", line["booking_id"], requester_source=src)
                billed_at = usd(line["nightly_rate"], grouped=False)
                why_text = {"negotiated_rate": f"it was billed at {billed_at} a night instead of your negotiated rate",
                            "not_account_booking": "its booking was not made on your account",
                            "duplicate_line": "it repeats a booking already billed on the invoice"}[reason]
                d.reply(f"I've credited {usd(credit, grouped=False)} on line {line['line_no']} of invoice {invoice}, because {why_text}. "
                        f"The invoice total is now {usd(total - credit, grouped=False)}. Ticket {tid} records the correction.")
                d.mention("states_credit", must=[literal(usd(credit, grouped=False)), literal(invoice)])
        d.opening, d.origin = INVOICE_OPENINGS.pick(rng, self.split, invoice=invoice, account=account)
        d.intent = "Get the invoice corrected."
        return d
