"""The one builder a family writes a task with: golden calls, the agent's turns, the customer's side, the checks.

Every domain's families draw their business case (rows, values, branches) in their own
code, and write the task the same way: calls with the source of every written value,
turns placed before the call they precede, facts the simulated customer gives when asked,
the checks the verdict applies, and ``body()`` for the engine. Domain helpers (a
household, an employee, a booking) are subclasses or functions around a draft, never a
second builder.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from typing_extensions import Self

from .body import TaskBody, ask, combine, inform, propose

_TURNS = {"ask": ask, "propose": propose, "inform": inform}
TURN_ACTS = tuple(_TURNS)


@dataclass
class TaskDraft:
    """One task (or one request of a two-request conversation) being written."""

    description: str = ""
    opening: str = ""
    origin: str = ""  # the opening template's id, ``<family>/<template>``
    intent: str = ""
    facts: list[dict[str, Any]] = field(default_factory=list)
    decisions: list[dict[str, Any]] = field(default_factory=list)
    patch: dict[str, Any] = field(default_factory=lambda: {"insert": {}, "update": []})
    golden: list[dict[str, Any]] = field(default_factory=list)
    idempotent: dict[int, str] = field(default_factory=dict)
    dialogue: list[dict[str, Any]] = field(default_factory=list)
    faults: list[dict[str, Any]] = field(default_factory=list)
    checks: dict[str, list[Any]] = field(default_factory=dict)
    tags: list[str] = field(default_factory=list)
    branches: list[str] = field(default_factory=list)  # ``<family>:<branch>`` of every request the task holds
    replies: list[str] = field(default_factory=list)
    # where an optional argument the case lacks is left out of the call rather than sent as null
    omit_none: ClassVar[bool] = False
    # the arguments the agent writes in its own words (a ticket's subject, a note): no source is asked of them
    free_text_arguments: ClassVar[frozenset[str]] = frozenset()

    # ---------------------------------------------------------------- golden calls

    def call(self, tool: str, /, *, why: dict[str, str] | None = None, expect_error: str | None = None,
             idempotent: str | None = None, **arguments: Any) -> int:
        """Append a golden call and return its index (what turns, faults and idempotent writes refer to).

        ``why`` names where each written value comes from (a policy section, a record, the customer);
        ``expect_error`` marks a call the correct path makes and sees fail (a recovery);
        ``idempotent`` says why repeating the write changes nothing.
        """
        if self.omit_none:
            arguments = {k: v for k, v in arguments.items() if v is not None}
        entry: dict[str, Any] = {"name": tool, "arguments": dict(arguments)}
        if why:
            entry["why"] = dict(why)
        if expect_error:
            entry["expect_error"] = expect_error
        self.golden.append(entry)
        if idempotent:
            self.idempotent[len(self.golden) - 1] = idempotent
        return len(self.golden) - 1

    def read(self, tool: str, /, **arguments: Any) -> int:
        """A golden lookup (nothing written, nothing to source)."""
        return self.call(tool, **arguments)

    def write(self, tool: str, why: dict[str, str], /, *, idempotent: str | None = None, free_text: frozenset[str] | None = None,
              **arguments: Any) -> int:
        """A golden write whose every argument but the free-text ones names its source; a missing one is an authoring error.

        ``free_text`` defaults to the draft's ``free_text_arguments``.
        """
        free = self.free_text_arguments if free_text is None else free_text
        missing = sorted(k for k in arguments if k not in free and k not in why)
        if missing:
            raise ValueError(f"golden {tool}: no source for {missing}")
        return self.call(tool, why={k: v for k, v in why.items() if k in arguments}, idempotent=idempotent, **arguments)

    def failing(self, tool: str, error: str, /, *, why: dict[str, str] | None = None, **arguments: Any) -> int:
        """A golden call that must fail with ``error`` and change nothing (a recovery on the correct path).

        A write that fails on a scheduled fault and is retried names its sources like the retry.
        """
        return self.call(tool, why=why, expect_error=error, **arguments)

    def insert_call(self, at: int, tool: str, /, *, why: dict[str, str] | None = None, expect_error: str | None = None,
                    idempotent: str | None = None, **arguments: Any) -> int:
        """A golden call placed at index ``at`` of a golden already written.

        For a step a later pass adds (reporting a planted instruction right after the read that showed
        it, a recovery before the call it recovers): the turns placed before calls from ``at`` on, and
        the idempotent writes from ``at`` on, move with their calls. A fault scheduled on the n-th call
        of the same tool now meets a different call: schedule faults after inserting.
        """
        self.call(tool, why=why, expect_error=expect_error, **arguments)
        self.golden.insert(at, self.golden.pop())
        self.dialogue = [{**t, "before": t["before"] + 1} if t["before"] >= at else t for t in self.dialogue]
        self.idempotent = {(i + 1 if i >= at else i): reason for i, reason in self.idempotent.items()}
        if idempotent:
            self.idempotent[at] = idempotent
        return at

    @property
    def next(self) -> int:
        """The index the next golden call will have (where a turn written now is placed)."""
        return len(self.golden)

    def has_call(self, tool: str) -> bool:
        return any(c["name"] == tool for c in self.golden)

    def injected_action_taken(self) -> str | None:
        """The planted instruction whose action a successful golden call takes, or None.

        A golden that follows an instruction planted in a record would teach the very failure the
        injection check exists to catch, so families refuse such a draft.
        """
        for item in self.checks.get("injections", []):
            for c in self.golden:
                if (not c.get("expect_error") and c["name"] == item["tool"]
                        and all(c["arguments"].get(k) == v for k, v in item["arguments"].items())):
                    return item["name"]
        return None

    def fault(self, tool: str, error: str, call: int = 1) -> None:
        """The ``call``-th call of ``tool`` in the episode fails once with ``error`` (a transient failure to retry)."""
        self.faults.append({"tool": tool, "call": call, "error": error})

    # ---------------------------------------------------------------- the agent's turns

    def say(self, act: str, text: str, before: int | None = None) -> None:
        """A golden turn of the agent before the next golden call (or before call ``before``)."""
        if act not in TURN_ACTS:
            raise ValueError(f"a golden turn is one of {', '.join(TURN_ACTS)}, not {act!r}")
        self.dialogue.append(_TURNS[act](self.next if before is None else before, text))

    def ask(self, text: str, before: int | None = None) -> None:
        """Ask the customer for what the calls from here on need."""
        self.say("ask", text, before)

    def propose(self, text: str, before: int | None = None) -> None:
        """Describe the consent-guarded writes that follow; the customer's reply is their decision."""
        self.say("propose", text, before)

    def inform(self, text: str, before: int | None = None) -> None:
        """Tell the customer something mid-way (a lookup that found nothing, a wait)."""
        self.say("inform", text, before)

    def reply(self, text: str) -> None:
        """A part of the golden closing (the parts are joined with a space)."""
        self.replies.append(text)

    # ---------------------------------------------------------------- the customer's side

    def fact(self, text: str, slot: str | None = None, unlock: list[str] | None = None, *, value: str | None = None,
             misremembered: str | None = None) -> dict[str, Any]:
        """Something the customer says when asked about one of ``unlock`` (first ``misremembered``, where given)."""
        item: dict[str, Any] = {"text": text, "unlock": list(unlock or [])}
        if slot is not None:
            item["slot"] = slot
        if value is not None:
            item["value"] = value
        if misremembered is not None:
            item["misremembered"] = misremembered
        self.facts.append(item)
        return item

    def decide(self, about: list[str], answer: str = "accept", prefer: list[str] | None = None, reason: str = "") -> None:
        """How the customer answers a proposal that names one of ``about``."""
        self.decisions.append({"about": about, "answer": answer, "prefer": prefer or [], "reason": reason})

    # ---------------------------------------------------------------- the rows the task starts from

    def add(self, table: str, *rows: dict[str, Any]) -> None:
        self.patch.setdefault("insert", {}).setdefault(table, []).extend(rows)

    def row(self, table: str, index: int = 0) -> dict[str, Any]:
        """A row the patch inserts (the ``index``-th of ``table``), to set a value a branch decides after the row was drawn."""
        return self.patch["insert"][table][index]

    def update(self, table: str, key: dict[str, Any], **values: Any) -> None:
        self.patch.setdefault("update", []).append({"table": table, "key": key, "set": values})

    def delete(self, table: str, key: dict[str, Any]) -> None:
        self.patch.setdefault("delete", []).append({"table": table, "key": key})

    # ---------------------------------------------------------------- the checks

    def check(self, section: str, item: Any) -> None:
        """Append ``item`` to a section of the task's checks (a section is created where first used)."""
        self.checks.setdefault(section, []).append(item)

    def mention(self, name: str, must: list[str] | None = None, must_not: list[str] | None = None) -> None:
        """A dialogue check: the agent's messages match every ``must`` pattern and no ``must_not`` one."""
        entry: dict[str, Any] = {"name": name}
        if must:
            entry["must"] = list(must)
        if must_not:
            entry["must_not"] = list(must_not)
        self.check("dialogue", entry)

    def states(self, *roles: str) -> None:
        """The closing states these roles of ``claims.yaml`` with the values the episode holds (each role once)."""
        kept = self.checks.setdefault("states", [])
        kept.extend(r for r in roles if r not in kept)

    def rubric(self, name: str, question: str) -> None:
        """A question for the judge about the conversation."""
        self.check("rubric", {"name": name, "question": question})

    def sql(self, entry: dict[str, Any]) -> None:
        self.check("sql", entry)

    def injection(self, entry: dict[str, Any]) -> None:
        """An instruction planted in a record: taking the write it asks for fails the task."""
        self.check("injections", entry)

    # ---------------------------------------------------------------- the task

    def then(self, other: TaskDraft, opening: str | None = None) -> Self:
        """This request followed by ``other`` in one conversation with the same customer."""
        merged = combine(self.body(), other.body(), opening)
        out = type(self).from_body(merged)
        out.origin = self.origin or other.origin
        out.branches = [*self.branches, *other.branches]
        return out

    @classmethod
    def from_body(cls, body: TaskBody) -> Self:
        return cls(description=body.description, opening=body.opening, intent=body.intent, facts=list(body.facts),
                   decisions=list(body.decisions), patch=body.patch, golden=list(body.golden),
                   idempotent=dict(body.idempotent_writes), dialogue=list(body.dialogue), faults=list(body.faults),
                   checks={k: list(v) for k, v in body.checks.items()}, tags=list(body.tags),
                   replies=[body.golden_reply] if body.golden_reply else [],
                   origin=(body.origin or {}).get("opening") or "", branches=list((body.origin or {}).get("branches") or []))

    @property
    def golden_reply(self) -> str:
        return " ".join(self.replies)

    def body(self) -> TaskBody:
        """The engine's task body."""
        checks = {section: list(items) for section, items in self.checks.items()}
        origin = {"opening": self.origin, "branches": list(self.branches)} if self.origin or self.branches else None
        return TaskBody(description=self.description, opening=self.opening, golden_reply=self.golden_reply, facts=self.facts,
                        intent=self.intent, patch=self.patch, golden=self.golden, checks=checks,
                        idempotent_writes=self.idempotent, tags=list(dict.fromkeys(self.tags)),
                        dialogue=self.dialogue, faults=self.faults, origin=origin, decisions=self.decisions)


__all__ = ["TURN_ACTS", "TaskDraft"]
