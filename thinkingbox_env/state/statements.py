"""What the episode must know of a statement before running it: read or write, which table, and how to track it.

Every write runs with ``RETURNING *`` (appended, or put in place of a plain column list) so
that its returned rows say exactly what it did: they go into the episode's overlay, and the
diff and hash follow from the overlay without reading a table back. A write whose effect
cannot be told from its returned rows (a RETURNING expression, a primary key that may move)
is run as written and sends its table to a full scan at grading.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .tables import TableInfo

_WRITE_RE = re.compile(r"^\s*(?:INSERT\s+(?:OR\s+\w+\s+)?INTO|UPDATE|DELETE\s+FROM)\s+([A-Za-z_][A-Za-z0-9_]*)", re.IGNORECASE)
_READ_RE = re.compile(r"^\s*(?:SELECT|WITH)\b", re.IGNORECASE)
_RETURNING_RE = re.compile(r"\bRETURNING\b(.*)$", re.IGNORECASE | re.DOTALL)
_SET_RE = re.compile(r"\bSET\b(.*?)(?:\bWHERE\b|\bFROM\b|$)", re.IGNORECASE | re.DOTALL)
_COLUMN_LIST_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\s*,\s*[A-Za-z_][A-Za-z0-9_]*)*")
# a write that reads other rows than its own target cannot be keyed by its target table alone
_SUBQUERY_RE = re.compile(r"\b(?:SELECT|FROM|USING|WITH|TABLE)\b", re.IGNORECASE)


def is_read(sql: str) -> bool:
    """A SELECT (or WITH) statement: the only kind ``query()`` runs."""
    return _READ_RE.match(sql) is not None


def written_table(sql: str) -> str | None:
    """The table an INSERT, UPDATE or DELETE writes; None for any other statement."""
    match = _WRITE_RE.match(sql)
    return None if match is None else match.group(1)


@dataclass(frozen=True)
class WritePlan:
    """How a write is run and what its returned rows can tell."""
    kind: str  # INSERT, UPDATE or DELETE
    run: str  # the statement as run: with RETURNING * wherever its rows can be tracked
    tracked: bool  # its returned rows are whole rows that say its whole effect
    returns: bool  # the caller wrote a RETURNING clause and gets rows back
    project: tuple[str, ...] | None  # the plain columns the caller asked RETURNING for (run with *)
    self_contained: bool  # reads no rows but its target's (no subquery): its memo key names one table


def plan_write(sql: str, info: TableInfo) -> WritePlan:
    """The plan of a write to ``info``'s table (``written_table`` has matched it)."""
    match = _WRITE_RE.match(sql)
    assert match is not None
    kind = sql.lstrip()[:6].upper()
    returning = _RETURNING_RE.search(sql)
    project: tuple[str, ...] | None = None
    if returning is None:
        run, tracked = sql.rstrip().rstrip(";") + " RETURNING *", True
    else:
        listed = returning.group(1).strip().rstrip(";").strip()
        names_listed = tuple(n.strip() for n in listed.split(",")) if _COLUMN_LIST_RE.fullmatch(listed) else ()
        if listed == "*":
            run, tracked = sql, True
        elif names_listed and all(n in info.columns for n in names_listed):
            # plain columns: run with RETURNING * (the overlay needs whole rows) and hand back the columns asked for
            run, tracked, project = sql[:returning.start(1)] + " *", True, names_listed
        else:
            run, tracked = sql, False
    if tracked and kind == "UPDATE":
        sets = _SET_RE.search(sql)
        if sets is None or any(re.search(rf"\b{re.escape(c)}\b\s*=", sets.group(1), re.IGNORECASE) for c in info.primary_key):
            tracked = False  # a key may have moved: only a scan can tell
    return WritePlan(kind, run, tracked, returning is not None, project, not _SUBQUERY_RE.search(sql, match.end()))
