"""Scheduled transient tool failures: the n-th call of a tool in an episode fails and changes nothing.

Real backends time out; a careful agent reads the error and retries. Tasks that put such a
recovery on the correct path schedule the failure in their spec (``faults``), so that it happens
at the same call in every episode, whatever the seed: the verdict stays a function of the actions.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from ..contracts.spec import Fault


class FaultPlan:
    """Counts an episode's calls per tool and answers which of them the task makes fail."""

    def __init__(self, faults: Iterable[Fault]) -> None:
        self._errors: dict[tuple[str, int], str] = {(f.tool, f.call): f.error for f in faults}
        self._calls: Counter[str] = Counter()

    def on_call(self, tool_name: str) -> str | None:
        """Record a call of ``tool_name``; the scheduled error if this call is to fail, else None."""
        self._calls[tool_name] += 1
        return self._errors.get((tool_name, self._calls[tool_name]))

    def __bool__(self) -> bool:
        return bool(self._errors)
