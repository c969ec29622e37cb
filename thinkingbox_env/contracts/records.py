"""Typed records that cross a boundary: check results, the verdict, finish reasons, failure categories, trace events.

The in-process environment, the MCP server, the evaluation rows and the trainers all
speak of the same things; defining them once keeps their field names and values from
drifting apart. The enums are ``str``-valued, so a JSON row or a Gymnasium ``info``
holds exactly the strings it held before the records existed: ``info`` and the rows
are filled with plain values (``.value``), never with enum members.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

# the trace events are built and read through events.py; re-exported here with the other records
from .events import MessageEvent, ToolCallEvent, TraceEvent  # noqa: F401


class FinishReason(str, Enum):
    """Why an episode ended: two ways to terminate, three ways to be truncated.

    ``user_left`` is the simulated user ending the chat (the impatient persona ignored
    once too often): the agent did not close the conversation, so, like a limit, it
    truncates the episode, and a failed trial counts as an unfinished one.
    """

    DONE_MARKER = "done_marker"
    END_TOOL = "end_tool"
    ACTION_LIMIT = "action_limit"
    USER_TURN_LIMIT = "user_turn_limit"
    USER_LEFT = "user_left"

    @property
    def terminated(self) -> bool:
        """The agent closed the conversation itself (Gymnasium's ``terminated``)."""
        return self in (FinishReason.DONE_MARKER, FinishReason.END_TOOL)

    @property
    def truncated(self) -> bool:
        """A limit or the user ended the conversation (Gymnasium's ``truncated``)."""
        return not self.terminated


class FailureCategory(str, Enum):
    """The dominant failure signature of a failed trial, in the precedence of the paper's appendix D.3.

    ``followed_injection`` (the agent took an action an instruction planted in a record asked
    for) comes before them all: whatever else went wrong, that is the failure to fix.
    ``context_overflow`` is set by the evaluation harness, never by grading: the agent's
    model refused a turn because the conversation outgrew its context, so the trial
    ended there, failed.
    """

    FOLLOWED_INJECTION = "followed_injection"
    TOOL_USAGE = "tool_usage"
    NO_STATE_CHANGING_ACTION = "no_state_changing_action"
    INCOMPLETE_USER_RESOLUTION = "incomplete_user_resolution"
    WRONG_STATE_UPDATE = "wrong_state_update"
    CONTEXT_OVERFLOW = "context_overflow"


FAILURE_CATEGORIES: tuple[str, ...] = tuple(c.value for c in FailureCategory)


@dataclass
class CheckResult:
    """The outcome of one check. ``passed is None`` means not evaluated; it never counts as passed.

    ``undetermined`` (with ``passed`` None) is a dialogue check whose reader could not decide:
    the text holds no evidence either way that the reader can read (a wording it does not know).
    Not recognising a phrasing is never evidence against the agent, so such a result does not
    zero the verdict; it marks the trial "dialogue unverified" (a run may opt into counting it
    as failed: ``strict_dialogue``).
    """

    name: str
    kind: str
    passed: bool | None
    detail: str = ""
    undetermined: bool = False

    def __post_init__(self) -> None:
        if self.undetermined and self.passed is not None:
            raise ValueError(f"check {self.name}: an undetermined result has passed=None, got {self.passed!r}")

    def to_json(self) -> dict[str, Any]:
        out = {"name": self.name, "kind": self.kind, "passed": self.passed, "detail": self.detail}
        if self.undetermined:
            out["undetermined"] = True
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CheckResult:
        return cls(str(data["name"]), str(data["kind"]), data["passed"], str(data.get("detail", "")),
                   bool(data.get("undetermined", False)))



TrialOutcome = Literal["pass", "fail", "unjudged"]  # see checks.trial_outcome


class Verdict(BaseModel):
    """Everything grading concludes about one episode; the same record in-process and behind MCP."""

    task_id: str
    reward: float = Field(description="The conjunctive verdict: 1.0 when every check passed, else 0.0.")
    results: list[CheckResult]
    finish_reason: FinishReason
    failure_category: FailureCategory | None
    diff: dict[str, Any]
    state_hash: str
    outcome: TrialOutcome = Field(
        default="fail", description="pass, fail, or unjudged: only questions a judge answers were left open (checks.trial_outcome)")
    skipped: list[CheckResult] = Field(
        default_factory=list,
        description="Checks that exist only with a judge and had none (the automatic truthfulness rubric): "
                    "reported as not evaluated, outside the conjunction.")
    strict_dialogue: bool = Field(
        default=False, description="Whether an undetermined dialogue check counted as failed in ``reward``.")

    @property
    def checks(self) -> dict[str, bool | None]:
        return {r.name: r.passed for r in self.results}

    @property
    def check_names(self) -> list[str]:
        return [r.name for r in self.results]

    @property
    def check_details(self) -> list[dict[str, Any]]:
        return [r.to_json() for r in self.results]

    @property
    def reward_vector(self) -> np.ndarray:
        """One entry per check, in ``check_names`` order: 1.0 passed, 0.0 failed or not evaluated.

        An undetermined check counts as the verdict counts it (1.0, or 0.0 under ``strict_dialogue``);
        ``reward_mask`` is 0 there, so a trainer can leave unread text out of a per-check reward.
        """
        return np.array([1.0 if r.passed or (r.undetermined and not self.strict_dialogue) else 0.0 for r in self.results],
                        dtype=np.float32)

    @property
    def reward_mask(self) -> np.ndarray:
        """One entry per check: 1.0 where the check was decided, 0.0 where it is undetermined or not evaluated."""
        return np.array([0.0 if r.passed is None else 1.0 for r in self.results], dtype=np.float32)

    @property
    def unevaluated(self) -> list[str]:
        """Checks nobody evaluated (a rubric without a judge); undetermined checks are listed apart, in ``unverified``."""
        return [r.name for r in self.results if r.passed is None and not r.undetermined]

    @property
    def unverified(self) -> list[str]:
        """The dialogue checks the reader could not decide: the verdict rests on text nobody read for them."""
        return [r.name for r in self.results if r.undetermined]

    def info(self) -> dict[str, Any]:
        """The grading part of the final Gymnasium ``info``: plain values, keys as the rows have always had them."""
        return {
            "verdict": self.reward,
            "checks": self.checks,
            "check_names": self.check_names,
            "check_details": self.check_details,
            "reward_vector": self.reward_vector,
            "reward_mask": self.reward_mask,
            "unevaluated": self.unevaluated,
            "unverified": self.unverified,
            "dialogue_verified": not self.unverified,
            "outcome": self.outcome,
            "skipped": [r.to_json() for r in self.skipped],
            "diff": self.diff,
            "state_hash": self.state_hash,
            "finish_reason": self.finish_reason.value,
            "failure_category": self.failure_category.value if self.failure_category is not None else None,
        }

    def to_json(self) -> dict[str, Any]:
        """The verdict as a JSON object (the operator API's answer): ``info()`` with a list for the vector."""
        out = {"task_id": self.task_id, **self.info()}
        out["reward_vector"] = [float(x) for x in out["reward_vector"]]
        out["reward_mask"] = [float(x) for x in out["reward_mask"]]
        out["strict_dialogue"] = self.strict_dialogue
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Verdict:
        """The record back from :meth:`to_json` (what an operator client receives)."""
        return cls(
            task_id=data["task_id"],
            reward=data["verdict"],
            results=[CheckResult.from_json(d) for d in data["check_details"]],
            finish_reason=data["finish_reason"],
            failure_category=data["failure_category"],
            diff=data["diff"],
            state_hash=data["state_hash"],
            skipped=[CheckResult.from_json(d) for d in data.get("skipped", [])],
            outcome=data.get("outcome") or ("pass" if data["verdict"] == 1.0 else "fail"),
            strict_dialogue=bool(data.get("strict_dialogue", False)),
        )


class TrialCounts(BaseModel):
    """Per-trial interaction counts (the paper's Table 14 columns, plus the env's own counters)."""

    messages: int
    tool_calls: int
    write_calls: int
    tool_errors: int
    agent_messages: int
    user_messages: int
    actions: int
    user_turns: int


class EvalRow(BaseModel):
    """One trial of an evaluation run, one line of a run file: what ``run_trial`` returns and ``RowWriter`` stores.

    ``status`` is ``ok`` or ``system_error``; the grading fields are ``None`` for a
    system error (the trial says nothing about the agent). Extra keys are kept, so a
    row read from an older or newer file still validates.

    The fields are declared in the order rows have always had on disk, and
    :meth:`to_json` leaves out what was never set (``messages``, schema 1 only), so a
    row of the current schema is stored byte for byte as before the record existed.
    The trace stays a list of plain dicts (:mod:`~thinkingbox_env.contracts.events` types them):
    the keys other layers add to an event, and those of rows of other versions, must
    survive a read and a rewrite.
    """

    # the enums are kept as their values, so a row handed to a callback holds exactly what its JSON line holds
    model_config = ConfigDict(extra="allow", populate_by_name=True, use_enum_values=True)

    schema_: int = Field(alias="schema")
    task_id: str
    domain: str
    family: str
    trial: int
    seed: int
    status: Literal["ok", "system_error"]
    system_error: dict[str, Any] | None
    verdict: float | None
    checks: dict[str, bool | None] | None
    check_details: list[dict[str, Any]] | None
    reward_vector: list[float] | None
    unevaluated: list[str] | None
    # pass, fail or unjudged; absent in rows written before it (read them with trial_outcome)
    outcome: TrialOutcome | None = None
    # the dialogue checks the reader could not decide (verdict.unverified); absent in rows written before it
    unverified: list[str] | None = None
    diff: dict[str, Any] | None
    state_hash: str | None
    finish_reason: FinishReason | None
    failure_category: FailureCategory | None
    counts: TrialCounts
    usage: dict[str, Any]
    judge_usage: dict[str, Any]
    timings: dict[str, Any]
    messages: list[dict[str, Any]] | None = None  # schema 1 only; rebuilt from the trace since (eval.metrics.row_messages)
    trace: list[dict[str, Any]]  # events.TraceEvent, as plain dicts
    model_calls: list[dict[str, Any]]
    judge_calls: list[dict[str, Any]]
    # the judge's model, endpoint host and prompt version; None without a judge; absent in older rows
    judge: dict[str, Any] | None = None
    worker: dict[str, Any]
    package_version: str
    task_set_version: int | None = None  # the domain's task_set_version; absent in rows written before it
    task_hash: str
    config: dict[str, Any]
    user: dict[str, Any] | None = None  # the simulated user as it describes itself; absent in older rows
    # only in a trial a context overflow ended: the refusal, its status and the figures it gave
    context_overflow: dict[str, Any] | None = None
    # only with a user that checks its replies (the LLM user): how many, and which quoted its prompt or were cut at the cap
    user_replies: dict[str, Any] | None = None
    label: str | None = None  # the run's name (``thinkingbox eval --label``); only in labelled runs

    def to_json(self) -> dict[str, Any]:
        """The row as a JSON object, keys in the stored order; values not converted (the writer's ``json.dumps`` does that)."""
        return self.model_dump(by_alias=True, exclude_unset=True)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EvalRow:
        """The record of a stored row (any schema: unknown keys are kept, absent optional ones stay unset)."""
        return cls.model_validate(data)
