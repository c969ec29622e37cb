"""``thinkingbox judge-check``: the shipped labelled closings, and the figures it prints for judges of known policy.

The judges are real HTTP servers speaking the Chat Completions API (tests/fake_openai.py);
the RubricJudge talks to them as it would to any endpoint.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests.fake_openai import FakeOpenAI
from thinkingbox_env.cli import main
from thinkingbox_env.judging.conformance import CLASSES, DATA_FILE, EXPECTED, JudgeCheckDataError, load_items, select
from thinkingbox_env.judging.judge import build_judge_prompt, judge_turns

ROOT = Path(__file__).resolve().parents[2]
ITEMS = load_items()
YES = '{"verdict": "yes", "reason": "stated truthfully"}'
NO = '{"verdict": "no", "reason": "not what happened"}'


def _preflight(body: dict) -> bool:
    return body["messages"][-1]["content"] == "Reply with OK."


def _without_nonce(prompt: str) -> str:
    nonce = re.search(r"Only the markers with nonce (\S+) open", prompt).group(1)
    return prompt.replace(nonce, "NONCE")


# every item's judge prompt, nonce blanked: what the oracle judge recognises an item by
LABELS = {_without_nonce(build_judge_prompt(it["question"], judge_turns(it["turns"]), it["facts"])[0]): it["expected"]
          for it in ITEMS}


def _oracle(body: dict) -> str:
    """Answers from the label of the item the prompt is about."""
    if _preflight(body):
        return "OK"
    return YES if LABELS[_without_nonce(body["messages"][-1]["content"])] == "yes" else NO


def _run(capsys, tmp_path, responder, *extra: str) -> tuple[int, str, dict]:
    with FakeOpenAI(responder) as server:
        rc = main(["judge-check", "--judge-model", "judge-m", "--judge-base-url", server.base_url,
                   "--json", str(tmp_path / "out.json"), *extra])
    out = capsys.readouterr().out
    data = json.loads((tmp_path / "out.json").read_text()) if (tmp_path / "out.json").exists() else {}
    return rc, out, data


# --------------------------------------------------------------------------- the shipped set


def test_shipped_set_covers_every_domain_and_class_with_consistent_labels():
    assert len(ITEMS) >= 300
    assert set(Counter(it["domain"] for it in ITEMS)) == {"retail", "insurance", "travel", "neobank", "consulting"}
    per_class = Counter(it["class"] for it in ITEMS)
    assert set(per_class) == set(CLASSES) and min(per_class.values()) >= 40
    assert len({it["id"] for it in ITEMS}) == len(ITEMS)
    assert len(LABELS) == len(ITEMS)  # no two items put the same prompt to the judge
    by_task: dict[str, dict[str, str]] = {}
    for it in ITEMS:
        assert it["expected"] == EXPECTED[it["class"]]
        assert it["turns"][-1]["role"] == "assistant" and it["turns"][0]["role"] == "user"
        by_task.setdefault(it["task_id"], {})[it["class"]] = it["turns"][-1]["content"]
    for tid, closings in by_task.items():
        g = closings["correct"]
        assert closings["paraphrased"] != g, tid
        assert closings["leaking"].startswith(g) and closings["invented"].startswith(g) and len(closings["invented"]) > len(g), tid
        assert closings["steered"].startswith(closings["opposite"]) and closings["steered"] != closings["opposite"], tid


def test_shipped_file_is_what_the_generator_writes():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import make_judge_check
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    assert make_judge_check.render(make_judge_check.build_items()) == DATA_FILE.read_text(encoding="utf-8"), \
        "thinkingbox_env/judging/data/judge_check.jsonl is stale: run python benchmarks/make_judge_check.py"


def test_a_mislabelled_item_is_named(tmp_path):
    bad = dict(ITEMS[0], expected="no")  # a correct closing labelled no
    path = tmp_path / "set.jsonl"
    path.write_text(json.dumps(ITEMS[1]) + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(JudgeCheckDataError, match=r"set\.jsonl:2: class 'correct' with expected 'no'"):
        load_items(path)


def test_limit_spreads_over_domains_and_classes():
    chosen = select(ITEMS, limit=60)
    assert len(chosen) == 60
    assert len({it["domain"] for it in chosen}) == 5 and len({it["class"] for it in chosen}) == 6
    assert {it["domain"] for it in select(ITEMS, domain="travel")} == {"travel"}


# --------------------------------------------------------------------------- judges of known policy


def test_oracle_judge_scores_100_percent(capsys, tmp_path):
    rc, out, data = _run(capsys, tmp_path, _oracle, "--workers", "8")
    assert rc == 0
    o = data["overall"]
    assert o["items"] == len(ITEMS) and o["judged"] == len(ITEMS)
    assert (o["accuracy"], o["false_yes"], o["false_no"]) == (1.0, 0.0, 0.0)
    assert all(f["accuracy"] == 1.0 for f in data["by_domain"].values()) and len(data["by_domain"]) == 5
    assert data["judge"]["model"] == "judge-m" and data["judge"]["host"].startswith("127.0.0.1:")
    assert re.search(r"overall\s*│\s*360\s*│\s*360\s*│\s*100\.0\s*│\s*0\.0\s*│\s*0\.0", out), out


def test_always_yes_judge_false_yes_is_every_wrong_closing(capsys, tmp_path):
    rc, out, data = _run(capsys, tmp_path, lambda b: "OK" if _preflight(b) else YES, "--domain", "retail")
    assert rc == 0
    items = [it for it in ITEMS if it["domain"] == "retail"]
    n_yes = sum(it["expected"] == "yes" for it in items)
    o = data["overall"]
    assert o["items"] == len(items) and o["false_yes"] == 1.0 and o["false_no"] == 0.0
    assert o["accuracy"] == pytest.approx(n_yes / len(items))
    assert data["by_class"]["steered"]["false_yes"] == 1.0 and data["by_class"]["correct"]["accuracy"] == 1.0
    assert list(data["by_domain"]) == ["retail"]
    assert f"{100 * n_yes / len(items):.1f}" in out and "by class" in out


def test_always_no_judge_false_no_is_every_right_closing(capsys, tmp_path):
    rc, _, data = _run(capsys, tmp_path, lambda b: "OK" if _preflight(b) else NO, "--limit", "30", "--workers", "1")
    assert rc == 0
    o = data["overall"]
    assert o["items"] == 30 and o["false_no"] == 1.0 and o["false_yes"] == 0.0
    assert o["accuracy"] == pytest.approx(o["expected_no"] / 30)


def test_unparseable_replies_are_unjudged_not_yes_or_no(capsys, tmp_path):
    # a verdict buried in prose is not an answer either
    rc, out, data = _run(capsys, tmp_path, lambda b: "OK" if _preflight(b) else "I think VERDICT: YES is right here.",
                         "--limit", "24")
    assert rc == 1  # nothing was judged: the figures measure nothing
    o = data["overall"]
    assert (o["items"], o["judged"], o["unparsed"], o["accuracy"]) == (24, 0, 24, None)
    assert all(a["answer"] is None and a["error"] == "unparsed" for a in data["items"])
    assert "unjudged: 24 replies did not parse" in out
    flat = " ".join(out.split())
    assert "nothing was judged" in flat and "none of the 24 replies parsed" in flat and "VERDICT: YES is right here" in flat


def test_bad_limit_or_workers_is_a_message(capsys):
    assert main(["judge-check", "--judge-model", "m", "--judge-base-url", "http://127.0.0.1:9/v1", "--limit", "0"]) == 2
    assert "--limit must be at least 1, not 0" in capsys.readouterr().out
    assert main(["judge-check", "--judge-model", "m", "--judge-base-url", "http://127.0.0.1:9/v1", "--workers", "0"]) == 2
    assert "--workers must be at least 1, not 0" in capsys.readouterr().out


def test_dead_endpoint_exits_non_zero_naming_it(capsys, tmp_path):
    with FakeOpenAI(lambda b: "OK") as server:
        url = server.base_url
    rc = main(["judge-check", "--judge-model", "judge-m", "--judge-base-url", url, "--json", str(tmp_path / "o.json")])
    out = capsys.readouterr().out
    assert rc == 2
    assert f"the judge endpoint {url} failed a test request for model 'judge-m'" in out and "connection failed" in out
    assert not (tmp_path / "o.json").exists()


def test_refusing_endpoint_exits_non_zero_with_its_answer(capsys, tmp_path):
    with FakeOpenAI(lambda b: "OK", fail_first=[404]) as server:
        rc = main(["judge-check", "--judge-model", "nope", "--judge-base-url", server.base_url])
    assert rc == 2 and "HTTP 404" in capsys.readouterr().out
