"""The retail task draft: the kit's ``TaskDraft`` with what a Brightwell support task adds to it.

A retail family writes its task with the kit's methods; this subclass holds the retail
state those methods do not know (the policy section that sources the family's values,
whether the customer still needs a ticketing user, the questions whose place depends on
calls added after the draw) and the steps every retail task shares (identify the
customer, look up and open tickets).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from thinkingbox_env.authoring import TaskDraft

from ._sources import WRITE_TOOLS, sources

USER_TWICE = "a second ticketing user with the same email is refused"


@dataclass
class RetailDraft(TaskDraft):
    """One retail request (or a two-request conversation) being written."""

    section: str = "policy#tickets"  # the policy section that decides the values no other rule sources
    overrides: dict[str, str] = field(default_factory=dict)  # "tool.arg" or "arg" -> source, where the kinds rule does not fit
    earlier: tuple[str, ...] = ()  # the calls an earlier request of the same conversation made
    new_user: bool = False  # no ticketing user yet: the golden creates one right after the lookups
    two_orders: bool = False  # two orders are discussed: proposals tell them apart by their last digits
    email: str = ""  # the email the customer is identified by
    questions: list[tuple[str, str | None]] = field(default_factory=list)  # (question, before the first call of tool)
    informs: list[tuple[int, str]] = field(default_factory=list)  # (before, text) told after a failed call

    # ---------------------------------------------------------------- golden calls

    def reads(self, upto: int | None = None) -> list[str]:
        """The tools whose results the agent holds before call ``upto``.

        Failed calls show nothing; an earlier request's calls count; a ticketing user the customer
        lacks is created right after the lookups, so every write of the request comes after it.
        """
        done = [c["name"] for c in self.golden[:upto] if c.get("expect_error") is None]
        return [*self.earlier, *done, *(["create_ticket_user"] if self.new_user else [])]

    def act(self, tool: str, /, *, idempotent: str | None = None, **arguments: Any) -> int:
        """A golden write whose every source follows from the argument's kind (see ``_sources``)."""
        why = sources(tool, arguments, self.reads(), self.section, self.overrides)
        return self.write(tool, why, idempotent=idempotent, **arguments)

    def insert(self, at: int, tool: str, /, *, why: dict[str, str] | None = None, expect_error: str | None = None,
               idempotent: str | None = None, **arguments: Any) -> int:
        """A golden call placed at ``at`` once the request is drawn (a recovery, a report, a ticketing user to create).

        The kit's ``insert_call`` with the retail sources of a write, and the informs still to be placed
        moving with their calls.
        """
        if why is None and tool in WRITE_TOOLS:
            why = sources(tool, arguments, self.reads(at), self.section, self.overrides)
        self.insert_call(at, tool, why=why, expect_error=expect_error, idempotent=idempotent, **arguments)
        self.informs = [(b + 1 if b >= at else b, text) for b, text in self.informs]
        return at

    def identify(self, email: str) -> None:
        """Find the customer's profile and ticketing user by the email they give (policy: identifying the customer)."""
        self.email = email
        self.read("get_customer_profile", email=email)
        self.read("search_tickets", table="users", filter=f"email eq '{email}'")

    def find_tickets(self, requester: int) -> int:
        """Look up the customer's tickets before one is reused or opened (policy: tickets)."""
        return self.read("search_tickets", table="tickets", filter=f"requester_id eq {requester}")

    def open_ticket(self, requester: int, subject: str, category: str, status: str, order_id: str | None = None,
                    priority: str = "normal", note: str = "") -> int:
        """The request's ticket, opened in the status the outcome leaves it in, with the note the policy asks for (if any) as its description."""
        about = {} if order_id is None else {"order_id": order_id}
        if not note:
            return self.act("create_ticket", requester_id=requester, subject=subject, category=category, priority=priority,
                            status=status, **about)
        arguments = {"requester_id": requester, "subject": subject, "category": category, "priority": priority, "status": status,
                     **about, "description": note}
        # the note states the outcome the family's policy section decides, as an update's note does, not the customer's words
        why = sources("create_ticket", arguments, self.reads(), self.section, {**self.overrides, "create_ticket.description": self.section})
        return self.write("create_ticket", why, **arguments)

    # ---------------------------------------------------------------- the agent's turns and the customer's facts

    def question(self, text: str, before: str | None = None) -> None:
        """A question asked once the customer is identified, or just before the first call of tool ``before``.

        Placed when the task is finished: a ticketing user, a recovery or a report added after the
        draw moves the call it precedes.
        """
        self.questions.append((text, before))

    def email_fact(self, email: str) -> None:
        self.fact(f"My email address is {email}.", unlock=["email", "e-mail"], value=email)

    def order_fact(self, order_id: str) -> None:
        self.fact(f"The order number is {order_id}.", unlock=["order number", "order id", "order"], value=order_id)

    def name_fact(self, name: str) -> None:
        self.fact(f"My name is {name}.", unlock=["name"])

    def ticket_fact(self, ticket_id: int) -> None:
        self.fact(f"The ticket number is {ticket_id}.", unlock=["ticket number", "ticket id", "ticket"])

    # ---------------------------------------------------------------- the rows the task starts from

    def rows(self, table: str) -> list[dict[str, Any]]:
        """The rows this task inserts into ``table`` (empty when it inserts none)."""
        return self.patch["insert"].get(table, [])
