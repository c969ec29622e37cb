"""Building a task template: the domain template plus a task's patch, in Python where that is certain, else in DuckDB.

A task template holds only the tables its patch touches. Where Python can apply the patch
exactly as DuckDB would (``row_rules``), the template's rows are computed in Python and
nothing is created in DuckDB: an episode that needs a patched table there copies the
domain's table and runs the patch on its copy (``TaskTemplate.patch_statements``), with
the constraints it declares. Otherwise the patched tables are built in DuckDB once, in a
schema of their own, and held to the very constraints an episode's copy declares.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import duckdb

from ..contracts.spec import Patch
from .errors import StateError
from .row_rules import UNSURE, RowRules, coerce
from .sandbox import _Process, _quote
from .tables import TableInfo
from .templates import TaskTemplate

if TYPE_CHECKING:
    from .database import DomainDatabase


@dataclass(frozen=True)
class _CopyRules:
    """The constraints and defaults of a table as an episode's copy of it declares them (no primary-key index)."""
    not_null: tuple[str, ...]
    checks: tuple[str, ...]  # CHECK expressions, as DuckDB's catalog prints them
    defaults: dict[str, str]  # column -> DEFAULT expression
    declared: bool = False  # a constraint of another kind (UNIQUE, FOREIGN KEY): the copy declares them all
    row: RowRules | None = None  # the same rules as Python applies them; None: every write goes to DuckDB

    @property
    def in_python(self) -> RowRules | None:
        """The rules when Python can apply all of them (some rows may still need DuckDB), else None."""
        return self.row if self.row is not None and self.row.usable else None

    def copy_sql(self, info: TableInfo, schema: str, source: str) -> str:
        """The statement(s) that copy the domain table into a template schema."""
        target = f"{schema}.{_quote(info.name)}"
        if self.declared:  # DuckDB itself then holds the patch to every constraint, as for an episode's copy
            return f"{info.create_episode_copy_in(schema).rstrip(';')}; INSERT INTO {target} SELECT * FROM {source}.{_quote(info.name)}"
        return f"CREATE TABLE {target} AS SELECT * FROM {source}.{_quote(info.name)}"

    def returning(self) -> str:
        """Extra RETURNING columns, one per CHECK, true for a row that breaks it (NULL holds, as in DuckDB)."""
        return "".join(f", NOT ({c}) AS \"__check_{i}\"" for i, c in enumerate(self.checks))



def build_task_template(db: DomainDatabase, task_label: str, patch: Patch) -> TaskTemplate:
    """A task's initial state: the domain template plus its patch, once per task per process.

    Where Python can apply the patch exactly as DuckDB would (see ``row_rules``), the
    template's rows are computed in Python and nothing is created in DuckDB: an episode
    that needs a patched table in DuckDB copies the domain's table and runs the patch on
    its copy (``TaskTemplate.patch_statements``), with the constraints it declares. A
    fresh training variant then costs no DuckDB statement until an episode needs one.
    Otherwise the patched tables are built in DuckDB once, in a schema of their own.
    """
    touched = sorted(patch.tables())
    infos = {table: db._table(table, task_label) for table in touched}
    with _Process._lock:
        cur = _Process.connection().cursor()
    try:
        rules = db._copy_rules(cur)
        rows = {table: dict(db._domain_rows(table, cur)) for table in touched}
        statements = _patch_in_python(task_label, patch, infos, rules, rows)
        if statements is None:
            return _build_in_duckdb(db, cur, task_label, patch, touched, infos, rules)
        base = {t: dict(sorted(rows[t].items())) for t in touched}
        template = TaskTemplate(db, _Process.next_name("t_"), frozenset(touched), db._sequence_starts(cur, base),
                                in_db=False, patch_statements=statements)
        template._base_rows.update(base)
        return template
    finally:
        cur.close()



def _patch_in_python(task_label: str, patch: Patch, infos: dict[str, TableInfo], rules: dict[str, _CopyRules],
                     rows: dict[str, dict[tuple, dict[str, Any]]]) -> dict[str, list[tuple[str, list[Any]]]] | None:
    """Apply the patch to ``rows`` in Python; the statements that patch an episode's copy, or None for DuckDB.

    A patch that certainly breaks a constraint is refused here with the error DuckDB's
    path gives; one whose outcome only DuckDB can tell returns None (``rows`` is then
    left half-patched, and the caller discards it).
    """
    statements: dict[str, list[tuple[str, list[Any]]]] = {}

    def certain(table: str, row_rules: RowRules, row: dict[str, Any]) -> bool:
        """True when the row holds every constraint; False when only DuckDB can tell; raises when it breaks one."""
        broken = row_rules.broken(row)
        if broken is None or broken is UNSURE:
            return broken is None
        what = f"NOT NULL on column '{broken[1]}'" if broken[0] == "NOT NULL" else f"CHECK {broken[1]}"
        raise StateError(f"task '{task_label}': patch cannot be applied: table '{table}': a row breaks {what}")

    for table, new_rows in patch.insert.items():
        info, row_rules = infos[table], rules[table].in_python
        groups = _insert_groups(info, new_rows, task_label)
        if row_rules is None:
            return None
        values: list[Any] = []
        count = 0
        for group in groups.values():  # DuckDB's path inserts group by group: the same stored order
            for row in group:
                full = row_rules.full_row(row)
                if full is UNSURE or not certain(table, row_rules, full):
                    return None
                key = tuple(full[c] for c in info.primary_key)
                if key in rows[table]:
                    raise StateError(f"task '{task_label}': patch.insert.{table}: a row's primary key "
                                     f"{', '.join(info.primary_key)} is already taken (duplicate key)")
                rows[table][key] = full
                values += [full[c] for c in info.columns]
                count += 1
        marks = "(" + ", ".join("?" for _ in info.columns) + ")"
        statements.setdefault(table, []).append(
            (f"INSERT INTO {{schema}}.{_quote(table)} VALUES {', '.join([marks] * count)}", values))
    for change, deletes in [(u, False) for u in patch.update] + [(d, True) for d in patch.delete]:
        table = change.table
        info, row_rules = infos[table], rules[table].in_python
        _where(info, change.key, task_label)  # names unknown or no columns: refused as DuckDB's path refuses it
        if row_rules is None:
            return None
        wanted = {c: coerce(row_rules.kind(c), v) for c, v in change.key.items()}
        if any(v is UNSURE for v in wanted.values()):
            return None
        matched = [] if any(v is None for v in wanted.values()) else [
            k for k, r in rows[table].items() if all(r[c] == v for c, v in wanted.items())]
        verb = "delete" if deletes else "update"
        if len(matched) != 1:
            raise StateError(f"task '{task_label}': patch.{verb} on {table} {change.key} matched {len(matched)} rows")
        key = matched[0]
        where = " AND ".join(f"{_quote(c)} = ?" for c in info.primary_key)
        if deletes:
            del rows[table][key]
            statements.setdefault(table, []).append((f"DELETE FROM {{schema}}.{_quote(table)} WHERE {where}", list(key)))
            continue
        sets = change.set  # type: ignore[union-attr]
        if not sets or set(sets) - set(info.columns) or set(sets) & set(info.primary_key):
            return None  # DuckDB's error, or a key that moves
        new = dict(rows[table][key])
        for column, value in sets.items():
            new[column] = coerce(row_rules.kind(column), value)
            if new[column] is UNSURE:
                return None
        if not certain(table, row_rules, new):
            return None
        rows[table][key] = new
        assignments = ", ".join(f"{_quote(c)} = ?" for c in sets)
        statements.setdefault(table, []).append(
            (f"UPDATE {{schema}}.{_quote(table)} SET {assignments} WHERE {where}", [new[c] for c in sets] + list(key)))
    return statements



def _build_in_duckdb(db: DomainDatabase, cur: duckdb.DuckDBPyConnection, task_label: str, patch: Patch, touched: list[str],
                     infos: dict[str, TableInfo], rules: dict[str, _CopyRules]) -> TaskTemplate:
    """Materialise the tables a task's patch touches in a schema of their own.

    The template is built in one transaction: each patched table is created as a plain
    copy of the domain table (``CREATE TABLE ... AS SELECT``, about a third of what a
    table declared with its constraints and then filled costs) and the patch runs on it
    with every default the domain declares written out. The rows the patch wrote are
    held to the constraints an episode's copy of the table declares (``_CopyRules``):
    NOT NULL on the returned rows, CHECK by DuckDB itdb, each expression returned as
    an extra column of the statement that wrote the row; the rows it did not write are
    the domain template's, which declares the same constraints. The primary keys are
    checked against the rows in hand.
    """
    schema = _Process.next_name("t_")
    rows = {table: dict(db._domain_rows(table, cur)) for table in touched}
    try:
        cur.execute("; ".join(
            ["BEGIN TRANSACTION", f"CREATE SCHEMA {schema}", f"SET search_path = '{schema},{db.schema}'"]
            + [rules[t].copy_sql(infos[t], schema, db.schema) for t in touched]
        ))
        for table, new_rows in patch.insert.items():
            info = infos[table]
            defaults = rules[table].defaults
            for names, group in _insert_groups(info, new_rows, task_label).items():
                # the plain copy has no defaults: a column the patch leaves out gets the domain's, written out
                omitted = [c for c in info.columns if c not in names and c in defaults]
                marks = "(" + ", ".join(["?" for _ in names] + [defaults[c] for c in omitted]) + ")"
                out = cur.execute(
                    f"INSERT INTO {_quote(table)} ({', '.join(_quote(n) for n in (*names, *omitted))}) "
                    f"VALUES {', '.join(marks for _ in group)} RETURNING *{rules[table].returning()}",
                    [r[n] for r in group for n in names],
                )
                before = len(rows[table])
                n = _fold(info, rows[table], out, rules[table], task_label)
                if len(rows[table]) != before + n:
                    raise StateError(f"task '{task_label}': patch.insert.{table}: a row's primary key "
                                     f"{', '.join(info.primary_key)} is already taken (duplicate key)")
        reread: set[str] = set()
        for upd in patch.update:
            info = infos[upd.table]
            where, wparams = _where(info, upd.key, task_label)
            sets = ", ".join(f"{_quote(c)} = ?" for c in upd.set)
            out = cur.execute(f"UPDATE {_quote(upd.table)} SET {sets} WHERE {where} RETURNING *{rules[upd.table].returning()}",
                              [*upd.set.values(), *wparams])
            if set(upd.set) & set(info.primary_key):
                reread.add(upd.table)  # the key moved: the returned row cannot say which one it replaced
            n = _fold(info, rows[upd.table], out, rules[upd.table], task_label)
            if n != 1:
                raise StateError(f"task '{task_label}': patch.update on {upd.table} {upd.key} matched {n} rows")
        for dele in patch.delete:
            info = infos[dele.table]
            where, wparams = _where(info, dele.key, task_label)
            out = cur.execute(f"DELETE FROM {_quote(dele.table)} WHERE {where} RETURNING *", wparams)
            n = _fold(info, rows[dele.table], out, None, task_label, deletes=True)
            if n != 1:
                raise StateError(f"task '{task_label}': patch.delete on {dele.table} {dele.key} matched {n} rows")
        for table in sorted(reread):
            info = infos[table]
            res = cur.execute(f"SELECT * FROM {schema}.{_quote(table)}")
            names = tuple(d[0] for d in res.description)
            fetched = res.fetchall()
            rows[table] = {}
            for values in fetched:
                row = dict(zip(names, values))
                rows[table][tuple(row[c] for c in info.primary_key)] = row
            if len(rows[table]) != len(fetched):
                raise StateError(f"task '{task_label}': patch.update on {table} gives two rows the same primary key")
        cur.execute("COMMIT")
    except (duckdb.Error, StateError) as exc:
        with contextlib.suppress(duckdb.Error):  # the failure may have come before the transaction began
            cur.execute("ROLLBACK")
        cur.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        if isinstance(exc, StateError):
            raise
        raise StateError(f"task '{task_label}': patch cannot be applied: {exc}") from exc
    base = {t: dict(sorted(rows[t].items())) for t in touched}
    template = TaskTemplate(db, schema, frozenset(touched), db._sequence_starts(cur, base))
    template._base_rows.update(base)
    return template



def _fold(info: TableInfo, rows: dict[tuple, dict[str, Any]], cur: duckdb.DuckDBPyConnection, rules: _CopyRules | None,
          task_label: str, deletes: bool = False) -> int:
    """Apply a patch statement's returned rows to the table's rows by key; the number of rows it wrote.

    A row it wrote must hold the table's NOT NULL constraints (seen in the row itself)
    and its CHECK constraints (evaluated by DuckDB on the row, as extra returned columns).
    """
    width = len(info.columns)
    names = tuple(d[0] for d in cur.description)[:width]
    returned = cur.fetchall()
    for values in returned:
        row = dict(zip(names, values[:width]))
        key = tuple(row[c] for c in info.primary_key)
        if deletes:
            rows.pop(key, None)
            continue
        if rules is not None:
            for column in rules.not_null:
                if row[column] is None:
                    raise StateError(f"task '{task_label}': patch cannot be applied: table '{info.name}': "
                                     f"a row breaks NOT NULL on column '{column}'")
            for check, broken in zip(rules.checks, values[width:]):
                if broken:
                    raise StateError(f"task '{task_label}': patch cannot be applied: table '{info.name}': "
                                     f"a row breaks CHECK {check}")
        rows[key] = row
    return len(returned)


def _insert_groups(info: TableInfo, rows: list[dict[str, Any]], task_label: str) -> dict[tuple[str, ...], list[dict[str, Any]]]:
    """A patch's inserted rows grouped by the columns they give, in order: one statement per group."""
    groups: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for row in rows:
        unknown = set(row) - set(info.columns)
        if unknown:
            raise StateError(f"task '{task_label}': patch.insert.{info.name}: unknown columns {sorted(unknown)}")
        groups.setdefault(tuple(row), []).append(row)
    return groups


def _where(info: TableInfo, key: dict[str, Any], task_label: str) -> tuple[str, list[Any]]:
    unknown = set(key) - set(info.columns)
    if unknown or not key:
        raise StateError(f"task '{task_label}': key {key} for table '{info.name}' names unknown or no columns")
    return " AND ".join(f"{_quote(c)} = ?" for c in key), list(key.values())

