"""The library's schedules for the task dimensions, declared with the authoring kit.

The template of every domain's ``families/_dimensions.py``: one :class:`Schedule` per dimension,
checked by :func:`declare` when the families are imported. Periods over three seeds keep the
frozen set small and complete: seed 1 stays plain, seed 2 plants an instruction in the note of the
book the golden looks up, seed 3 meets a loan desk that times out once (a recovery). The two-request
conversation is a family of its own (``BorrowTwo``), so it needs no schedule.
"""

from __future__ import annotations

from pathlib import Path

from thinkingbox_env.authoring.dimensions import Period, declare

INJECTION = Period(every=3, remainders=(2,), name="library injection")
RECOVERY = Period(every=3, remainders=(0,), name="library recovery")

# named by the domain's folder, so a domain ``thinkingbox new`` writes from this template names itself
SCHEDULES = declare(Path(__file__).resolve().parents[1].name, injection=INJECTION, recovery=RECOVERY)
