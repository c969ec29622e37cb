"""Verify mode: every answer the Python fast path gives is also computed by DuckDB and compared."""

from __future__ import annotations

import pytest

import thinkingbox_env as tb
from thinkingbox_env.agents.baselines import OracleAgent, run_episode
from thinkingbox_env.state import FAST_PATH_HITS, VERIFY_ENV, EpisodeState, FastPathMismatch, StateError


@pytest.fixture
def verify(monkeypatch):
    monkeypatch.setenv(VERIFY_ENV, "1")


def test_every_frozen_task_and_a_variant_of_every_family_agree_with_duckdb(verify) -> None:
    before = FAST_PATH_HITS.copy()
    for task_id in tb.list_tasks():
        info = run_episode(tb.make(task_id), OracleAgent(), seed=0)
        assert info["finish_reason"] != "error", task_id
    from thinkingbox_env.domain import load_domain

    for domain in ("retail", "insurance", "travel", "neobank", "consulting"):
        for family in load_domain(domain).families.values():
            run_episode(tb.make_variant(domain, family.code, seed=4242), OracleAgent(), seed=0)
    checked = FAST_PATH_HITS - before
    # every shape was answered in Python and checked against DuckDB, many times, with no mismatch raised
    assert checked["read by equality"] > 1000 and checked["insert of one row"] > 100 and checked["update of one row"] > 20


_UNPLAYED = iter(range(7_031_337, 7_031_400))  # variants no other test plays, so no read of them is memoised


def _fresh_seed() -> int:
    return next(_UNPLAYED)


def test_a_wrong_python_write_answer_is_caught_in_verify_mode(monkeypatch) -> None:
    real = EpisodeState._write_in_python

    def off_by_one(self, table, run, params):
        hit = real(self, table, run, params)
        if hit is None or not hit[1]:
            return hit
        names, rows = hit
        row = list(rows[0])
        k = next(i for i, v in enumerate(row) if isinstance(v, str))
        row[k] = row[k] + "x"
        return names, [tuple(row)]

    monkeypatch.setattr(EpisodeState, "_write_in_python", off_by_one)
    monkeypatch.setenv(VERIFY_ENV, "1")
    with pytest.raises(FastPathMismatch, match=r"fast path \((insert|update|delete) of one row\) disagrees with DuckDB"):
        run_episode(tb.make_variant("retail", "ST030", seed=_fresh_seed()), OracleAgent(), seed=0)
    assert issubclass(FastPathMismatch, StateError)


def test_a_wrong_python_read_answer_is_caught_in_verify_mode(monkeypatch) -> None:
    real = EpisodeState._by_equality

    def wrong(self, sql, params, template_only):
        found = real(self, sql, params, template_only)
        return None if found is None else found + found[:1]  # one row too many

    monkeypatch.setattr(EpisodeState, "_by_equality", wrong)
    monkeypatch.setenv(VERIFY_ENV, "1")
    with pytest.raises(FastPathMismatch, match=r"read by equality"):  # a fresh variant: no read of it is memoised yet
        run_episode(tb.make_variant("retail", "ST030", seed=_fresh_seed()), OracleAgent(), seed=0)
