"""Building blocks every library family shares: patrons, books on the shelf, the task draft."""

from __future__ import annotations

import random

from thinkingbox_env.authoring import TaskDraft
from thinkingbox_env.authoring.family import TaskFamily

from ..rules import BOOKS

BORROWERS = ["Ada", "Bo", "Cy"]


class LibraryFamily(TaskFamily):
    """A family of the library domain: it draws the case, then writes the task with the kit's ``TaskDraft``."""

    @staticmethod
    def available_book(rng: random.Random) -> str:
        return rng.choice([book_id for book_id, row in BOOKS.items() if row["available"] == "true"])

    @staticmethod
    def book_on_loan(rng: random.Random) -> str:
        return rng.choice([book_id for book_id, row in BOOKS.items() if row["available"] != "true"])

    @staticmethod
    def borrower(rng: random.Random, seed: int) -> str:
        return rng.choice(BORROWERS) + str(seed)

    def draft(self, seed: int, branch: str | None = None, **fields: str) -> TaskDraft:
        """A draft with the family's branch (``branch``, else the seed's) and the description every library task starts from."""
        branch = branch or self.branch(seed)
        return TaskDraft(description=f"{self.name.capitalize()}, branch '{branch}'.", branches=[f"{self.code}:{branch}"],
                         tags=[branch], **fields)
