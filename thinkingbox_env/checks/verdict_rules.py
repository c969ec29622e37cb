"""A domain's verdict declarations: ``domains/<d>/verdicts.yaml``, read once per domain.

A domain declares once, next to its policy, the phrases that state the same outcome, what the
customer is never told, the arithmetic of its rules (so that an explained amount or date counts as
grounded), its order rules and its bookkeeping. The check kinds (``mentions``, ``withholds``,
``grounded_values``, ``process``) read these declarations; ``describe`` gives the oracle agent the
domain's words to propose a guarded write in.
"""

from __future__ import annotations

import re
from datetime import date
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..contracts.spec import load_yaml

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
    # (quoted as written in policy.md; tests/checks/test_process_policy.py holds the two together), when the
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


def domain_rules(domain: Any) -> VerdictRules:
    """The verdict declarations of a loaded domain (a ``tasks.domain.Domain``; empty when it declares none)."""
    return load_verdict_rules(str(domain.path))


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
