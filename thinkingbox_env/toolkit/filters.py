"""A small OData-style filter language, compiled to parameterised SQL.

Ticketing and CRM APIs let callers filter with expressions such as
``email eq 'a@b.com' and (status ne 'solved' or priority eq 'high')``. Agents
write these by hand, so the parser accepts exactly this grammar and rejects
everything else with a message that names the offending token. Column names are
checked against a whitelist and values are always bound as parameters: nothing
the agent writes is ever spliced into SQL text.

    expr    := term ("or" term)*
    term    := factor ("and" factor)*
    factor  := "not" factor | "(" expr ")" | compare | "contains(" column "," value ")"
    compare := column op value          op: eq ne gt ge lt le
    value   := 'text' (with '' for a quote) | number | true | false | null
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .tools import ToolError

if TYPE_CHECKING:
    from ..state import ToolContext

_TOKEN_RE = re.compile(
    r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<num>-?\d+(?:\.\d+)?)|(?P<word>[A-Za-z_][A-Za-z0-9_]*)|(?P<punct>[(),]))"
)
_OPS = {"eq": "=", "ne": "<>", "gt": ">", "ge": ">=", "lt": "<", "le": "<="}
MAX_FILTER_LENGTH = 2000


class FilterError(ValueError):
    """A filter expression the agent wrote that cannot be parsed; its message is returned to the agent as the tool's error."""
    pass


@dataclass
class _Tok:
    kind: str
    text: str
    pos: int


def _tokenize(text: str) -> list[_Tok]:
    toks, pos = [], 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN_RE.match(text, pos)
        if not m or m.end() == pos:
            raise FilterError(f"unexpected character {text[pos:].lstrip()[:1]!r} at position {pos}")
        kind = m.lastgroup or ""
        toks.append(_Tok(kind, m.group(kind), m.start(kind)))
        pos = m.end()
    return toks


class _Parser:
    def __init__(self, text: str, columns: set[str]):
        self.toks = _tokenize(text)
        self.i = 0
        self.columns = columns
        self.params: list[Any] = []

    def peek(self) -> _Tok | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self) -> _Tok:
        tok = self.peek()
        if tok is None:
            raise FilterError("the filter ends too early")
        self.i += 1
        return tok

    def expect(self, text: str) -> None:
        tok = self.take()
        if tok.text.lower() != text:
            raise FilterError(f"expected '{text}' at position {tok.pos}, found {tok.text!r}")

    def is_word(self, word: str) -> bool:
        tok = self.peek()
        return tok is not None and tok.kind == "word" and tok.text.lower() == word

    def expr(self) -> str:
        parts = [self.term()]
        while self.is_word("or"):
            self.take()
            parts.append(self.term())
        return parts[0] if len(parts) == 1 else "(" + " OR ".join(parts) + ")"

    def term(self) -> str:
        parts = [self.factor()]
        while self.is_word("and"):
            self.take()
            parts.append(self.factor())
        return parts[0] if len(parts) == 1 else "(" + " AND ".join(parts) + ")"

    def column(self) -> str:
        tok = self.take()
        if tok.kind != "word" or tok.text not in self.columns:
            raise FilterError(f"unknown field {tok.text!r} at position {tok.pos}; fields: {', '.join(sorted(self.columns))}")
        return f'"{tok.text}"'

    def value(self) -> Any:
        tok = self.take()
        if tok.kind == "str":
            return tok.text[1:-1].replace("''", "'")
        if tok.kind == "num":
            return float(tok.text) if "." in tok.text else int(tok.text)
        if tok.kind == "word" and tok.text.lower() in ("true", "false"):
            return tok.text.lower() == "true"
        if tok.kind == "word" and tok.text.lower() == "null":
            return None
        raise FilterError(f"expected a value at position {tok.pos}, found {tok.text!r} (quote text values: 'like this')")

    def factor(self) -> str:
        tok = self.peek()
        if tok is None:
            raise FilterError("the filter ends too early")
        if self.is_word("not"):
            self.take()
            return f"(NOT {self.factor()})"
        if tok.text == "(":
            self.take()
            inner = self.expr()
            self.expect(")")
            return inner
        if self.is_word("contains") and self.i + 1 < len(self.toks) and self.toks[self.i + 1].text == "(":
            self.take()
            self.expect("(")
            col = self.column()
            self.expect(",")
            val = self.value()
            self.expect(")")
            self.params.append(str(val))
            return f"contains(lower(CAST({col} AS VARCHAR)), lower(?))"
        col = self.column()
        op_tok = self.take()
        op = _OPS.get(op_tok.text.lower())
        if op is None:
            raise FilterError(f"unknown operator {op_tok.text!r} at position {op_tok.pos}; use one of {', '.join(_OPS)}")
        val = self.value()
        if val is None:
            if op not in ("=", "<>"):
                raise FilterError(f"null can only be compared with eq or ne (position {op_tok.pos})")
            return f"{col} IS {'NOT ' if op == '<>' else ''}NULL"
        self.params.append(val)
        if isinstance(val, str):
            return f"CAST({col} AS VARCHAR) {op} ?"
        return f"{col} {op} ?"


def compile_filter(text: str | None, columns: set[str]) -> tuple[str, list[Any]]:
    """``(sql_condition, params)`` for a filter expression; ``("TRUE", [])`` when empty."""
    if text is None or not text.strip():
        return "TRUE", []
    if len(text) > MAX_FILTER_LENGTH:
        raise FilterError(f"the filter is too long ({len(text)} characters; the limit is {MAX_FILTER_LENGTH})")
    p = _Parser(text, columns)
    sql = p.expr()
    if p.peek() is not None:
        tok = p.peek()
        raise FilterError(f"unexpected {tok.text!r} at position {tok.pos}")  # type: ignore[union-attr]
    return sql, p.params


def compile_order_by(text: str | None, columns: set[str], default: str) -> str:
    """``"created_at desc, id"`` -> SQL ORDER BY list, columns whitelisted."""
    if text is None or not text.strip():
        return default
    parts = []
    for item in text.split(","):
        words = item.split()
        if not words or len(words) > 2 or words[0] not in columns:
            raise FilterError(f"cannot order by {item.strip()!r}; fields: {', '.join(sorted(columns))}")
        direction = words[1].lower() if len(words) == 2 else "asc"
        if direction not in ("asc", "desc"):
            raise FilterError(f"order direction must be asc or desc, got {words[1]!r}")
        parts.append(f'"{words[0]}" {direction.upper()}')
    return ", ".join(parts)


def search_rows(db: ToolContext, table: str, columns: tuple[str, ...], filter: str | None, order_by: str | None,
                limit: int, offset: int, default_order: str = '"id" ASC') -> dict[str, Any]:
    """The body of a list/search tool, so every domain pages and filters the same way.

    Paging is validated, the filter and ordering are compiled to parameters, and the result is
    ``{"items", "count"}``. Bad input becomes a ``ToolError`` the agent reads.
    """
    if not 1 <= limit <= 100:
        raise ToolError("limit must be between 1 and 100")
    if offset < 0:
        raise ToolError("offset must not be negative")
    try:
        where, params = compile_filter(filter, set(columns))
        order = compile_order_by(order_by, set(columns), default_order)
    except FilterError as exc:
        raise ToolError(f"invalid filter: {exc}") from exc
    rows = db.query(
        f"SELECT {', '.join(columns)} FROM {table} WHERE {where} ORDER BY {order} LIMIT ? OFFSET ?",
        [*params, limit, offset],
    )
    return {"items": rows, "count": len(rows)}
