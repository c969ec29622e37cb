"""The scripted user's view of a benchmark task's ``user_context``: its facts, in a few groups, each released by its words.

The reference harness plays the customer with a model; the scripted user is the offline stand-in,
so it needs the context as facts with the words that release them.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..contracts.spec import Fact, UserSpec

_STOP = frozenset(["the", "and", "for", "with", "that", "this", "your", "have", "from", "what", "when", "which", "about", "please", "would", "could", "there", "their"])


# The opening of the release's user_context: instructions to the simulated user, not things the customer knows.
_RULES_HEADER = re.compile(r"^\s*rules\s*:\s*$", re.IGNORECASE)
_RULE_LINE = re.compile(r"^\s*(do not|don't|never|always|remain|if asked for the same)\b", re.IGNORECASE)
MAX_FACT_TURNS = 3


def _grouped(facts: list[Fact], groups: int) -> list[Fact]:
    """Contiguous facts joined into at most ``groups``, each released by any of its members' words.

    The reference plays the customer with a model that answers several
    questions in one turn; a question per line would spend the ten user turns
    on tasks with many facts before any tool is called.
    """
    if len(facts) <= groups:
        return facts
    size = -(-len(facts) // groups)
    out = []
    for i in range(0, len(facts), size):
        part = facts[i:i + size]
        unlock = list(dict.fromkeys(w for f in part for w in f.unlock))
        out.append(Fact(text="\n".join(f.text for f in part), unlock=unlock))
    return out


def user_spec(query: str, context: Any) -> UserSpec:
    """The scripted user's view of ``user_context``: its facts in at most three groups, each released by its key words.

    The reference harness plays the user with a model (``--user llm`` here);
    the scripted user is the offline stand-in, so it releases a group of
    context lines when the agent's message names one of their distinctive
    words. The rule block addressed to the simulated user ("Do not invent ...")
    is not a fact.
    """
    facts: list[Fact] = []
    if isinstance(context, dict):
        for key, value in context.items():
            words = [w for w in re.split(r"[^A-Za-z0-9]+", str(key)) if len(w) > 1]
            shown = value if isinstance(value, str) else json.dumps(value, default=str)
            facts.append(Fact(text=f"My {str(key).replace('_', ' ')} is {shown}.", unlock=words or [str(key)]))
    elif context:
        lines = context if isinstance(context, list) else re.split(r"(?<=[.!?])\s+|\n+", str(context))
        for line in (str(x).strip() for x in lines):
            if _RULES_HEADER.match(line) or _RULE_LINE.match(line):
                continue
            words = sorted({w.lower() for w in re.findall(r"[A-Za-z]{4,}", line)} - _STOP)
            if line and words:
                facts.append(Fact(text=line, unlock=words))
        facts = _grouped(facts, MAX_FACT_TURNS)
    intent = query if not context else f"{query}\nContext: {context if isinstance(context, str) else json.dumps(context, default=str)}"
    return UserSpec(opening=query, facts=facts, intent=intent)
