"""Per-process, per-task caches: the task template and the golden outcome.

The golden state is produced once per task per process by replaying the golden
actions on a fresh episode; only its canonical effects and hash are kept. None of
it is reachable from a tool: tools see nothing but their own episode state.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from pydantic import ValidationError

from ..contracts.events import ToolCallEvent
from ..contracts.spec import SpecError, TaskSpec
from ..state import EpisodeState, StateError, TaskTemplate
from ..state.diff import StateDiff, canonical_hash, compute_diff
from ..toolkit.faults import FaultPlan
from ..toolkit.tools import ToolResult
from .domain import Domain, load_domain
from .rationale import fault_problems, task_set_problems


class GoldenError(RuntimeError):
    """The golden actions of a task do not run cleanly: the task is broken.

    ``index`` is the failing call's position in ``golden`` and ``problem`` what went wrong,
    so that the load-time check can report it as a :class:`SpecError` naming the field.
    """

    def __init__(self, message: str, index: int = -1, problem: str = "") -> None:
        super().__init__(message)
        self.index = index
        self.problem = problem or message


@dataclass
class Golden:
    """The result of replaying the golden calls once, which every episode of the task is graded against."""
    diff: StateDiff
    hash: str
    results: list[ToolResult]
    diff_json: dict[str, Any]


@dataclass
class TaskRuntime:
    """Per-task caches (template database, golden outcome) built lazily, so listing tasks costs nothing and each is built once."""
    spec: TaskSpec
    domain: Domain
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _template: TaskTemplate | None = field(default=None, repr=False)
    _golden: Golden | None = field(default=None, repr=False)
    _checked: bool = field(default=False, repr=False)
    # what checks derive from the task alone (stated roles), kept as long as the runtime
    derived: dict[str, Any] = field(default_factory=dict, repr=False)

    def check(self) -> None:
        """Check at load everything that can be checked without an agent, once per runtime.

        A broken spec must fail when the task is loaded, naming file, task and field,
        not at reset, not out of ``step()`` when the first episode ends, and never as a
        failed check booked against the agent.
        """
        if self._checked:
            return
        spec, box = self.spec, self.domain.toolbox
        for i, call in enumerate(spec.golden):
            if call.name not in box:
                raise spec.error(f"golden.{i}.name", f"unknown tool '{call.name}'")
            try:
                box[call.name].validate(call.arguments)
            except ValidationError as exc:
                problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or '<root>'}: {e['msg']}" for e in exc.errors())
                raise spec.error(f"golden.{i}.arguments", f"not valid for tool '{call.name}': {problems}") from exc
        for field_name, problem in fault_problems(spec) + task_set_problems(spec, self.domain):
            raise spec.error(field_name, problem)
        try:
            state = self.new_state()  # applies the patch to a scratch copy of the seed state
        except StateError as exc:
            raise spec.error("patch", str(exc)) from exc
        state.probe = True  # checking the queries is no demand for the template in DuckDB
        try:
            for i, chk in enumerate(spec.checks.sql):
                try:
                    rows = state.query(chk.query)
                except Exception as exc:  # noqa: BLE001 - any failure of an author's query is the author's
                    raise spec.error(f"checks.sql.{i}.query", f"check '{chk.name}' cannot run: {exc}") from exc
                if rows and len(rows[0]) != 1:
                    raise spec.error(f"checks.sql.{i}.query", f"check '{chk.name}' must return one value, got {len(rows[0])} columns")
        finally:
            state.close()
        try:  # the golden replayed now, so an id that does not exist is the author's error at load, not a GoldenError out of step()
            _ = self.golden
        except GoldenError as exc:
            raise spec.error(f"golden.{exc.index}", exc.problem) from exc
        from ..checks import kinds  # each kind checks its own entries of the task against the golden

        for k in kinds():
            for field_name, problem in k.check_task(spec, self):
                raise spec.error(field_name, problem)
        self._checked = True

    def golden_calls(self) -> list[ToolCallEvent]:
        """The golden trajectory's calls as trace events (name, arguments, result, ok, writes)."""
        box = self.domain.toolbox
        return [{"type": "tool_call", "name": c.name, "arguments": c.arguments, "result": r.content, "ok": r.ok,
                 "writes": c.name in box and box[c.name].writes}
                for c, r in zip(self.spec.golden, self.golden.results)]

    @property
    def template(self) -> TaskTemplate:
        with self._lock:
            if self._template is None:
                self._template = self.domain.db.build_task_template(self.spec.full_id, self.spec.patch)
                # the template's schema lives as long as this runtime: envs hold it, the cache may let go of it
                weakref.finalize(self, self._template.drop)
            return self._template

    def new_state(self) -> EpisodeState:
        return self.template.new_episode(FaultPlan(self.spec.faults) if self.spec.faults else None)

    @property
    def golden(self) -> Golden:
        if self._golden is None:
            golden = self._replay_golden()
            with self._lock:
                self._golden = golden
        return self._golden

    def _replay_golden(self) -> Golden:
        state = self.new_state()
        try:
            results = []
            for i, call in enumerate(self.spec.golden):
                res = self.domain.toolbox.call(state, call.name, call.arguments)
                if call.expect_error is not None:
                    said = str(res.content.get("error", "")) if isinstance(res.content, dict) else ""
                    if res.ok or call.expect_error.lower() not in said.lower():
                        problem = f"golden action {i} ({call.name}) should fail with {call.expect_error!r} but returned {res.content}"
                        raise GoldenError(f"task '{self.spec.full_id}': {problem}", i, problem)
                elif not res.ok:
                    problem = f"golden action {i} {call.name}({_shown(call.arguments)}) fails when replayed on the task's state: {res.content}"
                    raise GoldenError(f"task '{self.spec.full_id}': {problem}", i, problem)
                results.append(res)
            diff = compute_diff(state)
            return Golden(diff, canonical_hash(state, diff), results, diff.to_json(state.tables))
        finally:
            state.close()

    @cached_property
    def golden_write_indices(self) -> list[int]:
        box = self.domain.toolbox
        # a write the golden expects to fail (a recovery step) changes nothing: no probe drops or repeats it
        return [i for i, c in enumerate(self.spec.golden) if c.name in box and box[c.name].writes and c.expect_error is None]


def _shown(arguments: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in arguments.items())[:300]


MAX_CACHED_RUNTIMES = 64
_RECENT: OrderedDict[tuple[str, str], TaskRuntime] = OrderedDict()  # kept alive even when no env uses them
_LIVE: weakref.WeakValueDictionary[tuple[str, str], TaskRuntime] = weakref.WeakValueDictionary()  # any still in use
_LOCK = threading.Lock()


def runtime_for(spec: TaskSpec) -> TaskRuntime:
    """The shared runtime of a task.

    Every env of a task shares one runtime while any of them is alive, and the
    ``MAX_CACHED_RUNTIMES`` most recently used stay cached beyond that. Training
    draws an unbounded stream of generated variants; each runtime holds a task
    template in the database, dropped once nothing refers to the runtime.
    """
    key = (spec.full_id, spec.content_key())
    with _LOCK:
        rt = _LIVE.get(key)
        if rt is None:
            try:
                domain = load_domain(spec.domain)
            except KeyError as exc:
                raise StateError(f"task '{spec.full_id}': {exc.args[0]}") from exc
            rt = TaskRuntime(spec, domain)
            _LIVE[key] = rt
        _RECENT[key] = rt
        _RECENT.move_to_end(key)
        while len(_RECENT) > MAX_CACHED_RUNTIMES:
            _RECENT.popitem(last=False)
    try:
        rt.check()
    except SpecError:
        with _LOCK:
            _LIVE.pop(key, None)
            _RECENT.pop(key, None)
        raise
    return rt
