"""``grade``: the one function that turns an episode into a :class:`~thinkingbox_env.contracts.records.Verdict`.

The in-process environment and the MCP server's operator API both call it, so the
two cannot drift apart in fields or values.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from ..contracts.events import ToolCallEvent, TraceEvent, is_tool_call, message_event, tool_calls
from ..contracts.protocol import DONE_MARKER
from ..contracts.records import CheckResult, FailureCategory, FinishReason, TrialOutcome, Verdict
from ..contracts.spec import TaskSpec
from ..state.diff import StateDiff
from .base import GradingContext, Judge, TaskRuntimeView, kinds, kinds_in, kinds_where
from .outcome import StateOutcome


def finish_reason_of(value: FinishReason | str) -> FinishReason:
    """The enum member for a finish reason given as a string; a clear error naming the valid ones otherwise."""
    if isinstance(value, FinishReason):
        return value
    try:
        return FinishReason(value)
    except ValueError:
        valid = ", ".join(r.value for r in FinishReason)
        raise ValueError(f"unknown finish_reason {value!r}; expected one of {valid}") from None


def trial_outcome(verdict: float | None, check_details: list[dict[str, Any]] | None) -> TrialOutcome:
    """Pass, fail, or unjudged: the verdict is 0 only because checks of judged kinds were not evaluated.

    A trial whose every check that did not pass is a question only a judge answers, left
    unevaluated (no judge, a judge that failed, an answer that did not parse), says nothing
    about the agent on those questions, and nothing it did failed: it is counted apart,
    neither passed nor failed. Derived from the check details alone, so rows written
    before the ``outcome`` field existed read the same way.
    """
    if verdict == 1.0:
        return "pass"
    # an undetermined dialogue check is not open: it holds no evidence either way (a strict run's verdict says the rest)
    open_checks = [d for d in check_details or [] if d.get("passed") is not True and not d.get("undetermined")]
    if verdict == 0.0 and check_details and not open_checks:
        return "fail"  # only undetermined checks, counted as failed by a strict run
    judged = kinds_where("judged")
    if open_checks and all(d.get("passed") is None and d.get("kind") in judged for d in open_checks):
        return "unjudged"
    return "fail"


def verdict(results: list[CheckResult], strict_dialogue: bool = False) -> float:
    """The conjunctive verdict: every check evaluated and passed.

    An undetermined dialogue check (the reader found no evidence either way) does not fail the
    conjunction: a wording the reader does not know says nothing against the agent. With
    ``strict_dialogue`` it does, for a run that wants only fully verified passes.
    """
    return 1.0 if results and all(r.passed is True or (r.undetermined and not strict_dialogue) for r in results) else 0.0


def reward_vector(results: list[CheckResult], strict_dialogue: bool = False) -> np.ndarray:
    """One 0/1 entry per check in verdict order, for trainers that shape rewards per check instead of the all-or-nothing verdict.

    An undetermined entry is what the verdict counts it as (1 unless ``strict_dialogue``);
    :func:`reward_mask` tells a trainer which entries rest on text nobody read.
    """
    return np.array([1.0 if r.passed or (r.undetermined and not strict_dialogue) else 0.0 for r in results],
                    dtype=np.float32)


def reward_mask(results: list[CheckResult]) -> np.ndarray:
    """1 for each check that was decided (passed or failed on evidence), 0 for an undetermined or unevaluated one."""
    return np.array([0.0 if r.passed is None else 1.0 for r in results], dtype=np.float32)



def failure_category(
    results: list[CheckResult],
    trace: Sequence[TraceEvent],
    finish_reason: FinishReason | str,
    golden_has_effects: bool,
) -> FailureCategory | None:
    """The dominant failure signature, by the fixed precedence of the paper's appendix D.3.

    A tool error never recovered from comes first; then a task that needed a write
    and got none; then a conversation that did not close cleanly, or that told the
    customer what it must not (a failed ``withholds``, ``rubric`` or ``truthfulness``
    check); then a wrong write. A failed ``mentions``, ``grounded_values`` or
    ``process`` check is an incomplete resolution when the state is right (the right
    thing was done but not reported, an amount was made up, or the agent acted before
    verification or agreement), and a wrong write when the state is wrong too: there
    the value told or the missing consent follows from the write, the failure to fix.
    Only unevaluated checks are not an agent failure.
    """
    if all(r.passed is True for r in results):
        return None
    if not any(r.passed is False for r in results):
        return None
    for k in kinds():
        if k.failure is not None and any(r.passed is False and r.kind == k.name for r in results):
            return k.failure
    calls = tool_calls(trace)
    for i, call in enumerate(calls):
        if not call["ok"] and not any(later["ok"] and later["name"] == call["name"] for later in calls[i + 1 :]):
            return FailureCategory.TOOL_USAGE
    state_kinds, dialogue_kinds, following = kinds_in("state"), kinds_in("dialogue"), kinds_where("follows_write")
    state_failed = any(r.passed is False for r in results if r.kind in state_kinds)
    wrote = any(c["ok"] and c["writes"] for c in calls)
    if state_failed and golden_has_effects and not wrote:
        return FailureCategory.NO_STATE_CHANGING_ACTION
    told = tuple(k for k in dialogue_kinds if k not in following)
    dialogue_failed = any(r.passed is False for r in results if r.kind in told) or (
        not state_failed and any(r.passed is False for r in results if r.kind in following))
    if not finish_reason_of(finish_reason).terminated or dialogue_failed:
        return FailureCategory.INCOMPLETE_USER_RESOLUTION
    return FailureCategory.WRONG_STATE_UPDATE if wrote else FailureCategory.NO_STATE_CHANGING_ACTION


def dialogue_positions(trace: Sequence[TraceEvent]) -> list[dict[str, Any]]:
    """The episode's user and assistant text, each with the number of tool calls made before it.

    This is what an operator sends the MCP server with a verdict request: the server
    knows the tool calls, not the conversation, and the process checks need both in order.
    """
    out, calls = [], 0
    for e in trace:
        if is_tool_call(e):
            calls += 1
        elif (content := e.get("content")) and e["role"] in ("user", "assistant") and not e.get("tool_calls"):
            text = content.replace(DONE_MARKER, "").strip() if e["role"] == "assistant" else content
            out.append({"role": e["role"], "content": text, "calls_before": calls})
    return out


def interleave(calls: list[dict[str, Any]], dialogue: list[dict[str, Any]]) -> list[TraceEvent]:
    """A trace from tool-call events and messages placed by their ``calls_before`` (the inverse of :func:`dialogue_positions`).

    ``calls`` are the MCP server's call records (the keys of a tool-call event but ``type``).
    """
    trace: list[TraceEvent] = []
    pending = sorted(enumerate(dialogue), key=lambda im: (int(im[1].get("calls_before", len(calls))), im[0]))
    k = 0
    for i in range(len(calls) + 1):
        while k < len(pending) and int(pending[k][1].get("calls_before", len(calls))) <= i:
            m = pending[k][1]
            trace.append(message_event(m["role"], m["content"], "operator"))
            k += 1
        if i < len(calls):
            trace.append(cast(ToolCallEvent, {"type": "tool_call", **calls[i]}))
    return trace


def evaluate_checks(context: GradingContext) -> list[CheckResult]:
    """Every registered kind's results, in kind order."""
    results: list[CheckResult] = []
    for k in kinds():
        results += k.evaluate(context)
    return results


def grade(
    task: TaskSpec,
    outcome: StateOutcome,
    *,
    golden: StateDiff | None = None,
    final_message: str = "",
    transcript: str = "",
    dialogue: list[dict[str, str]] | None = None,
    trace: Sequence[TraceEvent] | None = None,
    finish_reason: FinishReason | str = FinishReason.DONE_MARKER,
    judge: Judge | None = None,
    runtime: TaskRuntimeView,
    reader: Any = None,
    strict_dialogue: bool = False,
) -> Verdict:
    """Grade an episode from its state outcome and what was said.

    ``runtime`` is the task's runtime (``tasks.runtime.runtime_for(task)``; an env holds it): the
    checks read the task's domain and golden run from it, and ``golden`` defaults to its golden
    diff. ``trace`` feeds the failure category (and process checks); over MCP it is the server's
    record of tool calls. ``reader`` is a model reader
    (:class:`thinkingbox_env.reading.model_reader.ModelReader`) that reads what the rule reader
    cannot; ``strict_dialogue`` counts an undetermined dialogue check as failed.
    """
    if golden is None:
        golden = runtime.golden.diff
    reason = finish_reason_of(finish_reason)
    trace = trace if trace is not None else []
    if dialogue is None:  # a caller that knows only the closing: the customer was told that much
        dialogue = [{"role": "assistant", "content": final_message}] if final_message else []
    context = GradingContext(task=task, golden=golden, outcome=outcome, final_message=final_message,
                             transcript=transcript, dialogue=dialogue, trace=trace, finish_reason=reason,
                             judge=judge, runtime=runtime, reader=reader)
    optional = {k.name for k in kinds() if k.optional}
    results: list[CheckResult] = []
    skipped: list[CheckResult] = []
    for r in evaluate_checks(context):
        (skipped if r.passed is None and r.kind in optional else results).append(r)
    v = assemble_verdict(task.full_id, results, trace=trace, finish_reason=reason,
                         golden_has_effects=not golden.empty, diff=outcome.diff, state_hash=outcome.state_hash,
                         strict_dialogue=strict_dialogue)
    v.skipped = skipped
    return v


def assemble_verdict(
    task_id: str,
    results: list[CheckResult],
    *,
    trace: Sequence[TraceEvent],
    finish_reason: FinishReason | str,
    golden_has_effects: bool,
    diff: dict[str, Any],
    state_hash: str,
    strict_dialogue: bool = False,
) -> Verdict:
    """The verdict record from check results: the conjunction and the failure category, computed one way.

    ``grade`` ends here; an environment whose checks come from elsewhere (an external
    benchmark's reference hashes) ends here too, so its verdict has the same fields.
    """
    reason = finish_reason_of(finish_reason)
    reward = verdict(results, strict_dialogue)
    return Verdict(
        task_id=task_id,
        reward=reward,
        results=results,
        finish_reason=reason,
        failure_category=failure_category(results, trace, reason, golden_has_effects),
        diff=diff,
        state_hash=state_hash,
        outcome=trial_outcome(reward, [r.to_json() for r in results]),
        strict_dialogue=strict_dialogue,
    )
