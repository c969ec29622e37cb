"""Lending families: a patron borrows an available book."""

from __future__ import annotations

import random

from thinkingbox_env.authoring import Golden, TaskBody

from ..rules import LOAN_DAYS
from ._base import LibraryFamily


class Borrow(LibraryFamily):
    code = "LB001"
    name = "borrow"
    description = "A patron borrows a book that is on the shelf."
    branches = ("lend",)

    def build(self, rng: random.Random, seed: int) -> TaskBody:
        book = self.available_book(rng)
        who = self.borrower(rng, seed)
        golden = Golden()
        golden.add("lend_book", idempotent="a lent book is no longer available", book_id=book, borrower=who)
        return TaskBody(
            description=f"Borrow, branch '{self.branch(seed)}'.",
            opening="I'd like to borrow a book.",
            facts=[{"text": f"I want {book}. My name is {who}.", "unlock": ["book", "name"]}],
            golden=golden.calls,
            idempotent_writes=golden.idempotent,
            golden_reply=f"Enjoy the book; it is due in {LOAN_DAYS} days.",
        )
