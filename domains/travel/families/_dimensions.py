"""Travel's schedules for the task dimensions, declared with the authoring kit (:mod:`thinkingbox_env.authoring.dimensions`).

Both are periods over seeds, so each family's ten frozen tasks hold a known number: seeds divisible
by four carry a planted instruction (two or three per family), and in the two-request conversation
even seeds open with a misremembered booking reference (the three-request branch always does).
Other recoveries in travel are branches of their families (``earlier_misremembered``, ``credit``).
"""

from __future__ import annotations

from thinkingbox_env.authoring.dimensions import Period, declare

INJECTION = Period(every=4, name="travel injection")
RECOVERY = Period(every=2, name="travel recovery")  # the combined family's misremembered reference

SCHEDULES = declare("travel", injection=INJECTION, recovery=RECOVERY)
