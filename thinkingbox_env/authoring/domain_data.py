"""What a family reads of its domain without a database: the clock, the seed rows, the ids a golden run mints.

A family draws a task from a seed without touching a database: the domain clock
comes from ``domain.yaml``, the catalogue from the seed CSV files, and the ids the
golden run will mint are predicted from the sequences declared in ``domain.yaml``
(the same rule the engine's template uses), so generating thousands of training
variants costs no DuckDB work at all. Engine only: nothing here names a domain.
"""

from __future__ import annotations

import csv
import re
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

from ..contracts.spec import DomainSpec, Patch, SpecError, load_domain_spec

_TRAILING_NUMBER = re.compile(r"\d+$")


def domain_folder(anchor: str | Path) -> Path:
    """The domain folder holding ``anchor`` (a file such as a domain's ``rules.py``, or the folder itself)."""
    path = Path(anchor).resolve()
    for candidate in (path, *path.parents):
        if (candidate / "domain.yaml").is_file():
            return candidate
    raise SpecError(f"{anchor}: no domain.yaml in this folder or any folder above it")


@cache
def _domain_spec(folder: Path) -> DomainSpec:
    return load_domain_spec(folder / "domain.yaml")


def domain_spec_of(anchor: str | Path) -> DomainSpec:
    """The parsed ``domain.yaml`` of the domain holding ``anchor``, read once per process."""
    return _domain_spec(domain_folder(anchor))


def domain_clock(anchor: str | Path) -> datetime:
    """The domain's frozen evaluation time.

    Families and rules read it from ``domain.yaml`` so that the time a task is
    generated against and the time tools stamp writes with have one source.
    """
    return domain_spec_of(anchor).clock


@cache
def _seed_table(folder: Path, table: str) -> tuple[dict[str, str], ...]:
    path = folder / "seed" / f"{table}.csv"
    if not path.is_file():
        return ()
    with path.open(encoding="utf-8", newline="") as fh:
        return tuple(dict(row) for row in csv.DictReader(fh))


def seed_rows(anchor: str | Path, table: str) -> list[dict[str, str]]:
    """The seed rows of ``table`` as strings, in file order (empty when the domain seeds none).

    Read once per process; families and rules use it for catalogues so that a
    price or a promotion has one source, the seed the tools read too.
    """
    return [dict(r) for r in _seed_table(domain_folder(anchor), table)]


def _id_number(value: Any) -> int | None:
    if value is None:
        return None
    m = _TRAILING_NUMBER.search(str(value))
    return int(m.group()) if m else None


def predict_next_ids(anchor: str | Path, patch: Patch | dict[str, Any]) -> dict[str, Any]:
    """The first id each declared sequence will hand out in a task with this patch.

    Golden actions and replies sometimes name a row the golden run itself creates
    (the ticket just opened, the claim number told to the customer). Sequences
    start after the largest number already in the table (seed rows, then the
    patch), exactly as the engine's task template computes them, so the answer
    needs no database.
    """
    folder = domain_folder(anchor)
    spec = _domain_spec(folder)
    p = patch if isinstance(patch, Patch) else Patch.model_validate(patch)
    out: dict[str, Any] = {}
    for table, meta in spec.tables.items():
        seq = meta.sequence
        if seq is None:
            continue
        col = seq.column
        values = {r.get(col) for r in _seed_table(folder, table)}
        for d in p.delete:
            if d.table == table and set(d.key) == {col}:
                values.discard(str(d.key[col]))
        for u in p.update:
            if u.table == table and col in u.set:
                values.discard(str(u.key.get(col)))
                values.add(str(u.set[col]))
        values.update(str(r.get(col)) for r in p.insert.get(table, ()))
        numbers = [n for v in values if (n := _id_number(v)) is not None]
        n = max([seq.start - 1, *numbers]) + 1
        out[table] = n if seq.format == "{n}" else seq.format.format(n=n)
    return out
