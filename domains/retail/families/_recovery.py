"""What happens on the correct path after a request is drawn: a ticketing user to create, a recovery.

- A customer who has never contacted support has no ticketing user: the golden creates one
  right after the lookups (policy: identifying the customer).
- A recovery, drawn from the seed alone (the schedule ``_dimensions.RECOVERY``): the customer misremembers the order number or the
  email (the golden holds the failed lookup and the agent says it found nothing), or the
  payment service times out once on a refund (a documented transient error, retried).
"""

from __future__ import annotations

from ._dimensions import RECOVERY
from ._draft import USER_TWICE, RetailDraft

REFUND_TOOLS = ("issue_refund", "refund_order_amount", "refund_membership_fee")
TIMEOUT = "payment service timed out; nothing was changed, retry"


def create_ticket_user(d: RetailDraft, name: str, email: str) -> None:
    """Create the customer's ticketing user in the golden, right after the lookup that found none."""
    at = next(i for i, c in enumerate(d.golden) if c["name"] == "search_tickets" and c["arguments"].get("table") == "users") + 1
    d.insert(at, "create_ticket_user", why={"name": "record:get_customer_profile", "email": "record:get_customer_profile"},
             idempotent=USER_TWICE, name=name, email=email)


def misremember(d: RetailDraft, key: str, value: str, wrong: str, error: str, inform: str) -> bool:
    """The customer first gives ``wrong`` for ``value``: a failed lookup, an inform turn, then the right lookup."""
    at = next((i for i, c in enumerate(d.golden) if c["arguments"].get(key) == value), None)
    fact = next((f for f in d.facts if value in f["text"]), None)
    if at is None or fact is None:
        return False
    d.insert(at, d.golden[at]["name"], expect_error=error, **{**d.golden[at]["arguments"], key: wrong})
    fact["value"] = value
    fact["misremembered"] = wrong
    d.opening = d.opening.replace(value, wrong)
    d.informs.append((at + 1, inform))
    return True


def timeout_once(d: RetailDraft) -> bool:
    """The first refund call meets a documented payment-service timeout and is retried."""
    at = next((i for i, c in enumerate(d.golden) if c["name"] in REFUND_TOOLS), None)
    if at is None:
        return False
    d.insert(at, d.golden[at]["name"], expect_error="payment service timed out", **d.golden[at]["arguments"])
    d.fault(d.golden[at]["name"], TIMEOUT)
    d.informs.append((at + 1, "The payment service timed out on my side; nothing went through, so I'm trying that refund again."))
    return True


def wrong_order_id(order_id: str) -> str:
    """A plausible misremembering of an order number: the last two digits swapped, or the last one changed."""
    head, digits = order_id[:-2], order_id[-2:]
    if digits[0] != digits[1]:
        return head + digits[::-1]
    return order_id[:-1] + str((int(order_id[-1]) + 3) % 10)


def wrong_email(email: str) -> str:
    """The address of an old account: a different number or none before the @."""
    local, domain = email.split("@", 1)
    stripped = local.rstrip("0123456789")
    return f"{stripped}@{domain}" if stripped != local else f"{local}1@{domain}"


def add_recovery(d: RetailDraft, code: str, seed: int, order_id: str | None) -> str | None:
    """Draw (from the seed alone) whether and how this task recovers on the correct path; returns the kind."""
    bands = RECOVERY.eligible(RECOVERY.roll(code, seed))
    if "misremembered_order" in bands and order_id:
        wrong = wrong_order_id(order_id)
        if misremember(d, "order_id", order_id, wrong, "not found",
                       f"I can't find an order {wrong}. Could you check the order number?"):
            return "misremembered_order"
    elif "misremembered_email" in bands and d.email:
        wrong = wrong_email(d.email)
        if misremember(d, "email", d.email, wrong, "no customer found",
                       f"I can't find an account with the email {wrong}. Could you check it, or give me another email you use with us?"):
            return "misremembered_email"
    elif "payment_timeout" in bands and timeout_once(d):
        return "payment_timeout"
    return None
