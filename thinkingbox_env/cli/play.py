"""``play``: a person plays a task in the terminal, as the agent or as the customer.

As the agent (the default) the person sees the customer's opening and the tools, writes
to the customer, and calls tools by name with JSON arguments (or is asked for each field
of the tool's schema); the simulated customer answers and the checks grade the episode.
With ``--as customer`` the person is the customer and a model behind an OpenAI-compatible
endpoint is the agent. Either way the episode runs through the evaluation harness's
``run_trial``, so the transcript is written as an ordinary eval row that ``show`` and
``report`` read.

Plain ``input()`` is the prompt: it works in any terminal and through a pseudo-terminal,
which is how the tests drive it.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ..contracts.protocol import DONE_MARKER, END_TOOL_NAME
from ..contracts.records import EvalRow
from .common import UserError, add_command

HELP = f"""commands:
  TEXT                     send TEXT to the customer
  /done TEXT               send TEXT as the final message ({DONE_MARKER}) and end the conversation
  /tools                   list the tools
  /call NAME {{JSON}}        call a tool with JSON arguments
  /call NAME               call a tool, asked for each argument
  /help                    this list"""


def _ask(prompt: str) -> str:
    """A line typed at the terminal; a line that is not text in the terminal's encoding is asked for again."""
    while True:
        try:
            return input(prompt)
        except EOFError as exc:
            raise UserError("input ended before the conversation did") from exc
        except UnicodeDecodeError:
            print("  that line is not text in the terminal's encoding (UTF-8 expected); type it again")


def _field_value(text: str, schema: dict[str, Any]) -> Any:
    """A typed answer for one schema field: JSON for numbers, booleans, objects and arrays; text otherwise."""
    kinds = {schema.get("type")} | {s.get("type") for s in schema.get("anyOf", []) if isinstance(s, dict)}
    if kinds & {"integer", "number", "boolean", "object", "array"}:
        try:
            return json.loads(text)
        except (json.JSONDecodeError, RecursionError, ValueError):
            return text  # passed on as typed: the tool's error names what is wrong with it
    return text


class TerminalAgent:
    """The agent protocol (``reset``/``act``) answered by a person at the terminal."""

    def __init__(self) -> None:
        self.tools: dict[str, dict[str, Any]] = {}

    def reset(self, task: Any, observation: dict[str, Any]) -> None:
        self.tools = {t["function"]["name"]: t["function"] for t in observation.get("tools") or []}
        print(f"task {task.full_id}: you are the support agent. The company policy is in the system message; "
              "/help lists the commands.")

    def _show(self, messages: list[dict[str, Any]]) -> None:
        for m in messages:
            if m["role"] == "user":
                print(f"customer> {m['content']}")
            elif m["role"] == "tool":
                print(f"result[{m.get('name')}]> {m['content']}")
            elif m["role"] == "system" and m["content"].startswith("{"):
                print(f"env> {m['content']}")

    def _call_by_fields(self, name: str) -> dict[str, Any]:
        params = self.tools[name].get("parameters") or {}
        required = set(params.get("required") or [])
        arguments: dict[str, Any] = {}
        for field, schema in (params.get("properties") or {}).items():
            label = f"  {field}{'' if field in required else ' (optional, Enter to skip)'}: "
            text = _ask(label)
            if text == "" and field not in required:
                continue
            arguments[field] = _field_value(text, schema)
        return arguments

    def act(self, observation: dict[str, Any]) -> Any:
        self._show([m for m in observation["messages"] if m["role"] != "assistant"])
        while True:
            line = _ask("you> ").strip()
            if not line:
                continue
            if line == "/help":
                print(HELP)
            elif line == "/tools":
                for name, fn in self.tools.items():
                    args = ", ".join(fn.get("parameters", {}).get("properties", {}))
                    print(f"  {name}({args}): {fn.get('description', '')}")
            elif line.startswith("/done"):
                return f"{line[len('/done'):].strip()} {DONE_MARKER}".strip()
            elif line.startswith("/call"):
                parts = line.split(maxsplit=2)
                if len(parts) < 2 or parts[1] not in self.tools:
                    print(f"  unknown tool; /tools lists them (e.g. /call {next(iter(self.tools), END_TOOL_NAME)} {{}})")
                    continue
                name = parts[1]
                if len(parts) == 3:
                    try:
                        arguments = json.loads(parts[2])
                    except json.JSONDecodeError as exc:
                        print(f"  the arguments are not JSON ({exc.msg}); write an object like {{\"email\": \"a@b.c\"}}")
                        continue
                    except (RecursionError, ValueError):  # nested past the parser's depth, or a number too long to read
                        print("  the arguments are nested too deep or hold a number too long to read; "
                              "write a flat object like {\"email\": \"a@b.c\"}")
                        continue
                else:
                    arguments = self._call_by_fields(name)
                return {"name": name, "arguments": arguments}
            elif line.startswith("/"):
                print(f"  unknown command {line.split()[0]}; /help lists them")
            else:
                return line


class TerminalCustomer:
    """The simulated-user protocol answered by a person: the model agent's messages are shown, the person replies."""

    def __init__(self) -> None:
        self.ended = False
        self.shown = 0  # agent messages printed so far; the closing comes after the last reply asked for

    def describe(self) -> dict[str, Any]:
        return {"kind": "human"}

    def reset(self, spec: Any, seed: int | None) -> None:
        self.ended = False
        print("you are the customer. Your situation:")
        for fact in getattr(spec, "facts", []) or []:
            print(f"  - {getattr(fact, 'text', fact)}")
        print(f"customer (you, opening)> {spec.opening}")
        print("reply to each agent message; /bye leaves the conversation.")

    def reply(self, dialogue: list[dict[str, str]]) -> str:
        if dialogue and dialogue[-1]["role"] == "assistant":
            print(f"agent> {dialogue[-1]['content']}")
            self.shown = sum(1 for m in dialogue if m["role"] == "assistant")
        text = _ask("you (customer)> ").strip()
        if text == "/bye":
            self.ended = True
            return "Thanks, goodbye."
        return text or "(no answer)"


def _agent_texts(row: EvalRow) -> list[str]:
    """What the agent wrote to the customer, in order: its plain messages (tool calls are not shown to a customer)."""
    from ..contracts.protocol import DONE_MARKER

    return [str(e["content"]).replace(DONE_MARKER, "").strip() for e in row.trace
            if e.get("type") == "message" and e.get("source") == "agent" and e.get("content") and not e.get("tool_calls")]


def _print_checks(row: EvalRow) -> None:
    for detail in row.check_details or []:
        mark = {True: "pass", False: "FAIL", None: "not evaluated"}[detail["passed"]]
        print(f"  {mark:>13}  {detail['name']}")


def cmd_play(args: argparse.Namespace) -> int:
    """``thinkingbox play``: one trial with a person in the loop, written as an eval row."""
    from ..eval.config import EndpointConfig, EvalConfig
    from ..eval.run_files import RowWriter
    from ..eval.trial import run_trial
    from ..tasks.lookup import load_task
    from ..users.registry import UserCapabilities

    load_task(args.task)  # an unknown task fails before the terminal session starts
    if args.as_ == "customer":
        if not args.model or not args.base_url:
            raise UserError("--as customer needs the agent's endpoint: --model and --base-url (an OpenAI-compatible API)")
        endpoint = EndpointConfig(model=args.model, base_url=args.base_url, api_key=args.api_key or "EMPTY", timeout=args.timeout,
                                  max_retries=1)
        config = EvalConfig(agent="openai", agent_endpoint=endpoint, user="human", max_actions=args.max_actions, seed=args.seed)
        # a person may leave with /bye, and no seed fixes what they write
        customer = TerminalCustomer()
        row = run_trial(config, args.task, trial=0, user=customer, user_capabilities=UserCapabilities(can_end=True))
        for text in _agent_texts(row)[customer.shown:]:  # the agent's closing ends the episode without asking for a reply
            print(f"agent> {text}")
    else:
        config = EvalConfig(agent="human", max_actions=args.max_actions, seed=args.seed)
        row = run_trial(config, args.task, trial=0, agent=TerminalAgent())
    if row.status != "ok":
        error = row.system_error or {}
        if error.get("type") == "UserError":
            raise UserError(error.get("message", "the session ended"))
        print(f"the trial ended with an error ({error.get('where')}: {error.get('message')})")
    else:
        print(f"conversation over ({row.finish_reason}): verdict {row.verdict:.0f}; /checks shows each check, Enter quits")
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    writer = RowWriter(out)
    try:
        writer.write(row)
    finally:
        writer.close()
    print(f"saved to {out} (thinkingbox show {out} --task {args.task} --trial 0)")
    if row.status == "ok":
        try:
            while input("> ").strip() == "/checks":
                _print_checks(row)
        except EOFError:
            pass
    return 0


def add_play_command(sub: Any) -> None:
    """Declare ``play``."""
    p = add_command(sub, "play", "play a task in the terminal: you are the agent (or the customer)",
                    "Play a task by hand. As the agent you write to the simulated customer and call the domain's tools; "
                    "as the customer (--as customer) you answer a model agent. The transcript is saved as an eval row.",
                    ["thinkingbox play retail/ST030_001",
                     "thinkingbox play retail/ST030_001 --as customer --model m --base-url http://localhost:8000/v1"])
    p.add_argument("task", help="a task id (retail/ST030_001)")
    p.add_argument("--as", dest="as_", choices=["agent", "customer"], default="agent", help="the side you play")
    p.add_argument("-o", "--output", default="runs/play.jsonl", help="run file the trial's row is appended to")
    p.add_argument("--model", help="--as customer: the agent model's name")
    p.add_argument("--base-url", help="--as customer: the agent's OpenAI-compatible endpoint")
    p.add_argument("--api-key", help="--as customer: the endpoint's key")
    p.add_argument("--timeout", type=float, default=120.0, help="--as customer: seconds per model call")
    p.add_argument("--max-actions", type=int, default=50, help="actions before the episode is cut off")
    p.add_argument("--seed", type=int, default=0, help="seed of the simulated customer's wording")
    p.set_defaults(func=cmd_play)
