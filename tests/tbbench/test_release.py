"""The published Thinkingbox-bench v1.0 release, unpacked from the shared archive, read and replayed for real.

Skipped when the archive is not beside the checkout (see ``conftest.py``). The full reference check over all 507
tasks is marked ``tbbench_full``: ``pytest tests/tbbench/test_release.py -m tbbench_full``.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
import yaml

from thinkingbox_env.cli import main
from thinkingbox_env.tbbench import TBBench, register_source

SCENARIOS = {"external_booking_v1": 104, "sandbox_auto_insurance": 100, "sandbox_consulting": 101,
             "sandbox_external_retail": 98, "sandbox_neobank_support_v1": 104}


@pytest.fixture(scope="module")
def bench(release):
    register_source()
    return TBBench(release.data_dir, release.server_python)


def test_every_release_task_resolves_and_merges_like_the_reference(bench, release):
    tasks = [bench.task(t) for t in bench.release_tasks()]
    assert len(tasks) == 507
    assert Counter(t.scenario for t in tasks) == SCENARIOS
    agent = yaml.safe_load((release.data_dir / "dataset/agent/think.yaml").read_text())
    for task in tasks:
        # the bare release name lies under dataset/test_case/<scenario>/
        assert bench.resolve_task_file(task.file) == (release.data_dir / "dataset/test_case" / task.scenario / task.file).resolve()
        assert task.system_prompt == agent["system_instructions"]
        assert [t["name"] for t in task.builtin_tools] == ["InjectionAttackInToolResponse"]
        assert task.servers == [task.scenario]
        assert task.sources() and all(s["source"].strip() and s["text"].strip() for s in task.sources())
    # the merge, checked against the raw files of one task: scenario tables first, the test's rows after
    task = next(t for t in tasks if t.id == "sandbox_external_retail_group1.py:test_case_ST002_001")
    scenario = yaml.safe_load((release.data_dir / "dataset/scenario/sandbox_external_retail.yaml").read_text())
    base = scenario["world_state"]["sandbox_external_retail"].get("data_patch") or {}
    merged = task.world_state["sandbox_external_retail"]["data_patch"]
    assert merged["zendesk_users"][-1]["name"] == "Alex Kim"
    for table, rows in base.items():
        assert merged[table][: len(rows)] == rows
    assert [c.name for c in task.golden] == ["zendesk_create_item", "zendesk_update_item"]
    assert sum(bool(t.rubrics()) for t in tasks) == 30


def test_reference_check_reproduces_one_task_of_each_scenario(release, tmp_path, capsys):
    firsts: dict[str, str] = {}
    for line in (release.data_dir / "releases/thinkingbox_bench_v1/testlist_thinkingbox_bench_v1.yaml").read_text().splitlines():
        entry = line.removeprefix("- ").strip()
        firsts.setdefault(entry.split("_group")[0], f"tbbench/{entry}")
    assert sorted(firsts) == sorted(SCENARIOS)
    out = tmp_path / "reference.jsonl"
    code = main(["eval", "--suite", "tbbench-v1", "--data-dir", str(release.data_dir), "--server-python", release.server_python,
                 "--reference-check", "-c", "2", "-o", str(out), *firsts.values()])
    printed = capsys.readouterr().out
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert code == 0, rows
    assert [r["task_id"] for r in rows] == list(firsts.values())
    assert all(r["reproduced"] and r["hashes"][r["scenario"]]["result"] == r["hashes"][r["scenario"]]["golden"] for r in rows)
    for scenario in SCENARIOS:
        assert f"{scenario}: 1 of 1 reproduce" in printed
    assert "5 of 5 golden replays reproduce the golden hash" in printed


def test_real_server_errors_search_and_injection_tool(release):
    import thinkingbox_env as tb

    register_source()
    env = tb.make("tbbench/sandbox_neobank_support_v1_group1.py:" + _first_test(release, "sandbox_neobank_support_v1_group1.py"),
                  data_dir=release.data_dir, server_python=release.server_python)
    try:
        obs, _ = env.reset(seed=0)
        tools = {t["function"]["name"]: t["function"] for t in obs["tools"]}
        # offered under its own name and with the server's schema, answered offline from the scenario's sources
        assert "max_results" in tools["knowledge_base_search_policy"]["parameters"]["properties"]
        assert "search_policy" not in tools and "InjectionAttackInToolResponse" in tools
        obs, *_ = env.step({"name": "knowledge_base_search_policy", "arguments": {"query": "MFA reset", "max_results": 2}})
        snippets = json.loads(obs["messages"][-1]["content"])["snippets"]
        assert 1 <= len(snippets) <= 2 and snippets[0]["source"] in {s["source"] for s in env.task.sources()}
        env.step({"name": "zendesk_get_item", "arguments": {"table": "tickets", "id": "99999"}})
        env.step({"name": "workday_api_get_employee", "arguments": {}})
        calls = [e for e in env.trace if e.get("type") == "tool_call"]
        assert [(c["ok"], c["error_kind"], c["writes"]) for c in calls] == [
            (True, None, False), (False, "precondition", False), (False, "arguments", False)]
        assert "Tool execution failed" in calls[1]["result"]["error"]
    finally:
        env.close()


def _first_test(release, file: str) -> str:
    for line in (release.data_dir / "releases/thinkingbox_bench_v1/testlist_thinkingbox_bench_v1.yaml").read_text().splitlines():
        if line.removeprefix("- ").startswith(file + ":"):
            return line.split(":", 1)[1].strip()
    raise AssertionError(file)


@pytest.mark.tbbench_full
def test_reference_check_reproduces_every_release_task(release, tmp_path, capsys):
    out = tmp_path / "reference.jsonl"
    code = main(["eval", "--suite", "tbbench-v1", "--data-dir", str(release.data_dir), "--server-python", release.server_python,
                 "--reference-check", "-c", "4", "-o", str(out)])
    rows = [json.loads(line) for line in Path(out).read_text().splitlines()]
    assert code == 0, [r for r in rows if not r["reproduced"]][:3]
    assert len(rows) == 507 and "507 of 507 golden replays reproduce the golden hash" in capsys.readouterr().out
