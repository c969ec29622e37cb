"""Executable checks and grading: one module per check kind under one contract, and ``grade() -> Verdict``.

State checks are derived from the golden outcome rather than written per task:
one ``effect`` check per expected canonical effect and one ``no_collateral``
check for everything else the agent changed. Together they hold exactly when the
final canonical state equals the golden one. Explicit checks add SQL predicates,
dialogue patterns and rubric questions. A check that could not be evaluated (a
rubric with no judge) is ``None``: it never counts as passed.

Every module of this package other than the contract, the outcome, grading and the declarations
and readings the kinds share (``verdict_rules``, ``dialogue``, ``agreement``, ``policy_rules``,
``asked_checks``) is imported here, so a new kind is one new module (see :mod:`.base`).
"""

from __future__ import annotations

import importlib
import pkgutil

from ..contracts.records import FAILURE_CATEGORIES, CheckResult
from ..state.diff import StateDiff
from .base import (
    CheckGroup,
    CheckKind,
    GradingContext,
    Judge,
    kind,
    kinds,
    kinds_in,
    kinds_where,
    register,
    reward_groups,
    spec_sections,
)
from .grading import (
    assemble_verdict,
    dialogue_positions,
    evaluate_checks,
    failure_category,
    finish_reason_of,
    grade,
    interleave,
    reward_vector,
    trial_outcome,
    verdict,
)
from .outcome import StateOutcome, state_outcome

_INFRASTRUCTURE = {"base", "grading", "outcome", "verdict_rules", "dialogue", "agreement", "policy_rules", "asked_checks"}


def _discover() -> None:
    for info in pkgutil.iter_modules(__path__):
        if info.name not in _INFRASTRUCTURE and not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")


_discover()

# The kinds whose failures mean the backend ended wrong (the failure taxonomy's "state" group).
STATE_KINDS = kinds_in("state")


def state_checks(golden: StateDiff, agent: StateDiff) -> list[CheckResult]:
    """The ``effect`` checks and the ``no_collateral`` check of an agent diff against the golden one.

    The plain comparison, which holds exactly when the canonical hashes agree; grading first leaves
    the domain's bookkeeping on the request's own ticket out of both diffs (``_bookkeeping.py``).
    """
    from .effect import effect_results
    from .no_collateral import collateral_result

    return [*effect_results(golden, agent), collateral_result(golden, agent)]


__all__ = [
    "FAILURE_CATEGORIES",
    "STATE_KINDS",
    "assemble_verdict",
    "CheckGroup",
    "CheckKind",
    "CheckResult",
    "GradingContext",
    "Judge",
    "StateOutcome",
    "dialogue_positions",
    "evaluate_checks",
    "interleave",
    "failure_category",
    "finish_reason_of",
    "grade",
    "kind",
    "kinds",
    "kinds_in",
    "kinds_where",
    "reward_groups",
    "spec_sections",
    "register",
    "reward_vector",
    "state_checks",
    "state_outcome",
    "trial_outcome",
    "verdict",
]
