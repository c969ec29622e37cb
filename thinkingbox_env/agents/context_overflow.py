"""Telling a prompt that does not fit the model's context apart from an endpoint failure.

A request longer than the served context is refused by every server (llama.cpp,
llama-cpp-python, vLLM, SGLang, TGI, hosted APIs), each in its own words and mostly
with HTTP 400. The refusal says nothing wrong about the infrastructure: the model
cannot take the conversation the agent has to hold, so the trial is the agent's
failure (``context_overflow``), counted in the rates and never run again by a resume,
where it would fail the same way. Recognition reads the error's message, type and
code, so a server that rewords its message but keeps its code is still recognised.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

# phrases of the refusals servers send for a prompt longer than their context, lower-cased
_OVERFLOW_PATTERNS = tuple(re.compile(p) for p in (
    r"maximum context length",                                   # vLLM, OpenAI, llama-cpp-python
    r"context[ _]length[ _]exceeded",                            # OpenAI / llama-cpp-python code
    r"exceed_context_size_error",                                # llama.cpp server type
    r"exceeds? the available context size",                      # llama.cpp server message
    r"exceeds? (?:the )?context (?:window|size|length)",         # llama-cpp-python's own words, others
    r"longer than the (?:maximum model length|model'?s context length|context)",  # vLLM, SGLang
    r"context (?:window|size|length) (?:is )?(?:too small|exceeded)",
    r"(?:prompt|input|request) is too long",                     # hosted APIs
    r"too many (?:input )?tokens",
    r"tokens \+ `?max_new_tokens`? must be <=",                  # text-generation-inference
    r"reduce the length of the (?:messages|prompt|input)",
))

_CONTEXT_FIGURE = (re.compile(r"maximum context length (?:is|of) (\d+)"), re.compile(r"maximum model length of (\d+)"),
                   re.compile(r"context (?:window|size|length) (?:of |is )?\(?(\d+)"), re.compile(r"must be <= (\d+)"))
_PROMPT_FIGURE = (re.compile(r"\((\d+) in the messages"), re.compile(r"requested tokens \((\d+)\)"),
                  re.compile(r"prompt \(length (\d+)\)"), re.compile(r"(?:your request has|the input \() ?(\d+) (?:input )?tokens"),
                  re.compile(r"request \((\d+) tokens\)"))


def is_context_overflow(message: str | None, *, code: Any = None, kind: Any = None, body: Any = None) -> bool:
    """Whether an error refuses a request for being longer than the model's context.

    ``message`` is the server's text; ``code`` and ``kind`` its error code and type, and
    ``body`` the parsed error object, where the client kept them (all optional).
    """
    parts = [message or "", str(code or ""), str(kind or "")]
    if isinstance(body, dict):
        parts += [str(body.get(k) or "") for k in ("message", "code", "type")]
        inner = body.get("error")
        if isinstance(inner, dict):
            parts += [str(inner.get(k) or "") for k in ("message", "code", "type")]
    text = " ".join(parts).lower()
    return any(p.search(text) for p in _OVERFLOW_PATTERNS)


def _first_figure(patterns: tuple[re.Pattern[str], ...], text: str) -> int | None:
    for pattern in patterns:
        found = pattern.search(text)
        if found:
            return int(found.group(1))
    return None


@dataclass
class OverflowFigures:
    """What a refusal says about the sizes, where it says it: the prompt's tokens and the served context."""

    prompt_tokens: int | None = None
    context: int | None = None


def overflow_figures(message: str | None, body: Any = None) -> OverflowFigures:
    """The prompt size and the context a refusal names (llama.cpp's server puts them in the error object)."""
    text = (message or "").lower()
    figures = OverflowFigures(_first_figure(_PROMPT_FIGURE, text), _first_figure(_CONTEXT_FIGURE, text))
    objects = [body, body.get("error") if isinstance(body, dict) else None]
    for obj in objects:
        if isinstance(obj, dict):
            if isinstance(obj.get("n_prompt_tokens"), int):
                figures.prompt_tokens = obj["n_prompt_tokens"]
            if isinstance(obj.get("n_ctx"), int):
                figures.context = obj["n_ctx"]
    return figures


class ContextOverflowError(RuntimeError):
    """The model's endpoint refused a turn because the conversation no longer fits its context: the agent's failure."""

    def __init__(self, message: str, status: int | None = None, figures: OverflowFigures | None = None):
        super().__init__(message)
        self.status = status
        self.figures = figures or OverflowFigures()
        self.attempts = 1  # the requests the refused turn took (a retried 5xx may come before the refusal)


def overflow_from_status_error(exc: Any) -> ContextOverflowError | None:
    """The overflow an ``openai.APIStatusError`` reports, or None when it is another refusal."""
    body = getattr(exc, "body", None)
    said = body.get("message") if isinstance(body, dict) else None  # the server's words, without the client's prefix
    message = str(said or getattr(exc, "message", "") or exc)
    if not is_context_overflow(message, code=getattr(exc, "code", None), kind=getattr(exc, "type", None), body=body):
        return None
    status = getattr(exc, "status_code", None)
    return ContextOverflowError(f"HTTP {status}: {message}", status, overflow_figures(message, body))
