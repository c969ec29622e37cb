"""``states``: the closing conveys the values the task's outcome consists of, named by their role.

A task says what its closing must convey as roles of the domain's claim vocabulary
(``domains/<d>/claims.yaml``), not as phrases::

    checks:
      states: [refund.amount, new_due_date]

A role's value is not any value of the episode: it sits in a particular place of a
particular call (the ``amount`` argument of ``issue_refund``, the due date in the result of
``grant_extension``). The places are found once per task in the golden trajectory, where
the golden closing's value of that role sits, and each episode is then held to the value
in the same places of its own calls. So "your $5.00 payment" fails where the refund was
$45.00 even though $5.00 is a real fee of the episode, and a closing that says only "thank
you for your patience" fails where the amount was said only in a proposal before the write:
the closing (what is said after the episode's last write) must state the value itself.

Tasks frozen before the section carry phrase checks instead. Their ``dialogue`` entries
are translated: a value they require that the golden closing states, and that sits where
one of the domain's roles keeps its value in the golden trajectory, becomes a stated role.
One result per stated role, ``states:<role>``, names the closing sentence that states it,
or the value the episode holds and what the closing said instead.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any

from ..contracts.events import ToolCallEvent, tool_calls
from ..contracts.records import CheckResult
from ..contracts.spec import TaskSpec
from ..reading.claims import ClaimsVocabulary, RoleSpec, load_vocabulary, term_values
from ..reading.values import Value, extract_values, keyed_leaves, money_norm, parse_value, same_value
from ._reading import claims_in, could_hold_a_value, reading_of
from .base import CheckKind, GradingContext, TaskRuntimeView
from .verdict_rules import VerdictRules, load_verdict_rules

if TYPE_CHECKING:
    pass

# A place in a trajectory that holds a role's value: (tool, "arguments" | "result", field name); ("*sum*", role, "")
# stands for the sum of the amounts of the role's calls (two refunds of one order are told as their total).
Place = tuple[str, str, str]


@dataclass(frozen=True)
class StatedRole:
    """One thing the closing must convey: a role (or, translated from a phrase, any of a few) and where its value sits."""

    label: str
    places: frozenset[Place]


def _leaf_value(leaf: Any, spec: RoleSpec, clock: Any, ids: tuple[str, ...]) -> Value | None:
    if leaf is None or isinstance(leaf, bool):
        return None
    if spec.kind == "term":
        return Value("term", str(leaf), str(leaf)) if str(leaf) in spec.terms else None
    if isinstance(leaf, (int, float)) and spec.kind == "money":
        return parse_value(f"${leaf}", clock, ids)
    v = parse_value(str(leaf), clock, ids)
    return v if v is not None and v.kind == spec.kind or v is not None and v.kind == "number" else None


def role_values(spec: RoleSpec, calls: Sequence[ToolCallEvent], clock: Any, ids: tuple[str, ...],
                places: frozenset[Place] | None = None) -> list[tuple[Place, Value]]:
    """The values a role holds in the successful calls of a trajectory, with their places (only ``places`` when given)."""
    out: list[tuple[Place, Value]] = []
    total, summed = Decimal(0), 0
    for call in calls:
        if not call.get("ok") or call.get("name") not in spec.tools:
            continue
        for side in ("arguments", "result"):
            for key, leaf in keyed_leaves(call.get(side)):
                if spec.keys and key not in spec.keys:
                    continue
                place = (str(call["name"]), side, key)
                if places is not None and place not in places:
                    continue
                v = _leaf_value(leaf, spec, clock, ids)
                if v is not None:
                    out.append((place, v))
        amount = call.get("arguments", {}).get("amount") if isinstance(call.get("arguments"), dict) else None
        if spec.kind == "money" and isinstance(amount, (int, float)) and not isinstance(amount, bool):
            try:
                total += Decimal(str(amount))
                summed += 1
            except InvalidOperation:
                pass
    if summed > 1:
        place = ("*sum*", ",".join(spec.tools), "")
        if places is None or place in places:
            out.append((place, Value("money", money_norm(total), f"${total:.2f}")))
    return out


def _context(domain: Any) -> tuple[ClaimsVocabulary | None, Any, tuple[str, ...]]:
    return load_vocabulary(str(domain.path)), domain.spec.clock.date(), tuple(domain.spec.id_patterns)


def _places_stated_by_golden(vocab: ClaimsVocabulary, role: str, calls: Sequence[ToolCallEvent], golden_values: list[Value],
                             clock: Any, ids: tuple[str, ...], wanted: list[Value] | None = None) -> frozenset[Place]:
    """The places of ``role`` whose golden value the golden closing states (and, when given, is one of ``wanted``)."""
    found = set()
    for place, v in role_values(vocab.roles[role], calls, clock, ids):
        if not any(same_value(v, g) or same_value(g, v) for g in golden_values):
            continue
        if wanted is not None and not any(same_value(w, v) or same_value(v, w) for w in wanted):
            continue
        found.add(place)
    return frozenset(found)


def _declared(task: TaskSpec, vocab: ClaimsVocabulary, calls: Sequence[ToolCallEvent], clock: Any,
              ids: tuple[str, ...]) -> tuple[list[StatedRole], list[tuple[str, str]]]:
    golden_values = extract_values(task.golden_reply, clock, ids)
    out, problems = [], []
    for i, role in enumerate(task.checks.states):
        if role not in vocab.roles:
            problems.append((f"checks.states.{i}", f"unknown role '{role}'; the domain's roles: {', '.join(vocab.roles) or 'none'}"))
            continue
        stated = golden_values + term_values(vocab.roles[role], task.golden_reply) if vocab.roles[role].kind == "term" else golden_values
        places = _places_stated_by_golden(vocab, role, calls, stated, clock, ids)
        if not places:
            problems.append((f"checks.states.{i}", f"the golden closing states no value of '{role}' that its calls "
                                                   f"({', '.join(vocab.roles[role].tools)}) hold"))
            continue
        out.append(StatedRole(role, places))
    return out, problems


def _translated(task: TaskSpec, vocab: ClaimsVocabulary, calls: Sequence[ToolCallEvent], clock: Any,
                ids: tuple[str, ...], rules: VerdictRules) -> list[StatedRole]:
    """Stated roles read from the phrase checks of a task that declares none."""
    if not task.checks.dialogue or not vocab.roles:
        return []
    from .dialogue import typed_dialogue_for

    golden_values = extract_values(task.golden_reply, clock, ids)
    wanted = [v for t in typed_dialogue_for(task, clock, ids, rules) for m in t.mentions for v in m.values]
    wanted = [w for w in wanted if any(same_value(w, g) or same_value(g, w) for g in golden_values)]
    out: list[StatedRole] = []
    for w in wanted:
        roles: list[str] = []
        places: set[Place] = set()
        for role in vocab.roles:
            found = _places_stated_by_golden(vocab, role, calls, golden_values, clock, ids, [w])
            if found:
                roles.append(role)
                places |= found
        if roles:
            label = "|".join(roles)
            if not any(s.label == label and s.places == frozenset(places) for s in out):
                out.append(StatedRole(label, frozenset(places)))
    return out


def stated_roles(task: TaskSpec, runtime: TaskRuntimeView) -> list[StatedRole]:
    """What the task's closing must convey: its declared roles, else the roles its phrase checks translate to.

    Kept on the task's ``runtime`` (``tasks.runtime.runtime_for(task)``), computed once per task.
    """
    kept = runtime.derived.get("stated_roles")
    if kept is None:
        kept = runtime.derived["stated_roles"] = _stated_roles(task, runtime)
    return kept


def _stated_roles(task: TaskSpec, runtime: TaskRuntimeView) -> list[StatedRole]:
    vocab, clock, ids = _context(runtime.domain)
    if vocab is None:
        return []
    calls = runtime.golden_calls()
    if task.checks.states:
        return _declared(task, vocab, calls, clock, ids)[0]
    return _translated(task, vocab, calls, clock, ids, load_verdict_rules(str(runtime.domain.path)))


def stated_roles_in(context: GradingContext) -> list[StatedRole]:
    """:func:`stated_roles` of the graded task, looked up once per grading (claims:roles asks per role)."""
    found = context.memo.get("stated_roles")
    if found is None:
        found = context.memo["stated_roles"] = stated_roles(context.task, context.task_runtime())
    return found


class StatesCheck(CheckKind):
    """The closing states each value the task's outcome consists of, as the episode holds it (see the module docstring)."""

    name = "states"
    group = "dialogue"
    order = 470
    follows_write = True
    reward_group = "dialogue"
    spec_section = "states"
    spec_item = str

    def describe_task(self, task: TaskSpec, runtime: TaskRuntimeView) -> list[str]:
        if task.checks.states:
            return super().describe_task(task, runtime)
        return [f"states:{s.label} (from the phrase checks)" for s in stated_roles(task, runtime)]

    def check_task(self, task: TaskSpec, runtime: TaskRuntimeView) -> list[tuple[str, str]]:
        if not task.checks.states:
            return []
        vocab, clock, ids = _context(runtime.domain)
        if vocab is None:
            return [("checks.states", f"the domain '{task.domain}' declares no roles (no claims.yaml)")]
        return _declared(task, vocab, runtime.golden_calls(), clock, ids)[1]

    def evaluate(self, context: GradingContext) -> list[CheckResult]:
        required = stated_roles_in(context)
        if not required:
            return []
        vocab, clock, ids = _context(context.domain)
        assert vocab is not None  # stated roles exist only where the domain declares roles
        calls = tool_calls(context.trace)
        if not calls:  # a caller that sent only the closing: held to the golden's values (the state checks judge the state)
            calls = context.task_runtime().golden_calls()
        closing = context.closing()
        said = [(text, v) for text in closing for v in extract_values(text, clock, ids)]
        out = []
        for s in required:
            held = [v for role in s.label.split("|") for _, v in role_values(vocab.roles[role], calls, clock, ids, s.places)]
            terms = [(text, v) for role in s.label.split("|") if vocab.roles[role].kind == "term"
                     for text in closing for v in term_values(vocab.roles[role], text)]
            hit = next(((text, v) for text, v in said + terms for h in held if same_value(h, v) or same_value(v, h)), None)
            if hit is not None and all(vocab.roles[r].every for r in s.label.split("|")):
                # each value the episode holds is its own fact (every approver of a request): one stated is not enough
                missing = sorted({h.norm for h in held} - {v.norm for _, v in said + terms})
                if missing:
                    hit = None
            if hit is not None:
                detail = f"the closing states {s.label} {hit[1].text}: '{_sentence(hit[0], hit[1])}'"
            elif not held:
                detail = f"the episode holds no {s.label} (no successful {', '.join(sorted({p[0] for p in s.places}))})"
            else:
                shown = ", ".join(sorted({v.text or v.norm for v in held}))
                told = ", ".join(v.text for _, v in said + terms) or "no amount, date, id or term of the role"
                detail = f"the closing does not state {s.label} ({shown}); it states {told}"
            if hit is None and held and all(vocab.roles[r].kind == "term" for r in s.label.split("|")):
                # a term has no shape a reader could spot in other words ("came back clear", "the bigger plan"), and
                # its other phrases turn up in clauses that state nothing ("until onboarding is complete"): not
                # finding the held term is evidence only where every sentence was read or the closing says nothing
                other = _term_stated_instead(vocab, s.label.split("|"), closing, held)
                reading = reading_of(context, closing)
                if other:
                    detail = f"{detail}; stated in its role instead: {other}"
                elif not reading.complete and reading.content:
                    out.append(CheckResult(name=f"states:{s.label}", kind="states", passed=None, undetermined=True,
                                           detail=f"{detail}; {reading.why()}"))
                    continue
            elif hit is None and held:
                # not finding the value is evidence where every sentence was read, where the closing says nothing,
                # where it states another value in this role, or where nothing unread could be a value at all
                reading = reading_of(context, closing)
                other = _stated_in_role(context, closing, s.label.split("|"), held)
                if other:
                    detail = f"{detail}; stated in its role instead: {other}"
                elif not reading.complete and reading.content and could_hold_a_value(reading):
                    out.append(CheckResult(name=f"states:{s.label}", kind="states", passed=None, undetermined=True,
                                           detail=f"{detail}; {reading.why()}"))
                    continue
            out.append(CheckResult(name=f"states:{s.label}", kind="states", passed=hit is not None, detail=detail))
        return out


# words that make a clause state no fact of its own: a condition, an alternative, a denial, what comes later
_UNASSERTED = re.compile(r"\b(?:until|unless|if|whether|once|when|before|after|or|not|never|no longer|instead|rather|"
                         r"cannot|can't|won't|isn't|wasn't|aren't|doesn't|didn't|would|could|might)\b|n't\b", re.IGNORECASE)


def _term_stated_instead(vocab: ClaimsVocabulary, roles: list[str], closing: list[str], held: list[Value]) -> str:
    """Another value of a term role, said as a plain statement ("I've booked it in economy" where business was booked).

    Only a phrase of two or more words, in a clause with no condition, alternative or denial in it, counts:
    "your ticket stays pending until onboarding is complete" names a phase it does not claim, and "I'd like to
    express our thanks" names no shipping speed, so neither is evidence against the closing.
    """
    norms = {h.norm for h in held}
    for role in roles:
        spec = vocab.roles[role]
        if spec.kind != "term":
            continue
        for text in closing:
            for v in term_values(spec, text):
                if v.norm in norms or not re.search(r"[\s-]", v.text):
                    continue  # one bare word ("express my thanks", "a minor delay", "I'll write") is no statement of the role
                start = max(text.rfind(c, 0, v.start) for c in ".;:!?\n") + 1
                ends = [i for i in (text.find(c, v.end) for c in ".;:!?\n") if i >= 0]
                clause = text[start:min(ends) if ends else len(text)]
                if not _UNASSERTED.search(clause):
                    return f"{v.text} ('{clause.strip()[:120]}')"
    return ""


def _stated_in_role(context: GradingContext, closing: list[str], roles: list[str], held: list[Value]) -> str:
    """A value the closing states in one of ``roles`` (by the role's cue next to it) that is not the episode's value."""
    for c in claims_in(context, closing):
        if not c.affirmed or c.outcome in ("proposed", "possible"):
            continue
        for rv in c.values:
            if rv.role in roles and not any(same_value(h, rv.value) or same_value(rv.value, h) for h in held):
                return f"{rv.value.text} ('{c.sentence[:120]}')"
    return ""


def _sentence(text: str, v: Value) -> str:
    start = max(text.rfind(". ", 0, v.start), text.rfind("\n", 0, v.start)) + 1
    end_dot = text.find(". ", v.end)
    end = len(text) if end_dot < 0 else end_dot + 1
    return text[start:end].strip()
