"""The model reader's reply taken apart and checked: the reading object it ends with, in the domain's terms, or ``ReadingError``.

The check does not trust the endpoint's structured output: keys, types, enums from the
vocabulary and sentence numbers are checked again, so a reply either is a reading of these
sentences or is refused as a whole.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .claims import ClaimsVocabulary
from .reader_prompt import MODALITIES, NO_ROLE, VALUE_KINDS, action_names


class ReadingError(ValueError):
    """A reply that is not a usable reading: it does not parse, names what the domain does not have, or points at words not written."""


_CODE_FENCE_RE = re.compile(r"```(?:json)?\s*\n(.*?)\n\s*```\s*$", re.DOTALL)


def _json_object(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _ending_object(text: str) -> dict[str, Any] | None:
    """The JSON object that ends ``text`` and starts a line (an object printed over several lines after some thinking)."""
    decoder = json.JSONDecoder()
    starts = [m.start() for m in re.finditer(r"^[ \t]*\{", text, re.MULTILINE)]
    for start in reversed(starts[-8:]):  # the last few candidates only: a long reply is not searched through
        try:
            value, end = decoder.raw_decode(text, text.index("{", start))
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict) and not text[end:].strip():
            return value
    return None


def parse_reply(text: str | None) -> dict[str, Any]:
    """The reading object of a reply, else ReadingError.

    Read, in order: the whole reply (what a schema-constrained endpoint returns); a code fence
    that ends it; its last non-empty line; an object that starts a line and ends the reply. A
    reasoning model's ``<think>`` block is dropped first. Nothing in the middle of a reply is
    taken: the reading is what the reply ends with.
    """
    raw = (text or "").strip()
    if "</think>" in raw:
        raw = raw.rsplit("</think>", 1)[1].strip()
    if not raw:
        raise ReadingError("the reply is empty")
    found = _json_object(raw)
    if found is None and (m := _CODE_FENCE_RE.search(raw)):
        found = _json_object(m.group(1).strip())
    if found is None:
        found = _json_object(raw.splitlines()[-1].strip())
    if found is None:
        found = _ending_object(raw)
    if found is None:
        raise ReadingError(f"the reply is not a JSON object: {raw[:200]!r}")
    return found


def _need(cond: bool, message: str) -> None:
    if not cond:
        raise ReadingError(message)


def _exact_keys(obj: Any, keys: set[str], where: str) -> None:
    _need(isinstance(obj, dict), f"{where} is not an object")
    _need(set(obj) == keys, f"{where} has keys {sorted(obj)}, not {sorted(keys)}")


def check_payload(payload: dict[str, Any], vocab: ClaimsVocabulary, n_sentences: int) -> None:
    """Raise ReadingError unless ``payload`` is a reading of ``n_sentences`` sentences in the domain's terms (types and enums)."""
    _exact_keys(payload, {"claims", "concepts"}, "the reading")
    _need(isinstance(payload["claims"], list) and isinstance(payload["concepts"], list), "claims and concepts must be lists")
    actions, roles = set(action_names(vocab)), {*vocab.roles, NO_ROLE}

    def sentence_no(x: Any, where: str) -> None:
        _need(type(x) is int and 1 <= x <= n_sentences, f"{where}: sentence {x!r} is not one of 1..{n_sentences}")

    for i, c in enumerate(payload["claims"]):
        where = f"claim {i + 1}"
        _exact_keys(c, {"sentence", "clause", "phrase", "action", "object", "polarity", "modality", "waits_for_customer",
                        "reported", "values"}, where)
        sentence_no(c["sentence"], where)
        _need(isinstance(c["clause"], str) and isinstance(c["phrase"], str), f"{where}: clause and phrase must be strings")
        _need(c["action"] in actions, f"{where}: action {c['action']!r} is not one of {sorted(actions)}")
        _exact_keys(c["object"], {"text", "id"}, f"{where}'s object")
        _need(isinstance(c["object"]["text"], str) and isinstance(c["object"]["id"], str), f"{where}: object fields must be strings")
        _need(c["polarity"] in ("affirmed", "negated"), f"{where}: polarity {c['polarity']!r}")
        _need(c["modality"] in MODALITIES, f"{where}: modality {c['modality']!r}")
        _need(type(c["waits_for_customer"]) is bool and type(c["reported"]) is bool, f"{where}: flags must be true or false")
        _need(isinstance(c["values"], list), f"{where}: values must be a list")
        for j, v in enumerate(c["values"]):
            vw = f"{where}, value {j + 1}"
            _exact_keys(v, {"text", "kind", "normalized", "role"}, vw)
            _need(isinstance(v["text"], str) and v["text"].strip() != "" and isinstance(v["normalized"], str),
                  f"{vw}: text and normalized must be strings, text not empty")
            _need(v["kind"] in VALUE_KINDS, f"{vw}: kind {v['kind']!r}")
            _need(v["role"] in roles, f"{vw}: role {v['role']!r} is not one of {sorted(roles)}")
    for i, k in enumerate(payload["concepts"]):
        where = f"concept {i + 1}"
        _exact_keys(k, {"concept", "sentence"}, where)
        sentence_no(k["sentence"], where)
        _need(k["concept"] in vocab.concepts or (not vocab.concepts and k["concept"] == NO_ROLE),
              f"{where}: {k['concept']!r} is not one of the domain's concepts {sorted(vocab.concepts)}")
