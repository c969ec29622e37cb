"""Brightwell Electronics support tools: ticketing, CRM, membership, orders, shipping, payments.

Reads return plain JSON; writes check the backend's preconditions and refuse with
a ``ToolError`` (the agent sees ``{"error": ...}``). Policy decisions that the
agent must make itself (eligibility, amounts, which payment to refund) are not
enforced here: a tool does what it is asked if the backend allows it, and the
checks judge whether it should have been asked.
"""

from __future__ import annotations

from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, Literal

from thinkingbox_env.filters import FilterError, compile_filter, compile_order_by
from thinkingbox_env.kb import search_documents
from thinkingbox_env.tools import ToolError, tool

TicketStatus = Literal["open", "pending", "hold", "solved", "closed"]
Category = Literal["membership", "order", "delivery", "payment", "general"]
Priority = Literal["low", "normal", "high", "urgent"]

_TICKET_TABLES = {
    "users": ("ticket_users", ("id", "name", "email", "created_at")),
    "tickets": (
        "tickets",
        ("id", "requester_id", "subject", "description", "category", "priority", "status", "order_id", "created_at", "updated_at"),
    ),
}


def _money(value: Any) -> Decimal:
    return Decimal(str(value)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def _one_year_after(day: date) -> date:
    try:
        return day.replace(year=day.year + 1)
    except ValueError:  # 29 February
        return day + timedelta(days=365)


# --------------------------------------------------------------------------- ticketing


@tool
def search_tickets(
    db,
    table: Literal["users", "tickets"],
    filter: str | None = None,
    order_by: str | None = None,
    limit: int = 20,
    offset: int = 0,
) -> dict:
    """Search the ticketing system's users or tickets.

    Args:
        table: "users" (people who contacted support) or "tickets".
        filter: Filter expression, e.g. "email eq 'a@example.com'" or "requester_id eq 10004 and status ne 'solved'". Operators: eq ne gt ge lt le, and/or/not, contains(field, 'text').
        order_by: Comma-separated fields with optional asc/desc, e.g. "created_at desc".
        limit: Maximum number of items (1-100).
        offset: Number of items to skip.
    """
    sql_table, columns = _TICKET_TABLES[table]
    if not 1 <= limit <= 100:
        raise ToolError("limit must be between 1 and 100")
    if offset < 0:
        raise ToolError("offset must not be negative")
    try:
        where, params = compile_filter(filter, set(columns))
        order = compile_order_by(order_by, set(columns), '"id" ASC')
    except FilterError as exc:
        raise ToolError(f"invalid filter: {exc}") from exc
    rows = db.query(
        f"SELECT {', '.join(columns)} FROM {sql_table} WHERE {where} ORDER BY {order} LIMIT ? OFFSET ?",
        [*params, limit, offset],
    )
    return {"items": rows, "count": len(rows)}


@tool
def get_ticket(db, ticket_id: int) -> dict:
    """Read one ticket.

    Args:
        ticket_id: The ticket number.
    """
    row = db.query_one("SELECT * FROM tickets WHERE id = ?", [ticket_id])
    if row is None:
        raise ToolError(f"ticket {ticket_id} not found")
    return row


@tool(writes=True)
def create_ticket_user(db, name: str, email: str) -> dict:
    """Register a customer in the ticketing system (needed before their first ticket).

    Args:
        name: The customer's full name, as in the customer profile.
        email: The customer's email address, as in the customer profile.
    """
    if db.query_one("SELECT id FROM ticket_users WHERE lower(email) = lower(?)", [email]):
        raise ToolError(f"a ticketing user with email {email} already exists")
    new_id = db.next_id("ticket_users")
    return db.execute("INSERT INTO ticket_users VALUES (?, ?, ?, ?) RETURNING *", [new_id, name, email, db.now])[0]


@tool(writes=True)
def create_ticket(
    db,
    requester_id: int,
    subject: str,
    category: Category,
    description: str = "",
    priority: Priority = "normal",
    status: TicketStatus = "open",
    order_id: str | None = None,
) -> dict:
    """Open a new support ticket for a ticketing user.

    Args:
        requester_id: Ticketing user id of the customer.
        subject: Short summary of the request.
        category: membership, order, delivery, payment or general.
        description: What the customer asked and what was done.
        priority: low, normal, high or urgent.
        status: Initial status (open, pending, hold, solved, closed).
        order_id: The order the ticket is about, if any.
    """
    if db.query_one("SELECT id FROM ticket_users WHERE id = ?", [requester_id]) is None:
        raise ToolError(f"ticketing user {requester_id} not found")
    if order_id is not None and db.query_one("SELECT id FROM orders WHERE id = ?", [order_id]) is None:
        raise ToolError(f"order {order_id} not found")
    new_id = db.next_id("tickets")
    return db.execute(
        "INSERT INTO tickets VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *",
        [new_id, requester_id, subject, description, category, priority, status, order_id, db.now, db.now],
    )[0]


@tool(writes=True)
def update_ticket(
    db,
    ticket_id: int,
    status: TicketStatus | None = None,
    priority: Priority | None = None,
    category: Category | None = None,
    order_id: str | None = None,
    note: str | None = None,
) -> dict:
    """Change a ticket's status, priority, category or order, and/or append a note.

    Args:
        ticket_id: The ticket number.
        status: New status.
        priority: New priority.
        category: New category.
        order_id: Order the ticket is about.
        note: Text appended to the ticket description.
    """
    row = db.query_one("SELECT * FROM tickets WHERE id = ?", [ticket_id])
    if row is None:
        raise ToolError(f"ticket {ticket_id} not found")
    if row["status"] == "closed":
        raise ToolError(f"ticket {ticket_id} is closed and cannot be changed; open a new ticket instead")
    if all(v is None for v in (status, priority, category, order_id, note)):
        raise ToolError("nothing to update: give at least one of status, priority, category, order_id, note")
    if order_id is not None and db.query_one("SELECT id FROM orders WHERE id = ?", [order_id]) is None:
        raise ToolError(f"order {order_id} not found")
    description = row["description"] + (f"\n{note}" if note else "")
    return db.execute(
        "UPDATE tickets SET status = ?, priority = ?, category = ?, order_id = ?, description = ?, updated_at = ? WHERE id = ? RETURNING *",
        [
            status or row["status"],
            priority or row["priority"],
            category or row["category"],
            order_id if order_id is not None else row["order_id"],
            description,
            db.now,
            ticket_id,
        ],
    )[0]


# --------------------------------------------------------------------------- customers and membership


@tool
def get_customer_profile(db, customer_id: str | None = None, email: str | None = None) -> dict:
    """Look up a customer profile by customer id or by email.

    Args:
        customer_id: Customer id, e.g. CUS-10001.
        email: Email address on the account.
    """
    if customer_id is None and email is None:
        raise ToolError("give customer_id or email")
    if customer_id is not None:
        row = db.query_one("SELECT * FROM customers WHERE id = ?", [customer_id])
    else:
        row = db.query_one("SELECT * FROM customers WHERE lower(email) = lower(?)", [email.strip()])
    if row is None:
        raise ToolError(f"no customer found for {customer_id or email}")
    return row


@tool
def get_membership(db, customer_id: str) -> dict:
    """Show a customer's Brightwell Plus memberships, newest first.

    Args:
        customer_id: Customer id.
    """
    if db.query_one("SELECT id FROM customers WHERE id = ?", [customer_id]) is None:
        raise ToolError(f"customer {customer_id} not found")
    rows = db.query("SELECT * FROM memberships WHERE customer_id = ? ORDER BY start_date DESC, id DESC", [customer_id])
    active = [r for r in rows if r["status"] == "active"]
    return {"customer_id": customer_id, "active": active[0] if active else None, "memberships": rows}


@tool(writes=True)
def update_membership(db, customer_id: str, action: Literal["upgrade", "cancel"]) -> dict:
    """Upgrade a customer to Brightwell Plus, or cancel their active membership.

    Args:
        customer_id: Customer id.
        action: "upgrade" creates a one-year membership starting today; "cancel" ends the active one.
    """
    customer = db.query_one("SELECT * FROM customers WHERE id = ?", [customer_id])
    if customer is None:
        raise ToolError(f"customer {customer_id} not found")
    active = db.query_one("SELECT * FROM memberships WHERE customer_id = ? AND status = 'active'", [customer_id])
    today = db.now.date()
    if action == "upgrade":
        if active is not None:
            raise ToolError(f"customer {customer_id} already has an active membership {active['id']}")
        mid = db.next_id("memberships")
        end = _one_year_after(today)
        db.execute("INSERT INTO memberships VALUES (?, ?, 'plus', 'active', ?, ?, 59.00, TRUE)", [mid, customer_id, today, end])
        db.execute("UPDATE customers SET tier = 'plus' WHERE id = ?", [customer_id])
        return {"customer_id": customer_id, "membership_id": mid, "tier": "plus", "start_date": today, "end_date": end, "annual_fee": 59.00}
    if active is None:
        raise ToolError(f"customer {customer_id} has no active membership to cancel")
    db.execute("UPDATE memberships SET status = 'cancelled', auto_renew = FALSE, end_date = ? WHERE id = ?", [today, active["id"]])
    db.execute("UPDATE customers SET tier = 'standard' WHERE id = ?", [customer_id])
    return {"customer_id": customer_id, "membership_id": active["id"], "tier": "standard", "status": "cancelled", "end_date": today}


# --------------------------------------------------------------------------- orders


@tool
def get_order(db, order_id: str) -> dict:
    """Read an order with its line items.

    Args:
        order_id: Order id, e.g. ORD-20001.
    """
    order = db.query_one("SELECT * FROM orders WHERE id = ?", [order_id])
    if order is None:
        raise ToolError(f"order {order_id} not found")
    order["items"] = db.query("SELECT line_no, sku, product_name, quantity, unit_price FROM order_items WHERE order_id = ? ORDER BY line_no", [order_id])
    return order


@tool
def list_customer_orders(db, customer_id: str) -> dict:
    """List a customer's orders, newest first.

    Args:
        customer_id: Customer id.
    """
    rows = db.query("SELECT id, status, placed_at, total FROM orders WHERE customer_id = ? ORDER BY placed_at DESC", [customer_id])
    return {"customer_id": customer_id, "orders": rows}


@tool(writes=True)
def cancel_order(db, order_id: str, reason: Literal["customer_request", "payment_issue", "out_of_stock"]) -> dict:
    """Cancel an order that has not shipped yet. Refunds are issued separately.

    Args:
        order_id: Order id.
        reason: Why the order is cancelled.
    """
    order = db.query_one("SELECT * FROM orders WHERE id = ?", [order_id])
    if order is None:
        raise ToolError(f"order {order_id} not found")
    if order["status"] != "processing":
        raise ToolError(f"order {order_id} is {order['status']} and cannot be cancelled")
    db.execute("UPDATE orders SET status = 'cancelled', cancelled_at = ?, cancel_reason = ? WHERE id = ?", [db.now, reason, order_id])
    return {"order_id": order_id, "status": "cancelled", "cancelled_at": db.now}


# --------------------------------------------------------------------------- shipping


@tool
def get_shipment(db, order_id: str) -> dict:
    """Shipment status and tracking events for an order.

    Args:
        order_id: Order id.
    """
    if db.query_one("SELECT id FROM orders WHERE id = ?", [order_id]) is None:
        raise ToolError(f"order {order_id} not found")
    ship = db.query_one("SELECT * FROM shipments WHERE order_id = ?", [order_id])
    if ship is None:
        raise ToolError(f"order {order_id} has no shipment yet")
    ship["events"] = db.query(
        "SELECT seq, event_time, location, description FROM tracking_events WHERE shipment_id = ? ORDER BY seq", [ship["id"]]
    )
    return ship


# --------------------------------------------------------------------------- payments


@tool
def get_payments(db, order_id: str) -> dict:
    """Payments captured for an order and the refunds issued against them.

    Args:
        order_id: Order id.
    """
    if db.query_one("SELECT id FROM orders WHERE id = ?", [order_id]) is None:
        raise ToolError(f"order {order_id} not found")
    return {
        "order_id": order_id,
        "payments": db.query("SELECT * FROM payments WHERE order_id = ? ORDER BY captured_at, id", [order_id]),
        "refunds": db.query("SELECT * FROM refunds WHERE order_id = ? ORDER BY id", [order_id]),
    }


@tool(writes=True)
def issue_refund(
    db,
    payment_id: str,
    amount: float,
    reason: Literal["order_cancelled", "duplicate_charge", "damaged_item", "goodwill"],
) -> dict:
    """Refund (part of) a captured payment back to the original payment method.

    Args:
        payment_id: Payment id, e.g. PAY-30001.
        amount: Amount to refund in dollars; at most what is left unrefunded.
        reason: order_cancelled, duplicate_charge, damaged_item or goodwill.
    """
    pay = db.query_one("SELECT * FROM payments WHERE id = ?", [payment_id])
    if pay is None:
        raise ToolError(f"payment {payment_id} not found")
    amt = _money(amount)
    if amt <= 0:
        raise ToolError("amount must be positive")
    refunded = _money(db.query_one("SELECT coalesce(sum(amount), 0) AS s FROM refunds WHERE payment_id = ?", [payment_id])["s"])
    left = _money(pay["amount"]) - refunded
    if amt > left:
        raise ToolError(f"payment {payment_id} has only {left} left to refund")
    rid = db.next_id("refunds")
    db.execute("INSERT INTO refunds VALUES (?, ?, ?, ?, ?, ?)", [rid, payment_id, pay["order_id"], amt, reason, db.now])
    status = "refunded" if amt == left else "partially_refunded"
    db.execute("UPDATE payments SET status = ? WHERE id = ?", [status, payment_id])
    return {"refund_id": rid, "payment_id": payment_id, "amount": amt, "payment_status": status}


@tool
def get_store_credits(db, customer_id: str) -> dict:
    """Store credit issued to a customer.

    Args:
        customer_id: Customer id.
    """
    return {"customer_id": customer_id, "credits": db.query("SELECT * FROM store_credits WHERE customer_id = ? ORDER BY id", [customer_id])}


@tool(writes=True)
def issue_store_credit(db, customer_id: str, amount: float, reason: Literal["delivery_delay", "goodwill"], order_id: str | None = None) -> dict:
    """Add store credit to a customer's account.

    Args:
        customer_id: Customer id.
        amount: Credit in dollars.
        reason: delivery_delay or goodwill.
        order_id: The order the credit compensates, if any.
    """
    if db.query_one("SELECT id FROM customers WHERE id = ?", [customer_id]) is None:
        raise ToolError(f"customer {customer_id} not found")
    amt = _money(amount)
    if amt <= 0:
        raise ToolError("amount must be positive")
    if order_id is not None and db.query_one("SELECT id FROM orders WHERE id = ? AND customer_id = ?", [order_id, customer_id]) is None:
        raise ToolError(f"order {order_id} does not belong to customer {customer_id}")
    cid = db.next_id("store_credits")
    db.execute("INSERT INTO store_credits VALUES (?, ?, ?, ?, ?, ?)", [cid, customer_id, order_id, amt, reason, db.now])
    return {"credit_id": cid, "customer_id": customer_id, "amount": amt, "reason": reason}


# --------------------------------------------------------------------------- knowledge base


@tool
def search_policy(db, query: str, top_k: int = 3) -> dict:
    """Search the support knowledge base (fees, windows, thresholds, procedures).

    Args:
        query: What to look for, in plain words.
        top_k: Number of documents to return (1-5).
    """
    if not 1 <= top_k <= 5:
        raise ToolError("top_k must be between 1 and 5")
    return {"results": search_documents("retail", query, top_k)}
