"""The figures of a frozen task set, measured from its files.

Every domain doc and ``docs/task_sets.md`` report what a task set holds (golden actions and
writes per task, the mix of outcomes, recoveries, rubric and injection tasks); the figures are
computed here from the frozen specs, and a test compares the published table with them, so a
refreeze that changes the set cannot leave stale numbers behind.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import asdict, dataclass

from ..contracts.spec import TaskSpec
from .domain import load_domain
from .lookup import list_tasks, load_task


@dataclass(frozen=True)
class TaskSetStatistics:
    """One domain's task set, as published in ``docs/task_sets.md``."""

    domain: str
    version: int
    tasks: int
    families: int
    actions_min: int
    actions_median: float
    actions_max: int
    writes_mean: float
    writes_max: int
    ticket_only: int  # no write beyond the ticketing system (refusals, answers, escalations)
    no_write: int  # the golden changes nothing at all
    two_request: int  # more than one request in the conversation
    recovery: int  # the golden recovers from a failed call (a wrong id given first, a scheduled fault)
    rubric: int  # a judge-read requirement
    injection: int  # an instruction planted in a record the agent reads
    openings: int  # distinct opening messages

    def share(self, count: int) -> str:
        return f"{100 * count / self.tasks:.0f}%" if self.tasks else "-"


def _successful_writes(spec: TaskSpec, write_tools: frozenset[str]) -> list[str]:
    return [c.name for c in spec.golden if c.name in write_tools and not c.expect_error]


def _requests(spec: TaskSpec) -> int:
    """How many requests the conversation holds: one branch per request, a ``+`` pair, or the ``two_requests`` tag."""
    branches = spec.origin.branches if spec.origin is not None else []
    joined = max([len(b.split(":", 1)[-1].split("+")) for b in branches] or [1])
    return max(len(branches), joined, 2 if "two_requests" in spec.tags else 1)


def measure(specs: Iterable[TaskSpec], domain: str, version: int) -> TaskSetStatistics:
    """The statistics of ``specs``, one domain's frozen tasks."""
    tasks = list(specs)
    if not tasks:
        raise ValueError(f"no frozen tasks for domain '{domain}' version {version}")
    loaded = load_domain(domain)
    write_tools = frozenset(name for name, t in loaded.toolbox.tools.items() if t.writes)
    # a task whose only writes are the ticketing system's changes no business record
    ticketing = loaded.ticketing
    ticket_writes = frozenset(t.name for t in ticketing.tools() if t.writes) if ticketing is not None else frozenset()
    writes = [_successful_writes(s, write_tools) for s in tasks]
    actions = [len(s.golden) for s in tasks]
    return TaskSetStatistics(
        domain=domain,
        version=version,
        tasks=len(tasks),
        families=len({s.family for s in tasks}),
        actions_min=min(actions),
        actions_median=statistics.median(actions),
        actions_max=max(actions),
        writes_mean=round(sum(map(len, writes)) / len(tasks), 2),
        writes_max=max(map(len, writes)),
        ticket_only=sum(1 for w in writes if w and set(w) <= ticket_writes),
        no_write=sum(1 for w in writes if not w),
        two_request=sum(1 for s in tasks if _requests(s) > 1),
        recovery=sum(1 for s in tasks if any(c.expect_error for c in s.golden)),
        rubric=sum(1 for s in tasks if s.checks.rubric),
        injection=sum(1 for s in tasks if getattr(s.checks, "injections", None)),
        openings=len({s.user.opening for s in tasks}),
    )


def task_set_statistics(domain: str, version: int | None = None) -> TaskSetStatistics:
    """The statistics of one domain's frozen set: the current one, or an archived ``version``."""
    current = load_domain(domain).spec.task_set_version
    chosen = current if version is None else version
    ids = list_tasks(domain, task_set_version=chosen)
    return measure((load_task(t) for t in ids), domain, chosen)


HEADER = ("| domain | version | tasks | families | golden actions (min / median / max) | writes per task (mean / max) "
          "| ticket-only | no write | two requests | recovery | rubric | injection | distinct openings |")


def markdown_row(st: TaskSetStatistics) -> str:
    """One row of the table ``docs/task_sets.md`` publishes."""
    def count(n: int) -> str:
        return f"{n} ({st.share(n)})"

    median = f"{st.actions_median:g}"
    return (f"| {st.domain} | {st.version} | {st.tasks} | {st.families} | {st.actions_min} / {median} / {st.actions_max} "
            f"| {st.writes_mean:.2f} / {st.writes_max} | {count(st.ticket_only)} | {count(st.no_write)} "
            f"| {count(st.two_request)} | {count(st.recovery)} | {count(st.rubric)} | {count(st.injection)} "
            f"| {st.openings} |")


def markdown_table(rows: Iterable[TaskSetStatistics]) -> str:
    """The whole table, header and one row per domain and version."""
    separator = "|" + "---|" * HEADER.count(" | ") + "---|"
    return "\n".join([HEADER, separator, *(markdown_row(r) for r in rows)])


def as_dict(st: TaskSetStatistics) -> dict[str, object]:
    """The statistics as plain values, for JSON."""
    return asdict(st)
