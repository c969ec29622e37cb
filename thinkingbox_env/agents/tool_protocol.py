"""How a local chat model is shown tools and how its tool calls are read: its own template, or a prompt protocol.

A model's chat template decides how tool schemas, tool calls and tool results become tokens.
Some instruct models ship a template that knows nothing of tools: SmolLM2's renders
``message['content']`` only, so the ``tools`` argument vanishes, an assistant turn that is only
a tool call (content None) breaks the rendering, and TRL refuses the model as one that "does
not support tool calling". Training and evaluation must know which case they are in before
the first step or trial, not find out from a stack trace after a warm start.

:func:`probe_template` renders a probe conversation with the tokenizer's template and reports
what survives; :func:`choose_tool_protocol` picks

- ``native``: the template renders tool schemas, tool calls and tool results, and an
  assistant turn whose content is None; the model is used as it is;
- ``prompt``: the template lacks one of these and the tokenizer speaks ChatML
  (``<|im_start|>``/``<|im_end|>``). The template is replaced by :data:`PROMPT_TOOLS_TEMPLATE`:
  the tool schemas are written into the system message as JSON, each call is one
  ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` block in the assistant's text,
  tool results are ``tool`` turns, and a content of None renders as "". The tokenizer also
  gets a response template, so TRL and ``tokenizer.parse_response`` read the calls back, and
  the local agent's Hermes parser reads the same blocks.

A tokenizer that is neither is refused with :class:`ToolProtocolError`, which says why.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

NATIVE = "native"
PROMPT = "prompt"
PROTOCOLS = ("auto", NATIVE, PROMPT)

_PROBE_TOOL = "probe_tool_q7x"
_PROBE_DESCRIPTION = "probe description z3k9"
_PROBE_ARG = "probe_arg_w2m"
_PROBE_VALUE = "probe_value_v8n"
_PROBE_RESULT = "probe_result_r5t"

# ChatML with tools in the system message and calls as <tool_call> blocks. The assistant's part of
# each turn is inside {% generation %}, so SFT's assistant-only loss can find it.
PROMPT_TOOLS_TEMPLATE = r"""{%- if messages and messages[0]['role'] == 'system' -%}
{%- set system_text = messages[0]['content'] or '' -%}{%- set turns = messages[1:] -%}
{%- else -%}{%- set system_text = '' -%}{%- set turns = messages -%}{%- endif -%}
{%- if tools -%}
{%- set ns = namespace(text=system_text ~ ('\n\n' if system_text else '') ~ 'You can call these tools (JSON schemas):\n') -%}
{%- for tool in tools -%}{%- set ns.text = ns.text ~ (tool | tojson) ~ '\n' -%}{%- endfor -%}
{%- set system_text = ns.text ~ 'To call a tool, write one block per call in your reply:\n<tool_call>\n{"name": "<tool name>", "arguments": {<argument values>}}\n</tool_call>\nA reply without a block is a plain message.' -%}
{%- endif -%}
{%- if system_text -%}{{- '<|im_start|>system\n' ~ system_text ~ '<|im_end|>\n' -}}{%- endif -%}
{%- for message in turns -%}
{%- if message['role'] == 'assistant' -%}
{{- '<|im_start|>assistant\n' -}}
{%- generation -%}
{{- message['content'] or '' -}}
{%- for call in (message['tool_calls'] or []) -%}
{%- set fn = call['function'] if call['function'] is defined else call -%}
{%- set args = fn['arguments'] if fn['arguments'] is string else (fn['arguments'] | tojson) -%}
{{- ('\n' if (message['content'] or not loop.first) else '') ~ '<tool_call>\n{"name": ' ~ (fn['name'] | tojson) ~ ', "arguments": ' ~ args ~ '}\n</tool_call>' -}}
{%- endfor -%}
{{- '<|im_end|>' -}}
{%- endgeneration -%}
{{- '\n' -}}
{%- else -%}
{{- '<|im_start|>' ~ message['role'] ~ '\n' ~ (message['content'] or '') ~ '<|im_end|>\n' -}}
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\n' -}}{%- endif -%}"""

# How transformers' parse_response (and TRL, which calls it) reads an assistant turn of the prompt protocol.
PROMPT_RESPONSE_TEMPLATE: dict[str, Any] = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "tool_calls": {"open": "<tool_call>", "close_pattern": r"</tool_call>\s*", "repeats": True, "content": "json",
                       "transform": {"type": "function", "function": "{content}"}},
        "content": {"close_pattern": r"<\|im_end\|>\s*", "content": "text"},
    },
}


class ToolProtocolError(ValueError):
    """The model's template cannot carry tool calls and no prompt protocol fits it (or the one asked for does not)."""


@dataclass(frozen=True)
class TemplateProbe:
    """What a chat template keeps of a tool-calling conversation."""

    has_template: bool
    renders_tools: bool  # a tool's schema (name and description) appears when tools are given
    renders_calls: bool  # an assistant turn's tool call (name, argument, value) appears
    renders_results: bool  # a tool message's content appears
    null_content_ok: bool  # an assistant turn with content None (a call and no text) renders without error
    chatml: bool  # the tokenizer has <|im_start|> and <|im_end|> as tokens

    @property
    def supports_tools(self) -> bool:
        """The template carries a whole tool-calling conversation by itself."""
        return self.has_template and self.renders_tools and self.renders_calls and self.renders_results and self.null_content_ok

    def missing(self) -> list[str]:
        """What the template lacks, in words."""
        out = []
        if not self.has_template:
            return ["has no chat template"]
        if not self.renders_tools:
            out.append("ignores the tool schemas")
        if not self.renders_calls:
            out.append("drops assistant tool calls")
        if not self.renders_results:
            out.append("drops tool results")
        if not self.null_content_ok:
            out.append("fails on an assistant turn without content")
        return out


@dataclass(frozen=True)
class ToolProtocol:
    """The protocol chosen for a model, and why (``statement`` is what runs print before they start)."""

    name: str
    probe: TemplateProbe
    reason: str = ""

    @property
    def statement(self) -> str:
        if self.name == NATIVE:
            return "tool protocol: native (the model's chat template renders tools, tool calls and tool results)"
        return (f"tool protocol: prompt ({self.reason}): tool schemas as JSON in the system message, calls as "
                "<tool_call>{\"name\", \"arguments\"}</tool_call> blocks, results as tool turns, content None rendered as \"\"")


def _render(tokenizer: Any, messages: list[dict[str, Any]], **kwargs: Any) -> str | None:
    try:
        return str(tokenizer.apply_chat_template(messages, tokenize=False, **kwargs))
    except Exception:  # noqa: BLE001 - jinja raises many kinds (TemplateError, TypeError, UndefinedError)
        return None


def probe_template(tokenizer: Any) -> TemplateProbe:
    """Render probe conversations with the tokenizer's template and see what survives."""
    vocab = tokenizer.get_vocab() if hasattr(tokenizer, "get_vocab") else {}
    chatml = "<|im_start|>" in vocab and "<|im_end|>" in vocab
    if not getattr(tokenizer, "chat_template", None):
        return TemplateProbe(False, False, False, False, False, chatml)
    tool = {"type": "function", "function": {"name": _PROBE_TOOL, "description": _PROBE_DESCRIPTION,
                                             "parameters": {"type": "object", "properties": {_PROBE_ARG: {"type": "string"}},
                                                            "required": [_PROBE_ARG]}}}
    opening: list[dict[str, Any]] = [{"role": "system", "content": "system"}, {"role": "user", "content": "hello"}]
    with_tools = _render(tokenizer, opening, tools=[tool], add_generation_prompt=True) or ""
    call = {"type": "function", "function": {"name": _PROBE_TOOL, "arguments": {_PROBE_ARG: _PROBE_VALUE}}}
    exchange = opening + [{"role": "assistant", "content": "", "tool_calls": [call]},
                          {"role": "tool", "name": _PROBE_TOOL, "content": _PROBE_RESULT}]
    rendered = _render(tokenizer, exchange) or ""  # without tools: the call's argument can only come from the call
    null = opening + [{"role": "assistant", "content": None, "tool_calls": [call]},
                      {"role": "tool", "name": _PROBE_TOOL, "content": _PROBE_RESULT}]
    return TemplateProbe(
        has_template=True,
        renders_tools=_PROBE_TOOL in with_tools and _PROBE_DESCRIPTION in with_tools,
        renders_calls=_PROBE_ARG in rendered and _PROBE_VALUE in rendered,
        renders_results=_PROBE_RESULT in rendered,
        null_content_ok=_render(tokenizer, null, tools=[tool]) is not None,
        chatml=chatml,
    )


def choose_tool_protocol(tokenizer: Any, wanted: str = "auto") -> ToolProtocol:
    """The protocol for this tokenizer: its own template where that carries tools, else the prompt protocol.

    ``wanted`` is ``auto`` (decide from the probe), ``native`` (refuse a template that cannot
    carry tools) or ``prompt`` (use the prompt protocol even where the template could).
    """
    if wanted not in PROTOCOLS:
        raise ToolProtocolError(f"unknown tool protocol {wanted!r}; choose from {', '.join(PROTOCOLS)}")
    probe = probe_template(tokenizer)
    if getattr(tokenizer, "chat_template", None) == PROMPT_TOOLS_TEMPLATE and wanted != NATIVE:
        # applied before: a shared tokenizer, or a checkpoint trained in this protocol and saved with its template
        return ToolProtocol(PROMPT, probe, "the checkpoint's chat template is the prompt protocol's")
    if wanted == NATIVE or (wanted == "auto" and probe.supports_tools):
        if not probe.supports_tools:
            raise ToolProtocolError("the model's chat template cannot carry tool calls (it " + "; ".join(probe.missing())
                                    + "); use the prompt tool protocol (--tool_protocol prompt or auto)")
        return ToolProtocol(NATIVE, probe)
    if not probe.chatml:
        raise ToolProtocolError("the model's chat template cannot carry tool calls (it " + "; ".join(probe.missing())
                                + ") and its tokenizer has no <|im_start|>/<|im_end|> tokens for the prompt tool protocol; "
                                  "give the model a chat template that renders tools")
    reason = "the model's chat template " + "; ".join(probe.missing()) if not probe.supports_tools else "asked for"
    return ToolProtocol(PROMPT, probe, reason)


def apply_tool_protocol(tokenizer: Any, protocol: ToolProtocol) -> Any:
    """Make the tokenizer render and parse tools the way ``protocol`` says; return it (changed in place).

    The prompt protocol's template and response template are saved with the tokenizer, so a
    checkpoint trained with it is evaluated with it.
    """
    if protocol.name == PROMPT:
        tokenizer.chat_template = PROMPT_TOOLS_TEMPLATE
        tokenizer.response_template = json.loads(json.dumps(PROMPT_RESPONSE_TEMPLATE))  # a copy per tokenizer
    return tokenizer


def prepare_tokenizer(tokenizer: Any, wanted: str = "auto") -> ToolProtocol:
    """Choose the protocol, state it in the log, and apply it: what a run does before its first step or trial."""
    protocol = choose_tool_protocol(tokenizer, wanted)
    apply_tool_protocol(tokenizer, protocol)
    log.info("%s", protocol.statement)
    return protocol
