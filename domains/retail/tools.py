"""Brightwell Electronics support tools: ticketing, CRM, membership, orders, shipping, payments.

Reads return plain JSON; writes check the backend's preconditions and refuse with
a ``ToolError`` (the agent sees ``{"error": ...}``). Policy decisions that the
agent must make itself (eligibility, amounts, which payment to refund) are not
enforced here: a tool does what it is asked if the backend allows it, and the
checks judge whether it should have been asked.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Annotated, Literal

from pydantic import Field

from thinkingbox_env.state import ToolContext
from thinkingbox_env.toolkit.injection import report_injection  # noqa: F401  (offered to the agent: instructions planted in records)
from thinkingbox_env.toolkit.invariants import money_within, non_negative_balance, not_too_far_ahead, well_formed_text
from thinkingbox_env.toolkit.kb import search_knowledge_base
from thinkingbox_env.toolkit.ticketing import Ticketing
from thinkingbox_env.toolkit.tools import IsoDate, ToolError, tool

from .rules import INSTALL_FEE, MAX_POINTS_ADJUSTMENT, MAX_SHIPPING_CHARGE, MAX_STORE_CREDIT, installer_works_on, to_money, years_after

# --------------------------------------------------------------------------- ticketing (the engine's kit)

TICKETING = Ticketing(
    categories=("membership", "order", "delivery", "payment", "general"),
    statuses=("open", "pending", "hold", "solved", "closed"),
    link_column="order_id", link_table="orders", link_noun="order",
)
search_tickets, get_ticket, create_ticket_user, create_ticket, update_ticket = TICKETING.tools()


# --------------------------------------------------------------------------- customers and membership


@tool
def get_customer_profile(db: ToolContext, customer_id: str | None = None, email: str | None = None) -> dict:
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
def get_membership(db: ToolContext, customer_id: str) -> dict:
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
def update_membership(db: ToolContext, customer_id: str, action: Literal["upgrade", "cancel"]) -> dict:
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
        end = years_after(today)
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
def get_order(db: ToolContext, order_id: str) -> dict:
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
def list_customer_orders(db: ToolContext, customer_id: str) -> dict:
    """List a customer's orders, newest first.

    Args:
        customer_id: Customer id.
    """
    rows = db.query("SELECT id, status, placed_at, total FROM orders WHERE customer_id = ? ORDER BY placed_at DESC", [customer_id])
    return {"customer_id": customer_id, "orders": rows}


@tool(writes=True)
def cancel_order(db: ToolContext, order_id: str, reason: Literal["customer_request", "payment_issue", "out_of_stock"]) -> dict:
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
def get_shipment(db: ToolContext, order_id: str) -> dict:
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
def get_payments(db: ToolContext, order_id: str) -> dict:
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
    db: ToolContext,
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
    amt = to_money(amount)
    if amt <= 0:
        raise ToolError("amount must be positive")
    refunded = to_money(db.query_one("SELECT coalesce(sum(amount), 0) AS s FROM refunds WHERE payment_id = ?", [payment_id])["s"])
    left = to_money(pay["amount"]) - refunded
    if amt > left:
        raise ToolError(f"payment {payment_id} has only {left} left to refund")
    rid = db.next_id("refunds")
    db.execute("INSERT INTO refunds VALUES (?, ?, ?, ?, ?, ?)", [rid, payment_id, pay["order_id"], amt, reason, db.now])
    status = "refunded" if amt == left else "partially_refunded"
    db.execute("UPDATE payments SET status = ? WHERE id = ?", [status, payment_id])
    return {"refund_id": rid, "payment_id": payment_id, "amount": amt, "payment_status": status}


@tool
def get_store_credits(db: ToolContext, customer_id: str) -> dict:
    """Store credit issued to a customer.

    Args:
        customer_id: Customer id.
    """
    return {"customer_id": customer_id, "credits": db.query("SELECT * FROM store_credits WHERE customer_id = ? ORDER BY id", [customer_id])}


@tool(writes=True)
def issue_store_credit(db: ToolContext, customer_id: str, amount: float, reason: Literal["delivery_delay", "goodwill"], order_id: str | None = None) -> dict:
    """Add store credit to a customer's account.

    Args:
        customer_id: Customer id.
        amount: Credit in dollars.
        reason: delivery_delay or goodwill.
        order_id: The order the credit compensates, if any.
    """
    if db.query_one("SELECT id FROM customers WHERE id = ?", [customer_id]) is None:
        raise ToolError(f"customer {customer_id} not found")
    amt = money_within(to_money(amount), "amount", MAX_STORE_CREDIT)
    if order_id is not None and db.query_one("SELECT id FROM orders WHERE id = ? AND customer_id = ?", [order_id, customer_id]) is None:
        raise ToolError(f"order {order_id} does not belong to customer {customer_id}")
    cid = db.next_id("store_credits")
    db.execute("INSERT INTO store_credits VALUES (?, ?, ?, ?, ?, ?)", [cid, customer_id, order_id, amt, reason, db.now])
    return {"credit_id": cid, "customer_id": customer_id, "amount": amt, "reason": reason}


# --------------------------------------------------------------------------- knowledge base


@tool
def search_policy(db: ToolContext, query: Annotated[str, Field(min_length=1)], top_k: Annotated[int, Field(ge=1, le=5)] = 3) -> dict:
    """Search the support knowledge base (fees, windows, thresholds, procedures).

    Args:
        query: What to look for, in plain words.
        top_k: Number of documents to return (1-5).
    """
    return {"results": search_knowledge_base(db, query, top_k)}


# --------------------------------------------------------------------------- shared helpers of the order-care tools


ReturnReason = Literal["changed_mind", "defective", "wrong_item"]


def _order(db: ToolContext, order_id: str) -> dict:
    order = db.query_one("SELECT * FROM orders WHERE id = ?", [order_id])
    if order is None:
        raise ToolError(f"order {order_id} not found")
    return order


def _line(db: ToolContext, order_id: str, line_no: int) -> dict:
    line = db.query_one("SELECT * FROM order_items WHERE order_id = ? AND line_no = ?", [order_id, line_no])
    if line is None:
        raise ToolError(f"order {order_id} has no line {line_no}")
    return line


def _refund_order(db: ToolContext, order_id: str, amount: Decimal, reason: str) -> list[str]:
    """Refund an amount against an order's payments, oldest payment first.

    Return, adjustment and cancellation refunds are not tied to one payment by
    the customer, so the backend spreads them over what is left unrefunded.
    """
    left_total = Decimal("0")
    plan: list[tuple[dict, Decimal]] = []
    for pay in db.query("SELECT * FROM payments WHERE order_id = ? ORDER BY captured_at, id", [order_id]):
        refunded = to_money(db.query_one("SELECT coalesce(sum(amount), 0) AS s FROM refunds WHERE payment_id = ?", [pay["id"]])["s"])
        left = to_money(pay["amount"]) - refunded
        if left > 0:
            plan.append((pay, left))
            left_total += left
    if amount > left_total:
        raise ToolError(f"order {order_id} has only {left_total} left to refund")
    ids: list[str] = []
    remaining = amount
    for pay, left in plan:
        if remaining <= 0:
            break
        part = min(left, remaining)
        rid = db.next_id("refunds")
        db.execute("INSERT INTO refunds VALUES (?, ?, ?, ?, ?, ?)", [rid, pay["id"], order_id, part, reason, db.now])
        db.execute("UPDATE payments SET status = ? WHERE id = ?", ["refunded" if part == left else "partially_refunded", pay["id"]])
        ids.append(rid)
        remaining -= part
    return ids


def _stock(db: ToolContext, sku: str) -> tuple[int | None, date | None]:
    """(on hand, restock date) of a SKU; (None, None) where the inventory has no row for it."""
    row = db.query_one("SELECT on_hand, restock_date FROM inventory WHERE sku = ?", [sku])
    return (None, None) if row is None else (row["on_hand"], row["restock_date"])


def _product(db: ToolContext, sku: str) -> dict:
    # the product, then its stock: lookups by key, which the engine answers without DuckDB (no join)
    row = db.query_one("SELECT * FROM products WHERE sku = ?", [sku])
    if row is None:
        raise ToolError(f"product {sku} not found")
    row["on_hand"], row["restock_date"] = _stock(db, sku)
    return row


# --------------------------------------------------------------------------- catalog and inventory


@tool
def get_product(db: ToolContext, sku: str) -> dict:
    """A catalog product with its category, price, variants, stock on hand and restock date.

    Args:
        sku: Product SKU, e.g. BW-HP-NC7.
    """
    row = _product(db, sku)
    variants = db.query("SELECT sku, name, price FROM products WHERE variant_group = ? AND sku <> ? ORDER BY sku",
                        [row["variant_group"], sku])
    listed = []
    for v in variants:
        on_hand, restock = _stock(db, v["sku"])
        listed.append({**v, "on_hand": 0 if on_hand is None else on_hand, "restock_date": restock})
    row["variants"] = listed
    return row


# --------------------------------------------------------------------------- order changes


@tool(writes=True)
def update_shipping_address(db: ToolContext, order_id: str, shipping_address: str) -> dict:
    """Change the delivery address of an order that has not been handed to a carrier.

    Args:
        order_id: Order id.
        shipping_address: The full new address, e.g. "12 Alder Lane, Boise, ID 83702".
    """
    order = _order(db, order_id)
    if order["status"] != "processing":
        raise ToolError(f"order {order_id} is {order['status']}; its address can no longer be changed")
    if db.query_one("SELECT id FROM shipments WHERE order_id = ?", [order_id]) is not None:
        raise ToolError(f"order {order_id} already has a shipping label; its address can no longer be changed")
    address = well_formed_text(shipping_address, "shipping_address", 300)
    return db.execute("UPDATE orders SET shipping_address = ? WHERE id = ? RETURNING id, status, shipping_address", [address, order_id])[0]


@tool(writes=True)
def change_shipping_speed(db: ToolContext, order_id: str, shipping_speed: Literal["standard", "express"], upgrade_fee: float = 0.0) -> dict:
    """Change the shipping speed of an order that has not been handed to a carrier; an upgrade fee is charged to the customer.

    Args:
        order_id: Order id.
        shipping_speed: "standard" or "express".
        upgrade_fee: Fee in dollars to charge for an express upgrade (0 when none is due).
    """
    order = _order(db, order_id)
    if order["status"] != "processing" or db.query_one("SELECT id FROM shipments WHERE order_id = ?", [order_id]) is not None:
        raise ToolError(f"order {order_id} has left the warehouse; its shipping speed can no longer be changed")
    if order["shipping_speed"] == shipping_speed:
        raise ToolError(f"order {order_id} already ships {shipping_speed}")
    fee = to_money(upgrade_fee)
    if fee < 0:
        raise ToolError("upgrade_fee must not be negative")
    if fee > MAX_SHIPPING_CHARGE:
        raise ToolError(f"upgrade_fee {fee} is above {MAX_SHIPPING_CHARGE}, the most one shipping charge can be")
    db.execute("UPDATE orders SET shipping_speed = ? WHERE id = ?", [shipping_speed, order_id])
    charge = None
    if fee > 0:
        charge = db.next_id("charges")
        db.execute("INSERT INTO charges VALUES (?, ?, ?, 'express_upgrade', ?)", [charge, order_id, fee, db.now])
    return {"order_id": order_id, "shipping_speed": shipping_speed, "charge_id": charge, "charged": fee}


@tool
def get_charges(db: ToolContext, order_id: str) -> dict:
    """Charges made on an order after checkout (express upgrades, reship fees, late cancellation charges).

    Args:
        order_id: Order id.
    """
    _order(db, order_id)
    return {"order_id": order_id, "charges": db.query("SELECT * FROM charges WHERE order_id = ? ORDER BY id", [order_id])}


# --------------------------------------------------------------------------- returns and exchanges


@tool
def list_returns(db: ToolContext, order_id: str) -> dict:
    """Returns and exchanges (RMAs) opened for an order, with their items and amounts.

    Args:
        order_id: Order id.
    """
    _order(db, order_id)
    rows = db.query("SELECT * FROM returns WHERE order_id = ? ORDER BY created_at, id", [order_id])
    for row in rows:
        row["items"] = db.query("SELECT line_no, sku, opened FROM return_items WHERE return_id = ? ORDER BY line_no", [row["id"]])
    return {"order_id": order_id, "returns": rows}


@tool(writes=True)
def create_return(
    db: ToolContext,
    order_id: str,
    line_nos: list[int],
    reason: ReturnReason,
    opened_line_nos: list[int] | None = None,
    restocking_fee: float = 0.0,
    return_shipping_fee: float = 0.0,
    removal_fee: float = 0.0,
) -> dict:
    """Open a return (RMA) for delivered order lines and refund the item total less the fees.

    The refund goes back to the order's payments at once. Fees are those the
    policy says apply; the backend only checks that they do not exceed the items.

    Args:
        order_id: Order id of a delivered order.
        line_nos: Order line numbers being returned.
        reason: changed_mind, defective or wrong_item.
        opened_line_nos: Which of the returned lines were opened or used.
        restocking_fee: Total restocking fee in dollars.
        return_shipping_fee: Return shipping fee in dollars.
        removal_fee: Fee in dollars for uninstalling and hauling away installed items.
    """
    order = _order(db, order_id)
    if order["status"] != "delivered":
        raise ToolError(f"order {order_id} is {order['status']}; only delivered orders can be returned")
    if not line_nos or len(set(line_nos)) != len(line_nos):
        raise ToolError("line_nos must name each returned line once")
    opened = set(opened_line_nos or [])
    if not opened <= set(line_nos):
        raise ToolError("opened_line_nos must be among line_nos")
    already = {r["line_no"] for r in db.query(
        "SELECT ri.line_no FROM return_items ri JOIN returns r ON r.id = ri.return_id WHERE r.order_id = ? AND r.status <> 'rejected'", [order_id])}
    lines = [_line(db, order_id, n) for n in sorted(line_nos)]
    for line in lines:
        if line["line_no"] in already:
            raise ToolError(f"line {line['line_no']} of order {order_id} is already being returned")
    item_total = sum((to_money(line["unit_price"]) * line["quantity"] for line in lines), Decimal("0"))
    fees = [to_money(restocking_fee), to_money(return_shipping_fee), to_money(removal_fee)]
    if any(f < 0 for f in fees):
        raise ToolError("fees must not be negative")
    refund = item_total - sum(fees)
    if refund < 0:
        raise ToolError("fees exceed the value of the returned items")
    rid = db.next_id("returns")
    db.execute(
        "INSERT INTO returns VALUES (?, ?, 'return', ?, 'refunded', ?, ?, ?, ?, ?, ?)",
        [rid, order_id, reason, item_total, *fees, refund, db.now],
    )
    for line in lines:
        db.execute("INSERT INTO return_items VALUES (?, ?, ?, ?)", [rid, line["line_no"], line["sku"], line["line_no"] in opened])
    refunds = _refund_order(db, order_id, refund, "returned_item") if refund > 0 else []
    return {"return_id": rid, "order_id": order_id, "item_total": item_total, "fees": sum(fees), "refund_amount": refund, "refund_ids": refunds}


@tool(writes=True)
def create_exchange(db: ToolContext, order_id: str, line_no: int, new_sku: str) -> dict:
    """Exchange a delivered item for another variant of the same product; the new item ships free (the policy says which exchanges it allows).

    Args:
        order_id: Order id of a delivered order.
        line_no: The order line being exchanged.
        new_sku: SKU of the variant the customer wants instead.
    """
    order = _order(db, order_id)
    if order["status"] != "delivered":
        raise ToolError(f"order {order_id} is {order['status']}; only delivered orders can be exchanged")
    line = _line(db, order_id, line_no)
    if db.query_one(
        "SELECT r.id FROM return_items ri JOIN returns r ON r.id = ri.return_id WHERE r.order_id = ? AND ri.line_no = ? AND r.status <> 'rejected'",
        [order_id, line_no],
    ):
        raise ToolError(f"line {line_no} of order {order_id} was already returned or exchanged")
    old, new = _product(db, line["sku"]), _product(db, new_sku)
    if new_sku == line["sku"] or old["variant_group"] != new["variant_group"]:
        raise ToolError(f"{new_sku} is not another variant of {line['sku']}")
    if (new["on_hand"] or 0) < 1:
        raise ToolError(f"{new_sku} is out of stock")
    rid = db.next_id("returns")
    price = to_money(line["unit_price"])
    db.execute("INSERT INTO returns VALUES (?, ?, 'exchange', 'wrong_variant', 'approved', ?, 0, 0, 0, 0, ?)", [rid, order_id, price, db.now])
    db.execute("INSERT INTO return_items VALUES (?, ?, ?, FALSE)", [rid, line_no, line["sku"]])
    rpl = db.next_id("replacement_orders")
    db.execute("INSERT INTO replacement_orders VALUES (?, ?, ?, 'exchange', ?, 0, 'processing', ?)", [rpl, order_id, new_sku, order["shipping_address"], db.now])
    db.execute("UPDATE inventory SET on_hand = on_hand - 1 WHERE sku = ?", [new_sku])
    return {"return_id": rid, "replacement_id": rpl, "order_id": order_id, "new_sku": new_sku}


# --------------------------------------------------------------------------- replacements, reships and carrier investigations


@tool
def get_replacements(db: ToolContext, order_id: str) -> dict:
    """Replacement and reship orders for an order, and open carrier investigations of its shipment.

    Args:
        order_id: Order id.
    """
    _order(db, order_id)
    return {
        "order_id": order_id,
        "replacements": db.query("SELECT * FROM replacement_orders WHERE order_id = ? ORDER BY created_at, id", [order_id]),
        "investigations": db.query(
            "SELECT ci.* FROM carrier_investigations ci JOIN shipments s ON s.id = ci.shipment_id WHERE s.order_id = ? ORDER BY ci.id", [order_id]
        ),
    }


@tool(writes=True)
def create_replacement_order(
    db: ToolContext,
    order_id: str,
    line_no: int,
    reason: Literal["missing", "damaged_in_transit", "returned_to_sender"],
    shipping_address: str | None = None,
    reship_fee: float = 0.0,
) -> dict:
    """Send an order line again at no item cost: a replacement for a missing or damaged parcel, or a reship of a returned one.

    Out-of-stock items are backordered until their restock date. A reship fee,
    when the policy says one is due, is charged to the customer.

    Args:
        order_id: Order id.
        line_no: The order line to send again.
        reason: missing, damaged_in_transit or returned_to_sender.
        shipping_address: Where to send it; defaults to the order's address.
        reship_fee: Fee in dollars to charge the customer (0 when none is due).
    """
    order = _order(db, order_id)
    if order["status"] == "cancelled":
        raise ToolError(f"order {order_id} is cancelled")
    line = _line(db, order_id, line_no)
    product = _product(db, line["sku"])
    fee = to_money(reship_fee)
    if fee < 0:
        raise ToolError("reship_fee must not be negative")
    if fee > MAX_SHIPPING_CHARGE:
        raise ToolError(f"reship_fee {fee} is above {MAX_SHIPPING_CHARGE}, the most one shipping charge can be")
    address = order["shipping_address"] if shipping_address is None else well_formed_text(shipping_address, "shipping_address", 300)
    in_stock = (product["on_hand"] or 0) >= line["quantity"]
    rpl = db.next_id("replacement_orders")
    status = "processing" if in_stock else "backordered"
    db.execute("INSERT INTO replacement_orders VALUES (?, ?, ?, ?, ?, ?, ?, ?)", [rpl, order_id, line["sku"], reason, address, fee, status, db.now])
    if in_stock:
        db.execute("UPDATE inventory SET on_hand = on_hand - ? WHERE sku = ?", [line["quantity"], line["sku"]])
    charge = None
    if fee > 0:
        charge = db.next_id("charges")
        db.execute("INSERT INTO charges VALUES (?, ?, ?, 'reship_fee', ?)", [charge, order_id, fee, db.now])
    return {"replacement_id": rpl, "status": status, "restock_date": None if in_stock else product["restock_date"], "shipping_address": address, "charge_id": charge}


@tool(writes=True)
def open_carrier_investigation(db: ToolContext, order_id: str, reason: Literal["missing", "damaged"]) -> dict:
    """Ask the carrier to investigate a parcel that was scanned as delivered but not received, or arrived damaged.

    Args:
        order_id: Order id.
        reason: missing or damaged.
    """
    ship = db.query_one("SELECT * FROM shipments WHERE order_id = ?", [order_id])
    if ship is None:
        raise ToolError(f"order {order_id} has no shipment")
    if db.query_one("SELECT id FROM carrier_investigations WHERE shipment_id = ? AND status = 'open'", [ship["id"]]):
        raise ToolError(f"shipment {ship['id']} already has an open investigation")
    iid = db.next_id("carrier_investigations")
    db.execute("INSERT INTO carrier_investigations VALUES (?, ?, ?, 'open', ?)", [iid, ship["id"], reason, db.now])
    return {"investigation_id": iid, "shipment_id": ship["id"], "carrier": ship["carrier"], "status": "open"}


@tool(writes=True)
def refund_order_amount(
    db: ToolContext,
    order_id: str,
    amount: float,
    reason: Literal["price_adjustment", "item_not_received", "damaged_item", "installation_cancelled"],
) -> dict:
    """Refund an amount of an order back to its payments, oldest payment first.

    Args:
        order_id: Order id.
        amount: Amount in dollars.
        reason: price_adjustment, item_not_received, damaged_item or installation_cancelled.
    """
    _order(db, order_id)
    amt = to_money(amount)
    if amt <= 0:
        raise ToolError("amount must be positive")
    return {"order_id": order_id, "amount": amt, "refund_ids": _refund_order(db, order_id, amt, reason)}


# --------------------------------------------------------------------------- warranty


@tool
def get_warranty(db: ToolContext, order_id: str) -> dict:
    """Warranty contracts (manufacturer warranty, protection plans) of an order's items and their claims.

    Args:
        order_id: Order id.
    """
    _order(db, order_id)
    contracts = db.query("SELECT * FROM warranty_contracts WHERE order_id = ? ORDER BY line_no, id", [order_id])
    for c in contracts:
        c["claims"] = db.query("SELECT * FROM warranty_claims WHERE contract_id = ? ORDER BY id", [c["id"]])
    return {"order_id": order_id, "contracts": contracts}


@tool(writes=True)
def file_warranty_claim(
    db: ToolContext,
    contract_id: str,
    issue: Literal["defect", "accidental_damage"],
    resolution: Literal["repair", "replace"],
) -> dict:
    """File a claim under a warranty contract that is in force today.

    Args:
        contract_id: Warranty contract id, e.g. WRN-000123.
        issue: defect or accidental_damage.
        resolution: repair or replace, as the policy decides.
    """
    contract = db.query_one("SELECT * FROM warranty_contracts WHERE id = ?", [contract_id])
    if contract is None:
        raise ToolError(f"warranty contract {contract_id} not found")
    today = db.now.date()
    if not contract["start_date"] <= today <= contract["end_date"]:
        raise ToolError(f"warranty contract {contract_id} is not in force today")
    if issue == "accidental_damage" and not contract["covers_accidental"]:
        raise ToolError(f"warranty contract {contract_id} does not cover accidental damage")
    if db.query_one("SELECT id FROM warranty_claims WHERE contract_id = ? AND status = 'open'", [contract_id]):
        raise ToolError(f"warranty contract {contract_id} already has an open claim")
    cid = db.next_id("warranty_claims")
    db.execute("INSERT INTO warranty_claims VALUES (?, ?, ?, ?, 'open', ?)", [cid, contract_id, issue, resolution, db.now])
    return {"claim_id": cid, "contract_id": contract_id, "issue": issue, "resolution": resolution, "status": "open"}


# --------------------------------------------------------------------------- installation


@tool
def get_installations(db: ToolContext, order_id: str) -> dict:
    """Installation jobs of an order (first installs and revisits).

    Args:
        order_id: Order id.
    """
    _order(db, order_id)
    return {"order_id": order_id, "installations": db.query("SELECT * FROM installations WHERE order_id = ? ORDER BY scheduled_date, id", [order_id])}


def _installation(db: ToolContext, installation_id: str) -> dict:
    job = db.query_one("SELECT * FROM installations WHERE id = ?", [installation_id])
    if job is None:
        raise ToolError(f"installation {installation_id} not found")
    return job


@tool(writes=True)
def reschedule_installation(db: ToolContext, installation_id: str, new_date: IsoDate) -> dict:
    """Move a scheduled installation to another day (installers work Monday to Saturday).

    Args:
        installation_id: Installation id, e.g. INS-000123.
        new_date: The new day, YYYY-MM-DD.
    """
    job = _installation(db, installation_id)
    if job["status"] != "scheduled":
        raise ToolError(f"installation {installation_id} is {job['status']}")
    day = not_too_far_ahead(new_date, db.now.date(), "new_date")
    if day <= db.now.date():
        raise ToolError("new_date must be after today")
    if not installer_works_on(day):
        raise ToolError("installers do not work on Sundays")
    if day == job["scheduled_date"]:
        raise ToolError(f"installation {installation_id} is already on {new_date}")
    return db.execute("UPDATE installations SET scheduled_date = ? WHERE id = ? RETURNING *", [day, installation_id])[0]


@tool(writes=True)
def cancel_installation(db: ToolContext, installation_id: str, late_cancellation_charge: float = 0.0) -> dict:
    """Cancel a scheduled installation. The installation fee is refunded separately; a late-cancellation charge, when due, is kept from it.

    Args:
        installation_id: Installation id.
        late_cancellation_charge: Charge in dollars the policy keeps for a late cancellation (0 when none).
    """
    job = _installation(db, installation_id)
    if job["status"] != "scheduled":
        raise ToolError(f"installation {installation_id} is {job['status']} and cannot be cancelled")
    fee = to_money(late_cancellation_charge)
    if fee < 0:
        raise ToolError("late_cancellation_charge must not be negative")
    ceiling = max(to_money(job["fee"] or 0), INSTALL_FEE)
    if fee > ceiling:
        raise ToolError(f"late_cancellation_charge {fee} is more than {ceiling}, the installation fee it is kept from")
    db.execute("UPDATE installations SET status = 'cancelled' WHERE id = ?", [installation_id])
    charge = None
    if fee > 0:
        charge = db.next_id("charges")
        db.execute("INSERT INTO charges VALUES (?, ?, ?, 'late_cancellation', ?)", [charge, job["order_id"], fee, db.now])
    return {"installation_id": installation_id, "status": "cancelled", "charge_id": charge}


@tool(writes=True)
def schedule_revisit(db: ToolContext, installation_id: str, visit_date: IsoDate) -> dict:
    """Book a free revisit by the installer to fix a problem with a completed installation.

    Args:
        installation_id: The completed installation, e.g. INS-000123.
        visit_date: Day of the revisit, YYYY-MM-DD.
    """
    job = _installation(db, installation_id)
    if job["status"] != "completed":
        raise ToolError(f"installation {installation_id} is {job['status']}; only completed installations get a revisit")
    day = not_too_far_ahead(visit_date, db.now.date(), "visit_date")
    if day <= db.now.date() or not installer_works_on(day):
        raise ToolError("visit_date must be a future day from Monday to Saturday")
    new_id = db.next_id("installations")
    return db.execute(
        "INSERT INTO installations VALUES (?, ?, ?, 'revisit', 'scheduled', ?, NULL, 0) RETURNING *", [new_id, job["order_id"], job["line_no"], day]
    )[0]


# --------------------------------------------------------------------------- promotions


@tool
def get_promotion(db: ToolContext, code: str) -> dict:
    """A promotion code's terms: discount, minimum subtotal, validity dates, stacking and membership rules.

    Args:
        code: Promotion code, e.g. SPRING15.
    """
    row = db.query_one("SELECT * FROM promotions WHERE upper(code) = upper(?)", [code.strip()])
    if row is None:
        raise ToolError(f"promotion {code} not found")
    return row


@tool
def get_order_discounts(db: ToolContext, order_id: str) -> dict:
    """Promotion discounts applied to an order, at checkout or as later adjustments.

    Args:
        order_id: Order id.
    """
    _order(db, order_id)
    return {"order_id": order_id, "discounts": db.query("SELECT * FROM discount_applications WHERE order_id = ? ORDER BY created_at, id", [order_id])}


@tool(writes=True)
def apply_promotion_adjustment(db: ToolContext, order_id: str, code: str, amount: float) -> dict:
    """Apply a promotion the checkout failed to apply: record the discount and refund it to the order's payments.

    Args:
        order_id: Order id.
        code: Promotion code.
        amount: Discount in dollars, as the promotion's terms compute it.
    """
    _order(db, order_id)
    promo = db.query_one("SELECT * FROM promotions WHERE upper(code) = upper(?)", [code.strip()])
    if promo is None:
        raise ToolError(f"promotion {code} not found")
    if db.query_one("SELECT id FROM discount_applications WHERE order_id = ? AND code = ?", [order_id, promo["code"]]):
        raise ToolError(f"promotion {promo['code']} is already applied to order {order_id}")
    amt = to_money(amount)
    if amt <= 0:
        raise ToolError("amount must be positive")
    did = db.next_id("discount_applications")
    db.execute("INSERT INTO discount_applications VALUES (?, ?, ?, ?, 'adjustment', ?)", [did, order_id, promo["code"], amt, db.now])
    refunds = _refund_order(db, order_id, amt, "price_adjustment")
    return {"discount_id": did, "order_id": order_id, "code": promo["code"], "amount": amt, "refund_ids": refunds}


# --------------------------------------------------------------------------- reward points and membership fees


@tool
def get_reward_points(db: ToolContext, customer_id: str) -> dict:
    """A customer's reward-points ledger and balance.

    Args:
        customer_id: Customer id.
    """
    if db.query_one("SELECT id FROM customers WHERE id = ?", [customer_id]) is None:
        raise ToolError(f"customer {customer_id} not found")
    rows = db.query("SELECT * FROM reward_points WHERE customer_id = ? ORDER BY created_at, id", [customer_id])
    return {"customer_id": customer_id, "balance": sum(r["points"] for r in rows), "entries": rows}


@tool(writes=True)
def adjust_reward_points(db: ToolContext, customer_id: str, points: int, order_id: str | None = None) -> dict:
    """Add (or, with a negative number, remove) reward points by hand, e.g. for a purchase that was never credited.

    Args:
        customer_id: Customer id.
        points: Points to add; negative to remove.
        order_id: The order the points belong to, if any.
    """
    if db.query_one("SELECT id FROM customers WHERE id = ?", [customer_id]) is None:
        raise ToolError(f"customer {customer_id} not found")
    if points == 0:
        raise ToolError("points must not be zero")
    if abs(points) > MAX_POINTS_ADJUSTMENT:
        raise ToolError(f"points {points} is beyond the {MAX_POINTS_ADJUSTMENT:,} a single adjustment can move")
    balance = db.query_one("SELECT coalesce(sum(points), 0) AS total FROM reward_points WHERE customer_id = ?", [customer_id])
    non_negative_balance(int(balance["total"] if balance else 0) + points, f"the reward points balance of {customer_id}")
    if order_id is not None and db.query_one("SELECT id FROM orders WHERE id = ? AND customer_id = ?", [order_id, customer_id]) is None:
        raise ToolError(f"order {order_id} does not belong to customer {customer_id}")
    pid = db.next_id("reward_points")
    db.execute("INSERT INTO reward_points VALUES (?, ?, ?, 'adjustment', ?, ?)", [pid, customer_id, points, order_id, db.now])
    return {"entry_id": pid, "customer_id": customer_id, "points": points}


@tool(writes=True)
def refund_membership_fee(db: ToolContext, membership_id: str, amount: float) -> dict:
    """Refund (part of) the annual fee of a Brightwell Plus membership.

    Args:
        membership_id: Membership id, e.g. MEM-000123.
        amount: Amount in dollars; at most the annual fee less earlier fee refunds.
    """
    mem = db.query_one("SELECT * FROM memberships WHERE id = ?", [membership_id])
    if mem is None:
        raise ToolError(f"membership {membership_id} not found")
    amt = to_money(amount)
    done = to_money(db.query_one("SELECT coalesce(sum(amount), 0) AS s FROM membership_refunds WHERE membership_id = ?", [membership_id])["s"])
    if amt <= 0 or amt > to_money(mem["annual_fee"]) - done:
        raise ToolError(f"amount must be positive and at most {to_money(mem['annual_fee']) - done}")
    rid = db.next_id("membership_refunds")
    db.execute("INSERT INTO membership_refunds VALUES (?, ?, ?, ?)", [rid, membership_id, amt, db.now])
    return {"refund_id": rid, "membership_id": membership_id, "amount": amt}
