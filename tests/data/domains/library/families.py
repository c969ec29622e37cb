import random

from thinkingbox_env.family import TaskFamily


class Borrow(TaskFamily):
    code = "LB001"
    name = "borrow"
    branches = ("lend",)

    def build(self, rng: random.Random, seed: int) -> dict:
        book = rng.choice(["BK-1", "BK-2"])
        who = rng.choice(["Ada", "Bo", "Cy"]) + str(seed)
        return {
            "user": {"opening": "I'd like to borrow a book.", "facts": [{"text": f"I want {book}. My name is {who}.", "unlock": ["book", "name"]}]},
            "golden": [{"name": "lend_book", "arguments": {"book_id": book, "borrower": who}}],
            "golden_reply": "Enjoy the book; it is due in 14 days.",
            "idempotent_writes": {0: "a lent book is no longer available"},
        }


FAMILIES = [Borrow()]
