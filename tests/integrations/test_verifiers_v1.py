"""The verifiers 0.4 adapter: rollouts through verifiers' own machinery against a real OpenAI-compatible test server.

Each rollout goes the whole way verifiers 0.4 takes it: the taskset loaded by its id, the env's
agent seat, the interception server every model call passes through (it forwards to
``tests/scripted_model.py``'s HTTP server), the in-process harness stepping the episode, the
task's finalize and scoring. The outcome must be ``thinkingbox eval``'s for the same replies.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from adapter_helpers import TASK, plain_outcome, require_adapter, single_steps, wrong_steps

# the 0.4 line's API (verifiers 0.1.14 ships an unrelated early verifiers.v1 without it); CI's verifiers04 environment requires it
require_adapter("verifiers04", "verifiers.v1.envs.single_agent", 'pip install -e ".[verifiers04]" (verifiers 0.4)')
vf = require_adapter("verifiers04", "verifiers.v1", 'pip install -e ".[verifiers04]" (verifiers 0.4)')

from scripted_model import Calls, Reply, Say, ScriptedModel, Status, golden_script, turn_of  # noqa: E402

import thinkingbox_env as tb  # noqa: E402
from thinkingbox_env.contracts.protocol import REPLY_TOOL  # noqa: E402
from thinkingbox_env.eval.config import EndpointConfig, EvalConfig  # noqa: E402
from thinkingbox_env.eval.trial import run_trial  # noqa: E402
from thinkingbox_env.integrations.trl import REWARD_GROUPS  # noqa: E402
from thinkingbox_env.integrations.verifiers_v1 import TASKSET_ID, ThinkingboxVerifiersEnv, load_environment  # noqa: E402

KEY_VAR = "TB_TEST_KEY"


def _wrong(name: str, arguments: dict) -> dict:
    return {**arguments, "tier": "basic"} if name == "update_membership" else arguments


def _protocol_script(task_id: str):
    """Customer-tool protocol: ask through reply_to_customer, make the golden calls, close with plain text."""
    spec = tb.load_task(task_id)
    question = "Could you tell me your " + " and ".join(f.unlock[0] for f in spec.user.facts) + "?"
    turns: list[Reply] = [Calls([(REPLY_TOOL, {"message": question})])]
    turns += [Calls([(c.name, dict(c.arguments))]) for c in spec.golden]
    turns.append(Say(spec.golden_reply))
    return lambda body: turns[min(turn_of(body), len(turns) - 1)]


def _steps_script(steps: list[Any]):
    """One step per model turn: a message to the customer (the customer's reply comes back as the next user turn) or a tool call."""
    def script(body: dict) -> Reply:
        step = steps[min(turn_of(body), len(steps) - 1)]
        return Say(step) if isinstance(step, str) else Calls([(step["name"], step["arguments"])])

    return script


def _rollout(script, monkeypatch, protocol: str = "chat", **env_config: Any) -> tuple[Any, ScriptedModel]:
    """One episode of TASK through the env, its agent and verifiers' interception, against the scripted server."""
    monkeypatch.setenv(KEY_VAR, "k")
    env = load_environment("retail", tasks=[TASK], protocol=protocol, **env_config)
    (task,) = list(env.taskset)

    async def play(url: str) -> Any:
        ctx = vf.ModelContext(client=vf.EvalClientConfig(base_url=url, api_key_var=KEY_VAR), model="scripted",
                              sampling=vf.SamplingConfig())
        async with env.serving():
            return await env.run_episode(task, ctx)

    with ScriptedModel(script) as server:
        episode = asyncio.run(play(server.base_url))
    return episode, server


def _eval_row(script, protocol: str = "chat") -> dict:
    with ScriptedModel(script) as server:
        endpoint = EndpointConfig(model="scripted", base_url=server.base_url, api_key="k", timeout=10.0, max_retries=1)
        return run_trial(EvalConfig(agent="openai", agent_endpoint=endpoint, backoff=0.01, protocol=protocol), TASK, trial=0).to_json()


@pytest.mark.parametrize(("protocol", "script", "verdict"), [
    ("chat", golden_script(TASK), 1.0),
    ("chat", golden_script(TASK, mutate=_wrong), 0.0),
    ("customer-tool", _protocol_script(TASK), 1.0),
])
def test_a_rollout_gets_the_verdict_checks_and_state_of_thinkingbox_eval(protocol, script, verdict, monkeypatch):
    episode, server = _rollout(script, monkeypatch, protocol)
    row = _eval_row(script, protocol)
    (trace,) = episode.traces
    result = trace.info["thinkingbox"]
    assert episode.ok and trace.ok and not trace.errors and trace.stop_condition == "agent_completed"
    assert trace.reward == verdict == row["verdict"] == result["verdict"]
    assert result["checks"] == row["checks"] and result["reward_vector"] == row["reward_vector"]
    assert result["state_hash"] == row["state_hash"] and result["finish_reason"] == row["finish_reason"]
    # every model call went through verifiers' interception and is on the trace
    assert trace.num_turns == len(server.requests) and trace.task.data.id == TASK
    # the model saw the domain's tools (and, in the customer-tool protocol, the reply tool)
    names = {t["function"]["name"] for t in server.requests[0]["tools"]}
    assert {c.name for c in tb.load_task(TASK).golden} <= names and (REPLY_TOOL in names) == (protocol == "customer-tool")


def test_the_reward_is_the_verdict_and_the_check_groups_are_metrics(monkeypatch):
    golden, _ = _rollout(golden_script(TASK), monkeypatch)
    wrong, _ = _rollout(golden_script(TASK, mutate=_wrong), monkeypatch)
    (good,), (bad,) = golden.traces, wrong.traces
    assert set(good.rewards) == {"reward_verdict"} and good.rewards["reward_verdict"].weight == 1.0
    assert set(good.metrics) == {*REWARD_GROUPS, "reward_progress"}
    assert good.reward == 1.0 and good.metrics["reward_effects"] == good.metrics["reward_no_collateral"] == 1.0
    assert good.metrics["reward_progress"] == 1.0 and good.metrics["reward_rubric"] == 0.0  # the task asks no rubric question
    assert bad.reward == 0.0 and bad.metrics["reward_effects"] == 0.0 and bad.metrics["reward_progress"] < 1.0


@pytest.mark.parametrize("trajectory", ["oracle", "wrong"])
def test_the_oracles_steps_reproduce_the_plain_envs_outcome(trajectory, monkeypatch):
    """The adapter conformance check, through a model: the customer's replies are the environment's turns between them."""
    steps = single_steps() if trajectory == "oracle" else wrong_steps()
    episode, server = _rollout(_steps_script(steps), monkeypatch)
    plain = plain_outcome(steps)
    result = episode.traces[0].info["thinkingbox"]
    assert result["verdict"] == plain["verdict"] == (1.0 if trajectory == "oracle" else 0.0)
    assert result["checks"] == plain["checks"] and result["state_hash"] == plain["state_hash"]
    assert result["reward_vector"] == plain["reward_vector"]
    said = [i for i, s in enumerate(steps) if isinstance(s, str)]
    if len(said) > 1:  # a message before the closing one: the customer's answer is a user turn of the next request
        follow = server.requests[said[0] + 1]["messages"]
        assert follow[-2]["role"] == "assistant" and follow[-1]["role"] == "user" and follow[-1]["content"]


def test_a_failed_model_call_fails_the_rollout_and_releases_the_episode(monkeypatch):
    episode, _ = _rollout(lambda body: Status(400, "bad request", "invalid_request_error"), monkeypatch)
    (trace,) = episode.traces
    assert not episode.ok and not trace.ok and trace.errors and trace.reward == 0.0
    assert trace.state._episode is None  # the harness's cleanup closed it (finalize never ran)


def test_the_agents_turn_limit_stops_the_rollout_and_the_open_episode_is_graded_as_it_stands(monkeypatch):
    episode, server = _rollout(golden_script(TASK), monkeypatch, agent={"max_turns": 2})
    (trace,) = episode.traces
    assert episode.ok and trace.stop_condition == "max_turns" and len(server.requests) == 2
    assert trace.reward == 0.0 and trace.info["thinkingbox"]["verdict"] == 0.0  # two lookups made, nothing done
    assert trace.metrics["reward_effects"] == 0.0 and trace.metrics["reward_no_collateral"] == 1.0


def test_the_taskset_selects_like_the_0_1_adapter_and_refuses_bad_arguments():
    test = load_environment("retail", families=["ST030"])
    tasks = list(test.taskset)
    assert tasks and all(t.data.task_id.startswith("retail/ST030_") and t.data.prompt for t in tasks)
    assert len({t.key for t in tasks}) == len(tasks)
    train = load_environment("retail", families=["ST030"], split="train", variants_per_family=2)
    drawn = list(train.taskset)
    assert len(drawn) == 2 and all(t.data.task_id is None and "ST030_train_" in t.data.drawn_task for t in drawn)
    with pytest.raises(ValueError, match="split"):
        load_environment("retail", split="dev")
    with pytest.raises(ValueError, match="train split"):
        load_environment("retail", split="train", tasks=[TASK])


def test_the_package_entry_dispatches_to_the_installed_line_and_verifiers_loads_the_taskset_by_its_id():
    import thinkingbox_env.integrations.verifiers as entry
    import thinkingbox_verifiers
    from thinkingbox_env.integrations import verifiers_v1

    assert entry.load_environment is verifiers_v1.load_environment
    assert vf.environment_class(TASKSET_ID) is ThinkingboxVerifiersEnv
    assert vf.default_harness_id(TASKSET_ID) == TASKSET_ID and thinkingbox_verifiers.ThinkingboxTaskset
    assert isinstance(entry.load_environment("retail", tasks=[TASK]), ThinkingboxVerifiersEnv)


def test_vf_eval_as_documented_runs_the_taskset_end_to_end_and_matches_thinkingbox_eval(tmp_path):
    """docs/integrations/verifiers.md's vf-eval command line, in a process of its own, against the scripted server."""
    vf_eval = Path(sys.executable).parent / "vf-eval"
    script = golden_script(TASK, mutate=_wrong)
    with ScriptedModel(script) as server:
        done = subprocess.run(
            [str(vf_eval), "thinkingbox-verifiers", "--env.taskset.domain", "retail", "--env.taskset.tasks", json.dumps([TASK]),
             "-m", "scripted", "--client.base-url", server.base_url, "--client.api-key-var", KEY_VAR, "--no-push", "--no-rich",
             "-o", str(tmp_path / "outputs")],
            capture_output=True, text=True, env={**os.environ, KEY_VAR: "k"}, timeout=300, cwd=tmp_path,
            stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-3000:]
    (results,) = tmp_path.rglob("traces.jsonl")
    (episode,) = [json.loads(line) for line in results.read_text().splitlines()]
    (trace,) = episode["traces"]
    row = _eval_row(script)
    assert episode["ok"] and trace["rewards"]["reward_verdict"]["score"] == row["verdict"] == 0.0
    assert trace["metrics"]["reward_effects"] == 0.0
    assert trace["info"]["thinkingbox"]["checks"] == row["checks"]
    assert trace["info"]["thinkingbox"]["state_hash"] == row["state_hash"]
