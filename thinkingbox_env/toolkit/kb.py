"""Offline ranking of a domain's knowledge-base documents for its policy-search tool.

BM25 over word tokens: no server and no model download, so search works in any
sandbox and ranks the same way on every run.
"""

from __future__ import annotations

import re
import threading
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from rank_bm25 import BM25Okapi

if TYPE_CHECKING:
    from ..state import ToolContext

_TOKEN_RE = re.compile(r"[a-z0-9]+(?:[.%$][a-z0-9]+)*")
_LOCK = threading.Lock()


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens; the same function indexes the documents and the query, so they match."""
    return _TOKEN_RE.findall(text.lower())


def kb_documents(folder: Path | None) -> dict[str, str]:
    """The knowledge-base documents of a domain's ``kb/`` folder by file name, in name order (none where it has none)."""
    if folder is None or not folder.is_dir():
        return {}
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.md"))}


@cache
def _index(folder: Path | None) -> tuple[list[str], list[str], BM25Okapi | None]:
    docs = kb_documents(folder)
    names, texts = list(docs), list(docs.values())
    return names, texts, BM25Okapi([tokenize(t) for t in texts]) if texts else None


def search_knowledge_base(db: ToolContext, query: str, top_k: int = 3) -> list[dict]:
    """Search the knowledge base of the domain the episode state ``db`` belongs to (``db.knowledge_base``).

    Tools call this rather than naming their domain, so a domain's policy-search
    tool is the same few lines everywhere and a renamed or copied domain keeps working.
    """
    return search_documents(db.knowledge_base, query, top_k)


def search_documents(folder: Path | None, query: str, top_k: int = 3) -> list[dict]:
    """The documents of the knowledge-base folder ``folder`` that match ``query``, best first.

    ``[{"source", "score", "text"}]``; documents that share no word are left out.
    """
    with _LOCK:
        names, texts, bm25 = _index(folder)
    terms = tokenize(query)
    if bm25 is None or not terms:
        return []
    scores = bm25.get_scores(terms)
    ranked = sorted(range(len(names)), key=lambda i: (-scores[i], names[i]))
    out = []
    for i in ranked[:top_k]:
        if not any(t in set(tokenize(texts[i])) for t in terms):
            continue
        out.append({"source": names[i], "score": round(float(scores[i]), 4), "text": texts[i]})
    return out
