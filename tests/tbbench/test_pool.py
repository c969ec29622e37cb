"""The pool of warm server processes: one process per episode, never reused, none left behind; with the real toy server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import thinkingbox_env as tb
from thinkingbox_env.tbbench import register_source
from thinkingbox_env.tbbench.client import pid_alive
from thinkingbox_env.tbbench.pool import POOL_VARIABLE, ServerPool, bench_pool, pool_size_from
from thinkingbox_env.tbbench.source import TBBenchSource

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "tbbench"
CANCEL = "tbbench/dataset/tests/toy_shop_tasks.py:test_cancel_pending"
LINUX = sys.platform.startswith("linux")


@pytest.fixture(autouse=True)
def _source():
    register_source()


def own_source_make(task_id: str, **kwargs):
    """A source of its own, so that each test has its own clone object and pool (the registry's one is shared)."""
    return TBBenchSource().make(task_id.split("/", 1)[1], data_dir=DATA, server_python=sys.executable, **kwargs)


def tool_result(env) -> dict:
    event = next(e for e in reversed(env.trace) if e.get("type") == "tool_call")
    return event["result"]


def wait_dead(pids: list[int], within: float = 10.0) -> list[int]:
    deadline = time.monotonic() + within
    alive = [p for p in pids if pid_alive(p)]
    while alive and time.monotonic() < deadline:
        time.sleep(0.05)
        alive = [p for p in alive if pid_alive(p)]
    return alive


def test_a_write_in_one_episode_is_not_seen_in_the_next_and_no_process_serves_two():
    env = own_source_make(CANCEL, pool_size=2)
    pool = bench_pool(env.bench)
    try:
        seen = []
        for episode in range(3):
            env.reset(seed=episode)
            server = env.state.servers["shop"]
            assert server.handed_out and all(server is not s for s in seen)
            if LINUX:
                assert server.pid is not None and server.pid not in [s.pid for s in seen]
            seen.append(server)
            env.step({"name": "get_order", "arguments": {"order_id": "O1"}})
            assert tool_result(env)["status"] == "pending"  # the previous episode's cancellation is not visible
            env.step({"name": "cancel_order", "arguments": {"order_id": "O1", "reason": "ordered by mistake"}})
            env.step({"name": "get_order", "arguments": {"order_id": "O1"}})
            assert tool_result(env)["status"] == "cancelled"
            assert env.state.effects()["shop"]["diff"]["O1"]["after"]["status"] == "cancelled"
        env.close()
        if LINUX:
            assert wait_dead([s.pid for s in seen]) == []  # every used process is stopped, not kept
        assert pool.handed_out == 3
        assert all(s not in pool._slots[env.bench.servers["shop"]].ready for s in seen)
    finally:
        env.close()
        pool.close()


def test_a_warm_process_is_handed_out_ready_and_replaced_in_the_background():
    env = own_source_make(CANCEL, pool_size=1)
    pool = bench_pool(env.bench)
    command = env.bench.servers["shop"]
    try:
        # the process that listed the tools becomes the warm one; the first reset takes it without starting one
        assert pool.started == 0 and len(pool._slots[command].ready) == 1
        env.reset(seed=0)
        deadline = time.monotonic() + 30
        while not pool._slots[command].ready and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(pool._slots[command].ready) == 1 and pool.started == 1  # its replacement, started off the caller
        t = time.perf_counter()
        env.reset(seed=1)
        assert time.perf_counter() - t < 2.0  # no spawn in the reset: the warm process only gets its init
    finally:
        env.close()
        pool.close()
    if LINUX:
        assert pool.live_pids() == []


def test_pool_size_zero_starts_each_episode_its_own_process_in_the_reset():
    env = own_source_make(CANCEL, pool_size=0)
    pool = bench_pool(env.bench)
    try:
        for seed in range(2):
            env.reset(seed=seed)
            assert not any(slot.ready or slot.starting for slot in pool._slots.values())
        assert pool.started == 2 and pool.handed_out == 2
    finally:
        env.close()
        pool.close()


def test_pool_size_comes_from_the_argument_or_the_variable_and_bad_values_are_named(monkeypatch):
    monkeypatch.delenv(POOL_VARIABLE, raising=False)
    assert pool_size_from(None) == 2 and pool_size_from(0) == 0 and pool_size_from("3") == 3
    monkeypatch.setenv(POOL_VARIABLE, "5")
    assert pool_size_from(None) == 5
    monkeypatch.setenv(POOL_VARIABLE, "many")
    with pytest.raises(ValueError, match=f"{POOL_VARIABLE}='many'"):
        pool_size_from(None)
    with pytest.raises(ValueError, match="pool_size=-1"):
        pool_size_from(-1)
    with pytest.raises(ValueError, match="pool_size=-1"):
        tb.make(CANCEL, data_dir=DATA, server_python=sys.executable, pool_size=-1)


def test_a_closed_pool_refuses_to_hand_out():
    env = own_source_make(CANCEL, pool_size=1)
    pool = bench_pool(env.bench)
    pool.close()
    with pytest.raises(Exception, match="pool is closed"):
        env.reset(seed=0)
    env.close()
    assert isinstance(pool, ServerPool) and pool.live_pids() == []


@pytest.mark.skipif(not LINUX, reason="reads child processes from /proc")
@pytest.mark.parametrize("ending", ["exception", "normal"])
def test_no_server_process_outlives_the_interpreter(ending, tmp_path):
    script = textwrap.dedent(f"""
        import json, sys
        from thinkingbox_env.tbbench.pool import bench_pool
        from thinkingbox_env.tbbench.source import TBBenchSource
        env = TBBenchSource().make("dataset/tests/toy_shop_tasks.py:test_cancel_pending", data_dir={str(DATA)!r},
                                   server_python=sys.executable, pool_size=2)
        env.reset(seed=0)
        pool = bench_pool(env.bench)
        import time
        deadline = time.monotonic() + 30
        while len(pool.live_pids()) < 3 and time.monotonic() < deadline:  # the episode's process and two warm ones
            time.sleep(0.05)
        print(json.dumps(pool.live_pids()), flush=True)
        if {ending!r} == "exception":
            raise RuntimeError("the episode failed")
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=tmp_path)
    assert (proc.returncode != 0) == (ending == "exception"), proc.stderr
    if ending == "exception":
        assert "the episode failed" in proc.stderr
    pids = json.loads(proc.stdout.strip().splitlines()[-1])
    assert len(pids) == 3
    assert wait_dead(pids, within=5.0) == []
