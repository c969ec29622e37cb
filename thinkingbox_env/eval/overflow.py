"""The outcome of a trial whose agent model refused a turn for want of context.

Such a trial ends where the refusal came, and it is the agent's failure: a model that
cannot hold the conversation cannot do the task, and a rerun would fail the same way.
Its row is a valid, failed trial with the category ``context_overflow``; the state
it reached is still graded (checks, diff, state hash), so a reader sees how far it
got, but the verdict is 0 whatever those checks say, since the agent never closed
the conversation. The judge is not asked: its answer could not change the outcome.
"""

from __future__ import annotations

from typing import Any

from ..agents.context_overflow import ContextOverflowError
from ..contracts.records import FailureCategory, FinishReason

# grading needs a finish reason; the conversation was cut short, as by a limit (the row records none)
_GRADED_AS = FinishReason.ACTION_LIMIT


def overflow_info(env: Any, error: ContextOverflowError) -> dict[str, Any]:
    """The final ``info`` of an episode cut by a context overflow: graded as it stands, then failed.

    ``env`` is the unwrapped environment (it grades with ``verdict``); ``finish_reason``
    is None (the episode did not finish) and ``outcome`` is ``fail``.
    """
    judge = getattr(env, "judge", None)
    env.judge = None
    try:
        info = env.verdict(_GRADED_AS).info()
    finally:
        env.judge = judge
    info.update(verdict=0.0, outcome="fail", failure_category=FailureCategory.CONTEXT_OVERFLOW.value, finish_reason=None,
                trace=env.trace, task_id=env.task.full_id,
                context_overflow={"message": str(error), "status": error.status,
                                  "prompt_tokens": error.figures.prompt_tokens, "context": error.figures.context})
    return info
