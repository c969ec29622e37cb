"""The travel desk's task draft: the kit's :class:`TaskDraft` with the support chat's recurring steps.

A family writes its task with the kit's methods (calls, turns, facts, decisions, rows, checks,
replies); what the desk adds is what every travel conversation does the same way (identify the
customer, read the booking, keep one ticket) and the house rules of how a travel task is
written: the free-text arguments, and the two overrides below.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from thinkingbox_env.authoring import TaskDraft

from ._stay import Stay

# the arguments the agent writes in its own words: no policy, record or customer is their source
FREE_TEXT = frozenset({"subject", "description", "note", "detail"})


@dataclass
class TravelDraft(TaskDraft):
    """One travel request being written."""

    judged: bool = False  # whether rubric questions are kept: only a frozen test task is read by a judge
    # a ticket's subject, a request's or an escalation's detail are the agent's own words: no source is asked of them
    free_text_arguments: ClassVar[frozenset[str]] = FREE_TEXT

    def mention(self, name: str, must: list[str] | None = None, must_not: list[str] | None = None) -> None:
        """A dialogue check whose forbidden phrases are written grouped, ``(is cancelled)``.

        A grouped pattern is read as the literal phrase it is, never as an outcome term with its
        variants, so it does not forbid a near word ("move together" is not "moved to") nor a
        denial of the outcome ("nothing is refunded to your card").
        """
        super().mention(name, must, [p if p.startswith("(") else f"({p})" for p in must_not or []])

    def rubric(self, name: str, question: str) -> None:
        """A question for the judge, kept only in a frozen test task: training rewards need no judge."""
        if self.judged:
            super().rubric(name, question)

    # ---------------------------------------------------------------- the steps every conversation shares

    def email_fact(self, email: str) -> None:
        self.fact(f"My email address is {email}.", "email", ["email", "e-mail"], value=email)

    def identify(self, s: Stay) -> None:
        """Profile by email, the ticketing user, the customer's tickets."""
        self.email_fact(s.email)
        self.ask("I can help with that. What is the email address on your Harborlight account?")
        self.read("get_customer_profile", email=s.email)
        self.read("search_tickets", table="users", filter=f"email eq '{s.email}'")
        self.read("search_tickets", table="tickets", filter=f"requester_id eq {s.requester}")

    def given_booking(self, s: Stay) -> str:
        """The booking reference the customer gives first: the misremembered one where they misremember it.

        An opening that names the booking names this one, so the right reference is never already
        in the agent's hands before the failed lookup the task is built around.
        """
        return next((f["misremembered"] for f in self.facts if f.get("value") == s.booking and f.get("misremembered")), s.booking)

    def open_booking(self, s: Stay, wrong: str | None = None) -> None:
        """Ask for the booking reference and read the booking (after a failed lookup of a misremembered one)."""
        self.fact(f"The booking reference is {s.booking}.", "booking_reference", ["booking reference", "booking number", "reservation"],
                  value=s.booking, misremembered=wrong)
        self.ask("Thank you. What is the booking reference of the stay?")
        if wrong:
            self.failing("get_booking", f"booking {wrong} not found", booking_id=wrong)
            self.inform(f"I could not find a booking {wrong}; could you check the booking reference?")
        self.read("get_booking", booking_id=s.booking)

    def ticket(self, requester: int, subject: str, category: str, status: str, booking: str | None = None,
               priority: str = "normal", team: str | None = None, booking_source: str = "record:get_booking",
               requester_source: str = "record:search_tickets") -> int:
        """The conversation's one ticket (its category, priority and team as the policy's "Tickets" section sets them)."""
        args: dict[str, Any] = {"requester_id": requester, "subject": subject, "category": category, "priority": priority, "status": status}
        why = {"requester_id": requester_source, "subject": "customer", "category": "policy#tickets", "priority": "policy#tickets",
               "status": "policy#tickets"}
        if booking is not None:
            args["booking_id"] = booking
            why["booking_id"] = booking_source
        if team is not None:
            args["assigned_team"] = team
            why["assigned_team"] = "policy#tickets"
        return self.write("create_ticket", why, **args)


__all__ = ["FREE_TEXT", "TravelDraft"]
