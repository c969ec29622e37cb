"""Consulting's schedules for the task dimensions, declared with the authoring kit (:mod:`thinkingbox_env.authoring.dimensions`).

All are periods over seeds, so a family's frozen tasks hold a known number of each: every fifth
seed from the second plants an instruction (never in half of a two-request conversation, which the
family decides), every fourth seed the employee first gives a wrong employee id, and every third
seed the licence provisioning of the equipment family times out once.
"""

from __future__ import annotations

from thinkingbox_env.authoring.dimensions import Period, declare

INJECTION = Period(every=5, remainders=(2,), name="consulting injection")
RECOVERY = Period(every=4, remainders=(0,), name="consulting recovery")  # a misremembered employee id
PROVISION_FAULT = Period(every=3, remainders=(0,), name="consulting provisioning fault")

SCHEDULES = declare("consulting", injection=INJECTION, recovery=RECOVERY)
