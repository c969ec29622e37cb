"""The verifiers adapter: its rollouts against a real OpenAI-compatible test server match ``thinkingbox eval``'s rows."""

from __future__ import annotations

import asyncio
import json

import pytest
from adapter_helpers import require_adapter

# the 0.1 line's module: verifiers 0.4 has no such API (tests/integrations/test_verifiers_line.py checks the refusal)
require_adapter("verifiers", "verifiers.envs.multiturn_env", 'pip install -e ".[verifiers]" (verifiers 0.1)')
vf = require_adapter("verifiers", "verifiers", 'pip install -e ".[verifiers]"')

from scripted_model import Calls, Say, ScriptedModel, golden_script, turn_of  # noqa: E402

import thinkingbox_env as tb  # noqa: E402
from thinkingbox_env.contracts.protocol import REPLY_TOOL  # noqa: E402
from thinkingbox_env.eval.config import EndpointConfig, EvalConfig  # noqa: E402
from thinkingbox_env.eval.trial import run_trial  # noqa: E402
from thinkingbox_env.integrations.trl import REWARD_GROUPS  # noqa: E402
from thinkingbox_env.integrations.verifiers import load_environment  # noqa: E402

TASK = "retail/ST030_001"


def _protocol_script(task_id: str):
    """Customer-tool protocol: ask through reply_to_customer, make the golden calls, close with plain text."""
    spec = tb.load_task(task_id)
    question = "Could you tell me your " + " and ".join(f.unlock[0] for f in spec.user.facts) + "?"
    turns: list = [Calls([(REPLY_TOOL, {"message": question})])]
    turns += [Calls([(c.name, dict(c.arguments))]) for c in spec.golden]
    turns.append(Say(spec.golden_reply))
    return lambda body: turns[min(turn_of(body), len(turns) - 1)]


def _wrong(name, arguments):
    return {**arguments, "tier": "basic"} if name == "update_membership" else arguments


def _vf_rollout(script, protocol: str, monkeypatch):
    monkeypatch.setenv("TB_TEST_KEY", "k")
    env = load_environment("retail", tasks=[TASK], protocol=protocol)
    with ScriptedModel(script) as server:
        client = vf.ClientConfig(api_base_url=server.base_url, api_key_var="TB_TEST_KEY", max_retries=0)
        out = asyncio.run(env.evaluate(client=client, model="scripted", num_examples=1, rollouts_per_example=1,
                                       max_concurrent=1, state_columns=["thinkingbox"], on_progress=lambda *a, **k: None))
    return out["outputs"][0], server


def _eval_row(script, protocol: str):
    with ScriptedModel(script) as server:
        endpoint = EndpointConfig(model="scripted", base_url=server.base_url, api_key="k", timeout=10.0, max_retries=1)
        return run_trial(EvalConfig(agent="openai", agent_endpoint=endpoint, backoff=0.01, protocol=protocol), TASK, trial=0).to_json()


@pytest.mark.parametrize(("protocol", "script", "verdict"), [
    ("chat", golden_script(TASK), 1.0),
    ("chat", golden_script(TASK, mutate=_wrong), 0.0),
    ("customer-tool", _protocol_script(TASK), 1.0),
])
def test_a_verifiers_rollout_gets_the_verdict_checks_and_state_of_thinkingbox_eval(protocol, script, verdict, monkeypatch):
    output, server = _vf_rollout(script, protocol, monkeypatch)
    row = _eval_row(script, protocol)
    result = output["thinkingbox"]
    assert output["error"] is None and output["stop_condition"] == "episode_over"
    assert output["reward"] == verdict == row["verdict"] == result["verdict"]
    assert result["checks"] == row["checks"] and result["reward_vector"] == row["reward_vector"]
    assert result["state_hash"] == row["state_hash"] and result["finish_reason"] == row["finish_reason"]
    # the model saw the domain's tools (and, in the customer-tool protocol, the reply tool)
    names = {t["function"]["name"] for t in server.requests[0]["tools"]}
    assert {c.name for c in tb.load_task(TASK).golden} <= names and (REPLY_TOOL in names) == (protocol == "customer-tool")


def test_the_rubric_names_the_trl_reward_functions_and_pays_the_verdict(monkeypatch):
    output, _ = _vf_rollout(golden_script(TASK, mutate=_wrong), "chat", monkeypatch)
    metrics = output["metrics"]
    assert {"reward_verdict", "reward_progress", *REWARD_GROUPS} <= set(metrics)
    assert metrics["reward_verdict"] == 0.0 and metrics["reward_effects"] == 0.0 and output["reward"] == 0.0


def test_the_train_split_draws_family_variants_and_refuses_bad_arguments():
    env = load_environment("retail", families=["ST030"], split="train", variants_per_family=2)
    rows = env.get_dataset()
    assert len(rows) == 2 and all("ST030_train_" in json.loads(r["info"])["drawn_task"] for r in rows)
    with pytest.raises(ValueError, match="split"):
        load_environment("retail", split="dev")
    with pytest.raises(ValueError, match="train split"):
        load_environment("retail", split="train", tasks=[TASK])


def test_vf_eval_as_documented_runs_the_environment_end_to_end_and_matches_thinkingbox_eval(tmp_path):
    """docs/integrations/verifiers.md's vf-eval command, env-server workers and all (they load the environment again)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    vf_eval = Path(sys.executable).parent / "vf-eval"
    script = golden_script(TASK, mutate=_wrong)
    with ScriptedModel(script) as server:
        done = subprocess.run(
            [str(vf_eval), "thinkingbox_env.integrations.verifiers", "-a", json.dumps({"domain": "retail", "tasks": [TASK]}),
             "-m", "scripted", "-b", server.base_url, "-k", "TB_TEST_KEY", "-n", "1", "-r", "1",
             "--state-columns", "thinkingbox", "--save-results"],
            capture_output=True, text=True, env={**os.environ, "TB_TEST_KEY": "k"}, timeout=180, cwd=tmp_path,
            stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "thinkingbox_retail" not in done.stderr  # the workers load this module, not a name of our own
    (results,) = tmp_path.rglob("results.jsonl")
    (output,) = [json.loads(line) for line in results.read_text().splitlines()]
    row = _eval_row(script, "chat")
    assert output["reward"] == row["verdict"] == 0.0
    assert output["thinkingbox"]["checks"] == row["checks"] and output["thinkingbox"]["state_hash"] == row["state_hash"]
