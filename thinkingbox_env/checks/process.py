"""``process``: the order rules of a domain's policy, evaluated on the episode's trace.

The state tells what changed, not in which order or with whose agreement. A domain
declares its order rules once, in ``domains/<d>/verdicts.yaml``, and every task of the
domain gets one ``process:<rule>`` result per rule (a rule no guarded write touched
passes as "not triggered"):

- ``verified_before``: every successful write to a guarded tool comes after a
  successful identity verification (the verify tool returned a level the rule
  accepts) in the same episode, of the customer who holds what the write touches
  where the rule says how to find that customer (``owners``: the policy of a driver,
  a vehicle or a billing account, read on the task's initial state);
- ``consent_before``: every successful guarded write comes after a customer reply that
  agrees, given in the turn right after an agent message that proposed that write. Which
  writes, and when, comes from the policy's own sentences (:mod:`thinkingbox_env.policy_rules`
  reads them; the rule quotes each): always, only where the write is not what the customer
  asked for in those terms (``not_as_asked``: another date, another record, money they never
  named), or checked through another write. A proposal licenses the write when, read with the
  claim reader (:mod:`thinkingbox_env.reading.claims`), it names the write's action in any ordinary
  wording, the record it touches (its id or identifying attributes, the rule's ``objects``) and
  every value it uses (each date the description names, the exact amount). Agreement is read by
  :func:`thinkingbox_env.verdict_rules.agreed`, the simulated user's dialogue-act reader.

  The check fails only on a finding: no agreement at all before a write the policy guards, or
  agreement to a proposal naming another of the customer's records or other values. Where the
  customer agreed to words the reader cannot read for this write (no action recognised, no
  record named), or where it cannot tell whether the write is what the customer asked, the
  result is undetermined (``passed`` None, ``undetermined``), which does not zero the verdict.

The trace must hold the episode's messages between its tool calls; the MCP server
builds it from its own call record and the dialogue the operator sends (see
:func:`thinkingbox_env.checks.grading.interleave`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Any

from ..events import ToolCallEvent, TraceEvent, is_message, is_tool_call, tool_calls
from ..reading.claims import GENERIC, actions_for_tool, read_claims
from ..reading.values import Value, extract_values, parse_value, same_value
from ..records import CheckResult
from ..verdict_rules import ProcessRule, agreed, domain_rules, normalise_phrase
from .base import CheckKind, GradingContext


def _verb(rule: ProcessRule, name: str) -> str:
    words = normalise_phrase(rule.writes[name])
    return words[0] if words else name


def _events(trace: Sequence[TraceEvent]) -> list[TraceEvent]:
    """The tool calls and the plain user and assistant messages, in order: what the order rules are about."""
    return [e for e in trace if is_tool_call(e) or (
        is_message(e) and e["role"] in ("user", "assistant") and e.get("content") and not e.get("tool_calls"))]


def _verified_ok(rule: ProcessRule, event: ToolCallEvent) -> bool:
    result = event.get("result")
    return bool(event.get("ok")) and isinstance(result, dict) and str(result.get(rule.verified_field)) in rule.verified_values


@dataclass(frozen=True)
class Reading:
    """How proposals are read in a task's domain: its claim vocabulary, clock and id formats."""

    domain_path: str = ""
    clock: date | None = None
    id_patterns: tuple[str, ...] = ()


def _arg_values(arguments: Any, reading: Reading, money_keys: set[str],
                date_keys: set[str] | None = None) -> tuple[list[Decimal], list[Value], list[Value]]:
    """(amounts, dates, ids) a write's arguments carry: what a proposal must have named for it.

    With ``date_keys`` only those arguments count as dates the write sets (its effective date, not a
    driver's date of birth): the ones the rule's description of the write names.
    """
    amounts: list[Decimal] = []
    dates: list[Value] = []
    ids: list[Value] = []
    for key, v in (arguments or {}).items() if isinstance(arguments, dict) else []:
        if isinstance(v, bool) or v is None:
            continue
        if isinstance(v, (int, float, Decimal)) or (isinstance(v, str) and re.fullmatch(r"-?\d+(\.\d+)?", v)):
            if key in money_keys and Decimal(str(v)) > 0:  # a zero amount moves no money: nothing to name
                amounts.append(Decimal(str(v)))
            continue
        pv = parse_value(str(v), reading.clock, reading.id_patterns)
        if pv is not None and pv.kind == "date":
            if date_keys is None or key in date_keys:
                dates.append(pv)
        elif pv is not None and pv.kind == "id":
            ids.append(pv)
        elif isinstance(v, str) and re.search(r"\d", v) and len(v) <= 40:
            ids.append(Value("id", v.strip().lower(), v))  # an identifier the domain's id formats do not cover
    return amounts, dates, ids


@dataclass(frozen=True)
class ObjectFacts:
    """What one id argument of a write touches, as a message can name it.

    Its identifying attributes (those no other record of the holder shares), and those of the
    holder's other records of the same kind, each with only what tells it apart from this one.
    """

    argument: str
    value: str
    names: tuple[str, ...]
    must_name: bool = True
    others: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (the other object's first attribute, what tells it apart)


_STOP = frozenset({"the", "and", "for", "with", "from", "your", "plan", "card", "account", "policy", "order", "booking"})


def _attribute_names(row: Mapping[str, Any]) -> tuple[str, ...]:
    """The strings a message may name an object by: each attribute whole, and the words of a multi-word one."""
    out: list[str] = []
    for v in row.values():
        if v is None or isinstance(v, (bool, float, Decimal, date)):
            continue  # amounts and dates are the write's values, not what names the object
        text = str(v).strip()
        if not text:
            continue
        out.append(text.lower())
        words = re.findall(r"[A-Za-z][A-Za-z'-]{2,}", text)
        if len(words) > 1:
            out += [w.lower() for w in words if w.lower() not in _STOP]
    return tuple(dict.fromkeys(out))


def _says(text: str, name: str) -> bool:
    """Whether the text names this attribute as a whole word or id (not inside an amount, an id, a word or an e-mail address)."""
    text = re.sub(r"\S+@\S+", " ", text)
    if re.search(rf"(?<![\w$.-]){re.escape(name)}(?![\w-]|\.\d)", text, re.IGNORECASE):
        return True
    # an id by its last digits, as an agent reads a long number out ("the order ending in 0006")
    tail = re.fullmatch(r"[a-z]+-?\d*?(\d{4})", name)
    return tail is not None and re.search(rf"\bending (?:in |with )?{tail.group(1)}\b", text, re.IGNORECASE) is not None


Rows = Callable[[str, Any], "list[dict[str, Any]]"]  # (SQL with one '?', value) -> rows on the task's initial state


def _no_rows(sql: str, value: Any) -> list[dict[str, Any]]:
    return []


def object_facts(rule: ProcessRule, event: Mapping[str, Any], rows: Rows) -> list[ObjectFacts]:
    """The objects a guarded write touches, where the rule says how a message names them."""
    args = event.get("arguments")
    out: list[ObjectFacts] = []
    for arg, spec in rule.objects.items():
        value = args.get(arg) if isinstance(args, dict) else None
        if value is None:
            continue
        found = rows(spec.identify, value)
        if not found:
            continue
        names = _attribute_names(found[0])
        if str(value).lower() not in names:
            names = (str(value).lower(), *names)
        others: list[tuple[str, tuple[str, ...]]] = []
        shared: set[str] = set()
        for row in rows(spec.others, value) if spec.others else []:
            theirs = _attribute_names(row)
            if not theirs or theirs[0] == names[0] or str(value).lower() in theirs:
                continue  # the object itself
            shared.update(n for n in theirs if n in names)
            apart = tuple(n for n in theirs if n not in names)
            if apart:
                others.append((theirs[0], apart))
        # what names this record is what tells it apart: not a surname the household shares, not the make of two cars
        own = tuple(n for n in names if n not in shared) or names
        out.append(ObjectFacts(arg, str(value), own, others=tuple(others), must_name=spec.must_name))
    return out


def _same_kind_ids(text: str, value: str) -> list[str]:
    """Ids in the text written like ``value`` (the same letters before the number: another booking, another order)."""
    prefix = re.match(r"([A-Za-z]+-)\d", value)
    if not prefix:
        return []
    return [m.group(0) for m in re.finditer(rf"(?<![\w-]){re.escape(prefix.group(1))}\d+\b", text, re.IGNORECASE)
            if m.group(0).upper() != value.upper()]


def _object_finding(text: str, facts: list[ObjectFacts]) -> tuple[str, str]:
    """("named" | "other" | "unnamed", why) for a message and the objects a write touches."""
    for f in facts:
        if any(_says(text, n) for n in f.names):
            continue
        other = next((o for o, apart in f.others if any(_says(text, n) for n in apart)), None)
        if other is None and f.must_name:
            other = next(iter(_same_kind_ids(text, f.value)), None)
        if other is not None:
            return "other", f"names {other}, another of the customer's records, not {f.value} that the write touches"
        if f.must_name:
            return "unnamed", f"does not name {f.value} ({f.argument})"
    return "named", ""


def _money_keys(template: str) -> set[str]:
    """The arguments that are money: those the rule's description writes as an amount ("${amount:.2f}")."""
    pairs = re.findall(r"\$\{(\w+)|\{(\w+):\.2f\}", template) if template else []
    return {k for pair in pairs for k in pair if k} if template else {"amount"}


def _flags_set(event: Mapping[str, Any], template: str) -> list[str]:
    """The yes/no arguments the write turns on that the rule's description names ("autopay"), as words."""
    keys = _template_keys(template) or set()
    raw = event.get("arguments")
    args: dict[str, Any] = raw if isinstance(raw, dict) else {}
    return [k.replace("_", " ") for k, v in args.items() if v is True and k in keys]


def _template_keys(template: str) -> set[str] | None:
    """The arguments the rule's description of a write names (None without a description: all of them)."""
    return set(re.findall(r"\{(\w+)", template)) if template else None


def _amounts_said(text: str, reading: Reading) -> list[Decimal]:
    """Amounts a message states: money, or where the domain writes none with a currency ("estimated at 557.00"), decimals."""
    said = extract_values(text, reading.clock, reading.id_patterns)
    money = [Decimal(v.norm) for v in said if v.kind == "money" and Decimal(v.norm).is_finite()]
    return money or [Decimal(v.norm) for v in said if v.kind == "number" and "." in v.text and Decimal(v.norm).is_finite()]


def proposal_finding(text: str, event: Mapping[str, Any], reading: Reading, template: str = "",
                     facts: list[ObjectFacts] | None = None) -> tuple[str, str]:
    """How an agreed message stands to this write: ("licensed" | "evidence" | "unread", why).

    Licensed: the message names the write's action (read with the claim reader, in any ordinary
    wording), the object it touches (its id or identifying attributes) and every value it uses (each
    date it sets, the exact amount it moves). Evidence: the message names another of the customer's
    records instead of the one the write touches, or amounts or dates that are not the write's, so
    the customer agreed to something else. Unread: no action of the write recognised, or no object
    or value named that the reader can parse; the reader cannot tell what was agreed to.
    """
    name = str(event.get("name"))
    actions = actions_for_tool(reading.domain_path, name) if reading.domain_path else set()
    claims = [c for c in read_claims(text, reading.domain_path, reading.clock, reading.id_patterns)
              if c.action in actions and c.outcome != "refused"] if actions else []
    amounts, dates, ids = _arg_values(event.get("arguments"), reading, _money_keys(template), _template_keys(template))
    if not claims:
        quoted = _amounts_said(text, reading) if amounts else []
        if quoted and not any(abs(a - q) < Decimal("0.005") for a in amounts for q in quoted):
            # the customer agreed to amounts (a new total), none of them the one this write moves: a total
            # licenses only what the domain declares it covers, and no domain declares one
            return "evidence", (f"the write uses {max(amounts):.2f}; the agreed message named only "
                                f"{', '.join(f'{q:.2f}' for q in quoted)}")
        return "unread", f"no proposal of the action of {name} recognised"
    said = extract_values(text, reading.clock, reading.id_patterns)
    if facts:
        found, why = _object_finding(text, facts)
        if found == "other":
            return "evidence", f"the proposal {why}"
        if found == "unnamed":
            return "unread", f"the proposal {why}"
    elif not (any(same_value(i, v) or i.text.lower() in text.lower() for i in ids for v in [*said, i])
              or any(c.objects for c in claims)):
        return "unread", "the proposal does not say what the action acts on"
    if amounts:
        proposed = _amounts_said(text, reading)
        if not proposed:
            return "unread", f"the write uses {max(amounts):.2f}; the proposal names no amount"
        missing = [a for a in amounts if not any(abs(a - p) < Decimal("0.005") for p in proposed)]
        if missing:
            return "evidence", (f"the write uses {missing[0]:.2f}; the proposal named "
                                f"{', '.join(f'{p:.2f}' for p in proposed)}")
    for flag in _flags_set(event, template):
        if not _says(text, flag):
            return "unread", f"the write turns on {flag}; the proposal does not name it"
    said_dates = [v for v in said if v.kind == "date"]
    for d in dates:
        if not any(same_value(d, v) for v in said_dates):
            if not said_dates:
                return "unread", f"the write sets {d.norm}; the proposal names no date"
            return "evidence", f"the write sets {d.norm}; the proposal named {', '.join(v.norm for v in said_dates)}"
    return "licensed", "proposed"


def proposal_licenses(text: str, event: Mapping[str, Any], reading: Reading, template: str = "",
                      facts: list[ObjectFacts] | None = None) -> tuple[bool, str]:
    """Whether an agent message proposed this write: its action, on its object, with the values it uses."""
    found, why = proposal_finding(text, event, reading, template, facts)
    return found == "licensed", why


def _proposal_like(text: str) -> bool:
    """Whether an agent message asks for agreement to something (not a question for a fact)."""
    from ..users.acts import _CHOICE_CUE, _PROPOSAL, _PROPOSAL_ACTION

    # a choice between options ("the card or the bank account?") is answered, not agreed to
    return bool(_PROPOSAL.search(text) or _PROPOSAL_ACTION.search(text)) and not _CHOICE_CUE.search(text)


def _agreed_messages(before: list[TraceEvent]) -> list[str]:
    """Agent messages the customer agreed to in the turn right after them, before the write."""
    out = []
    for prev, reply in zip(before, before[1:]):
        if is_message(prev) and prev["role"] == "assistant" and is_message(reply) and reply["role"] == "user" \
                and agreed(reply["content"] or "") is True:
            out.append(prev["content"] or "")
    return out


def consent_finding(rule: ProcessRule, event: ToolCallEvent, before: list[TraceEvent], reading: Reading,
                    facts: list[ObjectFacts] | None = None) -> tuple[str, str]:
    """("agreed" | "evidence" | "unread" | "none", why) for the customer's agreement to this write before it.

    Agreed: the customer agreed to a message that proposed it. Evidence: the agreements there are
    name another record or other values. Unread: the customer agreed to a proposal the reader cannot
    read for this write. None: the customer agreed to no proposal at all.
    """
    name = event["name"]
    use_claims = bool(reading.domain_path) and bool(actions_for_tool(reading.domain_path, str(name)))
    template = rule.writes.get(name, "")
    unread: str | None = None
    evidence: str | None = None
    for text in _agreed_messages(before):
        if not use_claims:  # a domain without a claim vocabulary: the rule's own verb
            if _verb(rule, name) in normalise_phrase(text):
                return "agreed", "agreed"
            continue
        found, why = proposal_finding(text, event, reading, template, facts)
        if found == "licensed":
            return "agreed", "agreed"
        if found == "evidence":
            evidence = evidence or why
        elif _proposal_like(text) or why != f"no proposal of the action of {name} recognised":
            unread = unread or why
    if evidence:
        return "evidence", f"the customer agreed to another proposal: {evidence}"
    if unread:
        return "unread", f"the customer agreed, but {unread[0].lower()}{unread[1:]}"
    proposed = use_claims and any(
        is_message(e) and e["role"] == "assistant"
        and proposal_finding(e["content"] or "", event, reading, template, facts)[0] == "licensed" for e in before)
    return "none", "the customer did not agree to the proposal" if proposed else "no agent message proposed it"


def as_asked(event: ToolCallEvent, before: list[TraceEvent], reading: Reading, template: str,
             facts: list[ObjectFacts], others_dates: frozenset[str] = frozenset()) -> tuple[str, str, Any]:
    """("asked" | "other" | "unknown", why, term): whether the write is what the customer asked for, in those terms.

    Read on the customer's own messages before the write: money the write moves that the customer
    never named, another record than the one the write touches (and never this one), or dates asked
    for in the sentence of the request none of which the write sets, are a change the customer did
    not ask for ("other"; ``term`` is what differs: the amount, the date, the flag's word). A request of
    the write's action with none of these is "asked"; no request the reader recognises is "unknown".
    """
    texts = [e["content"] or "" for e in before if is_message(e) and e["role"] == "user"]
    name = str(event.get("name"))
    amounts, dates, _ = _arg_values(event.get("arguments"), reading, _money_keys(template), _template_keys(template))
    said_amounts = [a for t in texts for a in _amounts_said(t, reading)]
    for a in amounts:
        if not any(abs(a - s) < Decimal("0.005") for s in said_amounts):
            return "other", f"the write moves {a:.2f}, an amount the customer never named", a
    whole = "\n".join(texts)
    for flag in _flags_set(event, template):
        if not _says(whole, flag):
            return "other", f"the write turns on {flag}, which the customer never asked for", flag
    actions = actions_for_tool(reading.domain_path, name) if reading.domain_path else set()
    requests = [c for t in texts for c in read_claims(t, reading.domain_path, reading.clock, reading.id_patterns)
                if c.action in actions and c.outcome != "refused" and c.affirmed] if actions else []
    # another record asked for: in the sentences that request the action, or where none is recognised, in what
    # the customer said beyond introducing themself (a customer giving their name, a driver on the policy, asks
    # nothing about that driver)
    said = "\n".join(sent for t in texts for sent in re.split(r"(?<=[.!?])\s+", t)
                     if not re.match(r"\s*(?:my (?:full )?name is|i am|i'm|this is)\b", sent, re.IGNORECASE))
    asked_text = "\n".join(dict.fromkeys(c.sentence for c in requests))
    for f in facts:
        if any(_says(whole, n) for n in f.names):
            continue
        # the request names no record of the kind ("I'd like to sign up for a course"): the record is in the answers
        named_in_request = any(_says(asked_text, n) for _, apart in f.others for n in apart)
        asked_text = asked_text if named_in_request else said
        other = next((o for o, apart in f.others if any(_says(asked_text, n) for n in apart)), None)
        if other is not None:
            return "other", f"the customer asked about {other}, not {f.value} that the write touches", None
    asked_dates = [v for seg in _request_segments(requests, texts, reading, event, facts)
                   for v in extract_values(seg, reading.clock, reading.id_patterns) if v.kind == "date"]
    if not asked_dates and reading.clock is not None:
        # no date in the request itself: the calendar dates of the customer's affairs they gave ("I sold it on
        # 12 April"), within a year of today (a date of birth is no date asked for)
        # , leaving out those asked for another change ("add my father today, and switch my car to liability")
        others = [c for t in texts for c in read_claims(t, reading.domain_path, reading.clock, reading.id_patterns)
                  if c.action not in actions and c.action != GENERIC]
        elsewhere = {v.norm for seg in _request_segments(others, texts, reading, {}, []) if others
                     for v in extract_values(seg, reading.clock, reading.id_patterns) if v.kind == "date"}
        asked_dates = [v for t in texts for v in extract_values(t, reading.clock, reading.id_patterns)
                       if v.kind == "date" and re.search(r"\d", v.text)  # a calendar date, not "tomorrow" said in passing
                       and abs((date.fromisoformat(v.norm) - reading.clock).days) <= 366 and v.norm not in elsewhere
                       and v.norm not in others_dates]  # a date another write of the episode set is that write's term
    for d in dates:
        if asked_dates and not any(same_value(d, v) for v in asked_dates):
            return "other", (f"the customer named {', '.join(dict.fromkeys(v.norm for v in asked_dates))}; "
                             f"the write sets {d.norm}"), d
    if requests or facts:
        # the customer asked for the write's action, or named every record it touches (a course, asked for by
        # its title): with nothing asked otherwise, the write is what they asked for
        return "asked", "as the customer asked", None
    return "unknown", f"no request of the action of {name} recognised in the customer's words", None


def _request_segments(requests: list[Any], texts: list[str], reading: Reading, event: Mapping[str, Any],
                      facts: list[ObjectFacts]) -> list[str]:
    """The words of each request of the write's action: from its clause to the next request of the same sentence.

    Where the write has words of its own (its record, or a word of a text argument: the vehicle's
    model, the driver's name), only the segments that name them are the request for this write, so
    that a date asked for another change of the same sentence is not read as this one's.
    """
    all_claims = [c for t in texts for c in read_claims(t, reading.domain_path, reading.clock, reading.id_patterns)]
    segments: list[str] = []
    for c in requests:
        start = c.sentence.find(c.clause) if c.clause else 0
        start = max(start, 0)
        later = [c.sentence.find(o.clause, start + 1) for o in all_claims
                 if o.sentence == c.sentence and o.clause and o.clause != c.clause]
        end = min([p for p in later if p > start], default=len(c.sentence))
        segments.append(c.sentence[start:end])
    raw = event.get("arguments")
    args: dict[str, Any] = raw if isinstance(raw, dict) else {}
    words = {w.lower() for v in args.values() if isinstance(v, str) and not re.search(r"\d", v)
             for w in re.findall(r"[A-Za-z]{4,}", v) if "_" not in v} | {n for f in facts for n in f.names}
    about = [seg for seg in segments if any(_says(seg, w) for w in words)]
    # requests that name none of what this write is about are requests for another record of the same action
    return about if words else segments


def _other_writes_dates(events: list[TraceEvent], at: int, reading: Reading | None) -> frozenset[str]:
    """The dates the episode's other successful writes set (another record's effective date)."""
    if reading is None:
        return frozenset()
    mine = events[at].get("arguments") if is_tool_call(events[at]) else None
    out: set[str] = set()
    for k, e in enumerate(events):
        if k == at or not is_tool_call(e) or not e.get("writes") or e.get("arguments") == mine:
            continue
        _, dates, _ = _arg_values(e.get("arguments"), reading, set())
        out.update(d.norm for d in dates)
    return frozenset(out)


def _names_term(text: str, term: Any, reading: Reading) -> bool:
    """Whether a message names the term a write differs from the request by: a date, an amount or a flag's word."""
    if isinstance(term, str):
        return _says(text, term)
    if isinstance(term, Decimal):
        return any(abs(term - a) < Decimal("0.005") for a in _amounts_said(text, reading))
    return any(same_value(term, v) for v in extract_values(text, reading.clock, reading.id_patterns))


def _required(rule: ProcessRule, event: ToolCallEvent) -> bool:
    """False where the rule's condition exempts this write from agreement on its result (a free request, not a paid extra)."""
    cond = rule.condition(str(event["name"]))
    m = re.fullmatch(r"result\.(\w+) > 0", cond)
    if not m:
        return True
    result = event.get("result")
    value = result.get(m.group(1)) if isinstance(result, dict) else None
    try:
        return value is None or Decimal(str(value)) > 0
    except ArithmeticError:
        return True


def consent_applies(rule: ProcessRule, event: ToolCallEvent, before: list[TraceEvent], reading: Reading,
                    rows: Rows = _no_rows, others_dates: frozenset[str] = frozenset()) -> bool:
    """Whether the rule asks agreement for this write at all, whatever the dialogue held (not exempt as asked for)."""
    if not _required(rule, event):
        return False
    if rule.condition(str(event["name"])) != "not_as_asked":
        return True
    facts = object_facts(rule, event, rows)
    return as_asked(event, before, reading, rule.writes.get(event["name"], ""), facts, others_dates)[0] != "asked"


def consent_result(rule: ProcessRule, event: ToolCallEvent, before: list[TraceEvent], reading: Reading,
                   rows: Rows = _no_rows, others_dates: frozenset[str] = frozenset()) -> tuple[bool | None, str]:
    """(True: respected, False: violated, None: undetermined, why) for one guarded write under a consent rule.

    It fails only on a finding: no agreement at all where the policy asks for one, or agreement to
    another record or other values. Where the customer agreed to words the reader cannot read, or
    (for a write that needs agreement only when it is not what the customer asked) the customer's
    request cannot be read, it is undetermined.
    """
    if not _required(rule, event):
        return True, "not required: the write records nothing to pay"
    facts = object_facts(rule, event, rows)
    found, why = consent_finding(rule, event, before, reading, facts)
    if found == "agreed":
        return True, why
    if rule.condition(str(event["name"])) != "not_as_asked":
        return (None if found == "unread" else False), why
    asked, asked_why, term = as_asked(event, before, reading, rule.writes.get(event["name"], ""), facts, others_dates)
    if asked == "asked":
        return True, f"not required: {asked_why}"
    if asked == "other":
        if found == "unread" and term is not None and any(_names_term(t, term, reading) for t in _agreed_messages(before)):
            # the confirmation the policy asks for is of what differs from the request: agreed to that term
            return True, f"agreed to what differs from the request ({asked_why})"
        return (None if found == "unread" else False), f"{asked_why}, so the policy asks for agreement; {why}"
    return (False if found == "evidence" else None), f"{asked_why}; {why}"


Owner = Callable[["str | list[str]", Any], "str | None"]  # (SQL or chain, value) -> the customer id, or None when not found


def _no_owner(sql: str | list[str], value: Any) -> str | None:
    return None


def _write_owner(rule: ProcessRule, event: ToolCallEvent, owner: Owner) -> tuple[str, str] | None:
    """(what the write touches, the customer who holds it), where the rule can tell."""
    args = event.get("arguments")
    if not isinstance(args, dict):
        return None
    for arg, sql in rule.owners.items():
        if args.get(arg) is not None:
            held_by = owner(sql, args[arg])
            if held_by is not None:
                return f"{arg} {args[arg]}", held_by
    return None


def _verified_for(rule: ProcessRule, event: ToolCallEvent) -> str | None:
    args = event.get("arguments")
    value = args.get(rule.verify_customer_argument) if isinstance(args, dict) else None
    return str(value).strip().upper() if value is not None else None


def process_results(rules: list[ProcessRule], trace: Sequence[TraceEvent], owner: Owner = _no_owner,
                    reading: Reading | None = None, rows: Rows = _no_rows) -> list[CheckResult]:
    """One result per rule of the domain, on one trace; ``owner`` and ``rows`` answer the rules' lookups.

    A rule is failed by any violation; with none, it is undetermined where the reader could not
    decide for some guarded write (:func:`consent_result`), and passed otherwise.
    """
    out: list[CheckResult] = []
    events = _events(trace)
    for rule in rules:
        violations: list[str] = []
        unsure: list[str] = []
        notes: list[str] = []
        guarded = 0
        for i, e in enumerate(events):
            if not is_tool_call(e) or e.get("name") not in rule.writes or not e.get("writes"):
                continue
            guarded += 1
            before = events[:i]
            if rule.kind == "verified_before":
                verified = [b for b in tool_calls(before) if b.get("name") == rule.verify_tool and _verified_ok(rule, b)]
                held = _write_owner(rule, e, owner) if rule.verify_customer_argument else None
                if not verified:
                    violations.append(f"{e['name']} before a successful {rule.verify_tool}")
                elif held is not None and not any(_verified_for(rule, b) == held[1].strip().upper() for b in verified):
                    violations.append(f"{e['name']} on {held[0]}, held by {held[1]}, with no successful "
                                      f"{rule.verify_tool} of {held[1]}")
            else:
                ok, why = consent_result(rule, e, before, reading or Reading(), rows, _other_writes_dates(events, i, reading))
                if ok is False:
                    violations.append(f"{e['name']} without the customer's agreement to a proposal of it ({why})")
                elif ok is None:
                    unsure.append(f"{e['name']}: {why}")
                elif why.startswith("not required"):
                    notes.append(f"{e['name']}: {why}")
        name = f"process:{rule.name}"
        if violations:
            out.append(CheckResult(name=name, kind="process", passed=False, detail="; ".join(violations)))
        elif unsure:
            out.append(CheckResult(name=name, kind="process", passed=None, undetermined=True,
                                   detail="undetermined: " + "; ".join(unsure)))
        else:
            detail = "not triggered" if not guarded else "respected" + (f" ({'; '.join(notes)})" if notes else "")
            out.append(CheckResult(name=name, kind="process", passed=True, detail=detail))
    return out


class ProcessCheck(CheckKind):
    """The domain's order rules, kept on the trace: verification and consent before the writes they guard."""

    name = "process"
    group = "process"
    order = 350
    follows_write = True
    reward_group = "process"

    def evaluate(self, context: GradingContext) -> list[CheckResult]:
        from ..domain import load_domain

        domain = load_domain(context.task.domain)
        reading = Reading(str(domain.path), domain.spec.clock.date(), tuple(domain.spec.id_patterns))
        return process_results(domain_rules(context.task).process, context.trace, _initial_state_owner(context), reading,
                               _initial_state_rows(context))


def _initial_state_owner(context: GradingContext) -> Owner:
    """Owner queries on the task's initial state, opened on the first query and answered once per grading.

    The initial state, not the final one: a removed driver still had a policy when it was removed.
    """
    answers: dict[tuple[str, str], tuple[bool, Any]] = context.memo.setdefault("owners", {})

    def lookup(sql: str, value: str) -> tuple[bool, Any]:
        """(whether a row was found, its first value)."""
        key = (sql, value)
        if key not in answers:
            state = context.task_runtime().new_state()
            state.probe = True  # a lookup in the initial state, not an episode
            try:
                row = state.query_one(sql, [value])
            finally:
                state.close()
            answers[key] = (False, None) if not row else (True, next(iter(row.values())))
        return answers[key]

    def owner(sql: str | list[str], value: Any) -> str | None:
        steps = [sql] if isinstance(sql, str) else sql
        found: Any = value
        for i, step in enumerate(steps):  # a chain: each lookup given what the one before found
            if i and found is None:  # as a join on NULL, a missing link finds no one
                return None
            ok, found = lookup(step, str(found))
            if not ok:
                return None
        return str(found)

    return owner


def runtime_rows(runtime: Any, answers: dict[tuple[str, str], list[dict[str, Any]]] | None = None) -> Rows:
    """Row lookups on a task runtime's initial state (the records a proposal names), each answered once."""
    answers = {} if answers is None else answers

    def rows(sql: str, value: Any) -> list[dict[str, Any]]:
        key = (sql, str(value))
        if key not in answers:
            state = runtime.new_state()
            state.probe = True  # a lookup in the initial state, not an episode
            try:
                answers[key] = [dict(r) for r in state.query(sql, [str(value)])]
            finally:
                state.close()
        return answers[key]

    return rows


def _initial_state_rows(context: GradingContext) -> Rows:
    """Row lookups on the task's initial state, answered once per grading."""
    return runtime_rows(context.task_runtime(), context.memo.setdefault("object_rows", {}))


def writes_needing_consent(rules: list[ProcessRule], trace: Sequence[TraceEvent], reading: Reading,
                           rows: Rows = _no_rows) -> list[str]:
    """The guarded writes of a trace whose consent rule applies to them (not exempt as what the customer asked)."""
    events = _events(trace)
    out = []
    for rule in rules:
        if rule.kind != "consent_before":
            continue
        for i, e in enumerate(events):
            if is_tool_call(e) and e.get("name") in rule.writes and e.get("writes") \
                    and consent_applies(rule, e, events[:i], reading, rows, _other_writes_dates(events, i, reading)):
                out.append(str(e["name"]))
    return out
