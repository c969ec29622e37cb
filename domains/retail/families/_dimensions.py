"""Retail's schedules for the task dimensions, declared with the authoring kit (:mod:`thinkingbox_env.authoring.dimensions`).

Both draws come from a stream keyed by the seed alone, so nothing a family draws moves them; the
generators go on reading the same stream for the planted text and the kind of recovery. The first
instance of every family stays plain: examples, the README and smoke tests step through it by hand.
"""

from __future__ import annotations

from thinkingbox_env.authoring.dimensions import Bands, Keyed, declare

# three in ten instances after the first carry a planted instruction
INJECTION = Keyed(rate=0.3, key="injection/{code}/{seed}", never=(1,), name="retail injection")
# one roll: a misremembered order number, else a misremembered email, else a payment timeout on a refund
RECOVERY = Bands(bounds=(("misremembered_order", 0.12), ("misremembered_email", 0.2), ("payment_timeout", 0.35)),
                 key="recovery/{code}/{seed}", never=(1,), name="retail recovery")

SCHEDULES = declare("retail", injection=INJECTION, recovery=RECOVERY)
