"""Side effects Δ(s0, sT) and the canonical form of a state.

Rows that an episode creates get their primary key from a per-table sequence, and
the number a sequence hands out depends on the order of the creates. Two valid
orders must not look like two different outcomes, so created rows are identified
by their content (volatile columns and the surrogate id left out) and by what
they reference; a reference to a created row is rewritten to that row's content
key. Everything here works on that canonical form: the effect set, the state
hash, and through them the checks.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, time
from decimal import Decimal
from typing import Any

from . import EpisodeState, OutcomeInputs, StateError, TableInfo


def jsonable(value: Any) -> Any:
    """A JSON-safe copy of a value read from DuckDB (dates as ISO strings, decimals as floats)."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, (datetime, date, time)):
        return value.isoformat()
    return value


def _canon_scalar(value: Any) -> Any:
    if isinstance(value, Decimal):
        return format(value.normalize(), "f") if value == value.to_integral() else str(value.normalize())
    if isinstance(value, (datetime, date, time)):
        return value.isoformat()
    return value


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def _key(info: TableInfo, row: dict[str, Any]) -> tuple:
    return tuple(row[c] for c in info.primary_key)


@dataclass
class TableDiff:
    """Rows inserted, deleted and updated in one table, keyed by primary key so a diff reads the same whatever the row order."""
    inserted: list[dict[str, Any]] = field(default_factory=list)
    deleted: list[dict[str, Any]] = field(default_factory=list)
    updated: list[tuple[dict[str, Any], dict[str, Any], dict[str, Any]]] = field(default_factory=list)  # key, before, after

    def __bool__(self) -> bool:
        return bool(self.inserted or self.deleted or self.updated)


@dataclass
class StateDiff:
    """Raw side effects, keyed by primary key, plus the canonical effect multiset."""

    tables: dict[str, TableDiff]
    effects: Counter  # canonical effect tuples -> count
    created_keys: dict[tuple[str, Any], str]  # (table, surrogate id) -> content key
    final_rows: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # written tables, as read

    def to_json(self, infos: dict[str, TableInfo]) -> dict[str, Any]:
        """The diff as reported in ``info["diff"]``: per table, inserted / deleted / updated rows."""
        out: dict[str, Any] = {}
        for table, td in sorted(self.tables.items()):
            if not td:
                continue
            info = infos[table]
            cols = info.compared_columns
            out[table] = {
                "inserted": [jsonable({c: r[c] for c in info.columns}) for r in td.inserted],
                "deleted": [jsonable({c: r[c] for c in info.primary_key}) for r in td.deleted],
                "updated": [
                    {
                        "key": jsonable(key),
                        "changes": {c: jsonable([b[c], a[c]]) for c in cols if b[c] != a[c]},
                    }
                    for key, b, a in td.updated
                ],
            }
        return out

    @property
    def empty(self) -> bool:
        return not self.effects


def compute_diff(state: EpisodeState) -> StateDiff:
    """Compare the episode's tables with the template; only tables the episode wrote are read, which keeps grading cheap."""
    inputs = state.outcome_inputs()
    infos = inputs.tables
    tables: dict[str, TableDiff] = {}
    final_rows: dict[str, list[dict[str, Any]]] = {}
    for table in sorted(inputs.written):
        info = infos[table]
        cols = info.compared_columns
        td = TableDiff()
        tracked = state.final_rows(table)  # from the writes' returned rows: no read of the table
        if tracked is not None:
            final_rows[table] = tracked
            base = inputs.base_index(table)
            overlay = inputs.overlay.get(table, {})
            for k in sorted(overlay):
                row, old = overlay[k], base.get(k)
                if row is None:
                    if old is not None:
                        td.deleted.append(old)
                elif old is None:
                    td.inserted.append(row)
                elif any(old[c] != row[c] for c in cols):
                    td.updated.append((dict(zip(info.primary_key, k)), old, row))
            tables[table] = td
            continue
        before = {_key(info, r): r for r in state.rows(table, base=True)}
        final_rows[table] = state.rows(table)
        after = {_key(info, r): r for r in final_rows[table]}
        if len(after) != len(final_rows[table]):
            raise StateError(f"table '{table}' holds duplicate primary keys after the episode: a domain tool inserted a row twice")
        for k, row in after.items():
            if k not in before:
                td.inserted.append(row)
            elif any(before[k][c] != row[c] for c in cols):
                td.updated.append((dict(zip(info.primary_key, k)), before[k], row))
        for k, row in before.items():
            if k not in after:
                td.deleted.append(row)
        tables[table] = td
    created = _created_keys(infos, tables)
    effects: Counter = Counter()
    for table, td in tables.items():
        info = infos[table]
        for row in td.inserted:
            effects[("insert", table, _dumps(_canonical_content(info, row, created)))] += 1
        for row in td.deleted:
            effects[("delete", table, _dumps(jsonable(_key(info, row))))] += 1
        for key, b, a in td.updated:
            changes = {
                c: _canon_value(info, c, a[c], created) for c in info.compared_columns if b[c] != a[c]
            }
            effects[("update", table, _dumps(jsonable(list(key.values()))), _dumps(changes))] += 1
    return StateDiff(tables, effects, created, final_rows)


def _canon_value(info: TableInfo, column: str, value: Any, created: dict[tuple[str, Any], str]) -> Any:
    ref = info.meta.references.get(column)
    if ref is not None and (ref, value) in created:
        return created[(ref, value)]
    return _canon_scalar(value)


def _canonical_content(info: TableInfo, row: dict[str, Any], created: dict[tuple[str, Any], str]) -> dict[str, Any]:
    seq_col = info.meta.sequence.column if info.meta.sequence else None
    return {c: _canon_value(info, c, row[c], created) for c in info.compared_columns if c != seq_col}


def _created_keys(infos: Mapping[str, TableInfo], tables: dict[str, TableDiff]) -> dict[tuple[str, Any], str]:
    """Content keys for rows created with a sequence id, resolving references between them."""
    pending: list[tuple[TableInfo, dict[str, Any]]] = [
        (infos[t], row) for t, td in tables.items() if infos[t].meta.sequence for row in td.inserted
    ]
    new_ids = {(info.name, row[info.meta.sequence.column]) for info, row in pending}  # type: ignore[union-attr]
    created: dict[tuple[str, Any], str] = {}
    while pending:
        progressed = False
        rest = []
        for info, row in pending:
            waits = [
                (ref, row[col])
                for col, ref in info.meta.references.items()
                if (ref, row[col]) in new_ids and (ref, row[col]) not in created
            ]
            if waits and waits != [(info.name, row[info.meta.sequence.column])]:  # type: ignore[union-attr]
                rest.append((info, row))
                continue
            content = _canonical_content(info, row, created)
            created[(info.name, row[info.meta.sequence.column])] = "new:" + hashlib.sha256(  # type: ignore[union-attr]
                (info.name + _dumps(content)).encode()
            ).hexdigest()[:16]
            progressed = True
        if not progressed:  # a reference cycle among created rows: fall back to raw content
            for info, row in rest:
                content = {c: _canon_scalar(row[c]) for c in info.compared_columns if c != info.meta.sequence.column}  # type: ignore[union-attr]
                created[(info.name, row[info.meta.sequence.column])] = "new:" + hashlib.sha256(  # type: ignore[union-attr]
                    (info.name + _dumps(content)).encode()
                ).hexdigest()[:16]
            break
        pending = rest
    return created


# --------------------------------------------------------------------------- hash

_BASE_DIGESTS: dict[tuple[str, str], str] = {}


def _row_line(info: TableInfo, row: dict[str, Any], created: dict[tuple[str, Any], str], new_keys: set, seq_col: str | None) -> str:
    if seq_col is not None and (info.name, row[seq_col]) in new_keys:
        return _dumps(["new", created[(info.name, row[seq_col])], _canonical_content(info, row, created)])
    return _dumps(["row", [_canon_value(info, c, row[c], created) for c in info.compared_columns]])


def _table_digest(info: TableInfo, rows: list[dict[str, Any]], created: dict[tuple[str, Any], str], new_keys: set) -> str:
    seq_col = info.meta.sequence.column if info.meta.sequence else None
    lines = [_row_line(info, row, created, new_keys, seq_col) for row in rows]
    return _digest_of_lines(info, lines)


def _digest_of_lines(info: TableInfo, lines: list[str]) -> str:
    lines.sort()
    return hashlib.sha256((info.name + "\n" + "\n".join(lines)).encode()).hexdigest()


def _base_lines(inputs: OutcomeInputs, info: TableInfo) -> dict[tuple, str]:
    """The canonical line of every template row of a table, by key; kept per template schema.

    A task template's table is the domain template's plus a few patched rows, and its
    unchanged rows are the very same objects: only the patched ones are rendered anew.
    """
    table = info.name
    schema = inputs.base_schema(table)
    cache = inputs.line_cache
    lines = cache.get((schema, table))
    if lines is not None:
        return lines
    seq_col = info.meta.sequence.column if info.meta.sequence else None
    rows = inputs.base_index(table)
    domain_rows = inputs.domain_rows.get(table)
    if schema != inputs.domain_schema and domain_rows is not None:
        shared = cache.get((inputs.domain_schema, table))
        if shared is None:
            shared = {k: _row_line(info, row, {}, set(), seq_col) for k, row in domain_rows.items()}
            cache[(inputs.domain_schema, table)] = shared
        lines = {k: shared[k] if domain_rows.get(k) is row else _row_line(info, row, {}, set(), seq_col) for k, row in rows.items()}
    else:
        lines = {k: _row_line(info, row, {}, set(), seq_col) for k, row in rows.items()}
    if len(cache) > 10_000:  # schemas of dropped templates leave stale entries behind
        cache.clear()
    cache[(schema, table)] = lines
    return lines


def _overlay_digest(inputs: OutcomeInputs, info: TableInfo, diff: StateDiff) -> str | None:
    """A written table's digest from its template rows' lines (kept per template) and the overlay's rows.

    A template row's line depends on the created rows only through a reference to one
    of them; when the episode created rows of a table this one references, or the table
    is not tracked, the caller digests every row instead.
    """
    table = info.name
    if table in inputs.untracked or any(ref == t for ref in info.meta.references.values() for t, _ in diff.created_keys):
        return None
    base_lines = _base_lines(inputs, info)
    overlay = inputs.overlay.get(table, {})
    seq_col = info.meta.sequence.column if info.meta.sequence else None
    new_keys = set(diff.created_keys)
    lines = [line for k, line in base_lines.items() if k not in overlay]
    lines += [_row_line(info, row, diff.created_keys, new_keys, seq_col) for row in overlay.values() if row is not None]
    return _digest_of_lines(info, lines)


def canonical_hash(state: EpisodeState, diff: StateDiff | None = None) -> str:
    """SHA-256 over every table in canonical form; untouched tables reuse a per-template digest."""
    diff = diff if diff is not None else compute_diff(state)
    inputs = state.outcome_inputs()
    new_keys = set(diff.created_keys)
    h = hashlib.sha256()
    for table in sorted(inputs.tables):
        info = inputs.tables[table]
        if table in inputs.written:
            digest: str | None = _overlay_digest(inputs, info, diff)
            if digest is None:
                rows = diff.final_rows[table] if table in diff.final_rows else state.rows(table)
                digest = _table_digest(info, rows, diff.created_keys, new_keys)
        else:
            base = inputs.base_schema(table)
            cache_key = (base, table)
            digest = _BASE_DIGESTS.get(cache_key)
            if digest is None:
                digest = _digest_of_lines(info, list(_base_lines(inputs, info).values()))
                if len(_BASE_DIGESTS) > 100_000:  # schemas of dropped templates leave stale entries behind
                    _BASE_DIGESTS.clear()
                _BASE_DIGESTS[cache_key] = digest
        h.update(f"{table}:{digest}\n".encode())
    return h.hexdigest()
