"""What a task set from version 2 on must state about its golden trajectory, checked at load.

A golden write is only as fair as the rule behind each of its values: an argument that no
policy section, document, customer fact or earlier lookup determines is one a careful agent
cannot be expected to reproduce. From ``task_set_version: 2`` a domain's tasks therefore name
the source of every argument of every golden write that is not free text, write the agent's
own turns (asking for facts, proposing before a consent-guarded write), and record where the
task came from for the held-out split. Older sets are read as they are.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from ..contracts.spec import TaskSpec, heading_slug, load_yaml

if TYPE_CHECKING:
    from .domain import Domain

FIRST_RATIONALE_VERSION = 2
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)


@cache
def consent_guarded_writes(domain_path: Path) -> frozenset[str]:
    """The writes a ``consent_before`` process rule of the domain's ``verdicts.yaml`` guards every time.

    A write the rule guards only on a condition (``when``: not what the customer asked, a paid extra)
    needs a proposal in some tasks and none in others, which only grading can tell. Read from the file
    rather than through :mod:`~thinkingbox_env.checks.verdict_rules`, whose checks reach the task runtime that calls this module at load.
    """
    path = domain_path / "verdicts.yaml"
    data = load_yaml(path) if path.is_file() else None
    rules = (data or {}).get("process") or []
    return frozenset(w for r in rules if isinstance(r, dict) and r.get("kind") == "consent_before" for w in r.get("writes") or {}
                     if str((r.get("when") or {}).get(w, "always")) == "always")


@cache
def _anchors(path: Path) -> frozenset[str]:
    if not path.is_file():
        return frozenset()
    return frozenset(heading_slug(h) for h in _HEADING.findall(path.read_text(encoding="utf-8")))


def source_problem(source: str, domain_path: Path, earlier_tools: set[str], domain_tools: set[str]) -> str | None:
    """Why ``source`` does not resolve in this domain, or None when it does.

    ``record:<tool>`` names the result of an earlier golden call: a lookup, or a write whose result
    carries what it created (the id of a new ticket).
    """
    if source == "customer":
        return None
    if source.startswith("record:"):
        tool_name = source.removeprefix("record:")
        if tool_name not in domain_tools:
            return f"'{tool_name}' is not a tool of the domain"
        if tool_name not in earlier_tools:
            return f"no earlier golden call of '{tool_name}' to read it from"
        return None
    if source.startswith("policy#"):
        anchor = source.removeprefix("policy#")
        if anchor not in _anchors(domain_path / "policy.md"):
            return f"policy.md has no heading '{anchor}'"
        return None
    doc, _, anchor = source.partition("#")
    file = domain_path / doc
    if not file.is_file():
        return f"no knowledge-base document {doc}"
    if anchor and anchor not in _anchors(file):
        return f"{doc} has no heading '{anchor}'"
    return None


def task_set_problems(spec: TaskSpec, domain: Domain) -> list[tuple[str, str]]:
    """(field, problem) for everything a version-2 task must state and does not; empty for older sets."""
    if domain.spec.task_set_version < FIRST_RATIONALE_VERSION:
        return []
    box = domain.toolbox
    domain_tools = set(box.tools)
    guarded = consent_guarded_writes(domain.path)
    problems: list[tuple[str, str]] = []
    earlier: set[str] = set()
    for i, call in enumerate(spec.golden):
        if call.name in box and box[call.name].writes and call.expect_error is None:
            free = box[call.name].free_text_arguments
            for arg, value in call.arguments.items():
                if arg in free or value is None:
                    continue
                source = call.why.get(arg)
                if source is None:
                    problems.append((f"golden.{i}.why.{arg}", f"no source for argument '{arg}' of {call.name}: name the policy "
                                     "section, document, customer fact or lookup that decides it (or type the argument FreeText)"))
                    continue
                problem = source_problem(source, domain.path, earlier, domain_tools)
                if problem:
                    problems.append((f"golden.{i}.why.{arg}", problem))
            if call.name in guarded and not any(t.act == "propose" and t.before <= i for t in spec.dialogue):
                problems.append((f"golden.{i}", f"{call.name} needs the customer's consent: add a 'propose' turn before it"))
        earlier.add(call.name)
    if spec.user.facts and not any(t.act == "ask" for t in spec.dialogue):
        problems.append(("dialogue", "the customer holds facts the tools need but no 'ask' turn asks for them"))
    if spec.origin is None:
        problems.append(("origin", "a generated task records its opening template and branches (the held-out split reads them)"))
    return problems


def fault_problems(spec: TaskSpec) -> list[tuple[str, str]]:
    """(field, problem) where a scheduled fault and the golden disagree: the failing call must be one the golden expects to fail."""
    problems: list[tuple[str, str]] = []
    for k, fault in enumerate(spec.faults):
        calls = [i for i, c in enumerate(spec.golden) if c.name == fault.tool]
        if len(calls) < fault.call:
            problems.append((f"faults.{k}", f"the golden calls '{fault.tool}' {len(calls)} times; call {fault.call} never happens"))
        elif spec.golden[calls[fault.call - 1]].expect_error is None:
            problems.append((f"faults.{k}", f"golden call {calls[fault.call - 1]} fails by this fault but has no expect_error"))
    return problems
