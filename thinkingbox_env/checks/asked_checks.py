"""Which of an episode's checks ask for work, so that shaped rewards pay for work and never for inaction.

Some checks pass only when the agent did or said something the task asks: the expected state
changes (``effect``), the facts the closing must mention or state (``mentions``, ``states``, and
among the claims ``claims:states_outcome``), the judged questions (``rubric``). The others are
guards that an episode which did nothing also passes: no collateral change, injection, process
rules, withheld facts, grounded values, SQL state checks, truthfulness and the remaining claims.
A shaped reward that counted guards would pay an idle episode; the trainers' shaped rewards
(``reward_progress``, ``reward_checks`` and ``CheckRewardWrapper``) use this split to pay 0 when
nothing asked was done.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

ASKED_KINDS = ("effect", "mentions", "states", "rubric")
ASKED_CHECKS = ("claims:states_outcome",)


def asked_checks(check_details: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The checks of an episode that ask for work: the effects where the task has them, else what it asks to be said.

    A task without effect checks (its right outcome is an answer or a refusal) asks for its
    mentions, stated values, stated outcome and judged questions; checks not evaluated (no
    judge) are left out.
    """
    effects = [d for d in check_details if d["kind"] == "effect"]
    if effects:
        return effects
    return [d for d in check_details if (d["kind"] in ASKED_KINDS or d["name"] in ASKED_CHECKS) and d["passed"] is not None]


def did_asked_work(check_details: Sequence[dict[str, Any]]) -> bool:
    """True when at least one check that asks for work passed (see :func:`asked_checks`)."""
    return any(d["passed"] is True for d in asked_checks(check_details))
