"""The ticketing system every customer-service domain has: users, tickets, and the five tools on them.

Domains differ only in the categories, statuses and priorities a ticket may take,
the entity a ticket is about (an order, a policy) and whether tickets are
escalated to teams; :class:`Ticketing` takes those as parameters and returns the
tools and the two tables' declarations, so a new domain declares its ticketing in a
few lines of ``tools.py`` (a module-level ``Ticketing`` instance) and its tickets
behave like every other domain's. The tables, ``ticket_users(id, name, email,
created_at)`` and ``tickets(id, requester_id, subject, description, category,
priority, status, [assigned_team,] <link column>, created_at, updated_at)``, are
created from :meth:`Ticketing.schema_sql` next to the domain's ``schema.sql``; their
id sequences are in ``domain.yaml``.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Literal

from ..state import ToolContext
from .filters import search_rows
from .invariants import well_formed_email, well_formed_text
from .tools import FreeText, Tool, ToolError, tool


def _or_list(values: tuple[str, ...]) -> str:
    return values[0] if len(values) == 1 else f"{', '.join(values[:-1])} or {values[-1]}"


def _build(fn: Any, name: str, doc: str, params: list[tuple[str, Any, Any]], writes: bool) -> Tool:
    """A tool from a generic body and a signature made here, so each domain's schema lists its own values."""
    # the published first parameter is the state's narrow face, as every domain tool's is (the conformance tests pin it)
    fn.__signature__ = inspect.Signature(
        [inspect.Parameter("db", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=ToolContext)]
        + [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, annotation=t, default=d) for n, t, d in params]
    )
    fn.__annotations__ = {"db": ToolContext, **{n: t for n, t, _ in params}, "return": dict}
    fn.__doc__ = doc
    fn.__name__ = fn.__qualname__ = name
    return tool(fn, writes=writes, name=name)


@dataclass(frozen=True)
class Ticketing:
    """A domain's ticketing system.

    ``link_column`` (``order_id``) is the column of ``tickets`` naming the entity a
    ticket is about, a row of ``link_table`` (``orders``); ``link_noun`` (``order``)
    is how tool descriptions and errors call it. ``teams`` adds an
    ``assigned_team`` column that tickets are escalated to.
    """

    categories: tuple[str, ...]
    statuses: tuple[str, ...]
    link_column: str
    link_table: str
    link_noun: str
    teams: tuple[str, ...] = ()
    priorities: tuple[str, ...] = ("low", "normal", "high", "urgent")
    contact: str = "support"  # "people who contacted <contact>"
    example_requester: int = 10004
    profile: str = "customer profile"  # where the agent reads the customer's name and email

    def __post_init__(self) -> None:
        for field_name in ("categories", "statuses", "priorities"):
            if not getattr(self, field_name):
                raise ValueError(f"Ticketing.{field_name} must name at least one value")
        if "open" not in self.statuses:
            raise ValueError(f"Ticketing.statuses must include 'open' (the default of a new ticket), got {self.statuses}")
        if not self.link_column.isidentifier() or not self.link_table.isidentifier():
            raise ValueError(f"Ticketing link column and table must be plain identifiers, got {self.link_column!r}, {self.link_table!r}")

    def schema_sql(self) -> str:
        """The ``ticket_users`` and ``tickets`` tables, with this domain's values as CHECK constraints."""

        def one_of(column: str, values: tuple[str, ...]) -> str:
            return f"CHECK ({column} IN ({', '.join(repr(v) for v in values)}))"

        team = f"    assigned_team VARCHAR {one_of('assigned_team', self.teams)},\n" if self.teams else ""
        return (
            "-- Ticketing system (declared by the domain's Ticketing): people who contacted support, and their tickets.\n"
            "CREATE TABLE ticket_users (\n"
            "    id INTEGER PRIMARY KEY,\n"
            "    name VARCHAR NOT NULL,\n"
            "    email VARCHAR NOT NULL,\n"
            "    created_at TIMESTAMP NOT NULL\n"
            ");\n"
            "CREATE TABLE tickets (\n"
            "    id INTEGER PRIMARY KEY,\n"
            "    requester_id INTEGER NOT NULL,\n"
            "    subject VARCHAR NOT NULL,\n"
            "    description VARCHAR NOT NULL DEFAULT '',\n"
            f"    category VARCHAR NOT NULL {one_of('category', self.categories)},\n"
            f"    priority VARCHAR NOT NULL {one_of('priority', self.priorities)},\n"
            f"    status VARCHAR NOT NULL {one_of('status', self.statuses)},\n"
            f"{team}"
            f"    {self.link_column} VARCHAR,\n"
            "    created_at TIMESTAMP NOT NULL,\n"
            "    updated_at TIMESTAMP NOT NULL\n"
            ");\n"
        )

    @property
    def ticket_columns(self) -> tuple[str, ...]:
        team = ("assigned_team",) if self.teams else ()
        return ("id", "requester_id", "subject", "description", "category", "priority", "status", *team, self.link_column,
                "created_at", "updated_at")

    def _linked(self, db: ToolContext, value: str) -> None:
        if db.query_one(f'SELECT 1 AS found FROM "{self.link_table}" WHERE id = ?', [value]) is None:
            raise ToolError(f"{self.link_noun} {value} not found")

    def tools(self) -> list[Tool]:
        """The five ticketing tools: ``search_tickets``, ``get_ticket``, ``create_ticket_user``, ``create_ticket``, ``update_ticket``."""
        return [self._search_tickets(), self._get_ticket(), self._create_ticket_user(), self._create_ticket(), self._update_ticket()]

    def _search_tickets(self) -> Tool:
        tables = {"users": ("ticket_users", ("id", "name", "email", "created_at")), "tickets": ("tickets", self.ticket_columns)}

        def search_tickets(db: ToolContext, *, table: str, filter: str | None, order_by: str | None, limit: int, offset: int) -> dict:
            sql_table, columns = tables[table]
            return search_rows(db, sql_table, columns, filter, order_by, limit, offset)

        doc = f"""Search the ticketing system's users or tickets.

        Args:
            table: "users" (people who contacted {self.contact}) or "tickets".
            filter: Filter expression, e.g. "email eq 'a@example.com'" or "requester_id eq {self.example_requester} and status ne 'solved'". Operators: eq ne gt ge lt le, and/or/not, contains(field, 'text').
            order_by: Comma-separated fields with optional asc/desc, e.g. "created_at desc".
            limit: Maximum number of items (1-100).
            offset: Number of items to skip.
        """
        params = [("table", Literal["users", "tickets"], inspect.Parameter.empty), ("filter", str | None, None),
                  ("order_by", str | None, None), ("limit", int, 20), ("offset", int, 0)]
        return _build(search_tickets, "search_tickets", doc, params, writes=False)

    def _get_ticket(self) -> Tool:
        def get_ticket(db: ToolContext, *, ticket_id: int) -> dict:
            row = db.query_one("SELECT * FROM tickets WHERE id = ?", [ticket_id])
            if row is None:
                raise ToolError(f"ticket {ticket_id} not found")
            return row

        doc = """Read one ticket.

        Args:
            ticket_id: The ticket number.
        """
        return _build(get_ticket, "get_ticket", doc, [("ticket_id", int, inspect.Parameter.empty)], writes=False)

    def _create_ticket_user(self) -> Tool:
        def create_ticket_user(db: ToolContext, *, name: str, email: str) -> dict:
            name, email = well_formed_text(name, "name"), well_formed_email(email)
            if db.query_one("SELECT id FROM ticket_users WHERE lower(email) = lower(?)", [email]):
                raise ToolError(f"a ticketing user with email {email} already exists")
            new_id = db.next_id("ticket_users")
            return db.execute("INSERT INTO ticket_users (id, name, email, created_at) VALUES (?, ?, ?, ?) RETURNING *",
                              [new_id, name, email, db.now])[0]

        doc = f"""Register a customer in the ticketing system (needed before their first ticket).

        Args:
            name: The customer's full name, as in the {self.profile}.
            email: The customer's email address, as in the {self.profile}.
        """
        params = [("name", str, inspect.Parameter.empty), ("email", str, inspect.Parameter.empty)]
        return _build(create_ticket_user, "create_ticket_user", doc, params, writes=True)

    def _create_ticket(self) -> Tool:
        link, columns = self.link_column, self.ticket_columns

        def create_ticket(db: ToolContext, **args: Any) -> dict:
            if db.query_one("SELECT id FROM ticket_users WHERE id = ?", [args["requester_id"]]) is None:
                raise ToolError(f"ticketing user {args['requester_id']} not found")
            if args[link] is not None:
                self._linked(db, args[link])
            row = {**args, "id": db.next_id("tickets"), "created_at": db.now, "updated_at": db.now}
            names = ", ".join(f'"{c}"' for c in columns)
            marks = ", ".join("?" for _ in columns)
            return db.execute(f"INSERT INTO tickets ({names}) VALUES ({marks}) RETURNING *", [row.get(c) for c in columns])[0]

        team_doc = f"\n            assigned_team: Team the ticket is escalated to ({', '.join(self.teams)}), if any." if self.teams else ""
        doc = f"""Open a support ticket for a ticketing user.

        Args:
            requester_id: Ticketing user id of the customer.
            subject: Short summary of the request.
            category: {_or_list(self.categories)}.
            {link}: The {self.link_noun} the request is about, if any.
            description: What the customer asked, what was checked and what was done.
            priority: {_or_list(self.priorities)}.
            status: {_or_list(self.statuses)}.{team_doc}
        """
        params: list[tuple[str, Any, Any]] = [
            ("requester_id", int, inspect.Parameter.empty), ("subject", FreeText, inspect.Parameter.empty),
            ("category", Literal[self.categories], inspect.Parameter.empty), (link, str | None, None),
            ("description", FreeText, ""), ("priority", Literal[self.priorities], "normal"), ("status", Literal[self.statuses], "open"),
        ]
        if self.teams:
            params.append(("assigned_team", Literal[self.teams] | None, None))
        return _build(create_ticket, "create_ticket", doc, params, writes=True)

    def _update_ticket(self) -> Tool:
        link = self.link_column
        fields = ["status", "priority", "category", *(["assigned_team"] if self.teams else []), link]

        def update_ticket(db: ToolContext, *, ticket_id: int, note: str | None, **changes: Any) -> dict:
            row = db.query_one("SELECT * FROM tickets WHERE id = ?", [ticket_id])
            if row is None:
                raise ToolError(f"ticket {ticket_id} not found")
            if row["status"] == "closed":
                raise ToolError(f"ticket {ticket_id} is closed and cannot be changed; open a new ticket instead")
            if all(v is None for v in (*changes.values(), note)):
                raise ToolError(f"nothing to update: give at least one of {', '.join([*fields, 'note'])}")
            if changes[link] is not None:
                self._linked(db, changes[link])
            new = {f: changes[f] if changes[f] is not None else row[f] for f in fields}
            new["description"] = row["description"] + (f"\n{note}" if note else "")
            new["updated_at"] = db.now
            sets = ", ".join(f'"{c}" = ?' for c in new)
            return db.execute(f"UPDATE tickets SET {sets} WHERE id = ? RETURNING *", [*new.values(), ticket_id])[0]

        what = f"category, team or {self.link_noun}" if self.teams else f"category or {self.link_noun}"
        team_doc = "\n            assigned_team: Team to escalate the ticket to." if self.teams else ""
        doc = f"""Change a ticket's status, priority, {what}, and/or append a note.

        Args:
            ticket_id: The ticket number.
            status: New status.
            priority: New priority.
            category: New category.{team_doc}
            {link}: {self.link_noun.capitalize()} the ticket is about.
            note: Text appended to the ticket description.
        """
        params: list[tuple[str, Any, Any]] = [
            ("ticket_id", int, inspect.Parameter.empty), ("status", Literal[self.statuses] | None, None),
            ("priority", Literal[self.priorities] | None, None), ("category", Literal[self.categories] | None, None),
        ]
        if self.teams:
            params.append(("assigned_team", Literal[self.teams] | None, None))
        params += [(link, str | None, None), ("note", FreeText | None, None)]
        return _build(update_ticket, "update_ticket", doc, params, writes=True)


__all__ = ["Ticketing"]
