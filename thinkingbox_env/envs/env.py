"""``ThinkingboxEnv``: one task as a Gymnasium environment.

The agent acts by writing to the user or by calling tools; the simulated user
and the tools are the environment. The reward is 0 until the episode ends and
then the conjunctive verdict of the task's checks, so the same object serves
evaluation, failure analysis and RL training.
"""

from __future__ import annotations

import json
import logging
import marshal
from typing import Any, Protocol, runtime_checkable

import gymnasium as gym

from ..checks import Judge, StateOutcome, grade, state_outcome
from ..contracts.actions import ParsedCall, parse_action
from ..contracts.arguments import arguments_text
from ..contracts.events import Trace, invalid_action_event, message_event, tool_call_event
from ..contracts.protocol import AGENT_SYSTEM_PROMPT, DONE_MARKER, END_TOOL_NAME, policy_section
from ..contracts.records import FinishReason, Verdict
from ..contracts.spec import TaskSpec
from ..state import EpisodeState
from ..tasks.runtime import TaskRuntime, runtime_for
from ..toolkit.tools import ToolResult
from ..users import ScriptedUser, SimulatedUser
from .spaces import AgentAction, ChatObservation

log = logging.getLogger(__name__)

__all__ = ["AGENT_SYSTEM_PROMPT", "EpisodeBackend", "InProcessTools", "ThinkingboxEnv", "ToolBackend"]


@runtime_checkable
class EpisodeBackend(Protocol):
    """Where an episode's state lives and its tool calls run: in-process by default, or an MCP server.

    The backend owns the episode state: ``start`` begins a fresh episode of
    ``env.task`` (dropping the previous one), ``call`` runs one tool call on it,
    ``outcome`` reports what grading needs from the state, and ``close`` releases it.
    """

    def start(self, env: ThinkingboxEnv) -> None: ...

    def call(self, name: Any, arguments: Any) -> ToolResult: ...

    def outcome(self) -> StateOutcome: ...

    def close(self) -> None: ...


ToolBackend = EpisodeBackend  # the earlier name


class InProcessTools:
    """The default backend: an isolated DuckDB schema per episode, in this process."""

    def __init__(self) -> None:
        self.env: ThinkingboxEnv | None = None
        self.state: EpisodeState | None = None

    def start(self, env: ThinkingboxEnv) -> None:
        if self.state is not None:
            self.state.close()
            self.state = None
        self.env = env
        self.state = env.runtime.new_state()

    def _live(self) -> tuple[ThinkingboxEnv, EpisodeState]:
        if self.env is None or self.state is None:
            raise RuntimeError("the in-process backend has no episode: start() it first")
        return self.env, self.state

    def call(self, name: Any, arguments: Any) -> ToolResult:
        env, state = self._live()
        return env.toolbox.call(state, name, arguments)

    def outcome(self) -> StateOutcome:
        env, state = self._live()
        return state_outcome(env.task, state)

    def close(self) -> None:
        if self.state is not None:
            self.state.close()
        self.state = None
        self.env = None


def _copy_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Copies for the caller, so that editing an observation cannot edit the env's history."""
    out = []
    for m in messages:
        c = dict(m)
        if "tool_calls" in c and c["tool_calls"] is not None:
            c["tool_calls"] = [{**tc, "function": dict(tc["function"])} for tc in c["tool_calls"]]
        out.append(c)
    return out


def _strip_marker(text: str) -> str:
    return text.replace(DONE_MARKER, "").strip()


class ThinkingboxEnv(gym.Env):
    """One task as a Gymnasium environment; the agent sends messages and tool calls, and the reward is the final verdict."""
    metadata = {"render_modes": ["ansi"], "render_fps": 4}

    def __init__(
        self,
        task: TaskSpec,
        user: SimulatedUser | None = None,
        judge: Judge | None = None,
        max_actions: int = 50,
        max_user_turns: int = 10,
        render_mode: str | None = None,
        tool_backend: ToolBackend | None = None,
        persona: str | None = None,
        reader: Any = None,
        strict_dialogue: bool = False,
    ):
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}, got {render_mode!r}")
        if max_actions < 1 or max_user_turns < 0:
            raise ValueError("max_actions must be >= 1 and max_user_turns >= 0")
        self.task = task
        self.runtime: TaskRuntime = runtime_for(task)
        self.toolbox = self.runtime.domain.toolbox
        # shared by every env of the domain (read only); a fresh copy per reset is one marshal.loads
        self.tool_schemas, self._tool_schemas_copy = self.toolbox.shared_openai_schemas()
        if user is not None and persona is not None:
            raise ValueError("give the persona to the user you pass (ScriptedUser(persona=...)), or pass persona without a user")
        self.user: SimulatedUser = user if user is not None else ScriptedUser(persona=persona or "plain")
        if hasattr(self.user, "bind_domain"):
            self.user.bind_domain(self.runtime.domain.spec)
        self.judge = judge
        # what reads the sentences the rule reader cannot (a model reader); without one those checks stay undetermined
        self.reader = reader
        self.strict_dialogue = strict_dialogue
        self.max_actions = max_actions
        self.max_user_turns = max_user_turns
        self.render_mode = render_mode
        self.tool_backend: ToolBackend = tool_backend if tool_backend is not None else InProcessTools()
        self.observation_space = ChatObservation()
        self.action_space = AgentAction(self.tool_schemas)
        self.messages: list[dict[str, Any]] = []
        self.trace: Trace = []
        # the backend's live state when it runs in this process (None behind MCP or before reset); read-only by intent
        self.state: EpisodeState | None = None
        self._started = False
        self._done = True
        self._actions = 0
        self._user_turns = 0
        self._call_counter = 0
        self.final_info: dict[str, Any] | None = None

    # ------------------------------------------------------------------ helpers

    @property
    def policy_text(self) -> str:
        return policy_section(self.runtime.domain) + "\n"

    # ------------------------------------------------------------------ read-only surface

    _started = False  # subclasses with their own reset() may never set it; a live state counts as started

    def _live(self) -> bool:
        return self._started or self.state is not None

    @property
    def episode_over(self) -> bool:
        """True before the first reset and once the episode has finished (``step`` then refuses)."""
        return self._done

    @property
    def action_count(self) -> int:
        """Actions taken in this episode (messages, tool calls and malformed actions alike)."""
        return self._actions

    @property
    def user_turn_count(self) -> int:
        """Simulated-user replies so far in this episode."""
        return self._user_turns

    def _emit(self, message: dict[str, Any], out: list[dict[str, Any]], source: str) -> None:
        self.messages.append(message)
        out.append(message)
        self.trace.append(message_event(message["role"], message.get("content"), source, message.get("tool_calls")))

    def dialogue(self) -> list[dict[str, str]]:
        """The user-visible projection of the history: user and assistant text only."""
        out = []
        for m in self.messages:
            if m["role"] in ("user", "assistant") and m.get("content") and not m.get("tool_calls"):
                out.append({"role": m["role"], "content": _strip_marker(m["content"]) if m["role"] == "assistant" else m["content"]})
        return out

    # ------------------------------------------------------------------ gym API

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        super().reset(seed=seed)
        if options:
            unknown = set(options) - {"max_actions", "persona"}
            if unknown:
                raise ValueError(f"unknown reset options {sorted(unknown)}; supported: max_actions, persona")
            self.max_actions = int(options.get("max_actions", self.max_actions))
            if "persona" in options:
                if not isinstance(self.user, ScriptedUser):
                    raise ValueError("the persona reset option needs the scripted user")
                self.user = ScriptedUser(persona=options["persona"])
                self.user.bind_domain(self.runtime.domain.spec)
        self.tool_backend.start(self)
        self.state = getattr(self.tool_backend, "state", None)
        self._started = True
        self.user.reset(self.task.user, seed)
        self.messages, self.trace = [], []
        self._done, self._actions, self._user_turns, self._call_counter = False, 0, 0, 0
        self.final_info = None
        out: list[dict[str, Any]] = []
        self._emit({"role": "system", "content": AGENT_SYSTEM_PROMPT}, out, "env")
        self._emit({"role": "system", "content": self.policy_text}, out, "env")
        self._emit({"role": "user", "content": self.task.user.opening}, out, "task")
        obs = {"messages": _copy_messages(out), "tools": marshal.loads(self._tool_schemas_copy)}
        info = {"task_id": self.task.full_id, "split": self.task.split, "family": self.task.family}
        return obs, info

    def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        if not self._live():
            raise RuntimeError("call reset() before step()")
        if self._done:
            raise RuntimeError("the episode has ended; call reset() to start a new one")
        out: list[dict[str, Any]] = []
        finish: FinishReason | None = None
        parsed = parse_action(action)
        if parsed.kind == "message":
            finish = self._say(parsed.content or "", out)
        elif parsed.kind == "calls":
            finish = self._run_calls(parsed.calls, parsed.content, out)
        else:
            self._actions += 1
            self._invalid(parsed.error or "malformed action", out)
        if finish is None and self._actions >= self.max_actions:
            finish = FinishReason.ACTION_LIMIT
        terminated = finish is not None and finish.terminated
        truncated = finish is not None and finish.truncated
        reward = 0.0
        if finish is not None:
            self._done = True
            info = self._finish(finish)
            reward = info["verdict"]
        else:
            info = {"actions": self._actions, "user_turns": self._user_turns}
        obs = {"messages": _copy_messages(out), "tools": []}
        return obs, float(reward), terminated, truncated, info

    # ------------------------------------------------------------------ actions

    def _invalid(self, reason: str, out: list[dict[str, Any]]) -> None:
        self.trace.append(invalid_action_event(reason))
        self._emit({"role": "system", "content": json.dumps({"error": reason})}, out, "env")

    def _say(self, text: str, out: list[dict[str, Any]]) -> FinishReason | None:
        self._actions += 1
        self._emit({"role": "assistant", "content": text}, out, "agent")
        if DONE_MARKER in text:
            return FinishReason.DONE_MARKER
        if self._user_turns >= self.max_user_turns:
            return FinishReason.USER_TURN_LIMIT
        self._user_turns += 1
        reply = self.user.reply(self.dialogue())
        self._emit({"role": "user", "content": reply}, out, "simulator")
        if getattr(self.user, "ended", False):  # the customer said goodbye: nobody is left to answer the agent
            return FinishReason.USER_LEFT
        return None

    def _run_calls(self, calls: tuple[ParsedCall, ...], content: str | None, out: list[dict[str, Any]]) -> FinishReason | None:
        ids = []
        for call in calls:
            self._call_counter += 1
            ids.append(call.id or f"call_{self._call_counter}")
        tool_calls = [{"id": cid, "type": "function", "function": {"name": call.display_name, "arguments": arguments_text(call.raw_arguments)}}
                      for cid, call in zip(ids, calls)]
        self._emit({"role": "assistant", "content": content, "tool_calls": tool_calls}, out, "agent")
        finish = None
        for cid, call in zip(ids, calls):
            if self._actions >= self.max_actions:
                finish = FinishReason.ACTION_LIMIT
                break
            self._actions += 1
            # the backend runs the parsed arguments; arguments that did not parse go as sent, for its named error
            result = self.tool_backend.call(call.name, call.arguments if call.arguments is not None else call.raw_arguments)
            self.trace.append(tool_call_event(
                call_id=cid, name=result.name, arguments=call.trace_arguments, result=result.content, ok=result.ok,
                writes=result.writes and result.ok, error_kind=result.error_kind))
            self._emit({"role": "tool", "tool_call_id": cid, "name": result.name, "content": result.text()}, out, "tool")
            if result.ok and call.name == END_TOOL_NAME:
                finish = FinishReason.END_TOOL
                break
        return finish

    # ------------------------------------------------------------------ verdict

    def final_message(self) -> str:
        for m in reversed(self.messages):
            if m["role"] == "assistant" and m.get("content") and not m.get("tool_calls"):
                return _strip_marker(m["content"])
        return ""

    def transcript(self, dialogue: list[dict[str, str]] | None = None) -> str:
        """The dialogue as ``ROLE: text`` lines, the form the judge reads."""
        return "\n".join(f"{m['role'].upper()}: {m['content']}" for m in (dialogue if dialogue is not None else self.dialogue()))

    def verdict(self, finish_reason: FinishReason | str = FinishReason.DONE_MARKER) -> Verdict:
        """Grade the current state and dialogue (the episode need not be over) with the one grading function."""
        if not self._live():
            raise RuntimeError("call reset() before grading an episode")
        dialogue = self.dialogue()
        return grade(
            self.task,
            self.tool_backend.outcome(),
            golden=self.runtime.golden.diff,
            final_message=self.final_message(),
            transcript=self.transcript(dialogue),
            dialogue=dialogue,
            trace=self.trace,
            finish_reason=finish_reason,
            judge=self.judge,
            runtime=self.runtime,
            reader=self.reader,
            strict_dialogue=self.strict_dialogue,
        )

    def evaluate(self) -> dict[str, Any]:
        """Run every check on the current state and dialogue: results, diff and state hash."""
        v = self.verdict()
        return {"results": v.results, "diff": v.diff, "state_hash": v.state_hash,
                "golden_has_effects": not self.runtime.golden.diff.empty}

    def _finish(self, finish_reason: FinishReason) -> dict[str, Any]:
        info = self.verdict(finish_reason).info()
        info.update(
            actions=self._actions,
            user_turns=self._user_turns,
            trace=self.trace,  # handed over: reset() starts a new list
            task_id=self.task.full_id,
        )
        self.final_info = info
        return info

    def render(self) -> str | None:
        if self.render_mode != "ansi":
            return None
        lines = []
        for m in self.messages[2:]:
            if m.get("tool_calls"):
                for c in m["tool_calls"]:
                    lines.append(f"[call] {c['function']['name']}({c['function']['arguments']})")
            elif m["role"] == "tool":
                lines.append(f"[result] {m['content'][:500]}")
            else:
                lines.append(f"{m['role'].upper()}: {m['content']}")
        return "\n".join(lines)

    def close(self) -> None:
        if self._started:
            self.tool_backend.close()
            self._started = False
        self.state = None
        self._done = True
