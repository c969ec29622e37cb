"""One way to build an OpenAI-compatible client for every model the package talks to.

The simulated user, the judge and model agents each read their endpoint, model
and key from arguments first, then from their own environment variables
(``THINKINGBOX_<ROLE>_BASE_URL`` / ``_MODEL`` / ``_API_KEY``), then from the
standard ``OPENAI_*`` ones. Retries with backoff on 408/409/429/5xx and on
connection errors are the client's own.
"""

from __future__ import annotations

import os
from typing import Any

DEFAULT_MODEL = "gpt-4o-mini"


def resolve_model(role: str, model: str | None) -> str:
    return model or os.environ.get(f"THINKINGBOX_{role.upper()}_MODEL") or DEFAULT_MODEL


def openai_client(role: str, base_url: str | None = None, api_key: str | None = None,
                  timeout: float = 120.0, max_retries: int = 5) -> Any:
    from openai import OpenAI

    prefix = f"THINKINGBOX_{role.upper()}_"
    return OpenAI(
        base_url=base_url or os.environ.get(prefix + "BASE_URL") or os.environ.get("OPENAI_BASE_URL"),
        api_key=api_key or os.environ.get(prefix + "API_KEY") or os.environ.get("OPENAI_API_KEY") or "EMPTY",
        timeout=timeout,
        max_retries=max_retries,
    )
