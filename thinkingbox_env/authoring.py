"""Building blocks for writing task families, so that a domain's families stay short.

A family draws a task from a seed without touching a database: the domain clock
comes from ``domain.yaml``, the catalogue from the seed CSV files, and the ids the
golden run will mint are predicted from the sequences declared in ``domain.yaml``
(the same rule the engine's template uses), so generating thousands of training
variants costs no DuckDB work at all. Engine only: nothing here names a domain.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

from .spec import DomainSpec, Patch, SpecError, load_domain_spec

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


@dataclass
class Golden:
    """The golden tool calls of a task being built, with the reasons some writes are idempotent."""

    calls: list[dict[str, Any]] = field(default_factory=list)
    idempotent: dict[int, str] = field(default_factory=dict)

    def add(self, tool_name: str, /, *, idempotent: str | None = None, why: dict[str, str] | None = None,
            expect_error: str | None = None, **arguments: Any) -> int:
        """Append a call and return its index (the index ``idempotent_writes`` and dialogue turns refer to)."""
        call: dict[str, Any] = {"name": tool_name, "arguments": dict(arguments)}
        if why:
            call["why"] = dict(why)
        if expect_error is not None:
            call["expect_error"] = expect_error
        self.calls.append(call)
        if idempotent:
            self.idempotent[len(self.calls) - 1] = idempotent
        return len(self.calls) - 1

    def extend(self, calls: list[dict[str, Any]]) -> None:
        self.calls.extend(calls)

    def __len__(self) -> int:
        return len(self.calls)


@dataclass
class TaskBody:
    """Everything a family returns for one instance; ``TaskFamily.instance`` adds the id fields.

    A typed record instead of a dozen loose parameters, so that a family that
    forgets the reply or misspells a field fails when it is written.
    """

    description: str
    opening: str
    golden_reply: str
    facts: list[dict[str, Any]] = field(default_factory=list)
    intent: str = ""
    patch: dict[str, Any] = field(default_factory=dict)
    golden: list[dict[str, Any]] = field(default_factory=list)
    checks: dict[str, Any] = field(default_factory=dict)
    idempotent_writes: dict[int, str] = field(default_factory=dict)
    tags: list[str] = field(default_factory=list)
    rubrics: list[Any] | None = None
    dialogue: list[dict[str, Any]] = field(default_factory=list)
    faults: list[dict[str, Any]] = field(default_factory=list)
    origin: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "description": self.description,
            "user": {"opening": self.opening, "facts": self.facts, "intent": self.intent},
            "patch": self.patch,
            "golden": self.golden,
            "golden_reply": self.golden_reply,
            "checks": self.checks,
            "idempotent_writes": self.idempotent_writes,
            "tags": self.tags,
        }
        if self.rubrics is not None:
            data["rubrics"] = self.rubrics
        if self.dialogue:
            data["dialogue"] = self.dialogue
        if self.faults:
            data["faults"] = self.faults
        if self.origin is not None:
            data["origin"] = self.origin
        return data


def ask(before: int, say: str) -> dict[str, Any]:
    """A golden turn asking the customer for facts the calls from ``before`` on need."""
    return {"before": before, "act": "ask", "say": say}


def propose(before: int, say: str) -> dict[str, Any]:
    """A golden turn describing the consent-guarded writes; the customer's reply is their decision."""
    return {"before": before, "act": "propose", "say": say}


def inform(before: int, say: str) -> dict[str, Any]:
    """A golden turn telling the customer something mid-way (a lookup that found nothing, a wait)."""
    return {"before": before, "act": "inform", "say": say}


class Openings:
    """A family's opening templates, split so that test tasks open in words no training variant uses.

    Templates are ``str.format`` strings over the task's facts. The held-out ones are drawn only
    for the test split, so the test set measures generalisation to new requests, not to new names.
    """

    def __init__(self, family_code: str, templates: dict[str, str], held_out: tuple[str, ...] | None = None,
                 minimum: int = 6) -> None:
        if len(templates) < minimum:
            raise ValueError(f"family {family_code}: {len(templates)} opening templates, at least {minimum} are needed")
        held = tuple(held_out) if held_out is not None else tuple(list(templates)[-2:])
        unknown = [h for h in held if h not in templates]
        if unknown:
            raise ValueError(f"family {family_code}: held-out openings {unknown} are not templates")
        if not held or len(held) == len(templates):
            raise ValueError(f"family {family_code}: both splits need at least one opening template")
        self.family_code = family_code
        self.templates = dict(templates)
        self.held_out = held

    def ids(self, split: str) -> list[str]:
        """The template ids a split may draw, in declaration order."""
        if split == "test":
            return list(self.held_out)
        return [t for t in self.templates if t not in self.held_out]

    def pick(self, rng: Any, split: str, **fields: Any) -> tuple[str, str]:
        """(opening text, origin id) drawn for ``split``; a template naming a missing field is an authoring error."""
        chosen = rng.choice(self.ids(split))
        try:
            text = self.templates[chosen].format(**fields)
        except KeyError as exc:
            raise ValueError(f"family {self.family_code}: opening '{chosen}' needs field {exc.args[0]!r}") from exc
        return text, f"{self.family_code}/{chosen}"


def _shift_turns(turns: list[dict[str, Any]], offset: int) -> list[dict[str, Any]]:
    return [{**t, "before": t["before"] + offset} for t in turns]


def _merge_patches(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"insert": {}, "update": [], "delete": []}
    for patch in (first, second):
        for table, rows in (patch.get("insert") or {}).items():
            kept = out["insert"].setdefault(table, [])
            kept.extend(r for r in rows if r not in kept)
        for key in ("update", "delete"):
            out[key].extend(x for x in patch.get(key) or [] if x not in out[key])
    return out


def combine(first: TaskBody, second: TaskBody, opening: str | None = None) -> TaskBody:
    """One conversation with two requests: ``first`` handled, then ``second``.

    Both bodies are built for the same customer, so their shared rows (the customer, the
    ticket user) are identical and kept once; the second's golden indices move past the first's.
    """
    offset = len(first.golden)
    facts: list[dict[str, Any]] = []
    for fact in first.facts + second.facts:
        if all(fact.get("text") != f.get("text") for f in facts):
            facts.append(fact)
    checks: dict[str, Any] = {}
    for body in (first, second):
        for kind, items in (body.checks or {}).items():
            merged = checks.setdefault(kind, [])
            merged.extend(i for i in items if i not in merged)
    faults = list(first.faults)
    for fault in second.faults:
        if any(f["tool"] == fault["tool"] for f in first.faults):
            raise ValueError(f"both requests schedule a fault on '{fault['tool']}': count the calls across the conversation")
        faults.append(fault)
    origin = None
    if first.origin or second.origin:
        o1, o2 = first.origin or {}, second.origin or {}
        origin = {"opening": o1.get("opening") or o2.get("opening"), "branches": list(o1.get("branches", [])) + list(o2.get("branches", []))}
    rubrics = None if first.rubrics is None and second.rubrics is None else (first.rubrics or []) + (second.rubrics or [])
    return TaskBody(
        description=f"{first.description} Then: {second.description}",
        opening=opening if opening is not None else first.opening,
        golden_reply=f"{first.golden_reply} {second.golden_reply}",
        facts=facts,
        intent=" ".join(filter(None, [first.intent, second.intent])),
        patch=_merge_patches(first.patch, second.patch),
        golden=list(first.golden) + list(second.golden),
        checks=checks,
        idempotent_writes={**first.idempotent_writes, **{i + offset: why for i, why in second.idempotent_writes.items()}},
        tags=list(dict.fromkeys(first.tags + second.tags + ["two_requests"])),
        rubrics=rubrics,
        dialogue=list(first.dialogue) + _shift_turns(list(second.dialogue), offset),
        faults=faults,
        origin=origin,
    )


def pick_branch(branches: tuple[str, ...] | list[str], seed: int) -> str:
    """Seeds walk the branches in order, so any run of ``len(branches)`` seeds covers each once."""
    if not branches:
        raise ValueError("a family with no branches has nothing to pick from")
    return branches[(seed - 1) % len(branches)]


__all__ = [
    "Golden",
    "Openings",
    "TaskBody",
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
]
