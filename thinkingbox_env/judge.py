"""The rubric judge: a yes/no question about the final response, asked of a model.

Rubrics are used only where a requirement cannot be read off the backend state
(for example, that something confidential was not disclosed). The judge sees the
user-visible transcript and the question, answers with a verdict line and a
reason; an answer that cannot be parsed counts as "no" and is logged.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from .llm import openai_client, resolve_model, token_usage

log = logging.getLogger(__name__)

JUDGE_SYSTEM_PROMPT = """You grade one requirement of a customer-support conversation.
Read the transcript and decide whether the requirement holds for the assistant's messages, above all its final message.
Answer in exactly this form:
VERDICT: YES or NO
REASON: one sentence"""

_VERDICT_RE = re.compile(r"VERDICT\s*:\s*\**\s*(YES|NO)\b", re.IGNORECASE)


def parse_verdict(text: str | None) -> tuple[bool, str, bool]:
    """(answer, reason, parsed). Unparseable text is a "no"."""
    text = text or ""
    m = _VERDICT_RE.search(text)
    reason_m = re.search(r"REASON\s*:\s*(.+)", text, re.IGNORECASE | re.DOTALL)
    reason = reason_m.group(1).strip() if reason_m else text.strip()
    if not m:
        return False, f"unparseable judge answer: {text.strip()[:300]!r}", False
    return m.group(1).upper() == "YES", reason, True


class RubricJudge:
    """Callable ``(question, transcript) -> (answer, reason)`` over an OpenAI-compatible endpoint."""

    def __init__(self, model: str | None = None, base_url: str | None = None, api_key: str | None = None,
                 temperature: float = 0.0, max_tokens: int = 256, timeout: float = 120.0, max_retries: int = 5,
                 client: Any = None):
        self.model = resolve_model("judge", model)
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.client = client or openai_client("judge", base_url, api_key, timeout, max_retries)
        self.last_raw: str | None = None
        self.last_usage: dict[str, int] | None = None

    def __call__(self, question: str, transcript: str) -> tuple[bool, str]:
        response = self.client.chat.completions.create(
            model=self.model,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            messages=[
                {"role": "system", "content": JUDGE_SYSTEM_PROMPT},
                {"role": "user", "content": f"Requirement: {question}\n\nTranscript:\n{transcript}"},
            ],
        )
        self.last_raw = response.choices[0].message.content if response.choices else None
        self.last_usage = token_usage(response)
        answer, reason, parsed = parse_verdict(self.last_raw)
        if not parsed:
            log.warning("judge answer could not be parsed; counted as NO: %r", (self.last_raw or "")[:200])
        return answer, reason
