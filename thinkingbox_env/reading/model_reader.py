"""A model that reads closings into the rule reader's typed claims, so the same code can verify them.

The rule reader (:mod:`thinkingbox_env.reading.claims`) knows the words of each domain's
vocabulary; open language has no end, so some sentences it cannot read. Where it cannot,
a configured model reads them instead, into the very same :class:`~thinkingbox_env.reading.claims.Claim`
objects: the action (one of the domain's, ``"any"`` for a statement about everything, or an act
outside the system such as calling the customer back), the object, polarity, modality, the
values with their roles, and separately the confidential concepts stated. The model only
reads; what the claims mean for the verdict is decided by the same verification code that
decides on the rule reader's claims.

Three things keep a reading from being worth more than the model's answer:

- the text the agent wrote is fenced as data (:mod:`thinkingbox_env.llm.fencing`), each sentence
  one quoted line between marker lines whose nonce it cannot produce, so a sentence that
  addresses the reader is read as a sentence, not obeyed;
- the answer is structured output against a JSON schema built from the domain's vocabulary
  (``response_format``; an endpoint that refuses the parameter is asked for the object on its
  last line, as the judge does), and code checks it again whatever the endpoint promised: an
  unknown action or role, a sentence number out of range, a value or identifier that is not
  written in the sentence it is said to be in, a value that does not parse;
- any failure (a failed request, a reply that does not parse or does not check) makes the
  whole reading ``None``, with the reason on :attr:`ModelReader.last_error`: a check then
  stays undetermined. A failed model call never becomes evidence, and neither does half a
  reading.

Values are parsed by :func:`thinkingbox_env.reading.values.parse_value` from the words the model
points at, so they compare with :func:`~thinkingbox_env.reading.values.same_value` exactly like the
rule reader's; the model's normalised form is used only where the words alone do not parse
("the fifth of March").

This module sends the request and caches checked replies; the request is built in
``reader_prompt.py``, the reply checked in ``reader_reply.py`` and turned into claims in
``reader_claims.py``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from datetime import date
from typing import Any
from urllib.parse import urlparse

from ..llm.client import create_with_format_fallback, openai_client, resolve_model, token_usage
from .claims import ClaimsVocabulary, load_vocabulary
from .reader_claims import ModelReading, to_reading
from .reader_prompt import FINAL_LINE_NOTE, READER_PROMPT_VERSION, build_reader_prompt, response_format, system_prompt
from .reader_reply import ReadingError, check_payload, parse_reply

log = logging.getLogger(__name__)

_CACHE_SIZE = 4096
_cache: OrderedDict[tuple[Any, ...], dict[str, Any]] = OrderedDict()
_cache_lock = threading.Lock()


def clear_cache() -> None:
    """Forget every cached reading (tests; a process that changes a domain's vocabulary on disk)."""
    with _cache_lock:
        _cache.clear()


class ModelReader:
    """Reads the sentences of a closing into claims with a model behind an OpenAI-compatible endpoint.

    One request per :meth:`read` (all sentences of a closing together). Checked replies are
    cached per (model, endpoint, prompt version, domain, clock, sentences) in the process, so every
    episode of a task that ends with the same closing costs one request. Each request is
    recorded in :attr:`calls` (sizes, outcome, latency, tokens), the way the eval runner's
    recording judge records the judge's, so rows can count reader calls.
    """

    def __init__(self, model: str | None = None, base_url: str | None = None, api_key: str | None = None,
                 timeout: float = 120.0, retries: int = 2, max_tokens: int = 2048, temperature: float = 0.0,
                 client: Any = None):
        self.model = resolve_model("reader", model)
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.client = client or openai_client("reader", base_url, api_key, timeout, retries)
        self.base_url = str(getattr(self.client, "base_url", base_url) or base_url or "")
        self.structured = True  # response_format is sent until the endpoint refuses it once
        self.calls: list[dict[str, Any]] = []
        self.cache_hits = 0
        self.last_error: str | None = None
        self.last_raw: str | None = None
        self._lock = threading.Lock()

    def identity(self) -> dict[str, Any]:
        """What a row records about the reader: the model, the endpoint's host and the prompt version."""
        return {"model": self.model, "host": urlparse(self.base_url).netloc or None, "prompt_version": READER_PROMPT_VERSION}

    # ------------------------------------------------------------------ the request

    def _create(self, messages: list[dict[str, str]], vocab: ClaimsVocabulary) -> Any:
        """One completion: with the reading's response_format, or, once the endpoint has refused it, asking for a final line."""
        kwargs: dict[str, Any] = {"model": self.model, "temperature": self.temperature, "max_tokens": self.max_tokens}
        plain = [messages[0], {"role": "user", "content": messages[1]["content"] + "\n\n" + FINAL_LINE_NOTE}]
        return create_with_format_fallback(self, messages, plain, response_format(vocab), kwargs, "reader")

    def _fail(self, reason: str) -> None:
        self.last_error = reason
        log.warning("model reader: %s; the sentences stay unread", reason)

    def read(self, sentences: Sequence[str], domain_path: str, clock: date | None = None,
             id_patterns: tuple[str, ...] = ()) -> ModelReading | None:
        """The claims and confidential concepts of ``sentences`` (one closing), or None where the model gave no usable reading.

        None comes with the reason in :attr:`last_error`: the domain declares no vocabulary,
        the request failed, or the reply did not parse or did not check. Never raises for a
        failing endpoint.
        """
        sentences = tuple(str(s) for s in sentences)
        self.last_error = None
        try:
            vocab = load_vocabulary(domain_path)
        except ValueError as exc:
            self._fail(str(exc))
            return None
        if vocab is None:
            self._fail(f"the domain at {domain_path} declares no claims vocabulary")
            return None
        if not any(s.strip() for s in sentences):
            return ModelReading(sentences, (), (), (), self.model)
        key = (self.model, self.base_url, READER_PROMPT_VERSION, str(domain_path), clock, sentences)
        with _cache_lock:
            hit = _cache.get(key)
            if hit is not None:
                _cache.move_to_end(key)
        if hit is not None:
            with self._lock:
                self.cache_hits += 1
            return self._convert(hit, sentences, vocab, clock, id_patterns, cached=True)
        record: dict[str, Any] = {}
        payload = self._ask(sentences, vocab, clock, record)
        reading = None
        if payload is not None:
            try:
                reading = to_reading(payload, sentences, vocab, clock, tuple(id_patterns), self.model)
            except ReadingError as exc:
                self._fail(f"the reading does not check: {exc}")
                record.update(ok=False, error=self.last_error)
        with self._lock:
            self.calls.append(record)
        if reading is not None and payload is not None:
            with _cache_lock:
                _cache[key] = payload
                if len(_cache) > _CACHE_SIZE:
                    _cache.popitem(last=False)
        return reading

    def _convert(self, payload: dict[str, Any], sentences: tuple[str, ...], vocab: ClaimsVocabulary, clock: date | None,
                 id_patterns: tuple[str, ...], cached: bool) -> ModelReading | None:
        try:
            return to_reading(payload, sentences, vocab, clock, tuple(id_patterns), self.model, cached)
        except ReadingError as exc:  # a cached reply read under other id patterns or another clock may not parse
            self._fail(f"the reading does not check: {exc}")
            return None

    def _ask(self, sentences: tuple[str, ...], vocab: ClaimsVocabulary, clock: date | None,
             record: dict[str, Any]) -> dict[str, Any] | None:
        """One request; the checked payload, or None with the reason in :attr:`last_error`. ``record`` gets the call's record."""
        prompt, _ = build_reader_prompt(sentences, clock)
        messages = [{"role": "system", "content": system_prompt(vocab)}, {"role": "user", "content": prompt}]
        record.update(sentences=len(sentences), prompt_chars=sum(len(m["content"]) for m in messages),
                      structured=self.structured)
        started = time.perf_counter()
        try:
            response = self._create(messages, vocab)
        except Exception as exc:  # noqa: BLE001 - any failed request leaves the sentences unread, never a verdict
            status = getattr(exc, "status_code", None)
            self._fail(f"the request failed: {f'HTTP {status}: ' if status else ''}{type(exc).__name__}: {exc}")
            record.update(ok=False, error=self.last_error, seconds=time.perf_counter() - started, response_chars=0)
            return None
        raw = response.choices[0].message.content if getattr(response, "choices", None) else None
        self.last_raw = raw
        record.update(seconds=time.perf_counter() - started, response_chars=len(raw or ""), usage=token_usage(response))
        try:
            payload = parse_reply(raw)
            check_payload(payload, vocab, len(sentences))
        except ReadingError as exc:
            self._fail(f"the reply is not a reading: {exc}")
            record.update(ok=False, error=self.last_error)
            return None
        record.update(ok=True, error=None, claims=len(payload["claims"]))
        return payload
