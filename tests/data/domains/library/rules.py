"""The library's lending rules, shared by the tools and the task families.

A rule a tool enforces and a family draws a task around is written once, here:
families import this module, never ``tools``.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta

from thinkingbox_env.authoring import domain_clock, seed_rows

NOW: datetime = domain_clock(__file__)
TODAY: date = NOW.date()
LOAN_DAYS = 14
# the catalogue, read once from the seed the tools also read
BOOKS: dict[str, dict[str, str]] = {r["id"]: r for r in seed_rows(__file__, "books")}


def due_date(lent_on: date) -> date:
    """A loan is due ``LOAN_DAYS`` days after the day it is lent."""
    return lent_on + timedelta(days=LOAN_DAYS)
