"""The statement memo forgets a dropped task template's entries: a run that cycles more tasks than the runtimes kept
(or trains on a stream of variants) does not fill memory with answers no statement can ask for again."""

from __future__ import annotations

import gc

import thinkingbox_env as tb
from thinkingbox_env.agents.baselines import OracleAgent, run_episode
from thinkingbox_env.tasks import runtime as task_cache
from thinkingbox_env.tasks.domain import load_domain


def _cycle(tasks: list[str], seed: int) -> None:
    for i, task in enumerate(tasks):
        env = tb.make(task)
        try:
            run_episode(env, OracleAgent(), seed=seed + i)
        finally:
            env.close()
    gc.collect()  # a runtime nothing refers to is finalised, and its template dropped


def test_cycling_more_tasks_than_the_runtimes_kept_does_not_grow_the_memo(monkeypatch):
    monkeypatch.setattr(task_cache, "MAX_CACHED_RUNTIMES", 3)
    tasks = tb.list_tasks("insurance")[:12]
    memo = load_domain("insurance").db.read_cache
    _cycle(tasks, 0)
    first = len(memo._rows)
    for n in range(3):
        _cycle(tasks, 100 * (n + 1))
    assert len(memo._rows) <= first
    assert sum(len(keys) for keys in memo._by_schema.values()) >= len(memo._rows) > 0
