"""The authoring kit: what every domain's task families are written with.

- ``domain_data``: the domain's clock, seed rows and the ids a golden run will mint, read
  without a database, so generating thousands of training variants costs no DuckDB work;
- ``draft``: :class:`TaskDraft`, the one builder of a task (golden calls with their sources,
  the agent's turns, the customer's facts and decisions, the checks, faults) and its ``body()``;
- ``body``: :class:`TaskBody`, the record the engine reads, and ``combine`` (two requests, one
  conversation);
- ``openings``: opening templates with held-out ones for the test split, grouped by story where
  a template must not contradict the records;
- ``saying``: how amounts, dates, policy references and literal dialogue patterns are written.

Engine only: nothing here names a domain.
"""

from .body import TaskBody, ask, combine, inform, pick_branch, propose
from .domain_data import domain_clock, domain_folder, domain_spec_of, predict_next_ids, seed_rows
from .draft import TaskDraft
from .openings import Openings, StoryOpenings, template_fields

__all__ = [
    "Openings",
    "StoryOpenings",
    "TaskBody",
    "TaskDraft",
    "ask",
    "combine",
    "domain_clock",
    "domain_folder",
    "domain_spec_of",
    "inform",
    "pick_branch",
    "predict_next_ids",
    "propose",
    "seed_rows",
    "template_fields",
]
