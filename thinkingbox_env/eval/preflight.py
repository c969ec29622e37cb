"""Before a run: which model the endpoint serves, and one short request that shows it can serve the run.

A wrong model name, a dead server, a parameter the server refuses or a server that returns
no tool calls would otherwise fail every trial, each after its retries.
"""

from __future__ import annotations

import os
from typing import Any

from .config import EndpointConfig, EvalConfig


class PreflightError(RuntimeError):
    """The agent endpoint cannot serve the run; the message says what the endpoint said and what to do."""


def endpoint_location(ep: EndpointConfig) -> str:
    """Where the endpoint is, as a message names it: its base URL, else the variables', else the OpenAI API."""
    return ep.base_url or os.environ.get("THINKINGBOX_AGENT_BASE_URL") or os.environ.get("OPENAI_BASE_URL") \
        or "the OpenAI API (no --base-url)"


def resolve_agent_model(ep: EndpointConfig) -> str:
    """The model to evaluate: ``--model`` (or its variable), else the only model the server lists."""
    from ..llm.client import openai_client

    chosen = ep.model or os.environ.get("THINKINGBOX_AGENT_MODEL")
    if chosen:
        return chosen
    client = openai_client("agent", ep.base_url, ep.api_key, timeout=preflight_timeout(ep), max_retries=0)
    try:
        models = sorted(m.id for m in client.models.list())
    except Exception as exc:  # noqa: BLE001 - any failure means: we cannot guess, ask for --model
        raise PreflightError(f"no --model given, and the models of {endpoint_location(ep)} could not be listed "
                             f"({endpoint_error(exc)}); pass --model NAME") from exc
    if len(models) == 1:
        return models[0]
    listed = ", ".join(models[:10]) + (f" and {len(models) - 10} more" if len(models) > 10 else "")
    raise PreflightError(f"no --model given and {endpoint_location(ep)} serves {len(models)} models"
                         + (f" ({listed})" if models else "") + "; pass --model NAME")


PREFLIGHT_CONNECT_SECONDS = 5.0  # a server that does not accept a connection in this time is reported as down
PREFLIGHT_READ_SECONDS = 60.0


def preflight_timeout(ep: EndpointConfig) -> Any:
    """The timeouts of the requests sent before a run: a short connect, so a dead host is reported in seconds, not minutes."""
    import openai  # its Timeout is the one of whichever HTTP client it is built on (httpx, then httpx2)

    read = min(ep.timeout, PREFLIGHT_READ_SECONDS)
    return openai.Timeout(read, connect=min(read, PREFLIGHT_CONNECT_SECONDS))


def served_models(ep: EndpointConfig) -> list[str] | None:
    """The models the endpoint lists, or None when it cannot list them (to name the choices when a model is refused)."""
    from ..llm.client import openai_client

    client = openai_client("agent", ep.base_url, ep.api_key, timeout=preflight_timeout(ep), max_retries=0)
    try:
        return sorted(m.id for m in client.models.list())
    except Exception:  # noqa: BLE001 - listing is a courtesy; the refusal itself is reported either way
        return None


def endpoint_error(exc: BaseException) -> str:
    """What the endpoint said, in one line: the HTTP status and message, a timeout or the failed connection."""
    import openai

    if isinstance(exc, openai.APIStatusError):
        return f"HTTP {exc.status_code}: {exc.message}"
    if isinstance(exc, openai.APITimeoutError):
        return "the request timed out"
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc
        return f"connection failed: {cause}"
    return f"{type(exc).__name__}: {exc}"


def preflight(config: EvalConfig, check_tools: bool = True) -> None:
    """One short request with the run's model and sampling options; raises ``PreflightError`` with the endpoint's answer.

    A wrong model name, a dead server or a parameter the server refuses would otherwise fail
    every trial, each after its retries. With ``check_tools`` the request carries a trivial
    tool and a prompt that needs it (:mod:`.tool_check`): a server that returns no tool
    call would make every trial end without one, so the run is refused, saying what to fix.
    """
    from ..llm.client import openai_client
    from .tool_check import check_tool_calls, ignored_tools_message

    ep = config.agent_endpoint
    kwargs = config.sampling.request_kwargs(config.seed)
    import openai

    client = openai_client("agent", ep.base_url, ep.api_key, timeout=preflight_timeout(ep), max_retries=0)
    try:
        if check_tools:
            check = check_tool_calls(client, str(ep.model), kwargs)
        else:
            client.chat.completions.create(model=ep.model, messages=[{"role": "user", "content": "Reply with OK."}],
                                           **{**kwargs, **_capped(kwargs, 16)})
    except Exception as exc:  # noqa: BLE001 - whatever it is, the run cannot start
        hint = ""
        if isinstance(exc, openai.APIStatusError):  # a refusal, perhaps of the model's name: say which ones it serves
            models = served_models(ep)
            if models and ep.model not in models:
                listed = ", ".join(models[:20]) + (f" and {len(models) - 20} more" if len(models) > 20 else "")
                hint = f"; it serves {listed}: pass one of them with --model"
            elif check_tools and "tool" in str(exc.message).lower():
                hint = "; the request carried one tool: serve the model with tool calling, or pass --no-tool-check"
        raise PreflightError(f"the agent endpoint {endpoint_location(ep)} refused a test request for model '{ep.model}': "
                             f"{endpoint_error(exc)}{hint}") from exc
    if check_tools and not check.tool_called:
        raise ToolsIgnoredError(ignored_tools_message(endpoint_location(ep), str(ep.model), check, config.sampling.extra_body))


# the flags that set each role's endpoint, named when its test request is refused
_ROLE_FLAGS = {"user": "--user-model/--user-base-url", "judge": "--judge-model/--judge-base-url",
               "reader": "--reader-model/--reader-base-url"}


def role_endpoints(config: EvalConfig) -> list[tuple[str, EndpointConfig]]:
    """The endpoints besides the agent's that the run's trials will ask: the LLM user's, the judge's, the reader's."""
    from ..judging.registry import JUDGES
    from ..users.registry import USERS
    from .config import judge_runs

    found: list[tuple[str, EndpointConfig]] = []
    user = USERS.find(config.user)
    if user is not None and user.capabilities.needs_endpoint:
        found.append(("user", config.user_endpoint))
    if config.judge_endpoint is not None and judge_runs(config) and JUDGES.get(config.judge).capabilities.needs_endpoint:
        found.append(("judge", config.judge_endpoint))
    if config.reader_endpoint is not None:
        found.append(("reader", config.reader_endpoint))
    return found


def preflight_roles(config: EvalConfig) -> None:
    """One short request to the user's, the judge's and the reader's endpoint, each with the model it will be asked for.

    Their failures would otherwise surface only inside trials: a judge that refuses its model
    makes every judged trial unjudged after its retries, an LLM user that cannot answer fails
    every trial as a system error. Each refusal is named with its role, the endpoint's answer
    and the flags that set that endpoint.
    """
    from ..llm.client import openai_client, resolve_model

    for role, ep in role_endpoints(config):
        model = resolve_model(role, ep.model)
        where = ep.base_url or os.environ.get(f"THINKINGBOX_{role.upper()}_BASE_URL") or os.environ.get("OPENAI_BASE_URL") \
            or "the OpenAI API (no base URL)"
        client = openai_client(role, ep.base_url, ep.api_key, timeout=preflight_timeout(ep), max_retries=0)
        try:
            client.chat.completions.create(model=model, messages=[{"role": "user", "content": "Reply with OK."}],
                                           max_tokens=16)
        except Exception as exc:  # noqa: BLE001 - whatever it is, the trials would meet it too
            raise PreflightError(f"the {role} endpoint {where} refused a test request for model '{model}': "
                                 f"{endpoint_error(exc)}; check {_ROLE_FLAGS[role]}, or skip the checks before the run "
                                 "(--no-preflight)") from exc


class ToolsIgnoredError(PreflightError):
    """The agent endpoint answered a request that needs its one tool without a tool call."""


def _capped(kwargs: dict[str, Any], limit: int) -> dict[str, Any]:
    return {k: min(v, limit) for k, v in kwargs.items() if k in ("max_tokens", "max_completion_tokens")}
