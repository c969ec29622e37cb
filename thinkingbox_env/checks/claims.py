"""``claims``: what the closing tells the customer, read into claims and held against what the episode did.

On every task of a domain with a ``claims.yaml`` (see :mod:`thinkingbox_env.reading.claims`), the
assistant messages after the episode's last write (all of them where nothing was written)
are read into claims, and four results enter the verdict:

- ``claims:agrees``: an outcome claim agrees with the effects. An action reported as done
  or coming ("your booking is cancelled", "I'll refund it") needs a successful write that
  performs it; a refusal or denial ("could not be cancelled", "nothing went through") fails
  next to such a write. Bookkeeping writes (tickets) do not count as a change.
- ``claims:consistent``: no action is both reported and denied in the closing (a closing
  stuffed with both outcomes).
- ``claims:states_outcome``: the closing states the task's outcome itself, as the golden
  closing does: each action the golden closing reports and the episode performed, or, where
  the golden closing reports none, one of its outcome claims (a refusal, an escalation).
  A proposal made earlier does not count.
- ``claims:roles``: a value stated in a role (the refund amount, the new due date) is a value
  of that role in the episode: an argument or result of a tool call the role names, not any
  amount the episode showed.

Each failing result names the sentence, the claim and the effect it disagrees with.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from ..contracts.events import ToolCallEvent, TraceEvent, is_tool_call, tool_calls
from ..contracts.records import CheckResult
from ..reading.claims import GENERIC, Claim, ClaimsVocabulary, load_vocabulary, subject_terms
from ..reading.values import Value, extract_values, money_norm, parse_value, same_value
from ._reading import claims_in, reading_of
from .base import CheckKind, GradingContext


def _writes(trace: Sequence[TraceEvent]) -> list[ToolCallEvent]:
    return [e for e in tool_calls(trace) if e.get("ok") and e.get("writes")]


def _distinct(a: Claim, b: Claim) -> bool:
    """Whether two claims speak of different things: each names values (ids, years) or proper names, and they share none."""
    va = ({v.value.key for v in a.values} or {k for k in _sentence_keys(a)}) | _names(a)
    vb = ({v.value.key for v in b.values} or {k for k in _sentence_keys(b)}) | _names(b)
    return bool(va) and bool(vb) and not (va & vb)


def _names(c: Claim) -> set[tuple[str, str]]:
    """The proper names of a claim's clause ("Ezekiel Corcoran", "Kia Forte"), word by word."""
    return {("name", w.lower()) for m in _NAME.finditer(c.clause) if m.group(0) not in _NOT_NAMES
            for w in re.split(r"[ -]", m.group(0)) if len(w) >= 3}


def _sentence_keys(c: Claim) -> set[tuple[str, str]]:
    return {("token", w.strip(".,;:()")) for w in c.sentence.split() if any(ch.isdigit() for ch in w)}


_NAME = re.compile(r"(?<![.!?:]\s)(?<!^)\b[A-Z][a-z]+(?:[ -][A-Z][a-z0-9]+)*")
_NOT_NAMES = {"I", "I'm", "I've", "I'll", "Unfortunately", "Sorry", "Your", "The", "This", "That", "It"}


def _about_another(c: Claim, writes: list[ToolCallEvent], clock: Any, ids: tuple[str, ...]) -> bool:
    """Whether a refusal names something in particular that none of the writes performing its action touched.

    "I can't add Priya Abernathy" next to a successful add_vehicle for a Nissan speaks of
    another thing than the write, so the two do not disagree; a refusal that names nothing
    in particular ("the order could not be cancelled", "nothing went through") is about
    every such write.
    """
    names = {m.group(0) for m in _NAME.finditer(c.clause)} - _NOT_NAMES
    # a bare number (a model year, a count) says too little to tell one record from another
    values = [rv.value for rv in c.values if rv.value.kind != "number"]
    if not names and not values:
        return False
    text = " ".join(json.dumps([w.get("arguments"), w.get("result")], default=str) for w in writes)
    words = {w.lower() for n in names for w in re.split(r"[ -]", n) if len(w) >= 3}  # a record stores make and model apart
    if any(re.search(rf"(?<![\w-]){re.escape(w)}(?![\w-])", text.lower()) for w in words):
        return False
    touched = extract_values(text, clock, ids)
    return not any(same_value(v, t) or same_value(t, v) for v in values for t in touched)


def _names_ticket(c: Claim) -> bool:
    """Whether a claim's clause speaks of the conversation's ticket ("ticket 70007 is now with underwriting")."""
    return bool(re.search(r"\bticket", c.clause, re.IGNORECASE))


def _bookkeeping_told(c: Claim, vocab: ClaimsVocabulary, written: set[str]) -> bool:
    """A change said of the ticket ("is now with the team", "marked solved") is done by the ticket write itself."""
    return c.action == GENERIC and _names_ticket(c) and bool(written & set(vocab.bookkeeping))


def _bookkeeping_only(vocab: ClaimsVocabulary, action: str) -> bool:
    """An action only the ticket writes perform ("marked solved"): "nothing was changed" stays true beside it."""
    spec = vocab.actions.get(action)
    return spec is not None and bool(spec.tools) and set(spec.tools) <= set(vocab.bookkeeping)


def _performed(vocab: ClaimsVocabulary, action: str, written: set[str]) -> bool:
    if action == GENERIC:
        return bool(written - set(vocab.bookkeeping))
    spec = vocab.actions.get(action)
    return spec is not None and bool(set(spec.tools) & written)


def _role_pool(vocab: ClaimsVocabulary, role: str, trace: Sequence[TraceEvent], clock: Any, ids: tuple[str, ...]) -> list[Any]:
    spec = vocab.roles[role]
    pool: list[Any] = []
    total = Decimal(0)
    for e in tool_calls(trace):
        if not e.get("ok") or e.get("name") not in spec.tools:
            continue
        amount = (e.get("arguments") or {}).get("amount") if isinstance(e.get("arguments"), dict) else None
        if isinstance(amount, (int, float)) and not isinstance(amount, bool):
            total += Decimal(str(amount))  # two refunds of one order are told as their sum
        for part in (e.get("arguments"), e.get("result")):
            for key, leaf in _leaves(part):
                if spec.keys and key not in spec.keys:
                    continue
                v = parse_value(str(leaf), clock, ids) if not isinstance(leaf, bool) else None
                if v is None and isinstance(leaf, (int, float)) and spec.kind == "money":
                    v = parse_value(f"${leaf}", clock, ids)
                if v is not None:
                    pool.append(v)
                elif isinstance(leaf, str):
                    pool += extract_values(leaf, clock, ids)
    if total and spec.kind == "money":
        pool.append(Value("money", money_norm(total), f"${total:.2f}"))
    return pool


def _role_values_in_episode(context: GradingContext, vocab: ClaimsVocabulary, role: str, trace: Sequence[TraceEvent],
                            clock: Any, ids: tuple[str, ...]) -> list[Any]:
    """A role's values in the episode.

    Of a call whose place for the role the task's golden shows (the closing must state it), only the
    value in that place counts (the refund's amount, not every amount of the order the refund tool
    returned); of the role's other calls, every value.
    """
    from .states import role_values, stated_roles_in

    places = frozenset(p for s in stated_roles_in(context) if role in s.label.split("|") for p in s.places)
    placed_tools = {p[0] for p in places}
    calls = tool_calls(trace)
    if not places or not calls:
        return _role_pool(vocab, role, trace, clock, ids)
    held = [v for _, v in role_values(vocab.roles[role], calls, clock, ids, places)]
    others = [e for e in trace if not (is_tool_call(e) and e.get("name") in placed_tools)]
    return held + _role_pool(vocab, role, others, clock, ids)


def _leaves(x: Any, key: str = "") -> list[tuple[str, Any]]:
    if isinstance(x, dict):
        return [kv for k, v in x.items() for kv in _leaves(v, str(k))]
    if isinstance(x, (list, tuple)):
        return [kv for v in x for kv in _leaves(v, key)]
    return [] if x is None else [(key, x)]


def claims_results(context: GradingContext) -> list[CheckResult]:
    """The four claim results of one episode; [] where the task's domain declares no vocabulary."""
    domain = context.domain
    vocab = load_vocabulary(str(domain.path))
    if vocab is None:
        return []
    clock, ids = domain.spec.clock.date(), tuple(domain.spec.id_patterns)
    trace = context.trace
    calls = tool_calls(trace)
    written = {e["name"] for e in _writes(trace)}
    if not calls and context.outcome.diff:
        written = {"(a write the trace does not show)"}  # a caller with only the closing: the diff says something changed
    # a bulleted closing states one thing per line: a line is read as a sentence of its own
    closing = [line for text in context.closing() for line in text.splitlines() if line.strip()]
    reading = reading_of(context, closing)
    read = claims_in(context, closing) + reading.model_claims
    claims = [c for c in read if c.statement]
    out: list[CheckResult] = []

    def result(name: str, bad: list[str] | None, good: str, absent: bool = False) -> CheckResult:
        """Failed on evidence (``bad``); passed where the whole closing was read; undetermined otherwise.

        ``absent`` marks a finding of absence (the outcome not stated): evidence only where the
        whole closing was read, or where it says nothing about the case at all.
        """
        if bad and (not absent or reading.complete or not reading.content):
            return CheckResult(name=name, kind="claims", passed=False, detail="; ".join(dict.fromkeys(bad)))
        if reading.complete:
            return CheckResult(name=name, kind="claims", passed=True, detail=good)
        if not bad and absent:
            return CheckResult(name=name, kind="claims", passed=True, detail=good)
        return CheckResult(name=name, kind="claims", passed=None, undetermined=True,
                           detail=(f"{'; '.join(bad)}; " if bad else "") + reading.why())

    # agrees
    bad: list[str] = []
    for c in claims:
        did = _performed(vocab, c.action, written) or _bookkeeping_told(c, vocab, written)
        partial = any(o.action == c.action and o.affirmed and o.outcome in ("done", "pending") and _distinct(c, o)
                      for o in claims)
        if c.outcome == "refused" and did and not partial and c.action != GENERIC:
            spec = vocab.actions.get(c.action)
            doing = [e for e in _writes(trace) if spec is not None and e.get("name") in spec.tools]
            partial = _about_another(c, doing, clock, ids)
        if c.outcome == "refused" and did and not partial:
            bad.append(f"'{c.sentence}': {c.describe()}; but the episode wrote {sorted(written)}")
        elif c.affirmed and c.outcome in ("done", "pending", "escalated") and c.reported and not did and calls:
            spec = vocab.actions.get(c.action)
            tools = "a change" if c.action == GENERIC else ("/".join(spec.tools) if spec is not None else "") or c.action
            bad.append(f"'{c.sentence}': {c.describe()}; but no successful {tools} in the episode")
    out.append(result("claims:agrees", bad, "every outcome claim agrees with the effects"))

    # consistent
    denied = {c.action: c for c in claims if c.outcome == "refused"}
    told = [c for c in claims if c.affirmed and c.outcome in ("done", "pending") and c.reported]
    clash = [f"'{c.sentence}' ({c.describe()}) against '{denied[a].sentence}' ({denied[a].describe()})"
             for c in told if not (c.action == GENERIC and _names_ticket(c))
             for a in sorted({c.action, GENERIC}) if a in denied and not (a == GENERIC and _bookkeeping_only(vocab, c.action))
             and (a == GENERIC or not _distinct(c, denied[a]))]
    out.append(result("claims:consistent", clash, "no action both reported and denied"))

    # states_outcome
    golden = [c for c in claims_in(context, [context.task.golden_reply]) if c.statement and c.action != GENERIC]
    backed = {c.action for c in golden if c.affirmed and c.outcome in ("done", "pending", "escalated")
              and _performed(vocab, c.action, written)}
    stated = {(c.action, c.affirmed) for c in claims}
    if not golden:
        ok, detail = _shares_subject(context.task.golden_reply, closing)
    elif backed:
        missing = sorted(a for a in backed if (a, True) not in stated)
        ok, detail = not missing, ("the closing states what was done" if not missing
                                   else f"the closing does not state: {', '.join(missing)} (what the episode did)")
    else:
        want = {(c.action, c.affirmed) for c in golden}
        ok = bool(want & stated) or any(not a for _, a in want) and any(not a for _, a in stated)
        detail = "the closing states the outcome" if ok else \
            f"the closing does not state the outcome ({'; '.join(g.describe() for g in golden)})"
    # the closing reports another write the episode made, under another of the vocabulary's names: a wording, not an absence
    other_label = not ok and any(c.affirmed and c.outcome in ("done", "pending", "escalated") and c.action != GENERIC
                                 and _performed(vocab, c.action, written) for c in claims)
    if other_label and reading.complete:
        out.append(CheckResult(name="claims:states_outcome", kind="claims", passed=None, undetermined=True,
                               detail=f"{detail}; it reports another write of the episode, which the reader cannot "
                                      "match to the task's outcome"))
    else:
        out.append(result("claims:states_outcome", [] if ok else [detail], detail, absent=True))

    # roles
    wrong: list[str] = []
    pools: dict[str, list[Any]] = {}
    for c in read:  # a value is stated in its role whether the claim reports an act or a fact ("your refund is $X")
        if not c.affirmed or c.outcome in ("proposed", "possible"):
            continue
        if not c.statement and {"was", "were"} & set(c.clause.lower().split()):
            continue  # "your refund of $949.00 was issued on 2026-02-28": an earlier record, not this episode's
        for rv in c.values:
            if not rv.candidates:
                continue
            filled = []
            for role in rv.candidates:
                if role not in pools:
                    pools[role] = _role_values_in_episode(context, vocab, role, trace, clock, ids)
                if pools[role]:
                    filled.append(role)
            if filled and not any(same_value(rv.value, p) or same_value(p, rv.value)
                                  for role in filled for p in pools[role]):
                wrong.append(f"'{c.sentence}': {rv.value.text} stated as {'/'.join(filled)}; the episode's "
                             f"{filled[0]} is {', '.join(sorted({p.text or p.norm for p in pools[filled[0]]}))}")
    out.append(result("claims:roles", wrong, "every value stated in a role is that role's value"))
    return out


SUBJECT_SHARE = 2
"""Subject words a closing must share with the task's closing where that one states no outcome the vocabulary names."""


def _shares_subject(golden_reply: str, closing: list[str]) -> tuple[bool, str]:
    """Whether the closing speaks of what the task's closing speaks of (its ids, dates, names, nouns and verbs).

    The floor for answers and refusals worded outside the vocabulary: a closing of thanks, or one
    about something else, fails; any closing that restates the answer in its own words shares
    some of its subject (at least two of its words, or all of them where it has fewer).
    """
    want = subject_terms(golden_reply)
    if not want:
        return True, "the task's closing states no outcome and no subject"
    said = set().union(*(subject_terms(t) for t in closing)) if closing else set()
    shared = want & said
    need = min(SUBJECT_SHARE, len(want))
    if len(shared) >= need:
        return True, f"the closing speaks of the task's subject ({', '.join(sorted(shared)[:6])})"
    return False, (f"the closing does not state the outcome: it shares {len(shared)} of the subject words of the task's "
                   f"closing ({', '.join(sorted(want)[:8])}), at least {need} needed")


class ClaimsCheck(CheckKind):
    """What the closing claims, held against the episode's effects and values (see the module docstring)."""

    name = "claims"
    group = "dialogue"
    order = 460
    follows_write = True
    reward_group = "dialogue"

    def evaluate(self, context: GradingContext) -> list[CheckResult]:
        return claims_results(context)
