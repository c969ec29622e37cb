"""The OpenEnv adapter, driven by OpenEnv's own WebSocket client against a real uvicorn server."""

from __future__ import annotations

import asyncio
import socket
import threading
import time

import pytest

pytest.importorskip("openenv.core")
uvicorn = pytest.importorskip("uvicorn")

from adapter_helpers import TASK, plain_outcome, single_steps, wrong_steps  # noqa: E402

from thinkingbox_env.integrations.openenv import (  # noqa: E402
    ThinkingboxAction,
    ThinkingboxEnvClient,
    create_app,
    manifest,
    write_manifest,
)


def _action(step) -> ThinkingboxAction:
    if isinstance(step, str):
        return ThinkingboxAction(message=step)
    return ThinkingboxAction(tool=step["name"], arguments=step["arguments"])


class Server:
    """A uvicorn server on a free loopback port, in a thread."""

    def __init__(self, app):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="error"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self):
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            assert time.monotonic() < deadline, "server did not start"
            time.sleep(0.02)
        return self

    def __exit__(self, *exc):
        self.server.should_exit = True
        self.thread.join(10)


@pytest.fixture(scope="module")
def task_server():
    with Server(create_app(TASK)) as server:
        yield server


@pytest.fixture(scope="module")
def domain_server():
    with Server(create_app("retail")) as server:
        yield server


async def _play(url: str, steps, pause: float = 0.0, **reset):
    async with ThinkingboxEnvClient(base_url=url) as client:
        first = await client.reset(seed=0, **reset)
        result = first
        for step in steps:
            result = await client.step(_action(step))
            if pause:
                await asyncio.sleep(pause)
            if result.done:
                break
        state = await client.state()
        return first, result, state


def test_the_oracle_through_the_openenv_client_earns_1_with_the_plain_envs_checks(task_server):
    steps = single_steps()
    first, last, state = asyncio.run(_play(task_server.url, steps))
    assert first.observation.task_id == TASK and first.observation.messages[-1]["role"] == "user"
    assert {t["function"]["name"] for t in first.observation.tools} >= {"get_customer_profile", "update_membership"}
    obs = last.observation
    assert last.done and last.reward == 1.0 and obs.verdict == 1.0
    plain = plain_outcome(steps)
    assert obs.checks == plain["checks"] and obs.check_names == plain["check_names"]
    assert obs.reward_vector == plain["reward_vector"] and obs.state_hash == plain["state_hash"]
    assert obs.finish_reason == "done_marker" and state.done and state.step_count == len(steps) and state.task_id == TASK


def test_a_wrong_trajectory_earns_0_and_names_the_failed_checks(task_server):
    steps = wrong_steps()
    _, last, _ = asyncio.run(_play(task_server.url, steps))
    obs = last.observation
    assert last.done and last.reward == 0.0 and obs.verdict == 0.0
    assert 0.0 in obs.reward_vector and obs.checks == plain_outcome(steps)["checks"]
    assert obs.state_hash == plain_outcome(steps)["state_hash"] != plain_outcome(single_steps())["state_hash"]


def test_two_concurrent_clients_play_isolated_episodes(task_server):
    async def both():
        return await asyncio.gather(_play(task_server.url, single_steps(), pause=0.01),
                                    _play(task_server.url, wrong_steps(), pause=0.01))

    (_, good, good_state), (_, bad, bad_state) = asyncio.run(both())
    assert good.observation.verdict == 1.0 and bad.observation.verdict == 0.0
    assert good.observation.state_hash == plain_outcome(single_steps())["state_hash"]
    assert bad.observation.state_hash == plain_outcome(wrong_steps())["state_hash"]
    assert good_state.step_count == len(single_steps()) and bad_state.step_count == len(wrong_steps())


def test_a_domain_server_plays_the_task_a_client_names_and_refuses_a_foreign_one(domain_server):
    _, last, state = asyncio.run(_play(domain_server.url, single_steps(), task_id=TASK))
    assert state.task_id == TASK and last.observation.verdict == 1.0
    with pytest.raises(Exception, match="not a task of domain"):
        asyncio.run(_play(domain_server.url, [], task_id="telecom/XX000_001"))


def test_a_bad_action_is_refused_with_a_message_naming_what_is_wrong():
    with pytest.raises(ValueError, match="exactly one of them"):
        ThinkingboxAction(message="hi", tool="get_customer_profile")
    with pytest.raises(ValueError, match="exactly one of them"):
        ThinkingboxAction()


def test_the_running_server_passes_openenvs_runtime_validation(task_server):
    from openenv.cli._validation import validate_running_environment

    report = validate_running_environment(task_server.url)
    failed = [c for c in report["criteria"] if c.get("required", True) and not c["passed"]]
    assert report["passed"], failed


def test_the_manifest_is_what_openenv_init_writes(tmp_path):
    import yaml

    write_manifest(tmp_path, TASK)
    data = yaml.safe_load((tmp_path / "openenv.yaml").read_text())
    assert data == manifest(TASK) and data["spec_version"] == 1 and data["runtime"] == "fastapi"
    assert data["app"] == "server.app:app" and (tmp_path / "server" / "app.py").exists()
    compile((tmp_path / "server" / "app.py").read_text(), "app.py", "exec")


def test_thinkingbox_serve_protocol_openenv_serves_the_oracle(tmp_path):
    import os
    import subprocess
    import sys

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "thinkingbox_env.cli", "serve", TASK, "--protocol", "openenv", "--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ})
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                assert proc.poll() is None, proc.stderr.read().decode()
                assert time.monotonic() < deadline, "server did not start"
                time.sleep(0.1)
        _, last, _ = asyncio.run(_play(url, single_steps()))
        assert last.observation.verdict == 1.0
    finally:
        proc.terminate()
        proc.wait(10)
