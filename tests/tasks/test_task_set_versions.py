"""Earlier task sets stay loadable (``retail/ST030_001@v2``, ``thinkingbox/retail.ST030_001-v2``), and the
published statistics of every loadable set are the ones measured from its files."""

from __future__ import annotations

import re
from pathlib import Path

import gymnasium as gym
import pytest

import thinkingbox_env as tb
from thinkingbox_env.cli.main import main
from thinkingbox_env.eval.api import select_tasks
from thinkingbox_env.eval.trial import task_set_version
from thinkingbox_env.tasks.domain import domain_dirs, load_domain
from thinkingbox_env.tasks.lookup import UnknownTaskError, archived_task_set_versions, split_task_version, task_files, task_set_versions
from thinkingbox_env.tasks.runtime import runtime_for
from thinkingbox_env.tasks.stats import markdown_table, task_set_statistics

ROOT = Path(__file__).resolve().parents[2]
DOMAINS = ("retail", "insurance", "travel", "neobank", "consulting")
TASK = "retail/ST030_001"


CURRENT = 4


def test_every_domain_is_at_task_set_4_with_versions_2_and_3_kept() -> None:
    for domain in DOMAINS:
        assert load_domain(domain).spec.task_set_version == CURRENT, domain
        assert task_set_versions(domain) == [2, 3, CURRENT], domain
        for old in (2, 3):
            kept = list((ROOT / "task_specs" / domain / f"v{old}").glob("*.yaml"))
            assert len(tb.list_tasks(domain, task_set_version=old)) == len(kept), (domain, old)


def test_the_current_set_lists_only_the_current_files() -> None:
    for domain in DOMAINS:
        ids = tb.list_tasks(domain)
        assert ids == tb.list_tasks(domain, task_set_version=CURRENT)
        assert all("@" not in t for t in ids)
        assert len(ids) == len(list((ROOT / "task_specs" / domain).glob("*.yaml")))
    assert not [t for t, p in task_files().items() if p.parent.name.startswith("v")]


def test_an_archived_task_loads_makes_and_names_its_version() -> None:
    old = tb.load_task(f"{TASK}@v2")
    assert old.full_id == TASK and task_set_version(old) == 2
    assert task_set_version(tb.load_task(TASK)) == CURRENT
    assert tb.load_task(f"{TASK}@v{CURRENT}") is tb.load_task(TASK)  # the current version by number is the current file
    three = tb.load_task(f"{TASK}@v3")
    assert three is not tb.load_task(TASK) and task_set_version(three) == 3
    env = tb.make(f"{TASK}@v2")
    try:
        env.reset(seed=0)
        assert env.spec is not None and env.spec.id == "thinkingbox/retail.ST030_001-v2"
        assert env.unwrapped.task.content_key() == old.content_key()
    finally:
        env.close()
    via_gym = gym.make("thinkingbox/retail.ST030_001-v2")
    try:
        assert via_gym.unwrapped.task.content_key() == old.content_key()
    finally:
        via_gym.close()


def test_unknown_versions_and_tasks_name_what_exists() -> None:
    with pytest.raises(UnknownTaskError, match=r"no task set version 7; versions: 2, 3, 4"):
        tb.load_task(f"{TASK}@v7")
    with pytest.raises(UnknownTaskError, match=r"task set version 2 of 'retail' has no task 'ST030_999'.*closest"):
        tb.load_task("retail/ST030_999@v2")
    with pytest.raises(ValueError, match="needs a domain"):
        tb.list_tasks(task_set_version=2)
    assert split_task_version("retail/ST030_001@v2") == ("retail/ST030_001", 2)
    assert split_task_version("retail/ST030_001") == ("retail/ST030_001", None)


def test_versioned_patterns_select_from_that_set() -> None:
    every_old = select_tasks(["retail@v2"])
    assert every_old == tb.list_tasks("retail", task_set_version=2) and all(t.endswith("@v2") for t in every_old)
    some = select_tasks(["retail/ST030_00*@v2"])
    assert some and all(re.fullmatch(r"retail/ST030_00\d@v2", t) for t in some)
    assert select_tasks([f"{TASK}@v2"]) == [f"{TASK}@v2"]


@pytest.mark.parametrize("domain", DOMAINS)
def test_every_archived_task_still_replays_its_golden(domain: str) -> None:
    """Loadable means runnable: the load-time checks (the golden replayed on the current tools) hold for the old files."""
    for version in archived_task_set_versions(domain):
        for task_id in tb.list_tasks(domain, task_set_version=version):
            runtime_for(tb.load_task(task_id))


def _published_table() -> str:
    text = (ROOT / "docs" / "task_sets.md").read_text(encoding="utf-8")
    match = re.search(r"<!-- statistics -->\n(.*?)\n<!-- /statistics -->", text, re.S)
    assert match, "docs/task_sets.md lacks the <!-- statistics --> table"
    return match.group(1).strip()


def test_the_published_statistics_are_measured_from_the_frozen_files() -> None:
    rows = [task_set_statistics(d, v) for d in sorted(domain_dirs()) for v in reversed(task_set_versions(d))]
    assert _published_table() == markdown_table(rows)


def test_task_set_3_has_the_injection_dimension_in_every_domain() -> None:
    for domain in DOMAINS:
        current = task_set_statistics(domain)
        assert current.injection >= 10, domain
        assert task_set_statistics(domain, 2).injection == 0, domain


def test_list_stats_prints_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "--stats", "retail"]) == 0
    out = capsys.readouterr().out
    assert "| retail | 3 |" in out and "| retail | 2 |" in out
    assert main(["list", "--stats", "nowhere"]) != 0
    assert "unknown: nowhere" in capsys.readouterr().out
