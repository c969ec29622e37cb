"""Pydantic models for everything that is written by hand and read by the engine.

Task specs and domain specs are authored in YAML and reviewed by people, so every
model forbids unknown keys (a misspelt field must fail loudly, not be ignored) and
loading errors name the file, the task and the field.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_serializer,
    model_validator,
)

from ..bounded_yaml import BoundedYAMLError, read_bounded_yaml


class SpecError(ValueError):
    """A spec file could not be loaded; the message names the file, task and field."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=False)


# --------------------------------------------------------------------------- domain


class SequenceSpec(_Strict):
    """How new surrogate ids of a table are minted (per episode, deterministically)."""

    column: str
    start: int = 1
    format: str = "{n}"  # e.g. "TKT-{n:06d}"; "{n}" with an INTEGER column yields ints


class TableMeta(_Strict):
    """What comparing states needs per table: columns that change every run, id sequences, references to created rows."""
    volatile: list[str] = Field(default_factory=list)
    sequence: SequenceSpec | None = None
    references: dict[str, str] = Field(default_factory=dict)  # column -> referenced table


class DomainSlot(_Strict):
    """A kind of fact only this domain's customers hold; the engine's slots cover the common ones."""

    synonyms: list[str] = Field(min_length=1, description="noun phrases an agent uses to ask for it")
    value: str | None = Field(default=None, description="a regex matching a stated value of this slot")


class DomainSpec(_Strict):
    """The contents of ``domains/<name>/domain.yaml``."""

    name: str
    title: str
    clock: datetime
    agent_role: str = ""
    # raised whenever the frozen tasks change; part of every Gymnasium id (thinkingbox/retail.ST030_001-v1)
    task_set_version: int = Field(default=1, ge=1)
    id_patterns: list[str] = Field(default_factory=list)
    tables: dict[str, TableMeta] = Field(default_factory=dict)
    slots: dict[str, DomainSlot] = Field(
        default_factory=dict, description="user-fact slots this domain adds to the engine's vocabulary"
    )

    @field_validator("id_patterns")
    @classmethod
    def _patterns_compile(cls, value: list[str]) -> list[str]:
        for pattern in value:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"id pattern {pattern!r} is not a valid regex: {exc}") from exc
        return value


# --------------------------------------------------------------------------- tasks


class Fact(_Strict):
    """Something the user knows and says only when the agent asks for it."""

    text: str
    unlock: list[str] = Field(min_length=1, description="words that, asked about, release the fact")
    slot: str | None = Field(default=None, description="what the fact answers; inferred from text and unlock when absent")
    value: str | None = Field(default=None, description="the bare value inside text, for confirmations and terse replies")
    misremembered: str | None = Field(
        default=None, description="a wrong value the customer gives first in place of value, corrected once told it was not found"
    )

    @model_validator(mode="after")
    def _misremembered_needs_value(self) -> Fact:
        if self.misremembered is not None:
            if not self.value or self.value not in self.text:
                raise ValueError("a misremembered fact needs 'value', written inside 'text', to replace")
            if self.misremembered == self.value:
                raise ValueError("'misremembered' must differ from 'value'")
        return self

    def first_text(self) -> str:
        """What the customer says the first time: the text with the misremembered value, if any."""
        if self.misremembered is None or self.value is None:
            return self.text
        return self.text.replace(self.value, self.misremembered)


class Decision(_Strict):
    """How the customer answers a proposal or a choice on one topic.

    Proposals are matched to a decision by its ``about`` phrases (the topic, never
    the act: whether the message proposes anything is read structurally first).
    """

    about: list[str] = Field(min_length=1, description="phrases naming the topic, e.g. 'store credit', 'charge'")
    answer: Literal["accept", "refuse", "either"] = "accept"
    prefer: list[str] = Field(default_factory=list, description="in a choice, options containing these are picked")
    no_later_than: date | None = None
    no_earlier_than: date | None = None
    max_amount: float | None = None
    reason: str = Field(default="", description="said when refusing")


class RequestChange(_Strict):
    """The one change of mind the 'changes' persona makes mid-conversation."""

    after_turns: int = Field(default=2, ge=1)
    to: str = Field(min_length=1, description="what the customer says instead, in their words")


DEFAULT_RULES = [
    "Do not invent or provide any data that is not in this context.",
    "Do not change your goal or switch topics.",
    "If asked for the same information again, give it again.",
    "Stay focused, clear and patient.",
]


class UserSpec(_Strict):
    """What the simulated customer knows and wants; the same spec drives the scripted and the LLM user."""
    opening: str = Field(min_length=1)
    facts: list[Fact] = Field(default_factory=list)
    rules: list[str] = Field(default_factory=lambda: list(DEFAULT_RULES))
    confirm: str = "Yes, please go ahead."
    intent: str = ""
    decisions: list[Decision] = Field(default_factory=list)
    otherwise: Literal["accept", "ask"] = Field(
        default="accept", description="answer to a proposal no decision covers: agree, or ask for a recommendation"
    )
    change: RequestChange | None = None


SOURCE_PATTERN = re.compile(r"^(policy#[a-z0-9-]+|kb/[A-Za-z0-9_.-]+\.md(#[a-z0-9-]+)?|customer|record:[A-Za-z0-9_]+)$")


class ToolCall(_Strict):
    """A tool call as tasks record it (golden calls), independent of any model's wire format."""
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    why: dict[str, str] = Field(
        default_factory=dict,
        description="argument -> where its value comes from: policy#<heading>, kb/<doc>.md[#<heading>], customer, record:<tool>",
    )
    expect_error: str | None = Field(default=None, description="the call fails with an error containing this text (a recovery step)")

    @field_validator("why")
    @classmethod
    def _sources_well_formed(cls, value: dict[str, str]) -> dict[str, str]:
        for arg, source in value.items():
            if not SOURCE_PATTERN.match(source):
                raise ValueError(
                    f"source {source!r} of argument '{arg}' is not one of policy#<heading-slug>, kb/<doc>.md[#<heading-slug>], "
                    "customer, record:<tool>"
                )
        return value


class GoldenTurn(_Strict):
    """An agent turn of the golden trajectory, said before golden call ``before``.

    Written with the task rather than derived from it, so that what a careful agent asks,
    proposes and tells is reviewed like the calls are.
    """

    before: int = Field(ge=0, description="index of the golden call this turn precedes; len(golden) = before the closing")
    act: Literal["ask", "propose", "inform"]
    say: str = Field(min_length=1)


class Fault(_Strict):
    """A transient tool failure the task schedules: the n-th call of a tool fails and changes nothing."""

    tool: str
    call: int = Field(default=1, ge=1)
    error: str = Field(min_length=1)


class Origin(_Strict):
    """Where a generated task came from, so the held-out split can be checked."""

    opening: str = Field(min_length=1, description="<family code>/<opening template id>")
    branches: list[str] = Field(default_factory=list, description="<family code>:<branch>, one per request")


def interleave(turns: list[GoldenTurn], calls: list[ToolCall]) -> list[GoldenTurn | ToolCall]:
    """Turns and calls in the order they are played: each turn before the call it names, the rest after the last call.

    ``turns`` must be in golden order (as TaskSpec enforces); the oracle, the SFT conversations and
    ``thinkingbox show`` all read a golden trajectory through this one ordering.
    """
    out: list[GoldenTurn | ToolCall] = []
    k = 0
    for i, call in enumerate(calls):
        while k < len(turns) and turns[k].before <= i:
            out.append(turns[k])
            k += 1
        out.append(call)
    out.extend(turns[k:])
    return out


def heading_slug(heading: str) -> str:
    """The anchor of a Markdown heading as ``why`` sources name it."""
    return re.sub(r"[^a-z0-9]+", "-", heading.lower()).strip("-")


class RowUpdate(_Strict):
    """A change a task makes to the seed rows before the episode, so a variant needs no database of its own."""
    table: str
    key: dict[str, Any]
    set: dict[str, Any]


class RowDelete(_Strict):
    """A seed row a task removes before the episode."""
    table: str
    key: dict[str, Any]


class Patch(_Strict):
    """Rows a task adds to, changes in or removes from the domain's seed state."""

    insert: dict[str, list[dict[str, Any]]] = Field(default_factory=dict)
    update: list[RowUpdate] = Field(default_factory=list)
    delete: list[RowDelete] = Field(default_factory=list)

    def tables(self) -> set[str]:
        return set(self.insert) | {u.table for u in self.update} | {d.table for d in self.delete}


class SqlCheck(_Strict):
    """A read-only query over the final state that must return a single true value."""

    name: str
    query: str

    @field_validator("query")
    @classmethod
    def _read_only(cls, value: str) -> str:
        if not re.match(r"^\s*(select|with)\b", value, re.IGNORECASE) or ";" in value.strip().rstrip(";"):
            raise ValueError("a SQL check must be a single SELECT statement")
        return value


class DialogueCheck(_Strict):
    """Regular expressions the agent's final message must / must not match (case-insensitive)."""

    name: str
    must: list[str] = Field(default_factory=list)
    must_not: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _compile(self) -> DialogueCheck:
        for pattern in self.must + self.must_not:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"pattern {pattern!r} is not a valid regex: {exc}") from exc
        if not self.must and not self.must_not:
            raise ValueError("a dialogue check needs at least one must or must_not pattern")
        return self


class RubricCheck(_Strict):
    """A yes/no question about the final response, answered by a judge model."""

    name: str
    question: str


@dataclass(frozen=True)
class CheckSection:
    """A section of a task's ``checks``, as the check kind that reads it declared it."""

    name: str
    owner: str  # the check kind
    order: int  # where the section stands in a written spec (the kind's result order)
    entries: TypeAdapter[Any]  # validates the section's list of entries
    in_every_spec: bool  # written even when empty (the first task set's sections), so old specs keep their bytes


_CHECK_SECTIONS: dict[str, CheckSection] = {}


def declare_check_section(name: str, item: Any, owner: str, order: int, in_every_spec: bool = False) -> None:
    """Let task specs carry the section ``name`` of entries of type ``item`` (called when a check kind registers).

    The spec format is extended by the kinds rather than listing them, so a new kind with
    task-level entries is one module; a second kind claiming the same section is refused.
    """
    existing = _CHECK_SECTIONS.get(name)
    if existing is not None and existing.owner != owner:
        raise ValueError(f"check kinds '{existing.owner}' and '{owner}' both declare the section '{name}'")
    entries: Any = list[item]  # a list of the kind's entry type, named at run time
    _CHECK_SECTIONS[name] = CheckSection(name, owner, order, TypeAdapter(entries), in_every_spec)


def withdraw_check_section(name: str) -> None:
    """Forget a section (a kind removed from the registry, as tests do)."""
    _CHECK_SECTIONS.pop(name, None)


def check_sections() -> list[CheckSection]:
    """The declared sections in written order."""
    return sorted(_CHECK_SECTIONS.values(), key=lambda s: (s.order, s.name))


class CheckSpecs(BaseModel):
    """The hidden checks of a task, one section per check kind that declares one; the agent never sees them.

    The sections are not listed here: each check kind declares its own (``spec_section``
    and ``spec_item`` on :class:`thinkingbox_env.checks.CheckKind`, which registering
    passes to :func:`declare_check_section`), so a new kind with task-level entries is one
    module. A section no registered kind declares is refused, naming the known ones. Every
    declared section reads as a list (empty when absent).
    """

    model_config = ConfigDict(extra="allow")

    if TYPE_CHECKING:  # the sections are attributes whose names the registered kinds give
        def __getattr__(self, name: str) -> list[Any]: ...

    @model_validator(mode="before")
    @classmethod
    def _sections(cls, data: Any) -> Any:
        if isinstance(data, CheckSpecs):
            return data
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise ValueError(f"checks must be a mapping of sections, got {type(data).__name__}")
        sections = check_sections()
        unknown = sorted(set(data) - {s.name for s in sections})
        if unknown:
            known = ", ".join(s.name for s in sections)
            raise ValueError(f"unknown check section {', '.join(map(repr, unknown))}; known: {known}")
        out: dict[str, Any] = {}
        for section in sections:
            given = data.get(section.name)
            try:
                out[section.name] = section.entries.validate_python([] if given is None else given)
            except ValidationError as exc:
                problems = "; ".join(f"{'.'.join(str(p) for p in (section.name, *e['loc']))}: {e['msg']}" for e in exc.errors())
                raise ValueError(problems) from None
        return out

    @model_serializer(mode="wrap")
    def _dump(self, handler: Any) -> Any:
        """Every section, less the later ones a task leaves empty (see ``CheckSection.in_every_spec``)."""
        data = handler(self)
        always = {s.name for s in check_sections() if s.in_every_spec}
        for section in [s for s, entries in data.items() if not entries and s not in always]:
            del data[section]
        return data


class TaskSpec(_Strict):
    """A frozen task as stored on disk: extra fields are refused, so a typo in a spec fails at load time, not silently at grading."""
    id: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    domain: str
    family: str
    split: Literal["test", "train"] = "test"
    seed: int | None = None
    description: str = ""
    user: UserSpec
    patch: Patch = Field(default_factory=Patch)
    golden: list[ToolCall] = Field(default_factory=list)
    golden_reply: str = Field(min_length=1, description="the oracle's closing message, without the marker")
    dialogue: list[GoldenTurn] = Field(default_factory=list, description="the agent's turns of the golden trajectory")
    faults: list[Fault] = Field(default_factory=list, description="transient tool failures scheduled in every episode")
    checks: CheckSpecs = Field(default_factory=CheckSpecs)
    idempotent_writes: dict[int, str] = Field(
        default_factory=dict, description="golden index -> why repeating that write changes nothing"
    )
    tags: list[str] = Field(default_factory=list)
    origin: Origin | None = None
    _source: str | None = PrivateAttr(default=None)
    _task_set_version: int | None = PrivateAttr(default=None)  # set when loaded from an archived task set

    @model_validator(mode="after")
    def _indices_in_range(self) -> TaskSpec:
        n = len(self.golden)
        for i, turn in enumerate(self.dialogue):
            if turn.before > n:
                raise ValueError(f"dialogue.{i}.before is {turn.before} but the golden has {n} calls")
        if [t.before for t in self.dialogue] != sorted(t.before for t in self.dialogue):
            raise ValueError("dialogue turns must be in golden order (non-decreasing 'before')")
        for i, call in enumerate(self.golden):
            unknown = set(call.why) - set(call.arguments)
            if unknown:
                raise ValueError(f"golden.{i}.why names arguments the call does not have: {', '.join(sorted(unknown))}")
        return self

    @property
    def full_id(self) -> str:
        return f"{self.domain}/{self.id}"

    def error(self, field: str, message: str) -> SpecError:
        """A spec error naming the file (when the task came from one), the task and the field."""
        where = f"{self._source}: " if self._source else ""
        return SpecError(f"{where}task '{self.full_id}': field '{field}': {message}")

    def content_key(self) -> str:
        """What makes two instances the same task (used to keep train variants off the test set)."""
        import hashlib
        import json

        payload = _prune_optional_user_fields(
            self.model_dump(include={"user", "patch", "golden", "checks", "dialogue", "faults", "origin"}, mode="json")
        )
        return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


# --------------------------------------------------------------------------- loading


def _format_validation_error(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"]) or "<root>"
        parts.append(f"field '{loc}': {err['msg']}")
    return "; ".join(parts)


def load_yaml(path: Path) -> Any:
    """Read a YAML file within bounds (size, depth, aliases expanded; :mod:`thinkingbox_env.bounded_yaml`), naming the file when it is refused."""
    try:
        return read_bounded_yaml(path)
    except BoundedYAMLError as exc:
        raise SpecError(str(exc)) from exc


def parse_task(data: Any, source: str, domain: str | None = None) -> TaskSpec:
    """Validate a task mapping; errors name the source, the task and the field, because task files are edited by hand."""
    if not isinstance(data, dict):
        raise SpecError(f"{source}: a task spec must be a mapping, got {type(data).__name__}")
    task_id = data.get("id", "<no id>")
    try:
        spec = TaskSpec.model_validate(data)
    except ValidationError as exc:
        raise SpecError(f"{source}: task '{task_id}': {_format_validation_error(exc)}") from exc
    if domain is not None and spec.domain != domain:
        raise SpecError(f"{source}: task '{task_id}': field 'domain' is '{spec.domain}' but the file lives under '{domain}'")
    spec._source = source
    return spec


def load_task_file(path: Path, domain: str | None = None) -> TaskSpec:
    """Load one task file; ``domain`` is checked against the spec so a task filed under the wrong domain is refused."""
    return parse_task(load_yaml(path), str(path), domain)


def load_domain_spec(path: Path) -> DomainSpec:
    """Load a ``domain.yaml``, naming the file and field when it does not validate."""
    data = load_yaml(path)
    try:
        return DomainSpec.model_validate(data)
    except ValidationError as exc:
        raise SpecError(f"{path}: {_format_validation_error(exc)}") from exc


_OPTIONAL_USER_FIELDS: dict[str, Any] = {"decisions": [], "otherwise": "accept", "change": None}
_OPTIONAL_FACT_FIELDS = {"slot": None, "value": None, "misremembered": None}
_OPTIONAL_CALL_FIELDS: dict[str, Any] = {"why": {}, "expect_error": None}
_OPTIONAL_TASK_FIELDS: dict[str, Any] = {"dialogue": [], "faults": [], "origin": None}


def _prune_optional_user_fields(data: dict[str, Any]) -> dict[str, Any]:
    """Drop fields added since v1 that are left at their defaults, so specs written before them keep their bytes and hashes."""
    for key, default in _OPTIONAL_TASK_FIELDS.items():
        if key in data and data[key] == default:
            del data[key]
    for call in data.get("golden") or []:
        for key, default in _OPTIONAL_CALL_FIELDS.items():
            if key in call and call[key] == default:
                del call[key]
    user = data.get("user")
    if isinstance(user, dict):
        for key, default in _OPTIONAL_USER_FIELDS.items():
            if key in user and user[key] == default:
                del user[key]
        for fact in user.get("facts") or []:
            for key, default in _OPTIONAL_FACT_FIELDS.items():
                if key in fact and fact[key] == default:
                    del fact[key]
    return data


def dump_task(spec: TaskSpec) -> str:
    """YAML for a frozen task, in a stable key order that reads well in review."""
    data = _prune_optional_user_fields(spec.model_dump(mode="json", exclude_defaults=False))
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)
