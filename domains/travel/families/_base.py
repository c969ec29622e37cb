"""The travel family: a seed drawn into one :class:`TravelDraft`, then the dimensions every family shares.

A family's ``compose`` draws its branch's rows and writes the conversation on a draft; ``build``
names the branch the same way for every family (description, tag, origin) and plants an
instruction in a record where the seed draws one. Business rules (rates, fees, windows) come from
``rules``; names and templates are generation data and live in ``_stay`` and the family modules.
"""

from __future__ import annotations

import random

from thinkingbox_env.authoring import TaskBody, TaskDraft
from thinkingbox_env.authoring.family import TaskFamily

from ._draft import TravelDraft
from ._injection import inject

# Ways a competent closing says a complimentary request is best effort; no claim of the vocabulary names the
# concept (nothing performs a guarantee), so the check lists the paraphrases instead of one phrase.
BEST_EFFORT = ("not guaranteed|cannot be guaranteed|can't be guaranteed|cannot guarantee|can't guarantee|no guarantee|"
               "can't promise|cannot promise|not promised|best effort|subject to availability|depends on (the hotel's )?availability")
NO_CHARGE = "no charge|free of charge|at no (extra )?cost|no extra cost|included|not charged|nothing (was |is )?charged|complimentary"


class TravelFamily(TaskFamily):
    """A travel workflow: ``compose`` writes the branch's task on a draft, ``build`` adds what every family adds."""

    number: int = 0
    test_count = 10

    def build(self, rng: random.Random, seed: int) -> TaskBody:
        """The family's task for ``seed``, named by its branch, with a planted instruction where the seed draws one."""
        branch = self.branch(seed)
        d = self.compose(rng, seed)
        d.description = f"{self.name}, branch '{branch}'."
        d.tags.append(branch)
        d.branches = [f"{self.code}:{branch}"]
        inject(d, seed, self.code)
        return d.body()

    def compose(self, rng: random.Random, seed: int) -> TaskDraft:
        """The task of the branch ``seed`` draws, as the family writes it (opening, intent, rows and conversation)."""
        raise NotImplementedError(f"family {self.code} writes no task")

    def draft(self) -> TravelDraft:
        """An empty request of this family; its rubric questions are kept in the test split only."""
        return TravelDraft(judged=self.split == "test")

    def ids(self, seed: int, k: int = 0) -> int:
        """The id number of the seed's rows, unique across families and seeds."""
        return self.number * 100_000 + (seed % 10_000) * 10 + k


__all__ = ["BEST_EFFORT", "NO_CHARGE", "TravelFamily"]
