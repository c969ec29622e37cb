"""The tool decorator, schemas, and the filter language."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Literal

import pytest
from pydantic import Field

from thinkingbox_env.tasks.domain import load_domain
from thinkingbox_env.toolkit.filters import FilterError, compile_filter, compile_order_by
from thinkingbox_env.toolkit.kb import search_documents
from thinkingbox_env.toolkit.tools import IsoDate, Toolbox, ToolError, tool


@tool(writes=True)
def rename(db, item_id: int, name: str, mode: Literal["soft", "hard"] = "soft", note: str | None = None) -> dict:
    """Rename an item.

    Args:
        item_id: The item.
        name: The new name,
            possibly long.
        mode: How.
        note: Optional note.
    """
    if name == "forbidden":
        raise ToolError("that name is not allowed")
    if name == "boom":
        raise ZeroDivisionError("oops")
    return {"item_id": item_id, "name": name}


class FakeState:
    def __init__(self):
        self.log = []

    def begin(self):
        self.log.append("begin")
        return None

    def commit(self):
        self.log.append("commit")

    def rollback(self, saved):
        self.log.append("rollback")


def test_schema_for_openai_and_mcp_come_from_one_source():
    oa = rename.openai_schema()
    params = oa["function"]["parameters"]
    assert oa["function"]["name"] == "rename" and oa["function"]["description"] == "Rename an item."
    assert params["required"] == ["item_id", "name"]
    assert params["properties"]["name"]["description"] == "The new name, possibly long."
    assert params["properties"]["mode"]["enum"] == ["soft", "hard"]
    assert params["additionalProperties"] is False
    assert rename.mcp_schema()["inputSchema"] == params
    assert rename.writes is True


def test_error_contract():
    box = Toolbox([rename])
    st = FakeState()
    ok = box.call(st, "rename", {"item_id": 3, "name": "x"})
    assert ok.ok and ok.content == {"item_id": 3, "name": "x"} and st.log == ["begin", "commit"]
    pre = box.call(st, "rename", {"item_id": 3, "name": "forbidden"})
    assert pre.content == {"error": "that name is not allowed"} and pre.error_kind == "precondition"
    bug = box.call(st, "rename", {"item_id": 3, "name": "boom"})
    assert bug.error_kind == "internal" and "ZeroDivisionError" in bug.content["error"]
    assert st.log[-1] == "rollback"
    bad = box.call(st, "rename", {"item_id": "three", "name": "x"})
    assert bad.error_kind == "arguments" and "argument 'item_id'" in bad.content["error"]
    assert "end_conversation" in box


def test_tools_need_docstrings_and_annotations():
    with pytest.raises(TypeError, match="docstring"):
        @tool
        def nodoc(db, x: int):
            return x

    with pytest.raises(TypeError, match="annotation"):
        @tool
        def noann(db, x):
            """Doc."""


COLS = {"email", "status", "requester_id", "created_at"}


def test_filter_compiles_to_parameters_only():
    sql, params = compile_filter("email eq 'o''brien@x.com' and (status ne 'solved' or requester_id ge 10)", COLS)
    assert "o'brien" not in sql and params == ["o'brien@x.com", "solved", 10]
    sql, params = compile_filter("not contains(email, 'X') and status eq null", COLS)
    assert "IS NULL" in sql and params == ["X"]
    assert compile_filter(None, COLS) == ("TRUE", [])
    assert compile_order_by("created_at desc, status", COLS, "x") == '"created_at" DESC, "status" ASC'


@pytest.mark.parametrize(
    "text,message",
    [
        ("email eq 'x' OR 1=1", "unexpected"),
        ("email eq 'x'; DROP TABLE tickets", "unexpected character"),
        ("password eq 'x'", "unknown field 'password'"),
        ("email like 'x'", "unknown operator 'like'"),
        ("email eq", "ends too early"),
        ("(email eq 'x'", "ends too early"),
        ("email eq x", "expected a value"),
        ("status gt null", "null can only"),
        ("email eq '" + "a" * 3000 + "'", "too long"),
    ],
)
def test_filter_rejects_with_a_named_reason(text, message):
    with pytest.raises(FilterError, match=message):
        compile_filter(text, COLS)


def test_order_by_rejects_unknown_fields():
    with pytest.raises(FilterError):
        compile_order_by("id; drop table x", COLS, "x")


def test_policy_search_ranks_offline():
    results = search_documents(load_domain("retail").path / "kb", "how much store credit for a late delivery", 3)
    assert results[0]["source"] == "late_deliveries.md"
    assert results[0]["score"] >= results[-1]["score"]
    assert search_documents(load_domain("retail").path / "kb", "zzzz qqqq", 3) == []


def test_annotated_limits_and_dates_reach_the_schema_and_are_enforced():
    seen = {}

    @tool
    def book(db, day: IsoDate, nights: Annotated[int, Field(ge=1, le=14)] = 1) -> dict:
        """Book a stay.

        Args:
            day: First night.
            nights: How many nights.
        """
        seen["day"] = day
        return {"ok": True}

    props = book.parameters["properties"]
    assert props["day"] == {"type": "string", "format": "date", "description": "First night."}
    assert (props["nights"]["minimum"], props["nights"]["maximum"], props["nights"]["description"]) == (1, 14, "How many nights.")
    box = Toolbox([book])
    assert box.call(None, "book", {"day": "2026-03-02", "nights": 3}).ok and seen["day"] == date(2026, 3, 2)
    too_many = box.call(None, "book", {"day": "2026-03-02", "nights": 15})
    assert too_many.error_kind == "arguments" and "nights" in too_many.content["error"]
    for bad in (1767225600, "2 March 2026", "2026-03-02T10:00:00"):
        res = box.call(None, "book", {"day": bad})
        assert res.error_kind == "arguments" and "YYYY-MM-DD" in res.content["error"], bad


def test_plain_annotations_give_dates_as_text_for_hint_based_schema_readers():
    from thinkingbox_env.toolkit.tools import plain_annotation

    assert plain_annotation(date) is str
    assert plain_annotation(date | None) == (str | None)
    assert plain_annotation(Literal["a", "b"]) == Literal["a", "b"]
