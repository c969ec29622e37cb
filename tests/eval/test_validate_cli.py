"""`thinkingbox validate` catches broken tasks; `thinkingbox run` prints the pass table."""

from __future__ import annotations

import pytest

import thinkingbox_env as tb
from thinkingbox_env.cli import main
from thinkingbox_env.eval.validate import validate_task


def _variant(mutate):
    data = tb.load_task("retail/ST030_001").model_dump(mode="json")
    data["id"] = "ST030_950"
    mutate(data)
    return tb.TaskSpec.model_validate(data)


def test_frozen_tasks_are_valid():
    for task_id in tb.list_tasks(domain="retail")[::3]:
        result = validate_task(tb.load_task(task_id))
        assert result.ok, (task_id, result.problems)


def test_validation_catches_a_task_that_needs_no_action():
    # the golden keeps only its reads, and its closing tells nothing (a closing with a subject is something to say)
    spec = _variant(lambda d: (d.update(golden=d["golden"][:4], golden_reply="Thanks for getting in touch, have a good day."),
                               d["checks"].update(dialogue=[]), d.update(idempotent_writes={})))
    problems = " ".join(validate_task(spec).problems)
    assert "doing nothing passes" in problems


def test_validation_catches_an_undeclared_idempotent_write():
    spec = _variant(lambda d: d.update(idempotent_writes={}))
    problems = " ".join(validate_task(spec).problems)
    assert "repeating golden write 5 (update_membership) still passes" in problems


def test_validation_catches_a_write_whose_drop_goes_unnoticed(monkeypatch):
    from thinkingbox_env.tasks.domain import load_domain
    from thinkingbox_env.toolkit.tools import tool

    @tool(writes=True)
    def touch(db) -> dict:
        """A write tool that changes nothing."""
        return {}

    monkeypatch.setitem(load_domain("retail").toolbox.tools, "touch", touch)

    def add_noop_write(d):
        d["golden"].insert(0, {"name": "touch", "arguments": {}})
        d["idempotent_writes"] = {str(int(k) + 1): v for k, v in d["idempotent_writes"].items()} | {"0": "no-op"}

    problems = " ".join(validate_task(_variant(add_noop_write)).problems)
    assert "dropping golden write 0 (touch) still passes" in problems


def test_validation_catches_unresolved_ids_and_broken_golden():
    spec = _variant(lambda d: d["user"]["facts"].append({"text": "My other account is CUS-404404.", "unlock": ["other"]}))
    assert "user fact mentions CUS-404404" in " ".join(validate_task(spec).problems)
    spec = _variant(lambda d: d["golden"].append({"name": "get_order", "arguments": {"order_id": "ORD-404"}}))
    assert "golden action" in " ".join(validate_task(spec).problems)


def test_cli_run_prints_a_pass_table(capsys):
    assert main(["run", "retail/ST030_*", "--agents", "oracle,noop"]) == 0
    out = capsys.readouterr().out
    assert "retail/ST030_001" in out
    assert "oracle: 5/5 passed (100.0%)" in out
    assert "noop: 0/5 passed (0.0%)" in out


def test_cli_validate_and_errors(capsys):
    n = len([t for t in tb.list_tasks("retail") if t.startswith("retail/ST004_00")])
    assert main(["validate", "retail/ST004_00*"]) == 0
    assert f"{n}/{n} tasks valid" in capsys.readouterr().out and n >= 2
    assert main(["run", "retail/ST03_001"]) == 2
    assert "closest matches" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["run", "--agents", "gpt"])


def test_cli_list(capsys):
    assert main(["list", "retail"]) == 0
    assert "ST001_001" in capsys.readouterr().out


def test_cli_validate_exits_non_zero_on_a_broken_task(tmp_path, monkeypatch, capsys):
    import shutil
    from pathlib import Path

    data = Path(__file__).resolve().parents[1] / "data"
    shutil.copytree(data / "domains", tmp_path / "domains")
    (tmp_path / "task_specs" / "library").mkdir(parents=True)
    spec = (data / "task_specs" / "library" / "LB001_001.yaml").read_text()
    # an id no other test writes: the registry caches specs by id (LB001_002 is the template's own task, 901 and 902 other tests')
    broken = spec.replace("id: LB001_001", "id: LB001_903").replace("idempotent_writes:\n  '1': a lent book is no longer available", "idempotent_writes: {}")
    assert broken != spec
    (tmp_path / "task_specs" / "library" / "LB001_903.yaml").write_text(broken)
    monkeypatch.setenv("THINKINGBOX_PATH", str(tmp_path))
    assert main(["validate", "library/LB001_903"]) == 1
    out = capsys.readouterr().out
    assert "repeating golden write 1 (lend_book) still passes" in out
    assert "0/1 tasks valid" in out
