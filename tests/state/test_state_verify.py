"""Verify mode: every answer the Python fast path gives is also computed by DuckDB and compared."""

from __future__ import annotations

import pytest

import thinkingbox_env as tb
from thinkingbox_env.agents.baselines import OracleAgent, run_episode
from thinkingbox_env.state import FAST_PATH_HITS, VERIFY_ENV, FastPathMismatch, StateError, fastpath


@pytest.fixture
def verify(monkeypatch):
    monkeypatch.setenv(VERIFY_ENV, "1")


def test_every_frozen_task_and_a_variant_of_every_family_agree_with_duckdb(verify) -> None:
    before = FAST_PATH_HITS.copy()
    for task_id in tb.list_tasks():
        info = run_episode(tb.make(task_id), OracleAgent(), seed=0)
        assert info["finish_reason"] != "error", task_id
    from thinkingbox_env.tasks.domain import load_domain

    for domain in ("retail", "insurance", "travel", "neobank", "consulting"):
        for family in load_domain(domain).families.values():
            run_episode(tb.make_variant(domain, family.code, seed=4242), OracleAgent(), seed=0)
    checked = FAST_PATH_HITS - before
    # every shape was answered in Python and checked against DuckDB, many times, with no mismatch raised
    reads = sum(n for shape, n in checked.items() if shape.startswith("read by"))
    assert reads > 1000 and checked["insert of one row"] > 100 and checked["update of one row"] > 20


_UNPLAYED = iter(range(7_031_337, 7_031_400))  # variants no other test plays, so no read of them is memoised


def _fresh_seed() -> int:
    return next(_UNPLAYED)


def test_a_wrong_python_write_answer_is_caught_in_verify_mode(monkeypatch) -> None:
    def off_by_one(evaluate):
        def wrong(sql, params, view):
            hit = evaluate(sql, params, view)
            if hit is None or not hit.rows:
                return hit
            row = list(hit.rows[0])
            k = next(i for i, v in enumerate(row) if isinstance(v, str))
            row[k] = row[k] + "x"
            return hit._replace(rows=[tuple(row)])
        return wrong

    monkeypatch.setattr(fastpath, "WRITES", tuple(off_by_one(e) for e in fastpath.WRITES))
    monkeypatch.setenv(VERIFY_ENV, "1")
    with pytest.raises(FastPathMismatch, match=r"fast path \((insert|update) of one row\) disagrees with DuckDB"):
        run_episode(tb.make_variant("retail", "ST030", seed=_fresh_seed()), OracleAgent(), seed=0)
    assert issubclass(FastPathMismatch, StateError)


def test_a_wrong_python_read_answer_is_caught_in_verify_mode(monkeypatch) -> None:
    def one_too_many(evaluate):
        def wrong(sql, params, view):
            found = evaluate(sql, params, view)
            return None if found is None else found._replace(rows=found.rows + found.rows[:1])
        return wrong

    monkeypatch.setattr(fastpath, "READS", tuple(one_too_many(e) for e in fastpath.READS))
    monkeypatch.setenv(VERIFY_ENV, "1")
    with pytest.raises(FastPathMismatch, match=r"fast path \(read by [a-z ]+\) disagrees"):  # a fresh variant: no read of it is memoised yet
        run_episode(tb.make_variant("retail", "ST030", seed=_fresh_seed()), OracleAgent(), seed=0)
