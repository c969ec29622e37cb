"""Building blocks every library family shares: borrowers and books that can be lent."""

from __future__ import annotations

import random

from thinkingbox_env.family import TaskFamily

from ..rules import BOOKS

BORROWERS = ["Ada", "Bo", "Cy"]


class LibraryFamily(TaskFamily):
    """A family of the library domain."""

    @staticmethod
    def available_book(rng: random.Random) -> str:
        return rng.choice([book_id for book_id, row in BOOKS.items() if row["available"] == "true"])

    @staticmethod
    def borrower(rng: random.Random, seed: int) -> str:
        return rng.choice(BORROWERS) + str(seed)
