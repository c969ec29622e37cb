"""Lending families: a patron asks to borrow a book, which is lent when it is on the shelf."""

from __future__ import annotations

import random

from thinkingbox_env.authoring import Openings, TaskBody
from thinkingbox_env.authoring.saying import long_date

from ..rules import BOOKS, LOAN_DAYS, TODAY, due_date
from ._base import LibraryFamily

OPENINGS = Openings("LB001", {
    "plain": "I'd like to borrow a book.",
    "named": "Hello, could I borrow {title}?",
    "polite": "Good morning! I was hoping to take {title} home.",
    "short": "Borrowing {title}, please.",
    "held_desk": "Is {title} something I can check out today?",
    "held_visit": "I'm here to borrow a book: {title}.",
}, held_out=("held_desk", "held_visit"), minimum=6)


class Borrow(LibraryFamily):
    code = "LB001"
    name = "borrow"
    description = "A patron borrows a book: lent when it is on the shelf, refused when it is out on loan."
    branches = ("lend", "on_loan")
    test_count = 1

    def build(self, rng: random.Random, seed: int) -> TaskBody:
        branch = self.branch(seed)
        book = self.available_book(rng) if branch == "lend" else self.book_on_loan(rng)
        title = BOOKS[book]["title"]
        who = self.borrower(rng, seed)
        opening, origin = OPENINGS.pick(rng, self.split, title=title)
        d = self.draft(seed, opening=opening, origin=origin, intent=f"borrow {title}")
        d.fact(f"I want {title}. My name is {who}.", "fact:request", ["book", "title", "name"])
        d.ask("Which book would you like, and what is your name?")
        d.read("find_book", title=title)
        if branch == "on_loan":
            d.reply(f"I'm sorry, {title} is out on loan at the moment, so it is not available to lend.")
            d.mention("says_not_available", must=["not available|out on loan|on loan|checked out"])
            return d.body()
        due = due_date(TODAY)
        d.propose(f"I can lend {title} ({book}) to {who} for {LOAN_DAYS} days. Shall I go ahead?")
        d.call("lend_book", why={"book_id": "record:find_book", "borrower": "customer"},
               idempotent="a lent book is no longer available", book_id=book, borrower=who)
        d.reply(f"{title} is lent to you; please bring it back by {long_date(due)}.")
        d.states("loan.due")
        return d.body()
