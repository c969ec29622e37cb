"""The record a family returns for one instance, the golden's turns, and two requests made one conversation."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


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
    decisions: list[dict[str, Any]] = field(default_factory=list)

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
        if self.decisions:
            data["user"]["decisions"] = self.decisions
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
        decisions=list(first.decisions) + list(second.decisions),
    )


def pick_branch(branches: tuple[str, ...] | list[str], seed: int) -> str:
    """Seeds walk the branches in order, so any run of ``len(branches)`` seeds covers each once."""
    if not branches:
        raise ValueError("a family with no branches has nothing to pick from")
    return branches[(seed - 1) % len(branches)]
