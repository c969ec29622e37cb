"""Per-episode backend state in one shared, embedded DuckDB database.

A fresh DuckDB connection per episode costs tens of megabytes and milliseconds of DDL, so
all episodes of a process share one in-memory database (``sandbox``) and are kept apart by
schemas:

* ``d_<domain>``: the domain template (schema + seed rows), built once per process (``database``);
* ``t_<n>``: a task template, holding only the tables the task's patch touches (``templates``,
  built by ``patching``; in Python where that is certain, then created in DuckDB only when a
  second episode needs one of its tables);
* ``e_<n>``: one per episode, created only when the episode first needs DuckDB (``episode``).

An episode answers each statement from the first of three that can: the process-wide memo
(``memo``), the fast path (``fastpath``: reads by equality and one-row writes computed in
Python where the answer is certain to be DuckDB's, each shape counted in ``FAST_PATH_HITS``
and checked against DuckDB in verify mode, ``verify``), then DuckDB itself. Tools see the
state only as a ``ToolContext``; grading reads it through ``EpisodeState.outcome_inputs``.
"""

from __future__ import annotations

from .context import ToolContext
from .database import DomainDatabase, read_seed_csv
from .episode import EpisodeState
from .errors import FastPathMismatch, StateError
from .memo import ReadCache, _params_key
from .outcome import OutcomeInputs
from .patching import _CopyRules
from .sandbox import KEPT_OPTIMIZERS, SANDBOX_CONFIG, _Process, _quote
from .tables import TableInfo
from .templates import TaskTemplate
from .verify import FAST_PATH_HITS, STATEMENTS, VERIFY_ENV, verify_mode

__all__ = [
    "FAST_PATH_HITS", "KEPT_OPTIMIZERS", "SANDBOX_CONFIG", "STATEMENTS", "VERIFY_ENV", "DomainDatabase", "EpisodeState",
    "FastPathMismatch", "OutcomeInputs", "ReadCache", "StateError", "TableInfo", "TaskTemplate", "ToolContext",
    "_CopyRules", "_Process", "_params_key", "_quote", "read_seed_csv", "verify_mode",
]
