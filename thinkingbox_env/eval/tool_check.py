"""Before a run: does the agent's endpoint return tool calls at all?

A server that drops the ``tools`` of a request (vLLM without a tool-call parser, a
llama.cpp server whose chat template knows no tools, llama-cpp-python's
``chatml-function-calling`` when no ``tool_choice`` is sent) answers in plain text, and
every trial then ends with no tool call and ``no_state_changing_action``: a run that
measures the server's set-up, not the model. One request with a trivial tool and a
prompt that needs it tells the two apart before the first trial.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

PROBE_TOOL: dict[str, Any] = {"type": "function", "function": {
    "name": "get_order_status",
    "description": "Look up the current status of an order by its number.",
    "parameters": {"type": "object", "properties": {"order_id": {"type": "string", "description": "The order number."}},
                   "required": ["order_id"]},
}}
PROBE_PROMPT = "What is the status of order A-1001? Look it up with the get_order_status tool; do not guess."
PROBE_MAX_TOKENS = 256  # room for a tool call (and a short thought) without paying for a long answer

FIXES = ("vLLM: serve with --enable-auto-tool-choice --tool-call-parser PARSER (hermes for Qwen models); "
         "llama.cpp's llama-server: start it with --jinja and a chat template that knows tools; "
         "llama-cpp-python's server: --chat_format chatml-function-calling, and send tool_choice with "
         """--extra-body '{"tool_choice": "auto"}'""")


@dataclass
class ToolCheck:
    """What the probe saw: whether a tool call came back, and if not, what did."""

    tool_called: bool
    needs_tool_choice: bool = False  # the call came back only when the request named tool_choice
    said: str = ""
    finish_reason: str | None = None
    tool_choice_error: str | None = None  # the server's refusal of the request that named tool_choice


def _probe(client: Any, model: str, kwargs: dict[str, Any]) -> Any:
    return client.chat.completions.create(model=model, messages=[{"role": "user", "content": PROBE_PROMPT}],
                                          tools=[PROBE_TOOL], **kwargs)


def _called(response: Any) -> bool:
    choices = getattr(response, "choices", None) or []
    return bool(choices) and bool(getattr(choices[0].message, "tool_calls", None))


def probe_kwargs(request_kwargs: dict[str, Any]) -> dict[str, Any]:
    """The run's own request options, with the output limit cut to what a tool call needs."""
    out = dict(request_kwargs)
    for name in ("max_tokens", "max_completion_tokens"):
        if name in out:
            out[name] = min(out[name], PROBE_MAX_TOKENS)
    return out


def check_tool_calls(client: Any, model: str, request_kwargs: dict[str, Any]) -> ToolCheck:
    """Send the probe as the run's agent would (its sampling options and extra body), then, if no call came back, with ``tool_choice``.

    Errors of the first request propagate (the caller reports the endpoint's refusal);
    a refusal of the second is kept in ``tool_choice_error``, since it often names the
    server option that is missing.
    """
    import openai

    kwargs = probe_kwargs(request_kwargs)
    first = _probe(client, model, kwargs)
    if _called(first):
        return ToolCheck(True)
    choice = first.choices[0] if first.choices else None
    check = ToolCheck(False, said=(getattr(choice.message, "content", None) or "") if choice else "",
                      finish_reason=getattr(choice, "finish_reason", None) if choice else None)
    extra = kwargs.get("extra_body") or {}
    if "tool_choice" in extra:  # the run already sends it: nothing more to try
        return check
    try:
        second = _probe(client, model, {**kwargs, "tool_choice": "auto"})
    except openai.APIStatusError as exc:
        check.tool_choice_error = f"HTTP {exc.status_code}: {exc.message}"
        return check
    check.needs_tool_choice = _called(second)
    return check


def ignored_tools_message(where: str, model: str, check: ToolCheck, extra_body: dict[str, Any]) -> str:
    """Why the run cannot start and what to change, from what the probe saw."""
    if check.needs_tool_choice:
        flag = json.dumps({**extra_body, "tool_choice": "auto"})
        return (f"the agent endpoint {where} returns tool calls for model '{model}' only when the request names tool_choice "
                f"(llama-cpp-python's chatml-function-calling drops the tools otherwise); pass --extra-body '{flag}', "
                "or --no-tool-check to run anyway")
    said = check.said.strip().replace("\n", " ")
    answer = f"it answered {said[:200]!r}" if said else "it answered nothing"
    cut = " and hit the token limit" if check.finish_reason == "length" else ""
    refused = f"; with tool_choice \"auto\" it answered {check.tool_choice_error}" if check.tool_choice_error else ""
    return (f"the agent endpoint {where} ignored the tools: a request for model '{model}' with one tool and a prompt that needs it "
            f"came back without a tool call ({answer}{cut}{refused}). Every trial would end without a tool call. "
            f"Serve the model with tool calling: {FIXES}. To run anyway (a model that never calls tools): --no-tool-check")
