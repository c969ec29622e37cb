"""Where each value a retail golden write passes comes from, decided by the argument's kind.

Every golden write names the source of each argument (``why``): an id is read from the
lookup that returned it, a ticket field from the ticket rules, a fee from its
knowledge-base document, a reason or an amount from the family's policy section, a
date, an address or a code from the customer. Writing the rule once here means no
family can leave a source out or name one its golden never read.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

# the golden write tools of this domain (retail tools and the engine's ticket tools)
WRITE_TOOLS = frozenset({
    "create_ticket", "update_ticket", "create_ticket_user",
    "update_membership", "cancel_order", "issue_refund", "issue_store_credit", "update_shipping_address",
    "change_shipping_speed", "create_return", "create_exchange", "create_replacement_order",
    "open_carrier_investigation", "refund_order_amount", "file_warranty_claim", "reschedule_installation",
    "cancel_installation", "schedule_revisit", "apply_promotion_adjustment", "adjust_reward_points",
    "refund_membership_fee",
})
TICKET_TOOLS = frozenset({"create_ticket", "update_ticket", "create_ticket_user"})
# ticket text: the engine's ticket tools type these as plain strings, so they are given the source of their content,
# the customer's request (subject, description) or the outcome the family's policy section decides (note)
TICKET_TEXT = {"subject": "customer", "description": "customer"}
# where an id comes from: the read tools whose result carries it, in order of preference
ID_SOURCES: dict[str, tuple[str, ...]] = {
    "customer_id": ("get_customer_profile",),
    "order_id": ("get_order", "get_shipment", "get_payments", "list_customer_orders"),
    "payment_id": ("get_payments",),
    "membership_id": ("get_membership",),
    "installation_id": ("get_installations",),
    "contract_id": ("get_warranty",),
    "requester_id": ("search_tickets",),
    "ticket_id": ("search_tickets",),
    "line_no": ("get_order",),
    "line_nos": ("get_order",),
}
# arguments only the customer can give
CUSTOMER_ARGS = frozenset({"new_date", "visit_date", "shipping_address", "code", "new_sku", "name", "email"})
TICKET_FIELDS = frozenset({"category", "priority", "status"})


def sources(tool: str, arguments: dict[str, Any], reads: Iterable[str], section: str, overrides: dict[str, str]) -> dict[str, str]:
    """The source of every argument of a write to ``tool`` made after the lookups named in ``reads``.

    ``overrides`` ("tool.arg" or "arg" -> source) is a family's word where the rule of kinds does not fit;
    ``section`` is the policy section that decides the family's other values.
    """
    read = set(reads)
    why: dict[str, str] = {}
    for arg in arguments:
        key = f"{tool}.{arg}"
        if key in overrides:
            why[arg] = overrides[key]
        elif arg in overrides:
            why[arg] = overrides[arg]
        elif arg in TICKET_TEXT:
            why[arg] = TICKET_TEXT[arg]
        elif arg == "note":
            why[arg] = section
        elif tool in TICKET_TOOLS and arg in TICKET_FIELDS:
            why[arg] = "policy#tickets"
        elif arg == "requester_id" and "create_ticket_user" in read:
            # the id the user creation just minted: the policy's identification steps say to use it
            why[arg] = "policy#identifying-the-customer"
        elif arg in ID_SOURCES:
            source = next((t for t in ID_SOURCES[arg] if t in read), None)
            if source is None and arg != "order_id":  # only an order number is something the customer knows by heart
                raise ValueError(f"{tool}.{arg}: the golden reads no record that shows it ({', '.join(ID_SOURCES[arg])})")
            why[arg] = f"record:{source}" if source else "customer"
        elif arg in CUSTOMER_ARGS:
            why[arg] = "customer"
        else:
            why[arg] = section
    return why
