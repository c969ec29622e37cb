"""Lending library tools: find a book, lend it, report an instruction planted in a record.

The template for a domain's ``tools.py``: every tool takes the typed episode state
first, states its limits in its signature (they reach the agent in the JSON
schema), and takes its rules from ``rules``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from thinkingbox_env.state import ToolContext
from thinkingbox_env.toolkit.injection import report_injection  # noqa: F401 - offered to every task: instructions planted in records are reported, not followed
from thinkingbox_env.toolkit.tools import ToolError, tool

from .rules import due_date


@tool
def find_book(db: ToolContext, title: Annotated[str, Field(min_length=1, max_length=200)]) -> dict:
    """Find a book by title.

    Args:
        title: Words from the title.
    """
    return {"books": db.query("SELECT * FROM books WHERE contains(lower(title), lower(?)) ORDER BY id", [title])}


@tool(writes=True)
def lend_book(db: ToolContext, book_id: Annotated[str, Field(pattern=r"^BK-\d+$")], borrower: Annotated[str, Field(min_length=1, max_length=100)]) -> dict:
    """Lend a book for 14 days.

    Args:
        book_id: Book id.
        borrower: Borrower's name.
    """
    book = db.query_one("SELECT * FROM books WHERE id = ?", [book_id])
    if book is None or not book["available"]:
        raise ToolError(f"book {book_id} is not available")
    loan = db.next_id("loans")
    due = due_date(db.now.date())
    db.execute("INSERT INTO loans VALUES (?, ?, ?, ?)", [loan, book_id, borrower, due])
    db.execute("UPDATE books SET available = FALSE WHERE id = ?", [book_id])
    return {"loan_id": loan, "due": due.isoformat()}
