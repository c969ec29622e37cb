"""The contract every check kind follows, and the registry that finds them.

A check kind is one class in one module of this package: it names itself, says
which group of the failure taxonomy its failures belong to, and turns a grading
context into check results. Kinds that must look at the live backend state (SQL
predicates) also implement :meth:`CheckKind.on_state`; those results are computed
next to the state (in-process, or by the MCP server that holds it) and travel to
grading inside the :class:`~thinkingbox_env.checks.outcome.StateOutcome`.

Adding a kind is adding a module that defines a ``CheckKind`` subclass: the package
imports every module it holds, and the subclass registers itself. The class declares
everything the rest of the package needs to know about the kind, so that nothing else
names it by string: the section of a task's ``checks`` it reads and the type of one entry
(``spec_section``, ``spec_item``; :class:`thinkingbox_env.contracts.spec.CheckSpecs` accepts
exactly the sections registered kinds declare), its place in the failure taxonomy
(``group``, ``follows_write``, ``judged``), the trainers' reward group it feeds
(``reward_group``), what it asks of a task at load time (:meth:`CheckKind.check_task`)
and how ``thinkingbox show --task`` describes its entries (:meth:`CheckKind.describe_task`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol

from ..contracts.events import ToolCallEvent, TraceEvent, is_tool_call
from ..contracts.records import CheckResult, FailureCategory, FinishReason
from ..contracts.spec import declare_check_section, withdraw_check_section

if TYPE_CHECKING:
    from ..contracts.spec import TaskSpec
    from ..state import EpisodeState
    from ..state.diff import StateDiff
    from .outcome import StateOutcome

# (question, transcript) -> (answer, reason); an answer of None is "unjudged" (the reply did not parse). A judge
# with ``accepts_dialogue = True`` (RubricJudge) is also given the structured dialogue and the backend facts as
# keywords, so that it can fence them apart from the requirement (see checks/rubric.py).
Judge = Callable[..., tuple[bool | None, str]]

# What a failure of the kind says about the agent, for the failure taxonomy:
# "state" (the backend ended wrong), "dialogue" (the customer was told the wrong thing
# or not enough), "process" (an order rule of the policy was broken).
CheckGroup = Literal["state", "dialogue", "process"]


class TaskRuntimeView(Protocol):
    """What checks read of a task's runtime (a ``tasks.runtime.TaskRuntime``), handed to them by the caller.

    The domain, the golden run's calls and the derived values kept per task, and a fresh state at
    the task's start for lookups in its initial rows.
    """

    spec: TaskSpec
    derived: dict[str, Any]

    @property
    def domain(self) -> Any: ...

    @property
    def golden(self) -> Any: ...

    def golden_calls(self) -> list[ToolCallEvent]: ...

    def new_state(self) -> EpisodeState: ...


@dataclass
class GradingContext:
    """Everything a check may read about a finished (or paused) episode."""

    task: TaskSpec
    golden: StateDiff
    outcome: StateOutcome
    final_message: str = ""
    transcript: str = ""
    dialogue: list[dict[str, str]] = field(default_factory=list)
    trace: Sequence[TraceEvent] = field(default_factory=list)
    finish_reason: FinishReason = FinishReason.DONE_MARKER
    judge: Judge | None = None
    # what several kinds derive from the same episode (the dialogue's values), computed once per grading
    memo: dict[str, Any] = field(default_factory=dict)
    # the task's runtime (domain, template, golden), handed in by the caller
    runtime: TaskRuntimeView | None = None
    # a model reader for the sentences the rule reader cannot read (None: those checks stay undetermined)
    reader: Any = None

    def task_runtime(self) -> TaskRuntimeView:
        """The graded task's runtime, as the caller handed it."""
        if self.runtime is None:
            raise ValueError(f"grading {self.task.full_id} needs the task's runtime (runtime=...)")
        return self.runtime

    @property
    def domain(self) -> Any:
        """The graded task's domain (its runtime's)."""
        return self.task_runtime().domain

    def closing(self) -> list[str]:
        """The assistant messages said after the episode's last successful write (all of them where none was made).

        What the customer was told the outcome is: a proposal before the write does not
        count. A caller that sent only the closing has it as the whole closing.
        """
        if not self.dialogue:
            return [self.final_message]
        agent = [m["content"] for m in self.dialogue if m.get("role") == "assistant" and m.get("content")]
        wrote = False
        said_before = count = 0
        for e in self.trace:
            if is_tool_call(e):
                if e.get("ok") and e.get("writes"):
                    said_before, wrote = count, True
            elif e.get("role") == "assistant" and e.get("content") and not e.get("tool_calls"):
                count += 1
        if not wrote:
            return agent
        return agent[said_before:] if said_before < len(agent) else agent[-1:]


class CheckKind:
    """One criterion. Subclasses set ``name``, ``group`` and ``order`` and implement :meth:`evaluate`.

    ``order`` fixes where the kind's results stand in ``check_names`` and the reward
    vector, so that the vector's layout does not depend on module discovery order.
    ``optional`` kinds exist only with a judge: their unevaluated results are reported
    as the verdict's ``skipped`` checks instead of entering the conjunction.
    """

    name: ClassVar[str] = ""
    group: ClassVar[CheckGroup] = "state"
    order: ClassVar[int] = 1000
    optional: ClassVar[bool] = False
    # A failure of this kind next to a wrong state follows from the wrong write (the value told, the missing
    # consent), so the failure taxonomy books it as the write's failure rather than a dialogue failure.
    follows_write: ClassVar[bool] = False
    # Only a judge evaluates this kind: a trial whose only open checks are of judged kinds is "unjudged".
    judged: ClassVar[bool] = False
    # The per-check reward group of the trainer adapters (``reward_<group>``); "" for none.
    reward_group: ClassVar[str] = ""
    # A failure category of its own: a failed check of this kind names the trial's category ahead of the precedence
    # of the paper's taxonomy (an injected instruction followed).
    failure: ClassVar[FailureCategory | None] = None
    # The key under a task's ``checks`` that this kind reads ("" for kinds derived from the golden alone), and the
    # type of one entry of that list (a pydantic model, or a plain type such as ``str``).
    spec_section: ClassVar[str] = ""
    spec_item: ClassVar[Any] = None
    # Sections of the first task set are written in every spec, even empty, so that those specs keep their bytes
    # and content hashes; a later section is written only where a task uses it.
    section_in_every_spec: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.name:
            register(cls)

    def on_state(self, task: TaskSpec, state: EpisodeState) -> list[CheckResult] | None:
        """Results that need the live state; ``None`` for kinds that need none (the default)."""
        return None

    def evaluate(self, context: GradingContext) -> list[CheckResult]:
        raise NotImplementedError

    def check_task(self, task: TaskSpec, runtime: TaskRuntimeView) -> list[tuple[str, str]]:
        """Problems with the task's entries of this kind, found at load time: ``(field, problem)`` pairs.

        ``runtime`` is the task's runtime: its domain, and its golden trajectory's calls as trace
        events (``golden_calls()``: name, arguments, result, ok), so that a kind can check its
        entries against the domain and against what the golden does.
        """
        return []

    def describe_spec(self, item: Any) -> str:
        """One entry of the task's section as ``thinkingbox show --task`` lists it."""
        label = getattr(item, "name", item)
        return f"{self.spec_section or self.name}:{label}"

    def describe_task(self, task: TaskSpec, runtime: TaskRuntimeView) -> list[str]:
        """What ``thinkingbox show --task`` lists for this kind: the task's entries of its section (``runtime``: the task's)."""
        return [self.describe_spec(item) for item in getattr(task.checks, self.spec_section)] if self.spec_section else []


_KINDS: dict[str, CheckKind] = {}


def register(cls: type[CheckKind]) -> None:
    """Add a kind to the registry (done by subclassing); a second kind with the same name is refused."""
    existing = _KINDS.get(cls.name)
    if existing is not None and type(existing) is not cls:
        if type(existing).__qualname__ == cls.__qualname__ and type(existing).__module__ == cls.__module__:
            _KINDS[cls.name] = cls()  # the same class, re-imported (module reload)
            return
        raise ValueError(f"check kind '{cls.name}' is defined twice: {type(existing).__module__} and {cls.__module__}")
    if cls.group not in ("state", "dialogue", "process"):
        raise ValueError(f"check kind '{cls.name}': group must be state, dialogue or process, got {cls.group!r}")
    if cls.spec_section:
        if cls.spec_item is None:
            raise ValueError(f"check kind '{cls.name}' declares the section '{cls.spec_section}' but no spec_item type")
        declare_check_section(cls.spec_section, cls.spec_item, cls.name, cls.order, cls.section_in_every_spec)
    _KINDS[cls.name] = cls()


def unregister(name: str) -> None:
    """Remove a kind and the spec section it declared (a kind defined for a test)."""
    removed = _KINDS.pop(name, None)
    if removed is not None and removed.spec_section:
        withdraw_check_section(removed.spec_section)


def kinds() -> list[CheckKind]:
    """Every registered kind, in result order."""
    return sorted(_KINDS.values(), key=lambda k: (k.order, k.name))


def kind(name: str) -> CheckKind:
    """Look a registered kind up by the name task specs use; the error lists the known kinds, since a typo in a spec lands here."""
    try:
        return _KINDS[name]
    except KeyError:
        raise KeyError(f"unknown check kind '{name}'; known: {', '.join(k.name for k in kinds())}") from None


def kinds_in(group: CheckGroup) -> tuple[str, ...]:
    """The names of the kinds whose failures belong to ``group``."""
    return tuple(k.name for k in kinds() if k.group == group)


def kinds_where(attribute: str) -> tuple[str, ...]:
    """The names of the kinds that set a boolean class attribute (``follows_write``, ``judged``, ``optional``)."""
    return tuple(k.name for k in kinds() if getattr(k, attribute))


def reward_groups() -> dict[str, tuple[str, ...]]:
    """Reward group name -> the kinds that feed it, in kind order (the trainers' ``reward_<group>`` functions)."""
    out: dict[str, list[str]] = {}
    for k in kinds():
        if k.reward_group:
            out.setdefault(k.reward_group, []).append(k.name)
    return {g: tuple(names) for g, names in out.items()}


def spec_sections() -> dict[str, CheckKind]:
    """Section name under a task's ``checks`` -> the kind that declares it, in kind order."""
    return {k.spec_section: k for k in kinds() if k.spec_section}
