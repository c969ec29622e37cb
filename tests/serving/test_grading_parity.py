"""One grading function: the in-process env and the MCP server give identical verdicts, and both backends
conform to the declared episode-backend protocol."""

from __future__ import annotations

import pytest

import thinkingbox_env as tb
from thinkingbox_env.checks import dialogue_positions
from thinkingbox_env.contracts.records import Verdict
from thinkingbox_env.envs.env import EpisodeBackend, InProcessTools
from thinkingbox_env.serving.backend import MCPToolBackend

TASK = "retail/ST030_001"


def test_both_backends_are_episode_backends():
    assert isinstance(InProcessTools(), EpisodeBackend)
    backend = MCPToolBackend.stdio(TASK)  # nothing is spawned until start()
    try:
        assert isinstance(backend, EpisodeBackend)
    finally:
        backend.close()
    assert not isinstance(object(), EpisodeBackend)


def test_the_in_process_backend_owns_the_episode_state():
    env = tb.make(TASK)
    with pytest.raises(RuntimeError, match="reset"):
        env.step("hello")
    env.reset(seed=0)
    first = env.state
    assert first is env.tool_backend.state and first is not None
    env.reset(seed=0)
    assert env.state is not first and env.state is not None
    env.close()
    assert env.state is None and env.episode_over


def _wrong_write(spec):
    return [{"name": "update_membership", "arguments": {"customer_id": "CUS-3000001", "action": "upgrade"}}]


TRAJECTORIES = {
    "oracle": lambda spec: [{"name": c.name, "arguments": dict(c.arguments)} for c in spec.golden],
    "nothing": lambda spec: [],
    "partial": _wrong_write,
}


@pytest.mark.parametrize("closing_is_golden", [True, False])
def test_same_actions_give_the_same_verdict_in_process_and_through_mcp(closing_is_golden):
    spec = tb.load_task(TASK)
    backend = MCPToolBackend.stdio(TASK)
    remote, local = tb.make(TASK, tool_backend=backend), tb.make(TASK)
    closing = spec.golden_reply if closing_is_golden else "Sorted."
    try:
        for name, actions in TRAJECTORIES.items():
            verdicts: list[Verdict] = []
            for env in (remote, local):
                env.reset(seed=0)
                for action in actions(spec):
                    env.step(action)
                info = env.step(f"{closing} <DONE>")[4]
                verdicts.append(env.verdict(info["finish_reason"]))
                assert info["verdict"] == verdicts[-1].reward
            # the server grades from its own state and its own record of the calls
            served = Verdict.from_json(backend.operator.verdict(backend.session, remote.final_message(),
                                                                     remote.transcript(), "done_marker",
                                                                     dialogue_positions(remote.trace)))
            assert verdicts[0] == verdicts[1] == served, name
            assert {"process", "withholds", "grounded_values"} <= {r.kind for r in served.results}, name
            assert (served.reward == 1.0) == (name == "oracle" and closing_is_golden), name
    finally:
        remote.close()
        local.close()


def test_the_operator_verdict_names_a_bad_finish_reason():
    from thinkingbox_env.serving.backend import MCPBackendError

    backend = MCPToolBackend.stdio(TASK)
    env = tb.make(TASK, tool_backend=backend)
    try:
        env.reset(seed=0)
        with pytest.raises(MCPBackendError, match="400.*finish_reason.*'sleepy'"):
            backend.operator.verdict(backend.session, "", "", "sleepy")
    finally:
        env.close()


@pytest.mark.parametrize("consent", ["before", "after"])
def test_the_server_grades_dialogue_and_process_kinds_from_the_dialogue_it_is_sent(consent):
    """A cancel-and-refund task played by the oracle through MCP: the served verdict reads the consent turn."""
    task = "retail/ST001_001"
    backend = MCPToolBackend.stdio(task)
    env = tb.make(task, tool_backend=backend)
    try:
        info = tb.run_episode(env, tb.OracleAgent(consent=consent), seed=0)
        served = Verdict.from_json(backend.operator.verdict(backend.session, env.final_message(), env.transcript(),
                                                            info["finish_reason"], dialogue_positions(env.trace)))
        assert served.checks == info["checks"] and served.reward == info["verdict"]
        assert served.checks["process:consent_before_irreversible"] is (consent == "before")
        assert served.checks["mentions:mentions_refund"] is True and served.checks["grounded_values"] is True
        # without the dialogue the server knows only the closing, said after the last call: no consent is visible
        blind = Verdict.from_json(backend.operator.verdict(backend.session, env.final_message(), env.transcript(),
                                                           info["finish_reason"]))
        assert blind.checks["process:consent_before_irreversible"] is False
    finally:
        env.close()


def test_the_operator_verdict_names_a_malformed_dialogue():
    from thinkingbox_env.serving.backend import MCPBackendError

    backend = MCPToolBackend.stdio(TASK)
    env = tb.make(TASK, tool_backend=backend)
    try:
        env.reset(seed=0)
        with pytest.raises(MCPBackendError, match="400.*calls_before"):
            backend.operator.verdict(backend.session, "", "", "done_marker",
                                     [{"role": "user", "content": "hi", "calls_before": -1}])
        with pytest.raises(MCPBackendError, match="400.*role 'user' or 'assistant'"):
            backend.operator.verdict(backend.session, "", "", "done_marker", [{"role": "tool", "content": "x"}])
    finally:
        env.close()
