"""What the typed dialogue checks and the process checks read: a domain's declarations and an episode's words.

A domain declares once, in ``domains/<d>/verdicts.yaml`` next to its policy, the phrases
that state the same outcome, what the customer is never told, the arithmetic of its
rules (so that an explained amount or date counts as grounded) and its order rules.
The check kinds themselves live in :mod:`thinkingbox_env.checks` (``mentions``,
``withholds``, ``grounded_values``, ``process``); this module holds what they share,
and what the oracle agent needs to propose a guarded write in the domain's words.

Frozen task YAML still carries regular-expression ``dialogue`` entries; they are
translated here, at load time, into typed mentions and withholds where that is mechanical.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from .events import TraceEvent, tool_calls
from .reading.values import Value, extract_values, parse_value
from .spec import DialogueCheck, TaskSpec, load_yaml
from .users.acts import read_customer_answer

if TYPE_CHECKING:
    from .checks.base import GradingContext

log = logging.getLogger(__name__)

# --------------------------------------------------------------------------- domain declarations


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ConfidentialSpec(_Strict):
    """What the customer is never told: concept phrases, and columns whose values are internal."""

    concepts: list[str] = Field(default_factory=list, description="phrases that reveal an internal reason")
    columns: list[str] = Field(default_factory=list, description="table.column whose values in the task's records are internal")


class DerivationSpec(_Strict):
    """Arithmetic the domain's rules do, so that a correctly explained amount or date is grounded."""

    money_sums: bool = True
    percents: list[float] = Field(default_factory=list)
    day_offsets: list[int] = Field(default_factory=list)
    business_day_offsets: list[int] = Field(default_factory=list)
    holidays: list[date] = Field(default_factory=list)
    month_offsets: list[int] = Field(default_factory=list)


class ObjectSpec(_Strict):
    """How a proposal names what a write acts on: the object's identifying attributes, and its holder's other objects.

    ``identify``: SQL with one ``?`` (the argument's value) whose first row holds the object's
    identifying attributes (its id, a vehicle's make and model, a booking's hotel); ``others``: SQL
    with one ``?`` whose rows are the objects of the same kind the same holder has (the object itself
    among them), with the same columns. Both are read on the task's initial state.
    """

    identify: str
    others: str = ""
    # False where a proposal may leave the record unnamed (a customer's one policy, when a driver is added to it):
    # naming another of the customer's records is still evidence
    must_name: bool = True

    @field_validator("identify", "others")
    @classmethod
    def _one_placeholder(cls, sql: str) -> str:
        if sql and sql.count("?") != 1:
            raise ValueError(f"a lookup must hold exactly one '?' (the value looked up), got {sql.count('?')}: {sql}")
        return sql


# when a guarded write needs the customer's agreement: always; only when it is not what the customer
# asked for in those terms (another date, another object, money the customer never named); or only when
# the write's result records a positive amount in the named field (a paid extra, not a free request)
_WHEN = re.compile(r"always|not_as_asked|result\.(\w+) > 0")


class ProcessRule(_Strict):
    """One order rule of a domain's policy: what must come before which writes."""

    name: str
    kind: Literal["verified_before", "consent_before"]
    description: str = ""
    # the writes it guards: tool name -> how the agent describes that write (str.format over the arguments)
    writes: dict[str, str]
    verify_tool: str = ""
    verified_field: str = ""
    verified_values: list[str] = Field(default_factory=list)
    match_argument: str = ""
    # verification counts for the customer it was done for: the verify tool's argument naming the
    # customer, and per argument of a guarded write, SQL (one ``?``) that finds the customer who holds
    # what the write touches, read on the task's initial state; or a chain of such reads, each given
    # the value the one before found (a driver's policy, then that policy's holder), so that every
    # step is a lookup by key that the engine answers without DuckDB
    verify_customer_argument: str = ""
    owners: dict[str, str | list[str]] = Field(default_factory=dict)
    # consent rules: per guarded write, the policy's own sentence that asks for the customer's agreement
    # (quoted as written in policy.md; tests/engine/test_process_policy.py holds the two together), when the
    # agreement is needed, and per id argument how a proposal names the object the write touches
    policy: dict[str, str] = Field(default_factory=dict)
    when: dict[str, str] = Field(default_factory=dict)
    objects: dict[str, ObjectSpec] = Field(default_factory=dict)
    # a write a policy sentence asks agreement for, checked on another guarded write that always follows it
    # (a paid extra recorded, then charged): the agreement is read where the money moves
    through: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _declared_for_guarded_writes(self) -> ProcessRule:
        for field_name in ("when",):
            for tool in getattr(self, field_name):
                if tool not in self.writes:
                    raise ValueError(f"{field_name}.{tool}: not a write this rule guards")
        for tool in self.policy:
            if tool not in self.writes and tool not in self.through:
                raise ValueError(f"policy.{tool}: not a write this rule guards (nor one it checks through another)")
        for tool, other in self.through.items():
            if other not in self.writes:
                raise ValueError(f"through.{tool}: {other} is not a write this rule guards")
        return self

    @field_validator("when")
    @classmethod
    def _known_conditions(cls, when: dict[str, str]) -> dict[str, str]:
        for tool, cond in when.items():
            if not _WHEN.fullmatch(cond):
                raise ValueError(f"when.{tool}: '{cond}' is not one of always, not_as_asked, result.<field> > 0")
        return when

    def condition(self, tool: str) -> str:
        """When the write needs the customer's agreement (``always`` unless the rule says otherwise)."""
        return self.when.get(tool, "always")

    @field_validator("owners")
    @classmethod
    def _one_placeholder_each(cls, owners: dict[str, str | list[str]]) -> dict[str, str | list[str]]:
        for arg, sql in owners.items():
            steps = [sql] if isinstance(sql, str) else sql
            if not steps:
                raise ValueError(f"owners.{arg}: an empty chain of lookups")
            for i, step in enumerate(steps):
                if step.count("?") != 1:
                    raise ValueError(f"owners.{arg}: lookup {i} must hold exactly one '?' (the value looked up), "
                                     f"got {step.count('?')}")
        return owners


class BookkeepingSpec(_Strict):
    """Record keeping the policy allows on the request's own ticket, which the state checks neither require nor punish.

    A policy asks for notes on the ticket a request is tracked on ("note it on the onboarding
    ticket"), and a note is never wrong there; but ``update_ticket`` stamps the ticket's
    ``updated_at``, so a note the golden run did not write would read as a side effect, and one
    it wrote as a required effect. ``table`` is the table of those records, ``columns`` the
    compared columns a note changes (its text goes to a volatile column), ``tool`` the write that
    adds one, ``key`` the argument naming the row and ``note`` the argument carrying the text.
    A row is the request's own when the golden run writes it: a change of only these columns to
    such a row is bookkeeping; the same change to any other row, or a change of any other column
    (a status, a priority, a team), is compared as every other effect is.
    """

    table: str
    columns: list[str] = Field(min_length=1)
    tool: str
    key: str
    note: str


class VerdictRules(_Strict):
    """The contents of ``domains/<d>/verdicts.yaml``: declared once per domain, next to its policy."""

    outcome_terms: list[list[str]] = Field(default_factory=list)
    confidential: ConfidentialSpec = Field(default_factory=ConfidentialSpec)
    derivations: DerivationSpec = Field(default_factory=DerivationSpec)
    action_verbs: list[str] = Field(default_factory=lambda: ["refunded", "credited", "added", "issued", "charged", "waived", "applied"])
    process: list[ProcessRule] = Field(default_factory=list)
    bookkeeping: BookkeepingSpec | None = None


@lru_cache(maxsize=16)
def load_verdict_rules(domain_path: str) -> VerdictRules:
    """A domain's ``verdicts.yaml``, read once; an empty declaration where the domain has none."""
    path = Path(domain_path) / "verdicts.yaml"
    if not path.is_file():
        return VerdictRules()
    data = load_yaml(path) or {}
    try:
        return VerdictRules.model_validate(data)
    except Exception as exc:  # noqa: BLE001 - name the file
        raise ValueError(f"{path}: {exc}") from exc


# --------------------------------------------------------------------------- phrase normalisation

_CONTRACTIONS = [
    (r"\bcan'?t\b", "cannot"), (r"\bcan not\b", "cannot"), (r"\bwon'?t\b", "will not"), (r"\b(\w+)n't\b", r"\1 not"),
    (r"\b(unable|not able) to\b", "cannot"), (r"\bi'm\b", "i am"), (r"\bi've\b", "i have"), (r"\bit's\b", "it is"),
    (r"\byou're\b", "you are"), (r"\bthat's\b", "that is"),
]
_NEGATIONS = {"not", "no", "cannot", "never", "unable", "nothing", "without", "neither", "nor", "ineligible"}


def _lemma(word: str) -> str:
    """The word's lemma from the lookup table the claim reader uses (spacy-lookups-data's): "notes" is "note", never "not"."""
    from .reading.claims import word_lemma

    return word_lemma(word)


@lru_cache(maxsize=16_384)  # every regex mention of a task reads the same messages
def expand_contractions(text: str) -> str:
    """Lower-cased with contractions written out ("isn't" is "is not", "can't" is "cannot"), words kept as they are."""
    t = text.lower().replace("\u2019", "'").replace("\u2018", "'")
    for pat, rep in _CONTRACTIONS:
        t = re.sub(pat, rep, t)
    return t


def normalise_phrase(text: str) -> list[str]:
    """Lower-cased, contractions expanded, "unable to" read as "cannot", words lemmatised."""
    return list(_normalise_phrase(text))


@lru_cache(maxsize=16_384)  # grading normalises the same replies and phrases for every episode of a task
def _normalise_phrase(text: str) -> tuple[str, ...]:
    t = text.lower().replace("’", "'").replace("‘", "'")
    for pat, rep in _CONTRACTIONS:
        t = re.sub(pat, rep, t)
    words = re.findall(r"[a-z0-9$.]+(?:'[a-z]+)?", t)
    # "cannot be cancelled" says the same as "cannot cancel"
    out: list[str] = []
    for w in words:
        w = w.strip(".")
        if not w:
            continue
        if w in ("be", "been", "being") and out and out[-1] in ("cannot", "not"):
            continue
        out.append(_lemma(w))
    return tuple(out)


def _clauses(text: str) -> list[str]:
    return [c for c in re.split(r"[.;!?\n]+|,\s+(?:but|and|so|however)\b|\bbut\b|\bhowever\b", text) if c.strip()]


def _find_phrase(tokens: Sequence[str], phrase: Sequence[str]) -> int:
    n = len(phrase)
    for i in range(len(tokens) - n + 1):
        # a prefix stands for its word family ("escalat"), but a short word only for itself ("not" is not "note")
        if all(tokens[i + k] == phrase[k] or (len(phrase[k]) >= 5 and tokens[i + k].startswith(phrase[k]))
               for k in range(n)):
            return i
    return -1


def phrase_polarity(text: str, phrase: str) -> list[bool]:
    """For every clause of ``text`` that says ``phrase``: True when affirmed, False when negated.

    A phrase that itself negates ("not eligible") is affirmed when said as written.
    """
    return list(_phrase_polarity(text, phrase))


@lru_cache(maxsize=16_384)
def _phrase_polarity(text: str, phrase: str) -> tuple[bool, ...]:
    want = _normalise_phrase(phrase)
    if not want:
        return ()
    out = []
    for clause in _clauses(text):
        toks = _normalise_phrase(clause)
        i = _find_phrase(toks, want)
        if i < 0:
            continue
        negated = any(t in _NEGATIONS for t in toks[max(0, i - 6) : i])
        out.append(not negated)
    return tuple(out)


# --------------------------------------------------------------------------- check specs


@dataclass
class Mention:
    """One thing the customer must be told: a typed value, or an outcome term with its polarity."""

    label: str
    values: list[Value] = field(default_factory=list)  # any one of them
    terms: list[str] = field(default_factory=list)  # any one of them (variants)
    affirmed: bool = True
    regex: str | None = None  # a pattern with no typed reading, kept as written


@dataclass
class Withhold:
    """One thing the customer must not be told: typed values, phrases, or a pattern kept as written."""

    label: str
    values: list[Value] = field(default_factory=list)
    terms: list[str] = field(default_factory=list)
    affirmed_only: bool = False  # forbids claiming the thing, not denying it
    regex: str | None = None


@dataclass
class TypedDialogue:
    """A task's dialogue entry read as typed mentions and withholds."""

    name: str
    mentions: list[Mention] = field(default_factory=list)
    withholds: list[Withhold] = field(default_factory=list)


@dataclass
class DialogueContext:
    """Everything the typed dialogue checks read, gathered once at the end of an episode."""

    agent_messages: list[str]
    user_messages: list[str]
    tool_results: list[Any]
    state_records: list[Any]
    reference_text: str
    clock: date
    id_patterns: tuple[str, ...]
    rules: VerdictRules
    write_results: list[Any] = field(default_factory=list)

    def agent_values(self) -> list[tuple[int, Value]]:
        return [(i, v) for i, m in enumerate(self.agent_messages) for v in extract_values(m, self.clock, self.id_patterns)]


_REGEX_META = re.compile(r"[\\()\[\]{}?*+|^$.]")


def _literal(pattern: str) -> str | None:
    r"""The plain text a simple pattern stands for (``12\\.00`` -> ``12.00``, ``\\bscore\\b`` -> ``score``)."""
    p = pattern.replace(r"\b", "")
    p = re.sub(r"\\(.)", r"\1", p)
    if re.search(r"[()\[\]{}?*+|^$]", p):
        return None
    return p


def _variants(term: str, rules: VerdictRules) -> list[str]:
    norm = normalise_phrase(term)
    for group in rules.outcome_terms:
        if any(normalise_phrase(g) == norm for g in group):
            return list(dict.fromkeys([term, *group]))
    return [term]


def translate_dialogue(chk: DialogueCheck, golden_reply: str, clock: date, id_patterns: tuple[str, ...],
                       rules: VerdictRules) -> TypedDialogue:
    """Today's must/must_not patterns read as typed mentions and withholds.

    A pattern that names a value becomes that value in any format. A pattern for a kind
    of value (any date, any amount) becomes the values of that kind the golden reply
    states. A word or phrase becomes an outcome term with the polarity the golden reply
    gives it. Anything else keeps its regular expression.
    """
    out = TypedDialogue(chk.name)
    golden_vals = extract_values(golden_reply, clock, id_patterns)
    for pattern in chk.must:
        lit = _literal(pattern)
        val = parse_value(lit, clock, id_patterns) if lit else None
        if val is None and lit and re.fullmatch(r"\d+(?:\.\d+)?", lit):
            val = Value("number", lit.rstrip("0").rstrip(".") if "." in lit else lit, lit)
        if val is not None:
            out.mentions.append(Mention(pattern, values=[val]))
            continue
        rx = re.compile(pattern, re.IGNORECASE)
        typed = [v for v in golden_vals if rx.fullmatch(v.text) or rx.search(v.text) and v.kind in ("date", "money")]
        typed = [v for v in typed if v.kind in ("date", "money", "duration", "id")]
        if typed:
            for v in typed:
                out.mentions.append(Mention(f"{pattern} ({v.text})", values=[v]))
            continue
        alternatives = [a for a in pattern.split("|")] if "(" not in pattern else []
        lits = [_literal(a) for a in alternatives]
        if lits and all(lits):
            terms = [t for lit_ in lits for t in _variants(lit_, rules)]  # type: ignore[arg-type]
            pols = [p for t in terms for p in phrase_polarity(golden_reply, t)]
            affirmed = pols[0] if pols else True
            out.mentions.append(Mention(pattern, terms=list(dict.fromkeys(terms)), affirmed=affirmed))
        else:
            out.mentions.append(Mention(pattern, regex=pattern))
    for pattern in chk.must_not:
        lit = _literal(pattern)
        val = parse_value(lit, clock, id_patterns) if lit else None
        if val is None and lit and re.fullmatch(r"\d+", lit):
            val = Value("number", lit, lit)
        if val is not None:
            out.withholds.append(Withhold(pattern, values=[val]))
            continue
        alternatives = pattern.split("|") if "(" not in pattern else []
        lits = [_literal(a) for a in alternatives]
        if lits and all(lits):
            terms = [t for lit_ in lits for t in _variants(lit_, rules)]  # type: ignore[arg-type]
            # forbidding a negative phrase ("not eligible") forbids saying it; forbidding an action word
            # ("refunded") forbids claiming the action, not denying it
            negative = any(set(normalise_phrase(t)) & _NEGATIONS for t in terms)
            out.withholds.append(Withhold(pattern, terms=list(dict.fromkeys(terms)), affirmed_only=not negative))
        else:
            out.withholds.append(Withhold(pattern, regex=pattern))
    return out


# --------------------------------------------------------------------------- context of an episode


def typed_dialogue_for(spec: TaskSpec, clock: date, id_patterns: tuple[str, ...], rules: VerdictRules) -> list[TypedDialogue]:
    """The task's ``dialogue`` entries read as typed mentions and withholds."""
    return [translate_dialogue(c, spec.golden_reply, clock, id_patterns, rules) for c in spec.checks.dialogue]


@lru_cache(maxsize=16)
def _reference_text(domain_path: str, policy: str) -> str:
    kb = Path(domain_path) / "kb"
    docs = [p.read_text(encoding="utf-8") for p in sorted(kb.glob("*.md"))] if kb.is_dir() else []
    return "\n".join([policy, *docs])


def episode_context(spec: TaskSpec, domain: Any, dialogue: list[dict[str, str]], trace: Sequence[TraceEvent],
                    diff: Any) -> DialogueContext:
    """Gather what the dialogue checks read from one finished (or running) episode."""
    return DialogueContext(
        agent_messages=[m["content"] for m in dialogue if m["role"] == "assistant"],
        user_messages=[m["content"] for m in dialogue if m["role"] == "user"],
        tool_results=[e.get("result") for e in tool_calls(trace)],
        state_records=[diff, spec.patch.model_dump(mode="json")],
        reference_text=_reference_text(str(domain.path), domain.policy),
        clock=domain.spec.clock.date(),
        id_patterns=tuple(domain.spec.id_patterns),
        rules=load_verdict_rules(str(domain.path)),
        write_results=[e.get("result") for e in tool_calls(trace) if e.get("writes")],
    )




def dialogue_context(context: GradingContext) -> DialogueContext:
    """The episode's words for the dialogue kinds, gathered once per grading (the kinds share it)."""
    cached = context.memo.get("dialogue_context")
    if cached is None:
        from .domain import load_domain

        domain = load_domain(context.task.domain)  # the runtime's domain, without hashing the task again
        cached = episode_context(context.task, domain, context.dialogue, context.trace, context.outcome.diff)
        context.memo["dialogue_context"] = cached
    return cached


def typed_dialogue(context: GradingContext) -> list[TypedDialogue]:
    """The task's translated dialogue entries, computed once per grading."""
    cached = context.memo.get("typed_dialogue")
    if cached is None:
        ctx = dialogue_context(context)
        cached = typed_dialogue_for(context.task, ctx.clock, ctx.id_patterns, ctx.rules)
        context.memo["typed_dialogue"] = cached
    return cached


def domain_rules(task: TaskSpec) -> VerdictRules:
    """The verdict declarations of the task's domain (empty when the domain declares none)."""
    from .domain import load_domain

    return load_verdict_rules(str(load_domain(task.domain).path))


# --------------------------------------------------------------------------- agreement and proposals

_YES = re.compile(
    r"\b(yes|yeah|yep|sure|ok(ay)?|please (do|go ahead|proceed)|go ahead|proceed|do it|that'?s (fine|right|correct)|"
    r"sounds good|agreed|i agree|confirm(ed)?|correct|please)\b", re.IGNORECASE)
_NO = re.compile(
    r"\b(no|nope|don'?t|do not|stop|wait|hold on|not (now|yet)|never ?mind|i('d| would) rather not|decline|refuse)\b",
    re.IGNORECASE)


def _agreed_by_words(reply: str) -> bool | None:
    no, yes = _NO.search(reply), _YES.search(reply)
    if no and (not yes or no.start() <= yes.start()):
        return False
    if yes:
        return True
    return None


def _agreed_by_acts(reply: str) -> bool | None:
    """The simulated user's dialogue-act reader, so a scripted and an LLM user's replies read alike."""
    answer = read_customer_answer(reply)
    return True if answer == "agree" else False if answer == "refuse" else _agreed_by_words(reply)


AgreementReader = Callable[[str], "bool | None"]
_reader: AgreementReader = _agreed_by_acts


def set_agreement_reader(reader: AgreementReader | None) -> None:
    """Point the consent check at another reader of user replies (None restores the default)."""
    global _reader
    _reader = reader if reader is not None else _agreed_by_acts


def agreed(reply: str) -> bool | None:
    """True when the reply agrees to a proposal, False when it refuses, None when it says neither."""
    return _reader(reply)


def describe(rule: ProcessRule, name: str, arguments: dict[str, Any]) -> str:
    """The words an agent uses to propose a guarded write (the rule's template over the call's arguments)."""

    class _Blank(dict):
        def __missing__(self, key: str) -> str:
            return ""

    args = _Blank({k: (float(v) if k == "amount" and isinstance(v, (int, str)) and str(v).replace(".", "", 1).isdigit() else v)
                   for k, v in (arguments or {}).items()})
    try:
        return rule.writes[name].format_map(args).replace("  ", " ").strip()
    except (ValueError, TypeError):
        return rule.writes[name].split("{")[0].strip()
