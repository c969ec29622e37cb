"""The model reader in runs: ``judge-check --reader-set`` and ``eval --reader-*``, each against a real scripted server.

A reader server here answers from the shipped labels (an exact reader), with nothing at all
(a reader that reads no claim), or with text that is no reading; the figures ``judge-check``
prints and writes must tell them apart. An eval run given ``--reader-*`` must hand its reader
to the env, whose checks ask it about the sentences the rules could not read, and count those
requests in the row.
"""

from __future__ import annotations

import json
import re
from collections import Counter

from scripted_model import Calls, Say, ScriptedModel

import thinkingbox_env as tb
from thinkingbox_env.cli import main
from thinkingbox_env.eval.run_files import read_rows
from thinkingbox_env.reading.model_reader import clear_cache
from thinkingbox_env.reading.reader_check import CLASSES, EXPECTED_VERDICT, FIELDS, label_payload, load_items
from thinkingbox_env.tasks.domain import load_domain
from thinkingbox_env.users import DONE_MARKER

ITEMS = load_items(domains=load_domain)
BY_SENTENCES = {tuple(it["sentences"]): it for it in ITEMS}


def _sentences(body: dict) -> tuple[str, ...]:
    prompt = body["messages"][-1]["content"]
    fenced = [json.loads(m.group(1)) for m in re.finditer(r'^S\d+: (".*")$', prompt, re.MULTILINE)]
    # the fence rewrites marker-like text to look-alikes; the labels hold it as written
    return tuple(s.replace("\u2039\u2039\u2039", "<<<").replace("\u203a\u203a\u203a", ">>>") for s in fenced)


def _oracle(body: dict) -> Say:
    return Say(json.dumps(label_payload(BY_SENTENCES[_sentences(body)], load_domain)))


def _reader_check(capsys, tmp_path, script, *extra: str) -> tuple[int, str, dict]:
    clear_cache()
    out = tmp_path / "reader.json"
    with ScriptedModel(script) as server:
        rc = main(["judge-check", "--reader-set", "--model", "reader-m", "--base-url", server.base_url, "--api-key", "k",
                   "--max-retries", "0", "--workers", "2", "--json", str(out), *extra])
    clear_cache()
    return rc, capsys.readouterr().out, json.loads(out.read_text()) if out.exists() else {}


def test_the_shipped_reader_set_spans_every_domain_and_class():
    assert 60 <= len(ITEMS) <= 100 and len(BY_SENTENCES) == len(ITEMS) and len({it["id"] for it in ITEMS}) == len(ITEMS)
    domains = Counter(it["domain"] for it in ITEMS)
    assert set(domains) == {"retail", "insurance", "travel", "neobank", "consulting"} and min(domains.values()) >= 12
    assert set(Counter(it["class"] for it in ITEMS)) == set(CLASSES)
    for domain in domains:  # every domain has closings that should pass and closings that should fail
        assert {EXPECTED_VERDICT[it["class"]] for it in ITEMS if it["domain"] == domain} == {"pass", "fail"}
    claims = [c for it in ITEMS for c in it["expected"]["claims"]]
    assert any(c["polarity"] == "negated" for c in claims) and any(c["modality"] == "future" for c in claims)
    assert {"call_back", "email", "other"} <= {c["action"] for c in claims}
    assert sum(1 for c in claims for v in c["values"] if v["role"] != "none") >= 15
    assert sum(1 for it in ITEMS if it["expected"]["concepts"]) >= 10


def test_an_exact_reader_scores_every_field_right_and_no_verdict_wrong(capsys, tmp_path):
    rc, out, data = _reader_check(capsys, tmp_path, _oracle)
    assert rc == 0, out
    o = data["overall"]
    assert o["items"] == len(ITEMS) and o["read"] == len(ITEMS) and o["unread"] == 0
    assert o["accuracy"] == dict.fromkeys(FIELDS, 1.0)
    assert o["false_pass"] == 0.0 and o["false_fail"] == 0.0
    assert set(data["by_class"]) == set(CLASSES) and data["reader"]["model"] == "reader-m"
    assert "false-pass" in out and "by class" in out


def test_a_reader_that_reads_nothing_passes_every_false_closing_but_the_leaks_it_misses(capsys, tmp_path):
    rc, out, data = _reader_check(capsys, tmp_path, lambda body: Say('{"claims": [], "concepts": []}'))
    assert rc == 0, out
    by = data["by_class"]
    for cls in ("opposite", "extra_action", "promise", "wrong_value", "confidential", "injection"):
        assert by[cls]["false_pass"] == 1.0, cls  # no claim read: nothing contradicts the writes
    for cls in ("correct", "negation", "proposal"):
        assert by[cls]["false_fail"] == 0.0, cls
    assert data["overall"]["accuracy"]["action"] == 0.0 and data["overall"]["accuracy"]["polarity"] is None
    assert 0.0 < data["overall"]["accuracy"]["concepts"] < 1.0


def test_a_reader_that_invents_a_refusal_fails_the_correct_closings(capsys, tmp_path):
    def deny_all(body: dict) -> Say:
        item = BY_SENTENCES[_sentences(body)]
        payload = label_payload(item, load_domain)
        for c in payload["claims"]:
            c["polarity"] = "negated"
        return Say(json.dumps(payload))

    rc, _, data = _reader_check(capsys, tmp_path, deny_all, "--domain", "retail")
    assert rc == 0
    assert data["by_class"]["correct"]["false_fail"] == 1.0 and data["overall"]["accuracy"]["polarity"] < 0.5
    assert {it["id"].split("-")[0] for it in data["items"]} == {"retail"}


def test_a_reader_that_never_reads_exits_1_and_counts_every_item_unread(capsys, tmp_path):
    rc, out, data = _reader_check(capsys, tmp_path, lambda body: Say("The closing looks fine to me."), "--limit", "9")
    assert rc == 1 and "nothing was read" in out
    assert data["overall"]["unread"] == 9 and data["overall"]["read"] == 0 and data["overall"]["false_pass"] is None


def test_a_malformed_reader_set_is_a_user_error(capsys, tmp_path):
    bad = tmp_path / "set.jsonl"
    # a correct closing whose refund no write made: its labels do not decide the verdict it is labelled with
    item = dict(ITEMS[0], effects={"writes": [], "values": {}})
    bad.write_text(json.dumps(item) + "\n")
    with ScriptedModel(_oracle) as server:
        rc = main(["judge-check", "--reader-set", str(bad), "--model", "m", "--base-url", server.base_url])
        assert server.requests == []  # refused before anything is asked
    out = " ".join(capsys.readouterr().out.split())
    assert rc == 2 and "reader set cannot be used" in out and "labelled claims fail against its writes" in out


# --------------------------------------------------------------------------- eval --reader-*

TASK = "retail/ST030_001"
# the golden effect, closed in words the rule reader does not know
CLOSING = "All set: you're on Brightwell Plus now, and the perks kick in straight away."


def _agent_script(body: dict):
    spec = tb.load_task(TASK)
    turn = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
    if turn < len(spec.golden):
        c = spec.golden[turn]
        return Calls([(c.name, dict(c.arguments))])
    return Say(f"{CLOSING} {DONE_MARKER}")


def _reading(body: dict) -> Say:
    claims = [{"sentence": i, "clause": s, "phrase": "", "action": "membership", "object": {"text": "Brightwell Plus", "id": ""},
               "polarity": "affirmed", "modality": "done", "waits_for_customer": False, "reported": True, "values": []}
              for i, s in enumerate(_sentences(body), 1)]
    return Say(json.dumps({"claims": claims, "concepts": []}))


def _eval(tmp_path, *extra: str) -> dict:
    clear_cache()
    tmp_path.mkdir()
    out = tmp_path / "run.jsonl"
    with ScriptedModel(_agent_script) as agent:
        assert main(["eval", TASK, "--agent", "openai", "--model", "agent-m", "--base-url", agent.base_url, "--api-key", "k",
                     "-o", str(out), *extra]) == 0
    clear_cache()
    (row,) = read_rows(out)
    return row


def test_eval_with_a_reader_hands_it_to_the_env_and_counts_its_calls(tmp_path):
    without = _eval(tmp_path / "a")
    assert "reader_calls" not in without["judge_usage"] and "reader" not in without["config"]
    assert without["unverified"], "the closing must be one the rules cannot read, or the reader is never asked"
    with ScriptedModel(_reading) as reader:
        row = _eval(tmp_path / "b", "--reader-model", "reader-m", "--reader-base-url", reader.base_url,
                    "--reader-api-key", "k")
        asked = [r for r in reader.requests if "response_format" in r]
    assert row["judge_usage"]["reader_calls"] == len(asked) >= 1 and row["judge_usage"]["reader_failed"] == 0
    assert row["reader"]["model"] == "reader-m" and row["config"]["reader"]["model"] == "reader-m"
    assert "api_key" not in row["config"]["reader"]
    assert any(CLOSING in s for r in asked for s in _sentences(r))
    assert not row["unverified"] and row["verdict"] == 1.0  # the reader read what the rules could not


def test_runs_read_by_another_reader_are_told_apart_when_resumed():
    from thinkingbox_env.eval.config import EndpointConfig, EvalConfig, config_changes

    def public(model: str | None) -> dict:
        ep = EndpointConfig(model=model, base_url="http://localhost:8000/v1", api_key="secret") if model else None
        return EvalConfig(reader_endpoint=ep).public()

    assert "reader" not in public(None)  # a run without a reader records what it recorded before readers existed
    assert config_changes(public("r1"), public("r2")) == ['--reader-model was "r1" in the file, "r2" now']
    (line,) = config_changes(public(None), public("r1"))
    assert line.startswith("--reader-model/--reader-base-url was null in the file") and "secret" not in line
