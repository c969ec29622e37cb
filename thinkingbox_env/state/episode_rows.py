"""An episode's rows as Python holds them: the overlay over the template's rows, read without DuckDB where it can be.

The overlay (primary key -> final row, or None for a deleted row) is folded from the rows each
write returns; from it and the template's rows come the fast path's view of the episode
(``fastpath.View``), the final contents of written tables and the inputs of the diff. A table
whose overlay cannot be trusted (a write that returned other columns, a duplicate key) is
"untracked" and scanned in DuckDB instead.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .episode_duckdb import EpisodeDuckDB
from .memo import ReadCache
from .outcome import OutcomeInputs
from .row_rules import RowRules
from .sandbox import _quote


class EpisodeRows(EpisodeDuckDB):
    """The overlay side of ``EpisodeState``: the fast path's view of the episode and its snapshots.

    The attributes below are ``EpisodeState``'s fields (declared there, with their defaults).
    """

    overlay: dict[str, dict[tuple, dict[str, Any] | None]]
    untracked: set[str]

    @property
    def _memo(self) -> ReadCache:
        return self.template.domain.read_cache

    def rows_known(self, table: str) -> bool:
        """Whether every current row of the table is held in Python, and the memo's mode lets the fast path read them."""
        if table in self.untracked:
            return False
        return not (self._memo.template_only and table in self.materialized)  # the earlier engine read written tables in DuckDB

    def row_rules(self, table: str) -> RowRules | None:
        return self.template.domain.python_rules(table)

    def current_rows(self, table: str) -> Iterable[dict[str, Any]] | None:
        """The table's rows now (template rows and overlay), in key order; None when only a scan can tell."""
        return self.final_rows(table) if table in self.materialized else self.base_index(table).values()

    def live_row(self, table: str, key: tuple) -> dict[str, Any] | None:
        """The row with this key in the episode now, or None (absent or deleted); the table must be tracked."""
        if table in self.materialized:
            overlay = self.overlay.get(table)
            if overlay is not None and key in overlay:
                return overlay[key]
        return self.base_index(table).get(key)

    def _track(self, table: str, kind: str, names: tuple[str, ...], rows: list[dict[str, Any]]) -> None:
        """Fold a write's returned rows into the overlay, or give the table up to a scan."""
        if table in self.untracked:
            return
        info = self.tables[table]
        if names != info.columns:
            self.untracked.add(table)
            return
        pk = info.primary_key
        overlay = self.overlay.setdefault(table, {})
        base = self.template._base_rows.get(table)
        if base is None:
            base = self.template.base_rows(table)
        for row in rows:
            key = tuple(row[c] for c in pk)
            if kind == "DELETE":
                overlay[key] = None
                continue
            live = overlay[key] is not None if key in overlay else key in base
            if kind == "INSERT" and live or kind == "UPDATE" and not live:
                self.untracked.add(table)  # a duplicate key, or a row this overlay never saw
                return
            overlay[key] = dict(row)  # the tool gets the returned dict and may edit it

    def rows(self, table: str, *, base: bool = False) -> list[dict[str, Any]]:
        """All rows of a table, in this episode (or in the initial state with base=True), in key order."""
        info = self.tables[table]
        live = not base and table in self.materialized
        if live:
            kept = self.final_rows(table)
            if kept is not None:
                return [dict(r) for r in kept]
            self._sync([table])
        elif table in self.template.patch_statements:
            return [dict(r) for r in self.base_index(table).values()]  # built in Python: these rows are the template
        schema = self.schema if live and table in self._in_db else self.template.base_schema(table)
        order = ", ".join(_quote(c) for c in info.primary_key)
        sql = f"SELECT * FROM {schema}.{_quote(table)} ORDER BY {order}"
        cache = self.template.domain.read_cache
        key = ("rows", sql, (), (schema,))
        hit = None if live else cache.get(key)
        if hit is None:
            if live:
                cur = self._cur().execute(sql)
                hit = (tuple(d[0] for d in cur.description), cur.fetchall())
            else:  # the initial state, named by its schema: the template's reader reads it (no schema of this episode)
                hit = self.template.read_initial(sql, (), ())
                cache.put(key, hit)
        names, rows = hit
        return [dict(zip(names, row)) for row in rows]

    def changed_tables(self) -> list[str]:
        return sorted(self.materialized)

    def outcome_inputs(self) -> OutcomeInputs:
        """What ``diff.py`` reads to diff and hash this episode: the overlay and the template's shared facts."""
        template = self.template
        domain = template.domain
        return OutcomeInputs(self.tables, frozenset(self.materialized), frozenset(self.untracked), self.overlay,
                             template.base_schema, self.base_index, domain.schema, domain.base_rows, domain.row_lines)

    def base_index(self, table: str) -> dict[tuple, dict[str, Any]]:
        """The table's initial rows by primary key (shared with every episode of the task: read only)."""
        index = self.template._base_rows.get(table)
        return index if index is not None else self.template.base_rows(table)

    def final_rows(self, table: str) -> list[dict[str, Any]] | None:
        """The table's rows now, in key order, from the template and the overlay; None if it must be scanned."""
        if table in self.untracked or table not in self.materialized:
            return None
        base = self.base_index(table)
        overlay = self.overlay.get(table)
        if not overlay:
            return list(base.values())
        merged = dict(base)
        merged.update(overlay)
        return [merged[k] for k in sorted(merged) if merged[k] is not None]
