"""One way to build an OpenAI-compatible client for every model the package talks to.

The simulated user, the judge and model agents each read their endpoint, model
and key from arguments first, then from their own environment variables
(``THINKINGBOX_<ROLE>_BASE_URL`` / ``_MODEL`` / ``_API_KEY``), then from the
standard ``OPENAI_*`` ones. Retries with backoff on 408/409/429/5xx and on
connection errors are the client's own.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from pydantic import Field

from ..plugins import Options

DEFAULT_MODEL = "gpt-4o-mini"


class EndpointOptions(Options):
    """The options of a backend behind an OpenAI-compatible endpoint; the key is left out of every record."""

    model: str | None = None
    base_url: str | None = None
    api_key: str | None = Field(default=None, exclude=True, repr=False)
    timeout: float = 600.0
    max_retries: int = 5


def resolve_model(role: str, model: str | None) -> str:
    """The model of a role (agent, user, judge): the argument, else ``THINKINGBOX_<ROLE>_MODEL``, so each role can use its own model."""
    return model or os.environ.get(f"THINKINGBOX_{role.upper()}_MODEL") or DEFAULT_MODEL


def openai_client(role: str, base_url: str | None = None, api_key: str | None = None,
                  timeout: float = 120.0, max_retries: int = 5) -> Any:
    """An OpenAI-compatible client whose endpoint and key fall back to the role's environment variables."""
    from openai import OpenAI

    prefix = f"THINKINGBOX_{role.upper()}_"
    return OpenAI(
        base_url=base_url or os.environ.get(prefix + "BASE_URL") or os.environ.get("OPENAI_BASE_URL"),
        api_key=api_key or os.environ.get(prefix + "API_KEY") or os.environ.get("OPENAI_API_KEY") or "EMPTY",
        timeout=timeout,
        max_retries=max_retries,
    )


def token_usage(response: Any) -> dict[str, int]:
    """Input, cached input, output and reasoning tokens of one response (0 where not reported)."""
    u = getattr(response, "usage", None)
    if u is None:
        return {"input": 0, "cached": 0, "output": 0, "reasoning": 0}
    prompt_details = getattr(u, "prompt_tokens_details", None)
    completion_details = getattr(u, "completion_tokens_details", None)
    return {
        "input": int(getattr(u, "prompt_tokens", 0) or 0),
        "cached": int(getattr(prompt_details, "cached_tokens", 0) or 0) if prompt_details else 0,
        "output": int(getattr(u, "completion_tokens", 0) or 0),
        "reasoning": int(getattr(completion_details, "reasoning_tokens", 0) or 0) if completion_details else 0,
    }


def sum_usage(calls: list[dict[str, Any]]) -> dict[str, int]:
    """Token totals over recorded calls (a failed call carries no usage and adds nothing)."""
    total = {"input": 0, "cached": 0, "output": 0, "reasoning": 0}
    for call in calls:
        for k in total:
            total[k] += (call.get("usage") or {}).get(k, 0)
    return total


# the statuses a server refuses a parameter it does not take with: OpenAI and vLLM 400, FastAPI servers 422,
# llama-cpp-python 500; others 415 or 501. A 502-504 or 429 is a passing failure, retried with the format.
FORMAT_REFUSAL_STATUSES = frozenset({400, 415, 422, 500, 501})


def create_with_format_fallback(caller: Any, messages: list[dict[str, str]], plain: list[dict[str, str]],
                                response_format: dict[str, Any], kwargs: dict[str, Any], role: str) -> Any:
    """One completion with ``response_format``, or, once the endpoint has refused it, the ``plain`` messages.

    ``caller`` holds the ``client`` and a ``structured`` flag, which turns off for good at the
    first refusal (the judge and the model reader both ask for JSON this way). The structured
    request is tried once, so that a refusal answered with a 5xx is not retried as if the server
    were down; a passing failure is retried by the client. Should the plain request be refused
    too, the refusal was not about the format: its error is the one raised.
    """
    import openai

    client = caller.client
    if not caller.structured:
        return client.chat.completions.create(messages=plain, **kwargs)
    once = client.with_options(max_retries=0) if hasattr(client, "with_options") else client
    try:
        return once.chat.completions.create(messages=messages, response_format=response_format, **kwargs)
    except openai.APIStatusError as exc:
        if exc.status_code not in FORMAT_REFUSAL_STATUSES:  # a passing failure: the client's own retries
            return client.chat.completions.create(messages=messages, response_format=response_format, **kwargs)
        refusal = exc
    except (openai.APITimeoutError, openai.APIConnectionError):
        return client.chat.completions.create(messages=messages, response_format=response_format, **kwargs)
    response = client.chat.completions.create(messages=plain, **kwargs)
    if caller.structured:
        logging.getLogger(__name__).info(
            "%s endpoint refused response_format (HTTP %s: %s); asking for a final JSON line from now on",
            role, refusal.status_code, refusal.message)
        caller.structured = False
    return response
