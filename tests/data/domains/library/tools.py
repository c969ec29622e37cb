from datetime import timedelta

from thinkingbox_env.tools import ToolError, tool


@tool
def find_book(db, title: str) -> dict:
    """Find a book by title.

    Args:
        title: Words from the title.
    """
    return {"books": db.query("SELECT * FROM books WHERE contains(lower(title), lower(?)) ORDER BY id", [title])}


@tool(writes=True)
def lend_book(db, book_id: str, borrower: str) -> dict:
    """Lend a book for 14 days.

    Args:
        book_id: Book id.
        borrower: Borrower's name.
    """
    book = db.query_one("SELECT * FROM books WHERE id = ?", [book_id])
    if book is None or not book["available"]:
        raise ToolError(f"book {book_id} is not available")
    loan = db.next_id("loans")
    db.execute("INSERT INTO loans VALUES (?, ?, ?, ?)", [loan, book_id, borrower, db.now.date() + timedelta(days=14)])
    db.execute("UPDATE books SET available = FALSE WHERE id = ?", [book_id])
    return {"loan_id": loan}
