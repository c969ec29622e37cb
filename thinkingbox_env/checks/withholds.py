"""``withholds``: what the customer is never told, read over every assistant message of the episode.

Forbidden values are matched as whole values (``23`` is never found in ``2023``), and a
bare number read back inside a record's text (a product name, an address) is not said as a value;
a forbidden action word is forbidden when affirmed, not when denied; and the domain's
confidential concepts and internal columns (``domains/<d>/verdicts.yaml``) give one
more result, ``withholds:confidential``, on every task of a domain that declares them;
the concepts are also read by meaning: any sense a domain's ``claims.yaml`` declares for
a concept (a set of lemmas said in one sentence, "referral percentage" for the commission)
counts as saying it.
"""

from __future__ import annotations

import re
from typing import Any

from ..contracts.records import CheckResult
from ..reading.phrases import phrase_polarity
from ..reading.values import Value, keyed_leaves, parse_value, same_value
from ._reading import agent_texts, reading_of
from .base import CheckKind, GradingContext
from .dialogue import DialogueContext, Withhold, dialogue_context, typed_dialogue


def _internal_values(ctx: DialogueContext, columns: list[str], records: list[Any]) -> list[Value]:
    wanted = {c.split(".")[-1] for c in columns}
    vals: list[Value] = []

    def walk(x: Any) -> None:
        if isinstance(x, dict):
            for k, v in x.items():
                if k in wanted and v is not None and not isinstance(v, (dict, list)):
                    pv = parse_value(str(v), ctx.clock, ctx.id_patterns)
                    if pv is not None:
                        vals.append(pv)
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(records)
    return vals


_EDGE = ".,;:!?()[]\"'"
# names and addresses are short; a policy passage a search returned is not a name ("score is 80 or higher")
_NAME_LENGTH = 80


class _Said:
    """The values the agent said, where a bare number written inside a record's text is not said as a value.

    "Lumora 65-inch QLED TV" or "65 Elm Street" read back from a record names a product or an
    address: its 65 is not the customer's score, nor any other number the task withholds.
    """

    def __init__(self, ctx: DialogueContext, skip: set[str]) -> None:
        self.ctx = ctx
        self.skip = skip
        self.values = ctx.agent_values()
        self._texts: list[str] | None = None

    def texts(self) -> list[str]:
        """Short text leaves of the tool results and records (names, addresses), lower-cased; the ``skip`` columns left out."""
        if self._texts is None:
            out: list[str] = []
            for key, x in keyed_leaves([self.ctx.tool_results, self.ctx.state_records]):
                if isinstance(x, str) and key not in self.skip and re.search(r"[^\W\d_]", x) and re.search(r"\d", x):
                    text = " ".join(x.lower().split())
                    if len(text) <= _NAME_LENGTH:
                        out.append(text)
            self._texts = out
        return self._texts

    def in_record_text(self, i: int, v: Value) -> bool:
        """Whether the bare number ``v`` of message ``i`` is written as part of a record's text.

        The token it is written in ("65-inch"), or it with the word before or after it ("45 cm"),
        must appear in one record text; a number said on its own ("your score is 65") is never exempt.
        """
        if v.kind != "number":
            return False
        msg = self.ctx.agent_messages[i]
        before, after = msg[: v.start], msg[v.end :]
        glued_left = "" if before[-1:].isspace() else (before.split() or [""])[-1]
        glued_right = "" if after[:1].isspace() else (after.split() or [""])[0]
        token = glued_left + v.text + glued_right
        words_before = before.split()[: len(before.split()) - (1 if glued_left else 0)]
        words_after = after.split()[(1 if glued_right else 0):]
        prev = f"{words_before[-1]} " if words_before else ""
        nxt = f" {words_after[0]}" if words_after else ""
        for c in (token, prev + token, token + nxt):
            c = " ".join(c.lower().split()).strip(_EDGE)
            if c == v.text.lower() or not c:
                continue
            pat = re.compile(rf"(?<!\w){re.escape(c)}(?!\w)")
            if any(pat.search(t) for t in self.texts()):
                return True
        return False

    def any_same(self, want: Value) -> bool:
        return any(same_value(want, s) and not self.in_record_text(i, s) for i, s in self.values)


def _leaked(ctx: DialogueContext, w: Withhold, said: _Said) -> bool:
    if w.regex is not None and any(re.search(w.regex, m, re.IGNORECASE) for m in ctx.agent_messages):
        return True
    if w.values and any(said.any_same(v) for v in w.values):
        return True
    for m in ctx.agent_messages:
        for term in w.terms:
            pols = phrase_polarity(m, term)
            if (True in pols) if w.affirmed_only else bool(pols):
                return True
    return False


class WithholdsCheck(CheckKind):
    """Nothing the task or the domain keeps internal was said to the customer."""

    name = "withholds"
    group = "dialogue"
    order = 410
    reward_group = "dialogue"

    def evaluate(self, context: GradingContext) -> list[CheckResult]:
        ctx = dialogue_context(context)
        conf = ctx.rules.confidential
        said = _Said(ctx, {c.split(".")[-1] for c in conf.columns})
        out = []
        for t in typed_dialogue(context) if context.task.checks.dialogue else []:
            if not t.withholds:
                continue
            leaked = [w.label for w in t.withholds if _leaked(ctx, w, said)]
            out.append(_undecided(context, f"withholds:{t.name}") if not leaked else
                       CheckResult(name=f"withholds:{t.name}", kind="withholds", passed=False, detail=f"said: {leaked}"))
        from ..reading.claims import concepts_said, load_vocabulary

        domain_path = str(context.domain.path)
        vocab = load_vocabulary(domain_path)
        if conf.concepts or conf.columns or (vocab is not None and vocab.concepts):
            found = [p for p in conf.concepts if any(phrase_polarity(m, p) for m in ctx.agent_messages)]
            # the concept in any words: a sense of it (lemma sets, claims.yaml) said in one sentence
            found += [f"{c} (by meaning)" for m in ctx.agent_messages for c in concepts_said(m, domain_path)]
            # the concept in words no list knows, read by the model reader where the run has one
            found += [f"{c} (read by the model)" for c in reading_of(context, agent_texts(context)).model_concepts]
            # internal values stay internal even though a tool showed them to the agent
            for v in _internal_values(ctx, conf.columns, ctx.state_records):
                if any(s.kind == v.kind and s.norm == v.norm and not said.in_record_text(i, s) for i, s in said.values):
                    found.append(f"{v.norm} (internal value)")
            out.append(_undecided(context, "withholds:confidential") if not found else
                       CheckResult(name="withholds:confidential", kind="withholds", passed=False,
                                   detail=f"said: {sorted(set(found))}"))
        return out


def _undecided(context: GradingContext, name: str) -> CheckResult:
    """Nothing withheld was found: a pass where every statement the agent made was read, else undetermined.

    A question asks and states nothing, so only statements must be read: a confidential fact in
    words no list knows ("your internal assessment came back high") is in a sentence the reader
    could not read, and the check cannot say it was kept.
    """
    reading = reading_of(context, agent_texts(context))
    statements = [u for u in reading.rule.unread if not u.rstrip().endswith("?")]
    if not statements or reading.model_read:
        return CheckResult(name=name, kind="withholds", passed=True, detail="nothing withheld was said")
    return CheckResult(name=name, kind="withholds", passed=None, undetermined=True,
                       detail=f"nothing withheld was found, but {reading.why()}")
