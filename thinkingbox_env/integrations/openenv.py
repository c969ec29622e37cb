"""OpenEnv integration: a task or a domain served as an OpenEnv environment (``pip install thinkingbox-env[openenv]``).

OpenEnv (``openenv-core``) runs environments as FastAPI servers with typed Action and
Observation models; its ``EnvClient`` holds a WebSocket per client, and the server gives
every WebSocket session its own environment instance. Here that instance is one
:class:`~thinkingbox_env.integrations.episode.Episode`, so each client plays an isolated
episode over the same engine the Gymnasium and TRL paths use.

An action is a message (to the customer in the ``chat`` protocol, where ``<DONE>`` closes;
the closing message in ``customer-tool``) or a tool call. The observation carries the new
messages, and on the last step the verdict, the per-check results, the reward vector
(ordered as ``check_names``) and the state hash; ``reward`` is the verdict.

``thinkingbox serve TARGET --protocol openenv`` runs the server; :func:`write_manifest`
writes the package the OpenEnv CLI reads (``openenv validate``, ``openenv push``): ``openenv.yaml``
with its ``validation:`` block, ``pyproject.toml``, ``server/app.py`` and ``server/Dockerfile``.

Both OpenEnv lines are supported: ``openenv`` 0.10 (the ``openenv`` extra) and its predecessor
``openenv-core`` 0.3 (the ``openenv-core`` extra); they install the same ``openenv.core`` modules.
"""

from __future__ import annotations

import functools
import inspect
import json
from pathlib import Path
from typing import Any

from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient
from openenv.core.env_server import http_server
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, EnvironmentMetadata, Observation, State
from pydantic import Field, model_validator
from pydantic_core import PydanticCustomError

from ..version import __version__
from .episode import Episode

__all__ = ["ThinkingboxAction", "ThinkingboxEnvClient", "ThinkingboxObservation", "ThinkingboxOpenEnv", "ThinkingboxState",
           "create_app", "manifest", "serve", "write_manifest"]


class ThinkingboxAction(Action):
    """One agent action: either ``message`` or ``tool`` (with ``arguments``), never both."""

    message: str | None = Field(default=None, description="text to the customer (chat protocol: end with <DONE> to close; "
                                                           "customer-tool protocol: the closing message)")
    tool: str | None = Field(default=None, description="name of the tool to call (a domain tool, or reply_to_customer "
                                                       "in the customer-tool protocol)")
    arguments: dict[str, Any] | str | None = Field(default=None, description="the tool's arguments (an object, or JSON text)")

    @model_validator(mode="after")
    def _one_kind(self) -> ThinkingboxAction:
        # PydanticCustomError, not ValueError: OpenEnv's server sends a refused action back as the validation error's
        # errors(), and a ValueError there is an exception object in the error's context that JSON cannot carry (the
        # WebSocket closed with "Unable to serialize unknown type" instead of refusing the action)
        if (self.message is None) == (self.tool is None):
            raise PydanticCustomError("thinkingbox_action", "an action is either a 'message' or a 'tool' call "
                                                            "(with 'arguments'), exactly one of them")
        if self.message is not None and self.arguments is not None:
            raise PydanticCustomError("thinkingbox_action", "'arguments' belong to a 'tool' call, not to a 'message'")
        return self

    def env_action(self) -> Any:
        """The action in the env's own form (a string, or a tool call dict)."""
        if self.message is not None:
            return self.message
        return {"name": self.tool, "arguments": self.arguments if self.arguments is not None else {}}


class ThinkingboxObservation(Observation):
    """The messages a step produced; on the last step also the verdict and the per-check outcome."""

    task_id: str = Field(default="", description="the task of this episode")
    messages: list[dict[str, Any]] = Field(default_factory=list, description="new messages, OpenAI chat format")
    tools: list[dict[str, Any]] = Field(default_factory=list, description="tool schemas (OpenAI format), at reset only")
    truncated: bool = Field(default=False, description="the episode ended on a limit rather than by the agent")
    verdict: float | None = Field(default=None, description="1.0 when every check passes (last step only)")
    checks: dict[str, bool | None] | None = Field(default=None, description="each check's outcome (None: not evaluated)")
    check_names: list[str] = Field(default_factory=list, description="check names, in reward_vector order")
    reward_vector: list[float] = Field(default_factory=list, description="per-check rewards (1.0 passed, 0.0 not)")
    state_hash: str | None = Field(default=None, description="hash of the final backend state")
    finish_reason: str | None = Field(default=None, description="why the episode ended")


class ThinkingboxState(State):
    """The session's episode: which task, which protocol, whether it is over."""

    task_id: str | None = None
    protocol: str = "chat"
    done: bool = False


class ThinkingboxOpenEnv(Environment[ThinkingboxAction, ThinkingboxObservation, ThinkingboxState]):
    """The OpenEnv environment of a task or a domain; one instance per client session.

    ``reset`` takes ``seed`` and ``episode_id`` as OpenEnv defines them, plus ``task_id`` (a
    test task of the served domain) or ``family`` (a train variant of it).
    """

    SUPPORTS_CONCURRENT_SESSIONS = True  # every session owns its Episode; the shared DuckDB isolates episodes

    def __init__(self, target: str, protocol: str = "chat", split: str = "test", families: list[str] | None = None,
                 max_actions: int = 50):
        super().__init__()
        self.episode = Episode(target, protocol=protocol, split=split, families=families, max_actions=max_actions)
        self._state = ThinkingboxState(protocol=protocol)

    def reset(self, seed: int | None = None, episode_id: str | None = None, task_id: str | None = None,
              family: str | None = None, **kwargs: Any) -> ThinkingboxObservation:
        if kwargs:
            raise ValueError(f"unknown reset arguments {sorted(kwargs)}; supported: seed, episode_id, task_id, family")
        first = self.episode.reset(seed=seed, task_id=task_id, family=family)
        self._state = ThinkingboxState(episode_id=episode_id, step_count=0, task_id=first["task_id"],
                                       protocol=self.episode.protocol, done=False)
        return ThinkingboxObservation(task_id=first["task_id"], messages=first["messages"], tools=first["tools"],
                                      done=False, reward=None)

    def step(self, action: ThinkingboxAction, timeout_s: float | None = None, **kwargs: Any) -> ThinkingboxObservation:
        if not self.episode.started:
            raise RuntimeError("reset() before step()")
        out = self.episode.step(action.env_action())
        self._state.step_count += 1
        self._state.done = out.done
        obs = ThinkingboxObservation(task_id=self.episode.env.task.full_id, messages=out.messages, done=out.done,
                                     truncated=out.truncated, reward=out.reward)
        result = out.result
        if result is not None:
            obs.verdict, obs.checks, obs.check_names = result["verdict"], result["checks"], result["check_names"]
            obs.reward_vector, obs.state_hash, obs.finish_reason = result["reward_vector"], result["state_hash"], result["finish_reason"]
        return obs

    @property
    def state(self) -> ThinkingboxState:
        return self._state

    def get_metadata(self) -> EnvironmentMetadata:
        target = self.episode.target
        kind = "task" if "/" in target else f"domain ({self.episode.split} split)"
        return EnvironmentMetadata(name=f"thinkingbox-{target.replace('/', '-')}", version=__version__,
                                   description=f"Thinkingbox {kind} {target}, {self.episode.protocol} protocol: a support "
                                               "agent works through the domain's tools and a simulated customer; "
                                               "executable checks over the final backend state give the verdict.")

    def close(self) -> None:
        self.episode.close()


class ThinkingboxEnvClient(EnvClient[ThinkingboxAction, ThinkingboxObservation, ThinkingboxState]):
    """OpenEnv's WebSocket client, typed for a Thinkingbox server (``async with``, or ``.sync()``)."""

    def _step_payload(self, action: ThinkingboxAction) -> dict[str, Any]:
        return action.model_dump(exclude={"metadata"}, exclude_none=True)

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[ThinkingboxObservation]:
        obs = ThinkingboxObservation(**payload.get("observation", {}), done=payload.get("done", False),
                                     reward=payload.get("reward"))
        return StepResult(observation=obs, reward=payload.get("reward"), done=payload.get("done", False))

    def _parse_state(self, payload: dict[str, Any]) -> ThinkingboxState:
        return ThinkingboxState(**payload)


def create_app(target: str, protocol: str = "chat", split: str = "test", families: list[str] | None = None,
               max_actions: int = 50, max_sessions: int = 64) -> Any:
    """The FastAPI app serving ``target``: OpenEnv's routes (``/ws``, ``/reset``, ``/step``, ``/state``, ``/schema``, ...).

    With ``ENABLE_WEB_INTERFACE=true`` (what ``openenv push`` sets) it also serves OpenEnv's web page at ``/web``.
    """
    if max_sessions < 1:
        raise ValueError(f"max_sessions must be at least 1, got {max_sessions}")
    Episode(target, protocol=protocol, split=split, families=families, max_actions=max_actions)  # bad arguments fail now
    factory = functools.partial(ThinkingboxOpenEnv, target=target, protocol=protocol, split=split, families=families,
                                max_actions=max_actions)
    # OpenEnv's create_app: its routes, plus its web page at /web when ENABLE_WEB_INTERFACE is set (`openenv push`
    # sets it in the Space's image and points the Space at /web); the state model is published where the line takes it
    extra = {"state_cls": ThinkingboxState} if "state_cls" in inspect.signature(http_server.create_app).parameters else {}
    return http_server.create_app(factory, ThinkingboxAction, ThinkingboxObservation, env_name=_name(target),
                                  max_concurrent_envs=max_sessions, **extra)


# The port OpenEnv's templates, its Docker images and `thinkingbox serve --protocol openenv` use.
DEFAULT_PORT = 8000
# What the written package's image installs besides this package: the OpenEnv line of the `openenv` extra.
OPENENV_REQUIREMENT = "openenv>=0.10,<0.11"


def serve(target: str, host: str = "127.0.0.1", port: int = DEFAULT_PORT, **kwargs: Any) -> None:
    """Run the server until interrupted (what ``thinkingbox serve --protocol openenv`` does)."""
    import uvicorn

    uvicorn.run(create_app(target, **kwargs), host=host, port=port, log_level="warning")


def _name(target: str) -> str:
    return f"thinkingbox-{target.replace('/', '-').replace('_', '-').lower()}"


def manifest(target: str, port: int = DEFAULT_PORT) -> dict[str, Any]:
    """The ``openenv.yaml`` of a served target: the keys ``openenv init`` writes and ``openenv push`` reads.

    The ``validation:`` block is what OpenEnv 0.10's ``openenv validate`` grades (without it the
    manifest fails): the reward is the verdict, in [0, 1]; the oracle earns exactly 1 (tolerance 0)
    and an agent that does nothing earns 0 (floor margin 1); the verdict comes back in the step's
    reward (``reward_channel``); no judge is configured on the server (rubric questions are left
    unevaluated, as in ``thinkingbox eval --no-judge``). The resources are one core and 1 GiB,
    above what a served domain uses (about 250 MiB resident).
    """
    if not 0 < port < 65536:
        raise ValueError(f"port must be between 1 and 65535, got {port}")
    return {"spec_version": 1, "name": _name(target), "version": __version__, "type": "space", "runtime": "fastapi",
            "app": "server.app:app", "port": port,
            "validation": {
                "reward": {"range": [0.0, 1.0], "oracle_tolerance": 0.0, "floor_margin": 1.0},
                "resources": {"cpu": 1.0, "memory_mb": 1024, "disk_mb": 2048, "episode_timeout_s": 1800.0},
                "capabilities": {"verifier": {"kind": "reward_channel"}, "llm_judged": False},
                "types": {"tags": ["tool-use", "customer-support", "stateful"]},
            }}


def _pyproject(target: str) -> str:
    # openenv-core 0.3's `openenv validate` wants a project with a `server` script calling server.app:main and an
    # OpenEnv requirement; the image installs this package in the version that wrote the files
    return (f'[project]\nname = "{_name(target)}"\nversion = "{__version__}"\n'
            f'description = "Thinkingbox {target} served as an OpenEnv environment"\nrequires-python = ">=3.10"\n'
            f'dependencies = ["thinkingbox-env[openenv]=={__version__}", "{OPENENV_REQUIREMENT}"]\n\n'
            '[project.scripts]\nserver = "server.app:main"\n\n'
            '[build-system]\nrequires = ["hatchling>=1.25"]\nbuild-backend = "hatchling.build"\n\n'
            '[tool.hatch.build.targets.wheel]\npackages = ["server"]\n')


def _dockerfile(port: int) -> str:
    # `openenv push` moves server/Dockerfile to the root of the Space and may replace the FROM line (--base-image)
    return ("# The Thinkingbox OpenEnv server (written by thinkingbox_env.integrations.openenv).\n"
            "FROM python:3.11-slim\n"
            "WORKDIR /app/env\n"
            "COPY . /app/env\n"
            "# thinkingbox-env from the index, or from a wheel put in wheels/ (python -m build in its checkout) before it is published\n"
            "RUN mkdir -p wheels && pip install --no-cache-dir --find-links wheels -r server/requirements.txt\n"
            "ENV PYTHONPATH=/app/env\n"
            f"EXPOSE {port}\n"
            "HEALTHCHECK --interval=30s --timeout=3s --start-period=20s --retries=3 \\\n"
            f"    CMD python -c \"import urllib.request; urllib.request.urlopen('http://localhost:{port}/health')\"\n"
            f'CMD ["python", "-m", "uvicorn", "server.app:app", "--host", "0.0.0.0", "--port", "{port}"]\n')


def write_manifest(directory: str | Path, target: str, protocol: str = "chat", split: str = "test",
                   port: int = DEFAULT_PORT) -> Path:
    """Write the OpenEnv package of ``target`` into ``directory``: what ``openenv validate`` and ``openenv push`` read.

    ``openenv.yaml`` (:func:`manifest`), ``pyproject.toml``, ``server/app.py`` (which builds
    :func:`create_app` for ``target``), ``server/requirements.txt`` and ``server/Dockerfile``;
    and the files ``openenv push`` requires of an environment directory: ``README.md`` (the
    Hugging Face Space card: Docker SDK, the port), ``client.py``, ``models.py`` and ``__init__.py``
    (the typed client and models, re-exported). The target and its arguments are checked first, so a bad one
    writes nothing.
    """
    import yaml

    Episode(target, protocol=protocol, split=split)  # an unknown task, domain, protocol or split fails before any file
    data = manifest(target, port)
    out = Path(directory)
    (out / "server").mkdir(parents=True, exist_ok=True)
    (out / "openenv.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    (out / "pyproject.toml").write_text(_pyproject(target))
    (out / "README.md").write_text(
        f"---\ntitle: Thinkingbox {target}\nsdk: docker\npinned: false\napp_port: {int(port)}\ntags:\n  - openenv\n"
        f"  - thinkingbox\n---\n\n# Thinkingbox {target} ({protocol} protocol, {split} split)\n\n"
        "An OpenEnv environment served by thinkingbox-env: a support agent works through the domain's tools and a "
        "simulated customer; executable checks over the final backend state give the verdict, which is the last "
        "step's reward.\n\n```python\nfrom client import ThinkingboxAction, ThinkingboxEnvClient\n```\n")
    client = ('"""The typed client and models of this environment (written by thinkingbox_env.integrations.openenv)."""\n\n'
              "from thinkingbox_env.integrations.openenv import (\n    ThinkingboxAction,\n    ThinkingboxEnvClient,\n"
              "    ThinkingboxObservation,\n    ThinkingboxState,\n)\n\n"
              '__all__ = ["ThinkingboxAction", "ThinkingboxEnvClient", "ThinkingboxObservation", "ThinkingboxState"]\n')
    (out / "client.py").write_text(client)
    (out / "models.py").write_text(client.replace("The typed client and models", "The action, observation and state models"))
    (out / "__init__.py").write_text(client.replace("The typed client and models of this environment",
                                                    "This environment's package: its typed client and models"))
    (out / "server" / "__init__.py").write_text("")
    (out / "server" / "requirements.txt").write_text(f"thinkingbox-env[openenv]=={__version__}\n{OPENENV_REQUIREMENT}\n")
    (out / "server" / "Dockerfile").write_text(_dockerfile(port))
    (out / "server" / "app.py").write_text(
        '"""The Thinkingbox OpenEnv server of this environment (written by thinkingbox_env.integrations.openenv)."""\n\n'
        "from thinkingbox_env.integrations.openenv import create_app\n\n"
        f"app = create_app({json.dumps(target)}, protocol={json.dumps(protocol)}, split={json.dumps(split)})\n\n\n"
        "def main() -> None:\n"
        '    """Serve the environment on all interfaces (the `server` script, and `python -m server.app`)."""\n'
        "    import uvicorn\n\n"
        f"    uvicorn.run(app, host=\"0.0.0.0\", port={int(port)})\n\n\n"
        "if __name__ == \"__main__\":\n"
        "    main()\n")
    return out
