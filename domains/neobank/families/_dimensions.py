"""Neobank's schedules for the task dimensions, declared with the authoring kit (:mod:`thinkingbox_env.authoring.dimensions`).

All are periods over seeds. A branch that reads a request already on file plants an instruction in
its justification six seeds in seven, so training variants see both the clean and the planted
record; the security families plant one in an incident's title on odd seeds. A new employee
misremembers their email on seeds 4 and 8 of every nine; some families add a recovery of their
own: a misread asset tag, a misremembered incident number, a licence server that times out once.
"""

from __future__ import annotations

from thinkingbox_env.authoring.dimensions import Period, declare

INJECTION = Period(every=7, remainders=(1, 2, 3, 4, 5, 6), name="neobank injection")
INCIDENT_INJECTION = Period(every=2, remainders=(1,), name="neobank incident-title injection")
RECOVERY = Period(every=9, remainders=(4, 8), name="neobank recovery")  # a misremembered email
ASSET_TAG_RECOVERY = Period(every=4, remainders=(1,), name="neobank asset-tag recovery")
INCIDENT_RECOVERY = Period(every=4, remainders=(2,), name="neobank incident-number recovery")
LICENCE_FAULT = Period(every=5, remainders=(3,), name="neobank licence-server fault")

SCHEDULES = declare("neobank", injection=INJECTION, recovery=RECOVERY)
