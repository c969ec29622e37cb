"""The process-wide statement memo, and the switches that say which shortcuts answer a statement.

Episodes of one task repeat the same statements again and again (a GRPO group replays one
task many times, evaluation trials repeat it), and a DuckDB round trip costs far more than a
dictionary lookup. A statement's answer depends only on the statement, its parameters and
the content of the tables it names; the memo keys it by exactly those.
"""

from __future__ import annotations

import itertools
import re
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import duckdb

from .sandbox import _Process

if TYPE_CHECKING:
    from .tables import TableInfo

# functions whose value is not fixed by the statement and the data: such statements are never memoised
VOLATILE_RE = re.compile(
    r"\b(?:random|uuid|gen_random_uuid|uuidv\d|now|today|current_timestamp|current_date|current_time|"
    r"current_localtimestamp|localtime|localtimestamp|get_current_time|get_current_timestamp|"
    r"transaction_timestamp|nextval|currval|setseed|getvariable)\b",
    re.IGNORECASE,
)

Answer = tuple[tuple[str, ...], list[tuple]]  # a statement's column names and rows, as DuckDB returns them


class ReadCache:
    """Memoised statements: reads and writes whose answer is fixed by the data they name.

    The key holds, for every table a statement names, the template schema it comes from
    and a number that stands for the episode's overlay of it (0 when the episode has not
    written it). Two tasks or two different episode states therefore never share an entry
    by accident, and two episodes in the same state always do.

    Three switches, read by ``EpisodeState`` as it asks memo, fast path and DuckDB in turn:
    ``enabled`` (off: every statement goes to DuckDB, a benchmark's cold figures; the fast
    path is off too), ``template_only`` (the earlier engine's memo: only reads of tables no
    episode wrote) and ``fast_path`` (off: no statement is answered in Python, the memo
    still is).
    """

    def __init__(self, max_entries: int = 20_000):
        self.max_entries = max_entries
        self.enabled = True
        self.template_only = False
        self.fast_path = True
        self._rows: dict[tuple, Answer] = {}
        self._by_schema: dict[str, dict[tuple, None]] = {}  # the keys naming each schema, so a dropped template's go with it
        self._tables: dict[str, tuple[str, ...] | None] = {}
        self._volatile: dict[str, bool] = {}
        self._tokens: dict[tuple, int] = {}
        self._next_token = itertools.count(1)  # never reused, so clearing the interning cannot alias two states
        self._lock = threading.Lock()

    def fast_path_on(self) -> bool:
        """Whether Python may answer a statement at all (the memo's switch off means DuckDB answers everything)."""
        return self.enabled and self.fast_path

    def tables_of(self, sql: str, known: dict[str, TableInfo]) -> tuple[str, ...] | None:
        """Tables a statement reads, or None when that cannot be told (then nothing is cached).

        Parsed on a connection of its own, with parameters replaced by NULL: the
        parser only needs the shape of the statement, and a failure here must not
        touch an episode's transaction.
        """
        if sql not in self._tables:
            try:
                with _Process._lock:
                    names = _Process.parser().get_table_names(sql.replace("?", "NULL"))
            except duckdb.Error:
                names = None
            self._tables[sql] = tuple(sorted(names)) if names and all(n in known for n in names) else None
        return self._tables[sql]

    def deterministic(self, sql: str) -> bool:
        """True unless the statement calls a function whose value the data does not fix."""
        found = self._volatile.get(sql)
        if found is None:
            found = self._volatile[sql] = VOLATILE_RE.search(sql) is not None
        return not found

    def token(self, content: tuple) -> int | None:
        """A number standing for one table content (an overlay), the same for equal contents; None if unhashable."""
        try:
            tok = self._tokens.get(content)
        except TypeError:  # a LIST or STRUCT value: such a table is simply never memoised
            return None
        if tok is None:
            with self._lock:
                tok = self._tokens.get(content)
                if tok is None:
                    if len(self._tokens) >= 4 * self.max_entries:
                        self._tokens.clear()
                    tok = self._tokens[content] = next(self._next_token)
        return tok

    def clear(self) -> None:
        with self._lock:
            self._rows.clear()
            self._by_schema.clear()

    def forget(self, schemas: set[str]) -> None:
        """Drop every entry keyed by one of ``schemas`` (a dropped task template's): no statement can ask for it again.

        Without this a stream of templates (training variants, a run that cycles more tasks than
        the runtimes kept) leaves its entries to fill the memo until it is cleared whole.
        """
        with self._lock:
            for schema in schemas:
                for key in self._by_schema.pop(schema, {}):
                    self._rows.pop(key, None)
                    for other in _schemas_of(key):
                        if other != schema:
                            self._by_schema.get(other, {}).pop(key, None)

    def get(self, key: tuple) -> Answer | None:
        return self._rows.get(key) if self.enabled else None

    def put(self, key: tuple, value: Answer) -> None:
        if not self.enabled:
            return
        with self._lock:
            if len(self._rows) >= self.max_entries:
                self._rows.clear()
                self._by_schema.clear()
            if key not in self._rows:
                for schema in _schemas_of(key):
                    self._by_schema.setdefault(schema, {})[key] = None
            self._rows[key] = value


def _schemas_of(key: tuple) -> list[str]:
    """The schemas a memo key names: its last part holds (schema, token) pairs, or schema names alone."""
    return [part[0] if isinstance(part, tuple) else part for part in key[3]]


def _params_key(params: Sequence[Any]) -> tuple:
    """Parameters as part of a memo key: type and repr, so 1, 1.0, True and Decimal('1.0') stay apart."""
    return tuple((type(p).__name__, repr(p)) for p in params)
