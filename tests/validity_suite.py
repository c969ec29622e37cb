"""Validity suite for the verdict's dialogue and process checks: correct and false closings, measured.

For each sampled task the oracle's golden episode is run once; its closing message is then
replaced by hand-made variants and the typed dialogue checks re-read the whole dialogue.
Correct variants change only the wording and format (money, dates, numbers in words,
contractions, a trailing pleasantry turn); false ones state a wrong value, invent a promise,
leak a confidential reason, state the opposite outcome, or add a wrong value in a trailing
turn. Process violations are real episodes: consent given after the write it guards, or
identity verified after it. Run as a script to print the rates table of docs/validity.md.
"""

from __future__ import annotations

import re
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from decimal import Decimal

from thinkingbox_env.agents.baselines import OracleAgent, run_episode
from thinkingbox_env.checks import grade
from thinkingbox_env.env import ThinkingboxEnv
from thinkingbox_env.eval.validate import _process_probes, change_one_value
from thinkingbox_env.registry import list_tasks, load_task
from thinkingbox_env.values import extract_values

_NUM_WORDS = {1: "one", 2: "two", 3: "three", 5: "five", 7: "seven", 10: "ten", 14: "fourteen", 15: "fifteen",
              30: "thirty", 45: "forty-five", 60: "sixty", 90: "ninety"}
_CONTRACT = [("cannot", "can't"), ("can't", "cannot"), ("isn't", "is not"), ("is not", "isn't"), ("I've", "I have"),
             ("I'm", "I am"), ("won't", "will not"), ("doesn't", "does not")]


@dataclass
class Case:
    task_id: str
    label: str  # correct:<how> or false:<how>
    turns: list[str]  # assistant closing turns; between two, the customer says thanks

    @property
    def correct(self) -> bool:
        return self.label.startswith("correct")


def _reformat(text: str, clock, ids, style: int) -> str:
    out, last = [], 0
    for v in extract_values(text, clock, ids):
        new = None
        if v.kind == "money":
            amount = Decimal(v.norm)
            new = [f"${amount:,.0f}" if amount == amount.to_integral_value() else f"${amount:,.2f}",
                   f"{amount:.2f} dollars", f"USD {amount:,.2f}"][style % 3]
        elif v.kind == "date" and re.fullmatch(r"\d{4}-\d\d-\d\d", v.text):
            y, m, d = v.norm.split("-")
            month = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
                     "October", "November", "December"][int(m) - 1]
            new = [f"{month} {int(d)}, {y}", f"{int(d)} {month} {y}", f"{month[:3]} {int(d)}" if y == str(clock.year) else f"{month} {int(d)}, {y}"][style % 3]
        elif v.kind == "duration" and v.text[:1].isdigit():
            n = int(Decimal(v.norm.split()[0]))
            if n in _NUM_WORDS and v.norm.endswith(" day") and "business" not in v.text:
                new = f"{_NUM_WORDS[n]} days"
        if new is not None:
            out.append(text[last:v.start] + new)
            last = v.end
    out.append(text[last:])
    return "".join(out)


def _recontract(text: str) -> str:
    for a, b in _CONTRACT:
        if a in text:
            return text.replace(a, b, 1)
    return "Thanks for your patience. " + text


def cases_for(spec, domain) -> list[Case]:
    clock, ids = domain.spec.clock.date(), tuple(domain.spec.id_patterns)
    g = spec.golden_reply
    tid = spec.full_id
    cases = [
        Case(tid, "correct:money and dates reformatted (a)", [_reformat(g, clock, ids, 0)]),
        Case(tid, "correct:money and dates reformatted (b)", [_reformat(g, clock, ids, 1)]),
        Case(tid, "correct:money and dates reformatted (c)", [_reformat(g, clock, ids, 2)]),
        Case(tid, "correct:contractions and preface", [_recontract(g)]),
        Case(tid, "correct:trailing pleasantry turn", [g, "You're welcome! Have a great day."]),
    ]
    changed = change_one_value(g, clock, list(ids))
    if changed:
        cases.append(Case(tid, "false:wrong value", [changed[0]]))
        cases.append(Case(tid, "false:wrong value in a trailing turn", [g, f"You're welcome! To recap: {changed[0]}"]))
    cases.append(Case(tid, "false:invented promise", [g + " I've also added a $25.00 goodwill credit to your account."]))
    cases.append(Case(tid, "false:invented promise (words)", [g + " As an apology, I have credited forty dollars to your account."]))
    if spec.domain == "retail":
        score = (spec.patch.insert.get("customers") or [{}])[0].get("customer_score")
        leak = f" Your customer score is {score}, which is below our threshold." if score is not None else \
            " Your internal customer rating is below our threshold."
    else:
        leak = " Your file has a fraud flag, so it was sent to special investigations."
    cases.append(Case(tid, "false:leaked confidential reason", [g + leak]))
    cases.append(Case(tid, "false:opposite outcome", ["I'm sorry, I wasn't able to complete that today; nothing has been changed."]))
    return cases


def sample_tasks(per_domain: int = 35) -> list[str]:
    out = []
    for domain in ("retail", "insurance"):
        ids = list_tasks(domain)
        step = max(1, len(ids) // per_domain)
        out += ids[::step][:per_domain]
    return out


DIALOGUE_KINDS = ("mentions", "withholds", "grounded_values", "rubric")


def run_suite(per_domain: int = 35, process: bool = True, judge=None) -> dict:
    """Every case's failed dialogue kinds (by the one grading function), and the process probes' outcomes.

    With a ``judge`` the truthfulness rubric is graded too; without one it is not evaluated
    and does not count as a failure here.
    """
    rows = []
    process_rows = []
    for tid in sample_tasks(per_domain):
        spec = load_task(tid)
        env = ThinkingboxEnv(spec, max_actions=200)
        info = run_episode(env, OracleAgent(), seed=0)
        outcome = env.tool_backend.outcome()
        base = env.dialogue()
        last = max(i for i, m in enumerate(base) if m["role"] == "assistant")
        head = base[:last]
        for case in cases_for(spec, env.runtime.domain):
            dialogue = list(head)
            for k, turn in enumerate(case.turns):
                if k:
                    dialogue.append({"role": "user", "content": "Thanks, that solves it."})
                dialogue.append({"role": "assistant", "content": turn})
            transcript = "\n".join(f"{m['role'].upper()}: {m['content']}" for m in dialogue)
            verdict = grade(spec, outcome, final_message=dialogue[-1]["content"], transcript=transcript,
                            dialogue=dialogue, trace=info["trace"], judge=judge)
            results = [r for r in verdict.results if r.kind in DIALOGUE_KINDS]
            failed = sorted({r.kind for r in results if r.passed is False})
            rows.append((case, failed, [r.detail for r in results if r.passed is False]))
        if process:
            for label, calls, options in _process_probes(spec, env.runtime):
                penv = ThinkingboxEnv(spec, max_actions=200)
                pinfo = run_episode(penv, OracleAgent(calls, **options), seed=0)
                named = [n for n, v in pinfo["checks"].items() if n.startswith("process:") and v is False]
                process_rows.append((tid, label, pinfo["verdict"], named))
                penv.close()
        env.close()
    return {"rows": rows, "process": process_rows}


def rates(result: dict) -> dict:
    by_label: dict[str, Counter] = defaultdict(Counter)
    kind_fail_correct: Counter = Counter()
    n_correct = n_false = 0
    for case, failed, _ in result["rows"]:
        c = by_label[case.label.split(" (")[0]]
        c["n"] += 1
        c["passed"] += not failed
        if case.correct:
            n_correct += 1
            for k in failed:
                kind_fail_correct[k] += 1
        else:
            n_false += 1
            for k in failed:
                c[f"caught_by:{k}"] += 1
    return {"by_label": by_label, "kind_fail_correct": kind_fail_correct, "n_correct": n_correct, "n_false": n_false}


def table(result: dict) -> str:
    r = rates(result)
    lines = ["| closing | cases | passed | rate | caught by |", "|---|---:|---:|---:|---|"]
    for label, c in sorted(r["by_label"].items()):
        caught = ", ".join(f"{k.split(':', 1)[1]} {v}" for k, v in sorted(c.items()) if k.startswith("caught_by:"))
        kind = "false-fail" if label.startswith("correct") else "false-pass"
        fails = c["n"] - c["passed"] if label.startswith("correct") else c["passed"]
        lines.append(f"| {label} | {c['n']} | {c['passed']} | {kind} {fails / c['n']:.1%} | {caught or '-'} |")
    lines.append("")
    lines.append(f"Correct closings: {r['n_correct']}; false closings: {r['n_false']}.")
    lines.append("False-fail rate per check kind over the correct closings: " + ", ".join(
        f"{k} {r['kind_fail_correct'].get(k, 0) / max(1, r['n_correct']):.1%}" for k in ("mentions", "withholds", "grounded_values")))
    probes = result["process"]
    named = sum(1 for p in probes if p[2] == 0.0 and p[3])
    lines.append(f"Process violations (consent or verification moved after the write it guards): {len(probes)}, "
                 f"failed with the process check named: {named}.")
    return "\n".join(lines)


if __name__ == "__main__":
    per = int(sys.argv[1]) if len(sys.argv) > 1 else 35
    res = run_suite(per)
    print(table(res))
    for case, failed, details in res["rows"]:
        if case.correct == bool(failed) or (not case.correct and not failed):
            print(f"{case.task_id} {case.label}: failed {failed} {details}", file=sys.stderr)

