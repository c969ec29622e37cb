"""Task set v2: sources of golden values, written dialogue, scheduled faults, misremembered facts,
held-out openings and branches, two-request tasks.

A copy of the library test domain at ``task_set_version: 2`` (with a policy that has
headings, a consent rule and a free-text argument) stands in for a real domain, so every
rule is seen refusing a broken spec and accepting a fair one.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest
import yaml

import thinkingbox_env as tb
from thinkingbox_env.authoring import Openings, TaskBody, ask, combine, propose
from thinkingbox_env.authoring.family import TaskFamily
from thinkingbox_env.contracts.spec import RubricCheck, SpecError, parse_task
from thinkingbox_env.tasks.domain import load_domain
from thinkingbox_env.tasks.runtime import runtime_for
from thinkingbox_env.users import ScriptedUser

LIBRARY = Path(__file__).resolve().parents[1] / "data" / "domains" / "library"
POLICY = """# Shelf lending policy

## Loan period

Books are lent for 14 days.

## Consent

Say which book you are about to lend and to whom, and lend it only once the patron agrees.
"""
VERDICTS = {
    "process": [{"name": "consent_before_lending", "kind": "consent_before", "description": "the patron agreed first",
                 "writes": {"lend_book": "lend {book_id} to {borrower}"}}],
}


@pytest.fixture
def shelf(tmp_path, monkeypatch):
    """The library domain as a version-2 domain called 'shelf'."""
    folder = tmp_path / "domains" / "shelf"
    shutil.copytree(LIBRARY, folder, ignore=shutil.ignore_patterns("__pycache__"))
    spec = yaml.safe_load((folder / "domain.yaml").read_text())
    spec.update(name="shelf", task_set_version=2)
    (folder / "domain.yaml").write_text(yaml.safe_dump(spec))
    (folder / "policy.md").write_text(POLICY)
    (folder / "verdicts.yaml").write_text(yaml.safe_dump(VERDICTS))
    tools = (folder / "tools.py").read_text()
    tools = tools.replace("from thinkingbox_env.toolkit.tools import ToolError, tool", "from thinkingbox_env.toolkit.tools import FreeText, ToolError, tool")
    tools = tools.replace("borrower: Annotated[str, Field(min_length=1, max_length=100)]) -> dict:",
                          "borrower: Annotated[str, Field(min_length=1, max_length=100)], note: FreeText | None = None) -> dict:")
    tools = tools.replace("        borrower: Borrower's name.\n", "        borrower: Borrower's name.\n        note: Anything the librarian notes.\n")
    (folder / "tools.py").write_text(tools)
    monkeypatch.setenv("THINKINGBOX_PATH", str(tmp_path))
    return folder


def book_id() -> str:
    seed = (LIBRARY / "seed" / "books.csv").read_text().splitlines()
    header = seed[0].split(",")
    for line in seed[1:]:
        row = dict(zip(header, line.split(",")))
        if row.get("available", "").lower() in ("true", "1"):
            return row["id"]
    raise AssertionError("the library seed has no available book")


def task(**overrides):
    book = book_id()
    data = {
        "id": "SH001_001", "domain": "shelf", "family": "SH001",
        "user": {"opening": "I'd like to borrow a book.",
                 "facts": [{"text": f"I want {book}.", "unlock": ["book"], "value": book},
                           {"text": "My name is Ada Brook.", "unlock": ["name"], "value": "Ada Brook"}]},
        "golden": [{"name": "find_book", "arguments": {"title": "a"}},
                   {"name": "lend_book", "arguments": {"book_id": book, "borrower": "Ada Brook", "note": "first loan"},
                    "why": {"book_id": "customer", "borrower": "customer"}}],
        "dialogue": [ask(0, "Which book would you like, and what is your name?"),
                     propose(1, f"I can lend {book} to Ada Brook for 14 days. Shall I go ahead?")],
        "golden_reply": "Enjoy the book; it is due in 14 days.",
        "idempotent_writes": {1: "a lent book is no longer available"},
        "origin": {"opening": "SH001/plain", "branches": ["SH001:lend"]},
    }
    data.update(overrides)
    return parse_task(data, "test")


def load_error(spec) -> str:
    with pytest.raises(SpecError) as exc:
        runtime_for(spec)
    return str(exc.value)


def test_a_fair_v2_task_loads_and_its_written_dialogue_passes(shelf):
    spec = task()
    env = tb.ThinkingboxEnv(spec)
    info = tb.run_episode(env, tb.OracleAgent())
    assert info["verdict"] == 1.0, info["checks"]
    said = [m["content"] for m in env.unwrapped.messages if m["role"] == "assistant" and m.get("content")]
    assert said[0] == "Which book would you like, and what is your name?"
    assert said[1].startswith("I can lend")
    from thinkingbox_env.eval.validate import validate_task

    result = validate_task(spec)
    assert result.ok, result.problems
    assert result.counts["process"] == "1/1"  # the proposal moved after the write is caught


def test_a_golden_write_without_a_source_for_a_decided_value_is_refused_at_load(shelf):
    spec = task()
    spec.golden[1].why.pop("borrower")
    message = load_error(spec)
    assert "golden.1.why.borrower" in message and "no source" in message


@pytest.mark.parametrize("source, complaint", [
    ("policy#opening-hours", "policy.md has no heading 'opening-hours'"),
    ("kb/fines.md", "no knowledge-base document kb/fines.md"),
    ("record:lend_book", "no earlier golden call of 'lend_book'"),
    ("record:renew_book", "'renew_book' is not a tool of the domain"),
])
def test_a_source_that_does_not_resolve_is_refused(shelf, source, complaint):
    spec = task()
    spec.golden[1].why["borrower"] = source
    assert complaint in load_error(spec)


def test_sources_that_resolve_are_accepted(shelf):
    for source in ("policy#loan-period", "kb/lending.md", "record:find_book", "customer"):
        spec = task()
        spec.golden[1].why["borrower"] = source
        runtime_for(spec)


def test_a_lookup_named_as_source_must_come_earlier():
    with pytest.raises(SpecError, match="not one of"):
        task(golden=[{"name": "lend_book", "arguments": {"book_id": "BK-1", "borrower": "x"}, "why": {"borrower": "the shelf"}}])


def test_a_free_text_argument_needs_no_source_and_a_decided_one_does(shelf):
    box = load_domain("shelf").toolbox
    assert box["lend_book"].free_text_arguments == {"note"}


def test_a_guarded_write_without_a_proposal_before_it_is_refused(shelf):
    spec = task(dialogue=[ask(0, "Which book would you like, and what is your name?")])
    assert "needs the customer's consent" in load_error(spec)
    late = task(dialogue=[ask(0, "Which book and name?"), propose(2, "I lent it; fine?")])
    assert "needs the customer's consent" in load_error(late)


def test_facts_without_an_ask_turn_and_a_missing_origin_are_refused(shelf):
    assert "no 'ask' turn" in load_error(task(dialogue=[propose(1, "Shall I lend it?")]))
    assert "field 'origin'" in load_error(task(origin=None))


def test_a_v1_domain_is_read_as_before():
    spec = tb.load_task("retail/ST010_001") if load_domain("retail").spec.task_set_version == 1 else None
    if spec is None:
        pytest.skip("retail is on a later task set")
    runtime_for(spec)  # no sources, no turns, no origin: still loads


def test_dialogue_turns_must_be_in_range_and_in_order():
    with pytest.raises(SpecError, match="before"):
        task(dialogue=[ask(5, "too late")])
    with pytest.raises(SpecError, match="golden order"):
        task(dialogue=[propose(1, "ok?"), ask(0, "which?")])


# ------------------------------------------------------------------ faults and expected errors


def fault_task(tool_name: str = "find_book"):
    golden = [{"name": "find_book", "arguments": {"title": "a"}, "expect_error": "timed out"},
              {"name": "find_book", "arguments": {"title": "a"}},
              task().golden[1].model_dump()]
    return task(golden=golden, faults=[{"tool": tool_name, "call": 1, "error": "the catalogue timed out; try again"}],
                dialogue=[ask(0, "Which book and what name?"), propose(2, f"I can lend {book_id()} to Ada Brook. Go ahead?")])


def test_a_scheduled_fault_fails_that_call_only_and_deterministically(shelf):
    spec = fault_task()
    for _ in range(2):
        env = tb.ThinkingboxEnv(spec)
        env.reset(seed=3)
        first = env.step({"name": "find_book", "arguments": {"title": "a"}})[0]["messages"][-1]
        second = env.step({"name": "find_book", "arguments": {"title": "a"}})[0]["messages"][-1]
        assert "timed out" in json.loads(first["content"])["error"]
        assert json.loads(second["content"])["books"]
        env.close()
    assert tb.run_episode(tb.ThinkingboxEnv(spec), tb.OracleAgent())["verdict"] == 1.0


def test_a_faulted_write_changes_nothing(shelf):
    book = book_id()
    golden = [{"name": "lend_book", "arguments": {"book_id": book, "borrower": "Ada Brook"}, "expect_error": "busy"},
              {"name": "lend_book", "arguments": {"book_id": book, "borrower": "Ada Brook"}, "why": {"book_id": "customer", "borrower": "customer"}}]
    spec = task(golden=golden, faults=[{"tool": "lend_book", "error": "the loan desk is busy; retry"}],
                dialogue=[ask(0, "Which book and name?"), propose(0, f"I can lend {book} to Ada Brook. Go ahead?")])
    env = tb.ThinkingboxEnv(spec)
    env.reset(seed=0)
    before = env.unwrapped.state.rows("loans")
    env.step({"name": "lend_book", "arguments": {"book_id": book, "borrower": "Ada Brook"}})
    assert env.unwrapped.state.rows("loans") == before
    env.close()


def test_a_fault_the_golden_does_not_expect_is_a_spec_error(shelf):
    spec = fault_task()
    spec.golden[0].expect_error = None
    assert "has no expect_error" in load_error(spec)
    never = fault_task()
    never.faults[0].call = 3
    assert "call 3 never happens" in load_error(never)


def test_a_golden_call_expected_to_fail_that_succeeds_breaks_the_golden(shelf):
    spec = task()
    spec.golden[0].expect_error = "not found"
    with pytest.raises(SpecError, match=r"field 'golden\.0': golden action 0 .*should fail"):  # at load, no longer at the episode's end
        _ = runtime_for(spec).golden


# ------------------------------------------------------------------ misremembered facts


def test_a_misremembered_value_is_given_first_and_corrected_once_not_found():
    spec = task().user.model_copy(deep=True)
    spec.facts[0].misremembered = "BK-999"
    user = ScriptedUser()
    user.reset(spec, seed=0)
    first = user.reply([{"role": "assistant", "content": "Which book would you like?"}])
    assert "BK-999" in first and spec.facts[0].value not in first
    fixed = user.reply([{"role": "assistant", "content": "I couldn't find book BK-999 in our catalogue. Could you check it?"}])
    assert spec.facts[0].value in fixed


def test_a_not_found_before_the_value_was_given_corrects_nothing():
    spec = task().user.model_copy(deep=True)
    spec.facts[0].misremembered = "BK-999"
    user = ScriptedUser()
    user.reset(spec, seed=0)
    user.reply([{"role": "assistant", "content": "I couldn't find your account."}])
    assert "BK-999" in user.reply([{"role": "assistant", "content": "Which book would you like?"}])


def test_a_misremembered_fact_needs_its_value_in_the_text():
    with pytest.raises(SpecError, match="misremembered"):
        task(user={"opening": "hi", "facts": [{"text": "I want BK-1.", "unlock": ["book"], "misremembered": "BK-2"}]})


# ------------------------------------------------------------------ openings, held-out branches, two requests

TEMPLATES = {f"t{i}": f"Opening {i} about {{order}}." for i in range(6)}


def test_openings_draw_held_out_templates_for_test_only():
    openings = Openings("XX001", TEMPLATES, held_out=("t4", "t5"))
    rng = random.Random(0)
    train = {openings.pick(rng, "train", order="O-1")[1] for _ in range(200)}
    test = {openings.pick(rng, "test", order="O-1")[1] for _ in range(50)}
    assert train == {"XX001/t0", "XX001/t1", "XX001/t2", "XX001/t3"}
    assert test == {"XX001/t4", "XX001/t5"}
    assert openings.pick(rng, "test", order="O-7")[0].endswith("about O-7.")


def test_openings_refuse_too_few_templates_unknown_held_out_and_missing_fields():
    with pytest.raises(ValueError, match="at least 6"):
        Openings("XX001", dict(list(TEMPLATES.items())[:5]))
    with pytest.raises(ValueError, match="not templates"):
        Openings("XX001", TEMPLATES, held_out=("t9",))
    with pytest.raises(ValueError, match="needs field 'order'"):
        Openings("XX001", TEMPLATES).pick(random.Random(0), "train")


class Combos(TaskFamily):
    code = "XX002"
    name = "combos"
    branches = ("a+b", "a+c", "b+c")
    held_out_branches = ("b+c",)

    def build(self, rng, seed):  # pragma: no cover - branches are read without building
        raise NotImplementedError


def test_held_out_branches_are_never_drawn_for_train():
    family = Combos()
    assert {family.branch_for(s, "train") for s in range(1, 301)} == {"a+b", "a+c"}
    assert {family.branch_for(s, "test") for s in range(1, 4)} == {"a+b", "a+c", "b+c"}
    assert family.split == "train"  # reading a split's branch leaves no split behind


def body(name: str, writes: int) -> TaskBody:
    customer = {"id": "C-1", "name": "Ada"}
    return TaskBody(
        description=name, opening=f"{name}?", golden_reply=f"{name} done.",
        facts=[{"text": "My name is Ada.", "unlock": ["name"]}, {"text": f"About {name}.", "unlock": [name]}],
        patch={"insert": {"customers": [customer], "things": [{"id": name}]}},
        golden=[{"name": f"do_{name}_{i}", "arguments": {}} for i in range(writes)],
        idempotent_writes={0: "same"}, dialogue=[ask(0, f"Which {name}?"), propose(writes - 1, "Go?")],
        tags=[name], origin={"opening": f"F/{name}", "branches": [f"F:{name}"]},
    )


def test_combine_keeps_shared_rows_once_and_shifts_the_second_request():
    both = combine(body("first", 2), body("second", 3))
    assert both.patch["insert"]["customers"] == [{"id": "C-1", "name": "Ada"}]
    assert both.patch["insert"]["things"] == [{"id": "first"}, {"id": "second"}]
    assert [c["name"] for c in both.golden] == ["do_first_0", "do_first_1", "do_second_0", "do_second_1", "do_second_2"]
    assert both.idempotent_writes == {0: "same", 2: "same"}
    assert [t["before"] for t in both.dialogue] == [0, 1, 2, 4]
    assert [f["text"] for f in both.facts] == ["My name is Ada.", "About first.", "About second."]
    assert both.origin == {"opening": "F/first", "branches": ["F:first", "F:second"]}
    assert "two_requests" in both.tags and both.golden_reply == "first done. second done."


def test_combine_refuses_two_faults_on_one_tool():
    a, b = body("first", 1), body("second", 1)
    a.faults = [{"tool": "t", "call": 1, "error": "x"}]
    b.faults = [{"tool": "t", "call": 1, "error": "x"}]
    with pytest.raises(ValueError, match="both requests schedule a fault"):
        combine(a, b)


# ------------------------------------------------------------------ show, rows


def test_show_prints_each_written_value_with_its_source_and_the_turns(shelf, capsys):
    spec = task()
    folder = shelf.parent.parent / "task_specs" / "shelf"
    folder.mkdir(parents=True)
    (folder / "SH001_001.yaml").write_text(tb.dump_task(spec) if hasattr(tb, "dump_task") else yaml.safe_dump(spec.model_dump(mode="json")))
    from thinkingbox_env.cli.main import main

    assert main(["show", "--task", "shelf/SH001_001"]) == 0
    out = capsys.readouterr().out
    assert "borrower <- customer" in out and "agent (propose): I can lend" in out
    assert "origin: opening SH001/plain" in out


def test_an_eval_row_names_the_task_set_version(tmp_path):
    from thinkingbox_env.eval.api import evaluate

    summary = evaluate(["retail/ST030_001"], out=tmp_path / "run.jsonl", keep_rows=True)
    rows = [r for line in (tmp_path / "run.jsonl").read_text().splitlines() if "task_id" in (r := json.loads(line))]
    assert rows and rows[0]["task_set_version"] == load_domain("retail").spec.task_set_version >= 1
    assert summary is not None


# ------------------------------------------------------------------ rubric tasks without a judge


def rubric_task():
    spec = task()
    spec.checks.rubric.append(RubricCheck(name="polite_due_date", question="Does the reply give the due date?"))
    return spec


def test_validate_sets_rubrics_aside_without_a_judge_and_reads_them_with_one(shelf):
    from thinkingbox_env.eval.validate import validate_task

    offline = validate_task(rubric_task())
    assert offline.ok, offline.problems
    assert offline.counts["rubric"] == "unjudged"
    asked = []

    def says_no(question, transcript):
        asked.append(question)
        return False, "no due date"

    judged = validate_task(rubric_task(), judge=says_no)
    assert judged.counts["rubric"] == "judged" and asked
    assert not judged.ok and any("oracle fails" in p for p in judged.problems)


def test_a_domain_env_without_a_judge_does_not_draw_rubric_tasks():
    from thinkingbox_env.envs.domain_env import DomainEnv

    judged = [t for t in tb.list_tasks() if tb.load_task(t).checks.rubric]
    if not judged:
        pytest.skip("no frozen task carries rubric questions")
    domain = judged[0].split("/")[0]
    env = DomainEnv(domain)
    assert env.task_ids and not set(env.task_ids) & set(judged)
    assert set(DomainEnv(domain, judge=lambda q, t: (True, "")).task_ids) & set(judged)
