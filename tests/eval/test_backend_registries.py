"""Agents, simulated users and judges are chosen by name from registries, and their declared capabilities are what counts."""

from __future__ import annotations

import json
from typing import Any

import pytest

from thinkingbox_env.agents.baselines import OracleAgent
from thinkingbox_env.agents.openai_chat import OpenAIChatAgent, SamplingConfig
from thinkingbox_env.agents.registry import AGENTS, AgentCapabilities, register_agent
from thinkingbox_env.cli import main
from thinkingbox_env.eval import EvalConfig, evaluate
from thinkingbox_env.eval import trial as trial_module
from thinkingbox_env.eval.config import EndpointConfig, check_config
from thinkingbox_env.eval.trial import build_agent, build_judge, build_user, run_trial
from thinkingbox_env.judging.judge import RubricJudge
from thinkingbox_env.judging.registry import JUDGES
from thinkingbox_env.plugins import Backend, BackendOptionError, NoOptions, Options, UnknownBackendError
from thinkingbox_env.users import LLMUser, ScriptedUser
from thinkingbox_env.users.phrases import DONE_MARKER
from thinkingbox_env.users.registry import USERS, UserCapabilities, register_user

TASK = "retail/ST030_001"
FAKE_URL = "http://127.0.0.1:9/v1"  # never called: building a backend sends no request


# --------------------------------------------------------------------------- a backend defined here


class TinyOptions(Options):
    solve: bool = True
    tokens: int = 3


class TinyAgent:
    """Plays the golden trajectory (``solve``) or asks one question and closes; keeps a fake model call per turn."""

    def __init__(self, options: TinyOptions):
        self.options = options
        self.oracle = OracleAgent()
        self.calls: list[dict[str, Any]] = []
        self.turns = 0

    def reset(self, task: Any, observation: dict[str, Any]) -> None:
        self.calls, self.turns = [], 0
        self.oracle.reset(task, observation)

    def act(self, observation: dict[str, Any]) -> Any:
        self.turns += 1
        self.calls.append({"turn": self.turns, "ok": True, "seconds": 0.0,
                           "usage": {"input": self.options.tokens, "cached": 0, "output": 1, "reasoning": 0}})
        if self.options.solve:
            return self.oracle.act(observation)
        return "Could you tell me your order number?" if self.turns == 1 else f"Thanks, nothing to change. {DONE_MARKER}"


def _tiny(options: TinyOptions, seed: int) -> TinyAgent:
    return TinyAgent(options)


class LeavingUser(ScriptedUser):
    """A scripted customer that says goodbye at its first reply (and claims, as a class, to be deterministic)."""

    def reply(self, dialogue: list[dict[str, str]]) -> str:
        self.ended = True
        return "Never mind, bye."


def _leaving(options: NoOptions) -> LeavingUser:
    return LeavingUser()


@pytest.fixture
def tiny_backends():
    added = [
        register_agent(Backend("tiny", TinyOptions, _tiny, "a test agent", AgentCapabilities(records_calls=True))),
        register_agent(Backend("tiny-unrecorded", TinyOptions, _tiny, "the same, declaring no model calls", AgentCapabilities())),
    ]
    users = [
        register_user(Backend("leaver", NoOptions, _leaving, "leaves at once", UserCapabilities(can_end=True, binds_domain=True))),
        register_user(Backend("stayer", NoOptions, _leaving, "the same, declared unable to leave",
                              UserCapabilities(deterministic=True, binds_domain=True))),
    ]
    yield
    for backend in added:
        AGENTS.unregister(backend.name)
    for backend in users:
        USERS.unregister(backend.name)


# --------------------------------------------------------------------------- the built-ins


def test_every_built_in_backend_is_registered_through_its_entry_point():
    assert {"oracle", "noop", "openai", "transformers"} <= set(AGENTS.names())
    assert {"scripted", "llm"} <= set(USERS.names())
    assert "rubric" in JUDGES.names()
    assert AGENTS.get("openai").capabilities == AgentCapabilities(needs_endpoint=True, records_calls=True, customer_tool=True)
    assert USERS.get("scripted").capabilities.deterministic and not USERS.get("llm").capabilities.deterministic
    assert JUDGES.get("rubric").capabilities.accepts_dialogue


def test_the_eval_help_lists_the_registered_agents(capsys):
    with pytest.raises(SystemExit):
        main(["eval", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for name in AGENTS.names():
        assert f"{name}: " in text
    assert "scripted: " in text and "rubric: " in text


@pytest.mark.parametrize("name", ["oracle", "noop"])
def test_baseline_agents_build(name):
    agent = build_agent(EvalConfig(agent=name), seed=0)
    assert callable(agent.act) and callable(agent.reset)


def test_the_openai_agent_builds_against_an_endpoint_it_does_not_call():
    config = EvalConfig(agent="openai", agent_endpoint=EndpointConfig(model="m", base_url=FAKE_URL, api_key="k"),
                        sampling=SamplingConfig(temperature=0.7), backoff=0.5)
    agent = build_agent(config, seed=4)
    assert isinstance(agent, OpenAIChatAgent)
    assert (agent.model, agent.seed, agent.backoff, agent.sampling.temperature) == ("m", 4, 0.5, 0.7)
    assert str(agent.client.base_url).startswith(FAKE_URL)


def test_the_transformers_agent_builds_from_its_checkpoint_path(monkeypatch, tmp_path):
    transformers_local = pytest.importorskip("thinkingbox_env.agents.transformers_local")
    pytest.importorskip("torch", reason="the transformers agent needs the train extra")
    from helpers import save_tiny_checkpoint

    save_tiny_checkpoint(tmp_path / "ckpt", variants=1)
    loaded: list[str] = []
    real_load = transformers_local.load_model

    def recording_load(path: str) -> tuple[Any, Any]:  # the registry must hand the agent exactly the configured path
        loaded.append(path)
        return real_load(path)

    monkeypatch.setattr(transformers_local, "load_model", recording_load)
    path = str(tmp_path / "ckpt")
    config = EvalConfig(agent="transformers", agent_endpoint=EndpointConfig(model=path), sampling=SamplingConfig(max_tokens=77))
    agent = build_agent(config, seed=3)
    assert loaded == [path] and agent.max_new_tokens == 77 and agent.seed == 3


def test_built_in_users_and_the_judge_build():
    assert isinstance(build_user(EvalConfig(user="scripted", persona="terse")), ScriptedUser)
    user = build_user(EvalConfig(user="llm", user_endpoint=EndpointConfig(model="u", base_url=FAKE_URL), user_temperature=0.9))
    assert isinstance(user, LLMUser) and (user.model, user.temperature) == ("u", 0.9)
    assert build_judge(EvalConfig()) is None  # the rubric judge asks a model: no endpoint, no judge
    judge = build_judge(EvalConfig(judge_endpoint=EndpointConfig(model="j", base_url=FAKE_URL)))
    assert judge is not None and isinstance(judge.judge, RubricJudge) and judge.accepts_dialogue
    assert judge.identity()["model"] == "j"


# --------------------------------------------------------------------------- a backend registered at run time


def test_an_agent_registered_at_run_time_runs_through_evaluate(tiny_backends, tmp_path):
    summary = evaluate([TASK], EvalConfig(agent="tiny", agent_options={"tokens": 5}), out=tmp_path / "run.jsonl", keep_rows=True)
    (row,) = [r.to_json() for r in summary.rows]
    assert row["status"] == "ok" and row["verdict"] == 1.0  # it delegated to the oracle
    assert row["config"]["agent"] == {"kind": "tiny", "solve": True, "tokens": 5}
    assert row["usage"]["model_calls"] >= 2 and row["usage"]["input"] == 5 * row["usage"]["model_calls"]


def test_the_command_line_finds_an_agent_registered_at_run_time(tiny_backends, tmp_path, capsys):
    out = tmp_path / "run.jsonl"
    assert main(["eval", TASK, "--agent", "tiny", "--agent-option", "solve=false", "-o", str(out), "-c", "1"]) == 0
    (row,) = [json.loads(line) for line in out.read_text().splitlines() if '"task_id"' in line]
    assert row["verdict"] == 0.0 and row["finish_reason"] == "done_marker"
    assert row["config"]["agent"] == {"kind": "tiny", "solve": False, "tokens": 3}


# --------------------------------------------------------------------------- refusals


def test_an_unknown_agent_is_refused_with_the_known_names(tmp_path, capsys):
    with pytest.raises(UnknownBackendError, match="unknown agent 'nope'; choose from .*oracle") as exc:
        evaluate([TASK], EvalConfig(agent="nope"), out=tmp_path / "run.jsonl")
    assert all(name in str(exc.value) for name in ("noop", "openai", "transformers"))
    assert not (tmp_path / "run.jsonl").exists()
    with pytest.raises(SystemExit) as code:
        main(["eval", TASK, "--agent", "nope", "-o", str(tmp_path / "run.jsonl")])
    assert code.value.code == 2
    assert "invalid choice: 'nope'" in capsys.readouterr().err
    with pytest.raises(UnknownBackendError, match="unknown user 'robot'; choose from llm, scripted"):
        run_trial(EvalConfig(agent="oracle", user="robot"), TASK, trial=0)


def test_a_wrong_typed_option_names_the_backend_and_the_field(tiny_backends, tmp_path, capsys):
    with pytest.raises(BackendOptionError, match=r"agent 'openai': option 'backoff' input should be a valid number") as exc:
        check_config(EvalConfig(agent="openai", backoff="fast"))  # type: ignore[arg-type]
    assert exc.value.fields == ["backoff"]
    with pytest.raises(BackendOptionError, match=r"agent 'openai': option 'sampling.temperature'"):
        check_config(EvalConfig(agent="openai", agent_options={"sampling": {"temperature": "hot"}}))
    with pytest.raises(BackendOptionError, match=r"agent 'tiny': option 'colour' is not one of its options \(solve, tokens\)"):
        check_config(EvalConfig(agent="tiny", agent_options={"colour": "red"}))
    with pytest.raises(BackendOptionError, match=r"user 'scripted': option 'persona' .*unknown persona 'grumpy'"):
        check_config(EvalConfig(persona="grumpy"))
    out = tmp_path / "run.jsonl"
    assert main(["eval", TASK, "--agent", "tiny", "--agent-option", "tokens=many", "-o", str(out)]) == 2
    said = " ".join(capsys.readouterr().out.split())
    assert "agent 'tiny': option 'tokens'" in said and "--agent-option tokens=..." in said and not out.exists()
    assert main(["eval", TASK, "--agent", "transformers", "-o", str(out)]) == 2
    said = " ".join(capsys.readouterr().out.split())
    import importlib.util

    if all(importlib.util.find_spec(m) for m in ("torch", "transformers")):
        assert "agent 'transformers': option 'model' is required (set with --model)" in said
    else:  # without the train extra the missing modules are what is refused first
        assert "the transformers agent needs" in said and ".[train]" in said


def test_a_chat_only_agent_is_refused_the_customer_tool_protocol(tiny_backends):
    with pytest.raises(ValueError, match="the tiny agent speaks the chat protocol only"):
        check_config(EvalConfig(agent="tiny", protocol="customer-tool"))


# --------------------------------------------------------------------------- capabilities come from the declaration


def test_model_calls_are_recorded_only_for_an_agent_that_declares_them(tiny_backends):
    recorded = run_trial(EvalConfig(agent="tiny"), TASK, trial=0).to_json()
    unrecorded = run_trial(EvalConfig(agent="tiny-unrecorded"), TASK, trial=0).to_json()
    assert recorded["verdict"] == unrecorded["verdict"] == 1.0
    assert recorded["usage"]["model_calls"] > 0 and recorded["model_calls"]
    assert unrecorded["usage"]["model_calls"] == 0 and unrecorded["model_calls"] == []


def test_a_user_that_declares_it_can_leave_ends_the_episode(tiny_backends):
    left = run_trial(EvalConfig(agent="tiny", agent_options={"solve": False}, user="leaver"), TASK, trial=0).to_json()
    stayed = run_trial(EvalConfig(agent="tiny", agent_options={"solve": False}, user="stayer"), TASK, trial=0).to_json()
    assert left["finish_reason"] == "user_left" and left["counts"]["agent_messages"] == 1
    # the same user object, declared unable to leave: its goodbye is just a reply, and the agent closes
    assert stayed["finish_reason"] == "done_marker" and stayed["counts"]["agent_messages"] == 2


def test_determinism_is_the_declared_one(tiny_backends, monkeypatch):
    envs: list[Any] = []
    real_make = trial_module.make

    def recording_make(*args: Any, **kwargs: Any) -> Any:
        env = real_make(*args, **kwargs)
        envs.append(env)
        return env

    monkeypatch.setattr(trial_module, "make", recording_make)
    run_trial(EvalConfig(agent="noop", user="leaver"), TASK, trial=0)  # a ScriptedUser subclass declared nondeterministic
    run_trial(EvalConfig(agent="noop", user="stayer"), TASK, trial=0)
    run_trial(EvalConfig(agent="noop", user="scripted"), TASK, trial=0)
    assert [env.spec.nondeterministic for env in envs] == [True, False, False]



def test_the_built_ins_are_found_in_a_source_tree_that_was_never_installed() -> None:
    """CI's lowest-versions job runs the checkout from PYTHONPATH, with no entry-point metadata: same names."""
    from pathlib import Path

    from thinkingbox_env.agents.registry import AGENTS, AgentCapabilities
    from thinkingbox_env.judging.registry import JUDGES
    from thinkingbox_env.plugins import Registry
    from thinkingbox_env.users.registry import USERS

    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    declared = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())["project"]["entry-points"]
    for registry in (AGENTS, USERS, JUDGES):
        assert registry._builtins == declared[registry.group], registry.group  # the fallback says what pyproject says
    bare = Registry("agent", "thinkingbox_env.no_such_group", AgentCapabilities, builtins=AGENTS._builtins)
    assert bare.names() == ["noop", "openai", "oracle", "transformers"]
    assert bare.get("oracle").name == "oracle"
