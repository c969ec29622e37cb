"""One customer request as the kit's draft, with the Ashgrove state it is written about.

A request knows its household (the patch rows and the handle ``hd`` to them), where identity
stands (the factor the customer can give, a misremembered value to recover from, the
ticketing user found or created) and the one ticket it would close the conversation with.
Two requests of one conversation share the household: the second writes into the first's
patch and reuses its verification (``shared``).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from thinkingbox_env.authoring import TaskBody, TaskDraft
from thinkingbox_env.authoring.saying import policy_ref

TRANSIENT_ERROR = "the policy administration service is temporarily unavailable (timeout); nothing was changed, retry the request"


@cache
def _headings() -> dict[int, str]:
    text = (Path(__file__).resolve().parent.parent / "policy.md").read_text(encoding="utf-8")
    out = {}
    for line in text.splitlines():
        m = re.match(r"^#+\s+(\d+)\.\s", line)
        if m:
            out[int(m.group(1))] = line.lstrip("#").strip()
    return out


def pol(section: int) -> str:
    """The ``why`` source naming a numbered section of policy.md (resolved from the headings, never typed by hand)."""
    return policy_ref(_headings()[section])


@dataclass(frozen=True)
class Ticket:
    """What the conversation's one ticket records; ``team_source`` is the policy section that sends it to the team."""

    category: str
    status: str
    priority: str = "normal"
    team: str | None = None
    team_source: str | None = None


@dataclass
class InsuranceDraft(TaskDraft):
    """One request being written: the kit's draft plus the household and the identity state it is about."""

    rng: random.Random = field(default_factory=random.Random)
    seed: int = 0
    branch: str = ""
    split: str = "train"
    ids: dict[str, Any] = field(default_factory=dict)
    hd: dict[str, Any] = field(default_factory=dict)  # the household's rows by role (customer, policy, billing, vehicles...)
    factor: str | None = None  # the secondary factor the customer gives; None: partial verification only
    recovery: str | None = None  # the value the customer misremembers first ("policy_number" or "email")
    transient: bool = False  # the request's first write meets a transient fault and is retried
    shared: bool = False  # the second request of a conversation: identified and verified by the first
    vague: bool = False  # the opening holds the request back; the customer gives it when asked
    injects: bool = False  # drawn from the seed before the household: this conversation carries a planted instruction
    requester: int = 0
    requester_source: str = "record:search_tickets"
    request_text: str = ""
    ticket: Ticket | None = None
    planted: dict[str, Any] | None = None  # the earlier ticket that carries a planted instruction (see ``_injection``)

    def put(self, table: str, row: dict[str, Any]) -> dict[str, Any]:
        """Add ``row`` to the patch and hand it back, so that later draws (a lapse, a past-due amount) change the row itself."""
        self.add(table, row)
        return row

    def change(self, tool: str, why: dict[str, str], /, *, idempotent: str | None = None, free_text: frozenset[str] = frozenset(),
               **arguments: Any) -> int:
        """The request's own change, a golden write; in a task drawn with a transient fault, its first one fails once and is retried."""
        if self.transient and not self.faults:
            self.fault(tool, TRANSIENT_ERROR)
            self.call(tool, why={k: v for k, v in why.items() if k in arguments}, expect_error="temporarily unavailable", **arguments)
        return self.write(tool, why, idempotent=idempotent, free_text=free_text, **arguments)

    def close(self, category: str, status: str, priority: str = "normal", team: str | None = None, *, reply: str,
              team_source: str | None = None) -> None:
        """Record what the one ticket of this request should say, and the closing reply."""
        self.ticket = Ticket(category, status, priority, team, team_source)
        self.reply(reply)

    def body(self) -> TaskBody:
        """The kit's body with the tags as written, repeats kept.

        The kit drops a repeated tag; a reinstatement task carries its family's name and its workflow
        tag, the same word, twice, and its frozen files list both.
        """
        out = super().body()
        out.tags = list(self.tags)
        return out
