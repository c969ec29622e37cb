"""The oracle under a model-played customer: the golden calls, with the customer's facts as the customer gave them.

The golden calls of a task carry the values the task author wrote, and some of them
(``why: customer``) are facts only the customer knows: an order number, a date of birth, a
badge number. The scripted user gives exactly those values, so the plain oracle passes. A
model playing the customer may give another value, or never give it; an oracle that still
sends the golden value then passes on knowledge no agent could have had, and says nothing
about the simulated user. :class:`HeardFactsOracle` sends, for each such fact, what the
customer actually said:

- a value the customer's messages contain (case, spacing and punctuation aside; a date in
  any of the usual written forms) is sent as it is (*heard*);
- otherwise, a value of the same shape the customer did say (the same pattern of letters and
  digits, e.g. ``SYS-5l1`` for ``SYS-511``; another date for a date) replaces it, the latest
  one said (*substituted*);
- otherwise the argument is left out of the call (*missing*): the tool then refuses the call
  or acts without it, as it would for an agent that never heard the value.

Free text the agent composes from the customer's story (a ticket subject, a description,
anything of three words or more), option names (``express``, ``left_household``), yes/no
values, and values the customer's profile does not state as written (an order line the agent
reads off the order the customer described) are the agent's reading of what it heard, not
quotable facts; they are sent as written (*composed*). :func:`classify_sent` sorts the
values a finished episode sent into these classes, so a run's rows show how often the
customer gave what the task needed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from typing import Any, Literal

from ..contracts.spec import TaskSpec, ToolCall
from .baselines import OracleAgent

FactUse = Literal["heard", "substituted", "missing", "composed"]

_MONTHS = ("january|february|march|april|may|june|july|august|september|october|november|december|"
           "jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec")
_DATE_FORMS = (
    re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b"),
    re.compile(rf"\b({_MONTHS})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.IGNORECASE),
    re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTHS})\.?,?\s+(\d{{4}})\b", re.IGNORECASE),
    re.compile(r"\b(\d{1,2})/(\d{1,2})/(\d{4})\b"),
)
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_TOKEN = re.compile(r"[A-Za-z0-9@][A-Za-z0-9@._+-]*[A-Za-z0-9]|[A-Za-z0-9]")


def _month(name: str) -> int:
    return [m[:3] for m in _MONTHS.split("|")[:12]].index(name[:3].lower()) + 1


def dates_in(text: str) -> list[date]:
    """The calendar dates written in ``text``, in order: ISO, "March 5, 1990", "5 March 1990", "03/05/1990" (month first)."""
    found: list[tuple[int, date]] = []
    for k, form in enumerate(_DATE_FORMS):
        for m in form.finditer(text):
            a, b, c = m.groups()
            try:
                if k == 0:
                    d = date(int(a), int(b), int(c))
                elif k == 1:
                    d = date(int(c), _month(a), int(b))
                elif k == 2:
                    d = date(int(c), _month(b), int(a))
                else:
                    d = date(int(c), int(a), int(b))
            except ValueError:
                continue
            found.append((m.start(), d))
    return [d for _, d in sorted(found, key=lambda x: x[0])]


def _norm(text: str) -> str:
    return " " + " ".join(re.findall(r"[0-9a-z]+", text.casefold())) + " "


def _numbers_in(text: str) -> list[float]:
    return [float(n.replace(",", "")) for n in re.findall(r"(?<![\w.])\d[\d,]*(?:\.\d+)?", text)]


def shape(value: str) -> str:
    """The pattern of a value: each letter ``a``, each digit ``9``, the rest kept (``SYS-511`` -> ``aaa-999``)."""
    return re.sub(r"[0-9]", "9", re.sub(r"[A-Za-z]", "a", value))


# arguments whose value the agent writes from the customer's story in its own words
COMPOSED_ARGUMENTS = frozenset({"subject", "description", "reason", "note", "notes", "summary", "comment", "message", "details"})
_CHOICE = re.compile(r"^[a-z_]+$")  # a lower-case option name (express, left_household): the agent's reading of a request


def is_fact(name: str, value: Any) -> bool:
    """Whether a customer-given argument is a quotable fact (identifier, code, name, date, number).

    Not facts: yes/no values, option names, free text of three words or more, and the
    free-text fields (:data:`COMPOSED_ARGUMENTS`): the agent derives them from what it was told.
    """
    if name in COMPOSED_ARGUMENTS or isinstance(value, bool) or value is None:
        return False
    if isinstance(value, (int, float)):
        return True
    if isinstance(value, str):
        return 0 < len(value.split()) < 3 and not _CHOICE.match(value)
    if isinstance(value, list):
        return bool(value) and all(is_fact(name, v) for v in value)
    return False


def said(value: Any, text: str) -> bool:
    """Whether the customer's ``text`` contains the fact ``value`` (every element, for a list)."""
    if isinstance(value, list):
        return all(said(v, text) for v in value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return any(n == float(value) for n in _numbers_in(text))
    value = str(value)
    if _ISO_DATE.match(value):
        try:
            return date.fromisoformat(value) in dates_in(text)
        except ValueError:
            pass
    wanted = _norm(value)
    return wanted.strip() != "" and wanted in _norm(text)


def profile_text(task: TaskSpec) -> str:
    """What the customer knows: the texts of its profile's facts."""
    return "\n".join(f.text for f in task.user.facts)


def is_customer_fact(name: str, value: Any, profile: str) -> bool:
    """A quotable fact (:func:`is_fact`) that the customer's profile states, so the customer can give it as written.

    A value marked as the customer's but not in its words (an order line number the agent
    reads off the order the customer described) is the agent's reading, not a fact to hear.
    """
    return is_fact(name, value) and said(value, profile)


def heard_value(value: Any, text: str) -> tuple[FactUse, Any]:
    """What the customer said for the fact ``value``: (heard, value), (substituted, what it said) or (missing, None)."""
    if said(value, text):
        return "heard", value
    if isinstance(value, list):
        parts = [heard_value(v, text) for v in value]
        if any(use == "missing" for use, _ in parts):
            return "missing", None
        return "substituted", [v for _, v in parts]
    if isinstance(value, str) and _ISO_DATE.match(value):
        spoken = dates_in(text)
        return ("substituted", spoken[-1].isoformat()) if spoken else ("missing", None)
    if isinstance(value, str) and re.search(r"\d", value):  # an identifier or code: the latest of its shape said
        same = [t for t in _TOKEN.findall(text) if shape(t) == shape(value)]
        if same:
            return "substituted", same[-1]
    return "missing", None


@dataclass
class _PendingCall:
    """A golden call waiting in the oracle's queue, with the sources of its arguments."""

    call: ToolCall


class HeardFactsOracle(OracleAgent):
    """The oracle whose customer-given facts are the ones the customer said (see the module docstring).

    ``uses`` lists, per golden call made, each customer-given argument and what became of it.
    """

    def __init__(self) -> None:
        super().__init__()
        self._customer: list[str] = []
        self._profile = ""
        self.uses: list[tuple[str, str, FactUse]] = []

    def _quotable(self, name: str, value: Any) -> bool:
        return is_customer_fact(name, value, self._profile)

    def reset(self, task: TaskSpec, observation: dict[str, Any]) -> None:
        super().reset(task, observation)
        golden = iter(task.golden)
        self._queue = [_PendingCall(next(golden)) if isinstance(step, dict) else step for step in self._queue]
        self._customer = []
        self._profile = profile_text(task)
        self.uses = []
        self._listen(observation)

    def _listen(self, observation: dict[str, Any]) -> None:
        for m in observation.get("messages", []):
            if m.get("role") == "user" and isinstance(m.get("content"), str):
                self._customer.append(m["content"])

    def act(self, observation: dict[str, Any]) -> Any:
        self._listen(observation)
        step = self._queue.pop(0) if self._queue else None
        if step is None:
            return super().act(observation)
        if not isinstance(step, _PendingCall):
            return step
        heard = "\n".join(self._customer)
        arguments = dict(step.call.arguments)
        for name, source in step.call.why.items():
            value = arguments.get(name)
            if source != "customer" or name not in arguments:
                continue
            if not self._quotable(name, value):
                self.uses.append((step.call.name, name, "composed"))
                continue
            use, spoken = heard_value(value, heard)
            self.uses.append((step.call.name, name, use))
            if use == "missing":
                del arguments[name]
            else:
                arguments[name] = spoken
        return {"name": step.call.name, "arguments": arguments}


def classify_sent(task: TaskSpec, sent: list[dict[str, Any]]) -> list[FactUse]:
    """How each customer-given value of ``task``'s golden calls fared in the calls ``sent`` (golden order, one per golden call).

    Read from what was sent, so it needs only the run's rows: a composed value, a value sent as
    golden (heard), one sent otherwise (substituted), or one left out (missing).
    """
    out: list[FactUse] = []
    profile = profile_text(task)
    for call, made in zip(task.golden, sent):
        arguments = made.get("arguments") or {}
        for name, source in call.why.items():
            if source != "customer" or name not in call.arguments:
                continue
            golden = call.arguments[name]
            if not is_customer_fact(name, golden, profile):
                out.append("composed")
            elif name not in arguments:
                out.append("missing")
            else:
                out.append("heard" if arguments[name] == golden else "substituted")
    return out
