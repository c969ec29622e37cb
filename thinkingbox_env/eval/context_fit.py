"""Before a run: does each task's opening fit the agent model's served context?

A trial's first request holds the agent's instructions, the policy, every tool schema
and the customer's opening, and the server must leave room for ``--max-tokens`` after
it. Where that cannot fit, every trial of the task ends at once as ``context_overflow``:
scored, but a measure of the server's window, not of the model. So before the first
trial the openings are measured with the served model's own tokenizer and chat
template (a request with a one-token answer, whose ``usage.prompt_tokens`` says the
size) against the context the server states, or ``--context-length`` where it states
none, and the tasks that cannot fit are named with their figures.

The openings of a domain differ only in the customer's request, so a domain costs
one or two requests: its longest opening (all fit if that does) and its shortest
(none fit if that does not); only a domain split by the limit is measured task by task.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass, field
from typing import Any

from ..agents.context_overflow import overflow_from_status_error

log = logging.getLogger(__name__)

ON_OVERFLOW = ("stop", "skip", "run")
SERVER_INFO_SECONDS = 10.0  # how long /props and /v1/models may take to answer


@dataclass
class ServedContext:
    """The tokens the agent model's server can hold per request, and where that figure came from."""

    tokens: int
    source: str


@dataclass
class Opening:
    """One task's opening request: its prompt tokens (exact when ``measured``, else a bound from its domain) and whether it fits."""

    task_id: str
    prompt_tokens: int | None
    fits: bool
    measured: bool = True
    at_least: bool = False  # the figure is a lower bound: a shorter opening's size, which this one cannot be below


@dataclass
class ContextFit:
    """The check's outcome: the context, the completion budget added to each opening, and every task's figure."""

    context: ServedContext
    budget: int
    openings: list[Opening] = field(default_factory=list)
    # per domain, with compact tool schemas: (characters, tokens) of its longest opening, full and compact
    savings: dict[str, dict[str, Any]] = field(default_factory=dict)
    compact: bool = False  # the openings were measured with compact tool schemas already

    @property
    def overflowing(self) -> list[Opening]:
        return [o for o in self.openings if not o.fits]

    def describe(self, limit: int = 10) -> str:
        """The tasks that cannot fit, with their figures, and what to change."""
        bad = self.overflowing
        lines = [f"{len(bad)} of {len(self.openings)} selected task(s) cannot fit their opening in the served context of "
                 f"{self.context.tokens:,} tokens ({self.context.source}) with {self.budget:,} tokens left for the answer:"]
        for o in bad[:limit]:
            size = "more than the context" if o.prompt_tokens is None else \
                f"{'at least ' if o.at_least else ''}{o.prompt_tokens:,} prompt tokens"
            total = "" if o.prompt_tokens is None else f" = {o.prompt_tokens + self.budget:,}"
            lines.append(f"  {o.task_id}: {size} + {self.budget:,} (--max-tokens){total} > {self.context.tokens:,}")
        if len(bad) > limit:
            lines.append(f"  ... and {len(bad) - limit} more")
        compact = "" if self.compact else "show compact tool schemas (--compact-tools), "
        lines.append(f"Lower --max-tokens, {compact}serve a longer context (llama.cpp: -c N; vLLM: --max-model-len N), or pass "
                     "--on-overflow skip (leave these tasks out) or --on-overflow run (run them: they end as context_overflow "
                     "failures)")
        return "\n".join(lines)


def _root(base_url: str) -> str:
    url = base_url.rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url


def _get_json(url: str, api_key: str | None, timeout: float) -> Any:
    import httpx

    try:
        response = httpx.get(url, headers={"Authorization": f"Bearer {api_key or 'EMPTY'}"}, timeout=timeout)
    except httpx.HTTPError:
        return None
    if response.status_code != 200:
        return None
    try:
        return response.json()
    except ValueError:
        return None


def _positive(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def served_context(base_url: str | None, model: str | None, api_key: str | None = None,
                   timeout: float = SERVER_INFO_SECONDS) -> ServedContext | None:
    """The context the server states: llama.cpp's ``/props`` (the slot's ``n_ctx``), else ``/v1/models``.

    ``/v1/models`` gives vLLM's ``max_model_len``, or llama.cpp's ``meta.n_ctx_train`` (the
    context the model was trained with, the server's default window). None when the
    server states none (llama-cpp-python, hosted APIs): then ``--context-length`` says it.
    """
    base = base_url or os.environ.get("THINKINGBOX_AGENT_BASE_URL") or os.environ.get("OPENAI_BASE_URL")
    if not base:
        return None
    props = _get_json(_root(base) + "/props", api_key, timeout)
    if isinstance(props, dict):
        settings = props.get("default_generation_settings")
        n_ctx = _positive(settings.get("n_ctx")) if isinstance(settings, dict) else None
        n_ctx = n_ctx or _positive(props.get("n_ctx"))
        if n_ctx:
            return ServedContext(n_ctx, "the server's /props n_ctx")
    listing = _get_json(base.rstrip("/") + "/models", api_key, timeout)
    entries = listing.get("data") if isinstance(listing, dict) else None
    if not isinstance(entries, list):
        return None
    entries = [e for e in entries if isinstance(e, dict)]
    chosen = [e for e in entries if e.get("id") == model] or (entries if len(entries) == 1 else [])
    for entry in chosen:
        if _positive(entry.get("max_model_len")):
            return ServedContext(entry["max_model_len"], "the server's /v1/models max_model_len")
        meta = entry.get("meta")
        if isinstance(meta, dict) and _positive(meta.get("n_ctx_train")):
            return ServedContext(meta["n_ctx_train"], "the server's /v1/models meta.n_ctx_train")
    return None


def completion_budget(request: dict[str, Any]) -> int:
    """The tokens a request keeps for its answer (``max_tokens`` or ``max_completion_tokens``; 0 when it sets neither)."""
    return int(request.get("max_tokens") or request.get("max_completion_tokens") or 0)


def prompt_tokens(client: Any, request: dict[str, Any]) -> tuple[int | None, bool]:
    """The request's prompt size as the server counts it, asking for a one-token answer; (figure, fits at all).

    A server that refuses the prompt as too long says so: then the figure is what the
    refusal names (or None) and the prompt does not fit. Any other refusal propagates.
    """
    import openai

    probe = {k: v for k, v in request.items() if k not in ("max_tokens", "max_completion_tokens")}
    probe["max_completion_tokens" if "max_completion_tokens" in request else "max_tokens"] = 1
    try:
        response = client.chat.completions.create(**probe)
    except openai.APIStatusError as exc:
        overflow = overflow_from_status_error(exc)
        if overflow is None:
            raise
        return overflow.figures.prompt_tokens, False
    usage = getattr(response, "usage", None)
    return (int(usage.prompt_tokens) if usage is not None and usage.prompt_tokens else None), True


def request_chars(request: dict[str, Any]) -> int:
    """Characters of what the model reads of a request: the messages' text and the tool schemas."""
    text = sum(len(str(m.get("content") or "")) for m in request.get("messages") or [])
    return text + len(json.dumps(request.get("tools") or []))


def _opening_length(task_id: str) -> int:
    """The customer's opening request's length: the only part of a domain's openings that differs between tasks."""
    from ..tasks.lookup import load_task

    try:
        return len(load_task(task_id).user.opening)
    except Exception:  # noqa: BLE001 - a task from another source: measured like any other, in the given order
        return 0


class _Measurer:
    """The openings measured so far, each request kept (the compact-savings figures reuse them)."""

    def __init__(self, config: Any, client: Any, context: ServedContext):
        self.config, self.client, self.context = config, client, context
        self.sizes: dict[str, tuple[int | None, bool]] = {}
        self.requests: dict[str, dict[str, Any]] = {}
        self.budget: int | None = None

    def measure(self, task_id: str) -> bool:
        """Measure one task's opening (once); False when the agent sends no chat request to measure."""
        from .opening import opening_request

        if task_id in self.sizes:
            return True
        request = opening_request(self.config, task_id)
        if request is None:
            return False
        if self.budget is None:
            self.budget = completion_budget(request)
        self.requests[task_id] = request
        try:
            self.sizes[task_id] = prompt_tokens(self.client, request)
        except Exception as exc:  # noqa: BLE001 - whatever it is, the openings cannot be measured
            from .preflight import PreflightError, endpoint_error, endpoint_location

            raise PreflightError(f"the agent endpoint {endpoint_location(self.config.agent_endpoint)} failed the request that measures "
                                 f"the opening of {task_id} against its context: {endpoint_error(exc)}; allow it more time "
                                 "(--timeout), or skip the checks before the run (--no-preflight)") from exc
        return True

    def fits(self, task_id: str) -> bool:
        tokens, accepted = self.sizes[task_id]
        return accepted and tokens is not None and tokens + (self.budget or 0) <= self.context.tokens

    def domain(self, ordered: list[str]) -> list[Opening] | None:
        """Every task of one domain, shortest opening first: the longest measured, then the shortest, then all if split."""
        if not self.measure(ordered[-1]):
            return None
        longest = ordered[-1]
        if self.fits(longest):  # the longest fits: so do the others, each at most its size
            return [Opening(t, self.sizes[longest][0], True, measured=t == longest) for t in ordered]
        self.measure(ordered[0])
        if not self.fits(ordered[0]):  # the shortest does not fit: none does, each at least its size
            floor = self.sizes[ordered[0]][0]
            return [Opening(t, self.sizes[t][0] if t in self.sizes else floor, False, measured=t in self.sizes,
                            at_least=t not in self.sizes) for t in ordered]
        for t in ordered:
            self.measure(t)
        return [Opening(t, self.sizes[t][0], self.fits(t)) for t in ordered]


def check_context(config: Any, task_ids: list[str], context_length: int | None = None,
                  client: Any = None) -> ContextFit | None:
    """Measure the selected tasks' openings against the served context; None when no context is known.

    ``context_length`` states the context where the server does not (it wins over what the
    server says). ``client`` is the agent endpoint's client (built from the config if not given).
    With ``config.compact_tools`` the result also says what the compact schemas save per domain.
    """
    import openai

    from ..llm.client import openai_client
    from .preflight import preflight_timeout

    ep = config.agent_endpoint
    if context_length is not None:
        context: ServedContext | None = ServedContext(context_length, "--context-length")
    else:
        context = served_context(ep.base_url, ep.model, ep.api_key, min(float(ep.timeout), SERVER_INFO_SECONDS))
    if context is None:
        return None
    # a measuring request reads the whole opening, as long as a trial's first turn: it gets the run's own read timeout
    timeout: Any = openai.Timeout(ep.timeout, connect=preflight_timeout(ep).connect)
    client = client or openai_client("agent", ep.base_url, ep.api_key, timeout=timeout, max_retries=0)
    by_domain: dict[str, list[str]] = {}
    for t in task_ids:
        by_domain.setdefault(t.split("/", 1)[0], []).append(t)
    measurer = _Measurer(config, client, context)
    openings: list[Opening] = []
    savings: dict[str, dict[str, Any]] = {}
    for domain, tasks in by_domain.items():
        ordered = sorted(tasks, key=_opening_length)
        found = measurer.domain(ordered)
        if found is None:
            return None  # an agent that sends no chat requests: nothing to measure
        openings += found
        if config.compact_tools:
            savings[domain] = _savings(config, client, ordered[-1], measurer.requests[ordered[-1]], measurer.sizes[ordered[-1]])
    order = {t: i for i, t in enumerate(task_ids)}
    return ContextFit(context, measurer.budget or 0, sorted(openings, key=lambda o: order[o.task_id]), savings,
                      compact=bool(config.compact_tools))


def _savings(config: Any, client: Any, task_id: str, compact: dict[str, Any], compact_size: tuple[int | None, bool]) -> dict[str, Any]:
    """What the compact tool schemas save on a domain's longest opening: characters always, tokens as the server counts them."""
    from .opening import opening_request

    full = opening_request(config, task_id, compact_tools=False) or {}
    full_tokens, full_ok = prompt_tokens(client, full)
    tokens = None
    if full_ok and compact_size[1] and full_tokens is not None and compact_size[0] is not None:
        tokens = [full_tokens, compact_size[0]]
    return {"task": task_id, "chars": [request_chars(full), request_chars(compact)], "tokens": tokens}


def compact_savings(config: Any, task_ids: list[str]) -> dict[str, dict[str, Any]]:
    """Characters the compact tool schemas save on each domain's longest opening, counted locally (no server asked)."""
    from .opening import opening_request

    out: dict[str, dict[str, Any]] = {}
    by_domain: dict[str, list[str]] = {}
    for t in task_ids:
        by_domain.setdefault(t.split("/", 1)[0], []).append(t)
    for domain, tasks in by_domain.items():
        longest = max(tasks, key=_opening_length)
        full = opening_request(config, longest, compact_tools=False)
        compact = opening_request(config, longest, compact_tools=True)
        if full is None or compact is None:
            continue
        out[domain] = {"task": longest, "chars": [request_chars(full), request_chars(compact)], "tokens": None}
    return out
