"""The scripted user against a corpus of agent messages with expected behaviour.

The corpus is the user's specification: its accuracy is what docs/validity.md
reports, and every exploit case must hold without exception.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import yaml

from thinkingbox_env.contracts.spec import load_task_file
from thinkingbox_env.tasks.domain import load_domain
from thinkingbox_env.tasks.lookup import load_task
from thinkingbox_env.users import DONT_KNOW, SATISFIED, ScriptedUser
from thinkingbox_env.users.scripted import NOTHING_ELSE, TOO_MANY

CORPUS = yaml.safe_load((Path(__file__).parent / "corpus.yaml").read_text())
CASES = [(g["task"], *case) for g in CORPUS for case in g["cases"]]


FIXTURES = Path(__file__).parent / "corpus_tasks"


@cache
def _task(task_id: str):
    """The task a case was written against: a copy kept with the corpus, so regenerating a domain's set leaves it valid."""
    kept = FIXTURES / f"{task_id}.yaml"
    return load_task_file(kept, task_id.split("/")[0]) if kept.is_file() else load_task(task_id)


def run_case(task_id: str, expect: str, message: str) -> tuple[bool, str]:
    """Plays one agent message to a fresh user of the task; returns (passed, the reply)."""
    task = _task(task_id)
    user = ScriptedUser()
    user.bind_domain(load_domain(task.domain).spec)
    user.reset(task.user, seed=0)
    reply = user.reply([{"role": "user", "content": task.user.opening}, {"role": "assistant", "content": message}])
    turn = user.last
    kind, _, arg = expect.partition(" ")
    released = set(turn.released)
    fact_texts = [f.text for f in task.user.facts]
    if kind == "release":
        want = {s for s in arg.split("+") if not s.endswith("_none")}
        ok = released == want and turn.answer != "agree"
        if not want:
            ok = ok and not any(t in reply for t in fact_texts)
    elif kind == "nothing":
        ok = not released and turn.answer != "agree" and not any(t in reply for t in fact_texts)
    elif kind in ("agree", "refuse", "ask"):
        ok = turn.answer == kind and not released
    elif kind == "pick":
        ok = turn.answer == "pick" and arg.lower() in reply.lower()
    elif kind == "repeat":
        ok = reply.startswith("As I said: ") and reply[11:] in task.user.opening and not released
    elif kind == "confirmed":
        ok = reply.startswith("Yes, that's right.") and turn.answer is None
    elif kind == "correct":
        ok = reply.startswith("No, that's not right.") and any(f.text in reply for f in task.user.facts)
    else:
        ok = reply == {
            "dont_know": DONT_KNOW, "satisfied": SATISFIED, "goal": task.user.opening, "nothing_else": NOTHING_ELSE,
            "okay": "Okay, thanks.", "too_many": TOO_MANY,
        }[kind]
    return ok, reply


def measure() -> tuple[float, list[tuple[str, str, str, str]], list[tuple[str, str, str, str]]]:
    failures, exploit_failures = [], []
    for task_id, expect, message, *flags in CASES:
        ok, reply = run_case(task_id, expect, message)
        if not ok:
            failures.append((task_id, expect, message, reply))
            if flags:
                exploit_failures.append((task_id, expect, message, reply))
    return 1 - len(failures) / len(CASES), failures, exploit_failures


def test_corpus_is_large_and_covers_both_domains():
    assert len(CASES) >= 300
    assert {t.split("/")[0] for t, *_ in CASES} == {"retail", "insurance"}
    kinds = {e.split(" ")[0] for _, e, *_ in CASES}
    assert {"release", "agree", "refuse", "ask", "confirmed", "correct", "goal", "nothing_else", "nothing", "too_many"} <= kinds


def test_corpus_accuracy_and_every_exploit_refused():
    accuracy, failures, exploits = measure()
    report = "\n".join(f"{t} [{e}] {m!r} -> {r!r}" for t, e, m, r in failures)
    assert not exploits, report
    assert accuracy >= 0.98, f"accuracy {accuracy:.3f}\n{report}"


if __name__ == "__main__":
    acc, fails, _ = measure()
    for t, e, m, r in fails:
        print(f"{t} [{e}] {m!r} -> {r!r}")
    print(f"{len(CASES)} cases, accuracy {acc:.4f}")
