"""Which writes need the customer's agreement, read from the domain's own policy sentences.

A domain's ``verdicts.yaml`` declares the writes its consent rule guards; this module reads the
same thing from ``policy.md``, so that the two can be held together (tests/checks/test_process_policy.py):
a check that demands agreement the written policy never asks for fails a policy-following agent,
and one that misses a write the policy guards rewards an agent that skips the question.

The reader finds the sentences that ask for agreement ("Confirm with the customer before
cancelling", "get the employee's yes before raising it", "cancel only after they agree", "Ask for
a confirmation before a change that the customer did not ask for in those exact terms") and maps
the act each guards to the domain's write tools, by the words of the act against each tool's name
and the first sentence of its description, with the sentence's section heading as context. A
pronoun ("each of these", "grant it") is read from the sentence before; "a change" stands for every
write that is not bookkeeping (``claims.yaml``'s ``bookkeeping``). A sentence that asks only where
the write is not what the customer asked for (an offer, "did not ask for in those exact terms", an
"If ..." situation) guards on that condition (``not_as_asked``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from ..reading.claims import load_vocabulary, word_lemma

if TYPE_CHECKING:
    from ..toolkit.tools import Toolbox
    from .verdict_rules import ProcessRule

# the words that ask for the customer's agreement before an act
_CUES = re.compile(
    r"\bconfirm with the (?:customer|employee|person|guest|organi[sz]er)\b"
    r"|\bask (?:them|the customer|the employee|the person) to confirm\b"
    r"|\bask for (?:a |their )?confirmation\b"
    r"|\bget the (?:customer|employee|person|organi[sz]er)'s yes\b"
    r"|\b(?:only )?(?:after|once|when|if) (?:they|the customer|the employee|the person|the organi[sz]er|the guest)"
    r" (?:clearly )?agrees?\b", re.IGNORECASE)
# the act a cue guards: what follows "before", or what precedes "(only) after/once/when/if they agree"
_BEFORE = re.compile(r"\bbefore (?:each of )?(.+?)(?:[,;:(]|$)", re.IGNORECASE)
_AFTER = re.compile(r"([^,;:.]+?)\s*,?\s*(?:only )?(?:after|once|when|if) (?:they|the customer|the employee|the person|"
                    r"the organi[sz]er|the guest) (?:clearly )?agrees?", re.IGNORECASE)
_CONDITIONAL = re.compile(r"\boffer\b|\bdid not ask for\b|^if\b", re.IGNORECASE)
_GENERIC = re.compile(r"^(?:a|any|every) (?:change|action|write)\b", re.IGNORECASE)
_STOP = frozenset(("a", "an", "the", "of", "to", "on", "in", "for", "with", "and", "or", "its", "it", "their", "they",
                   "them", "this", "that", "these", "each", "be", "is", "are", "by", "from", "at", "as", "any", "every",
                   "only", "after", "before", "once", "when", "if", "customer", "employee", "person", "you", "your",
                   "tell", "ask", "describe", "give", "get"))
_TOOL = re.compile(r"`?\b([a-z]+(?:_[a-z]+)+)\b`?")


@dataclass(frozen=True)
class ConsentSentence:
    """A policy sentence that asks for agreement: its words, its section, the writes it guards and when."""

    sentence: str
    section: str
    tools: tuple[str, ...]
    condition: str  # "always" or "not_as_asked"


def normalise(text: str) -> str:
    """One line, single spaces, no list marker: how a sentence quoted in verdicts.yaml is compared with the policy."""
    return re.sub(r"\s+", " ", re.sub(r"^\s*(?:[-*]|\d+\.)\s+", "", text)).strip()


def _words(text: str) -> set[str]:
    return {word_lemma(w) for w in re.findall(r"[a-z]+", text.lower().replace("_", " ")) if w not in _STOP and len(w) > 2}


def _sections(policy: str) -> list[tuple[str, list[str]]]:
    """(heading, paragraphs) in order; a list item is a paragraph of its own, wrapped lines joined."""
    out: list[tuple[str, list[str]]] = [("", [])]
    para: list[str] = []

    def flush() -> None:
        if para:
            out[-1][1].append(" ".join(x.strip() for x in para))
            para.clear()

    for line in policy.splitlines():
        heading = re.match(r"^#{1,6}\s+(.+?)\s*$", line)
        if heading:
            flush()
            out.append((heading.group(1), []))
        elif not line.strip():
            flush()
        elif re.match(r"^\s*(?:[-*]|\d+\.)\s+", line):
            flush()
            para.append(line)
        else:
            para.append(line)
    flush()
    return out


def _sentences(paragraph: str) -> list[str]:
    text = normalise(paragraph)
    parts = re.split(r"(?<=[.!?])\s+(?=[A-Z`\"(])", text)
    return [p for p in parts if p]


@dataclass(frozen=True)
class _Tool:
    name: str
    words: frozenset[str]


def _write_tools(toolbox: Toolbox) -> list[_Tool]:
    tools = []
    for name, tool in sorted(toolbox.tools.items()):
        if not tool.writes:
            continue
        doc = (getattr(tool, "description", "") or "").strip()
        first = re.split(r"(?<=\.)\s", doc, maxsplit=1)[0] if doc else ""
        tools.append(_Tool(name, frozenset(_words(name) | _words(first))))
    return tools


def _match(act: str, context: str, heading: str, tools: list[_Tool], named: set[str]) -> list[str]:
    """The write tools an act phrase stands for: most words of the act, then of the sentence and heading."""
    act_words, ctx, head = _words(act), _words(context), _words(heading)
    if not act_words:
        return []
    scored = []
    for t in tools:
        hits = len(act_words & t.words)
        if not hits:
            continue
        scored.append((3 * hits + len(ctx & t.words) + len(head & t.words) + (2 if t.name in named else 0), t.name))
    if not scored:
        return []
    best = max(s for s, _ in scored)
    return [n for s, n in scored if s == best]


def _items(sentence: str) -> list[str]:
    """The acts a sentence lists ("Cancelling a booking, changing its dates or room, ... and giving compensation")."""
    head = re.split(r"\b(?:cannot|can not|are|is|must|need)\b", sentence, maxsplit=1)[0]
    return [i.strip() for i in re.split(r",\s*(?:and\s+)?|\s+and\s+", head) if i.strip()]


def read_consent_sentences(policy: str, domain_path: str, toolbox: Toolbox) -> list[ConsentSentence]:
    """Every sentence of the policy that asks for agreement, with the write tools of ``toolbox`` it guards."""
    tools = _write_tools(toolbox)
    vocab = load_vocabulary(domain_path)
    bookkeeping = set(vocab.bookkeeping) if vocab is not None else set()
    out: list[ConsentSentence] = []
    for heading, paragraphs in _sections(policy):
        for paragraph in paragraphs:
            named = {m.group(1) for m in _TOOL.finditer(paragraph)} & {t.name for t in tools}
            sentences = _sentences(paragraph)
            for k, sentence in enumerate(sentences):
                cue = _CUES.search(sentence)
                if not cue:
                    continue
                before = _BEFORE.search(sentence)
                after = _AFTER.search(sentence[: cue.end()])
                if re.search(r"agrees?$", cue.group(0), re.IGNORECASE):
                    # "... only after they agree": the act is a "before ..." clause ahead of it, else what precedes the cue
                    act = before.group(1) if before and before.start() < cue.start() else (after.group(1) if after else "")
                else:  # "confirm with the customer before ...", "get the employee's yes before ..."
                    act = before.group(1) if before else ""
                act = re.sub(r"^(?:and|then|so)\s+", "", act.strip(), flags=re.IGNORECASE)
                act = re.sub(r"\s*\(.*$", "", act)
                act = re.sub(r"^.*\b(?:and|then)\s+(?=\w+\s)", "", act) if " and " in act and not _GENERIC.match(act) else act
                found: list[str] = []
                if _GENERIC.match(act):
                    found = [t.name for t in tools if t.name not in bookkeeping]
                elif not _words(re.sub(r"\b(?:it|them|these|this|that|each of|on)\b", "", act)):
                    prev = sentences[k - 1] if k else ""
                    if re.search(r"\beach of these\b", sentence, re.IGNORECASE) and prev:
                        for item in _items(prev):
                            found += [n for n in _match(item, item, heading, tools, named) if n not in found]
                    else:
                        found = _match(f"{act} {prev} {heading}", sentence, heading, tools, named)
                else:
                    found = _match(act, sentence, heading, tools, named)
                condition = "not_as_asked" if _CONDITIONAL.search(sentence) else "always"
                out.append(ConsentSentence(sentence, heading, tuple(found), condition))
    return out


@lru_cache(maxsize=16)
def consent_sentences(domain_path: str, toolbox: Toolbox) -> tuple[ConsentSentence, ...]:
    """The domain's policy sentences that ask for agreement (read once per domain)."""
    policy = (Path(domain_path) / "policy.md").read_text(encoding="utf-8")
    return tuple(read_consent_sentences(policy, domain_path, toolbox))


def policy_guarded_writes(domain_path: str, toolbox: Toolbox,
                          policy: str | None = None) -> dict[str, tuple[str, list[ConsentSentence]]]:
    """Per write tool: when it needs agreement (always, or only when not what the customer asked) and the sentences behind it.

    ``domain_path``: the domain's folder (its ``policy.md`` and claims vocabulary); ``toolbox``: the
    domain's tools, whose write tools the sentences are matched to. ``policy``: another text of the
    domain's policy to read instead of its ``policy.md``.
    """
    sentences: dict[str, list[ConsentSentence]] = {}
    found = consent_sentences(domain_path, toolbox) if policy is None else read_consent_sentences(policy, domain_path, toolbox)
    for s in found:
        for tool in s.tools:
            sentences.setdefault(tool, []).append(s)
    # one sentence that asks every time is enough for the write to need agreement every time
    return {tool: ("always" if any(s.condition == "always" for s in sents) else "not_as_asked", sents)
            for tool, sents in sentences.items()}


def conformance_problems(domain_path: str, toolbox: Toolbox, rules: list[ProcessRule] | None = None,
                         policy: str | None = None) -> list[str]:
    """Where the domain's ``verdicts.yaml`` consent rules and its policy's sentences disagree; empty when they agree.

    Each problem names the tool and the sentence: a write the policy asks agreement for that no rule
    guards; a guarded write no sentence asks for; a rule that guards always what the policy asks
    only when the write is not what the customer asked for, or the other way round; a quoted
    sentence that is not the policy's. ``rules`` and ``policy`` stand in for the domain's files.
    """
    from .verdict_rules import load_verdict_rules

    if rules is None:
        rules = list(load_verdict_rules(domain_path).process)
    rules = [r for r in rules if r.kind == "consent_before"]
    derived = policy_guarded_writes(domain_path, toolbox, policy)
    problems: list[str] = []
    guarded: dict[str, str] = {}
    for rule in rules:
        for tool in rule.writes:
            guarded[tool] = rule.condition(tool)
        for tool, other in rule.through.items():
            guarded.setdefault(tool, f"through {other}")
        for tool, quoted in rule.policy.items():
            asking = [s.sentence for s in derived.get(tool, ("", []))[1]]
            if normalise(quoted) not in asking:
                problems.append(f"{rule.name}: policy.{tool} quotes '{quoted}', which is not a sentence of the policy "
                                f"that asks agreement for {tool}" + (f" (those are: {asking})" if asking else ""))
        for tool in rule.writes:
            if tool not in rule.policy:
                problems.append(f"{rule.name}: {tool} is guarded but quotes no policy sentence (policy.{tool})")
    for tool, (cond, sents) in derived.items():
        why = "; ".join(f"'{s.sentence}'" for s in sents)
        if tool not in guarded:
            problems.append(f"the policy asks agreement for {tool} ({cond}) in {why}, but verdicts.yaml does not guard it")
        elif guarded[tool].startswith("through"):
            continue
        elif guarded[tool] == "always" and cond != "always":
            problems.append(f"verdicts.yaml guards {tool} always, but the policy asks only for a change the customer did "
                            f"not ask for: {why}")
        elif guarded[tool] == "not_as_asked" and cond == "always":
            problems.append(f"verdicts.yaml guards {tool} only when not as asked, but the policy asks always: {why}")
    for tool in guarded:
        if tool not in derived:
            problems.append(f"verdicts.yaml guards {tool}, but no sentence of the policy asks the customer's agreement to it")
    return problems
