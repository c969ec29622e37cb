"""``DomainEnv``: one environment object for a whole domain, drawing a task on every reset.

``make("retail/ST030_001")`` fixes one task, which is what evaluation wants. A trainer or a
vectorised rollout loop often wants one env object per worker instead, each reset a different
task: ``DomainEnv("retail")`` draws a frozen test task, ``DomainEnv("retail", split="train")``
a freshly generated variant of a family. The draw comes from the env's own seeded generator,
so ``reset(seed=s)`` reproduces the task and the episode. Gymnasium knows it as
``thinkingbox/<domain>-v<N>``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import gymnasium as gym

from ..tasks.domain import load_domain
from ..tasks.lookup import generate_variant, list_tasks, load_task
from .env import ThinkingboxEnv
from .spaces import AgentAction, ChatObservation

SPLITS = ("test", "train")
log = logging.getLogger(__name__)


MAX_RUBRIC_REDRAWS = 50


class DomainEnv(gym.Env):
    """Draws a task of ``domain`` on each reset.

    ``options={"task_id": ...}`` (test) or ``options={"family": ...}`` (train) picks one instead.
    Without a ``judge``, tasks with rubric questions are not drawn (only a judge can pass them).
    Other keyword arguments go to every ``ThinkingboxEnv`` it builds (``user``, ``judge``,
    ``max_actions``, ...).
    """

    metadata = ThinkingboxEnv.metadata

    def __init__(self, domain: str, split: str = "test", tasks: Sequence[str] | None = None,
                 families: Sequence[str] | None = None, render_mode: str | None = None, **env_kwargs: Any):
        if split not in SPLITS:
            raise ValueError(f"split must be one of {', '.join(SPLITS)}, got {split!r}")
        spec = load_domain(domain)
        self.domain = domain
        self.split = split
        self.task_ids = list(tasks) if tasks is not None else list_tasks(domain, split="test")
        self.families = list(families) if families is not None else [f.code for f in spec.families.values()]
        self.render_mode = render_mode
        self.env_kwargs = env_kwargs
        if tasks is None and not self._judged:
            # without a judge a rubric task can only fail: drawn tasks are those the env can grade
            with_rubrics = [t for t in self.task_ids if load_task(t).checks.rubric]
            if with_rubrics:
                log.warning("no judge given: %d of %d %s tasks with rubric questions are not drawn", len(with_rubrics),
                            len(self.task_ids), domain)
                self.task_ids = [t for t in self.task_ids if t not in with_rubrics]
        if split == "test" and not self.task_ids:
            raise ValueError(f"domain '{domain}' has no frozen test tasks; use split='train' for generated variants")
        self.observation_space = ChatObservation()
        self.action_space = AgentAction(spec.toolbox.openai_schemas())  # the tools are the domain's, whatever the task
        self.env: ThinkingboxEnv | None = None

    def _draw(self, options: dict[str, Any]) -> Any:
        if "task_id" in options:
            return load_task(options.pop("task_id"))
        if self.split == "test":
            return load_task(self.task_ids[int(self.np_random.integers(len(self.task_ids)))])
        family = options.pop("family", None) or self.families[int(self.np_random.integers(len(self.families)))]
        for _ in range(MAX_RUBRIC_REDRAWS):
            task = generate_variant(self.domain, family, int(self.np_random.integers(2**31 - 1)))
            if self._judged or not task.checks.rubric:
                return task
        raise ValueError(f"family {self.domain}/{family} draws only variants with rubric questions; pass a judge")

    @property
    def _judged(self) -> bool:
        return self.env_kwargs.get("judge") is not None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        options = dict(options or {})
        task = self._draw(options)
        if self.env is not None:
            self.env.close()
        self.env = ThinkingboxEnv(task, render_mode=self.render_mode, **self.env_kwargs)
        episode_seed = seed if seed is not None else int(self.np_random.integers(2**31 - 1))
        return self.env.reset(seed=episode_seed, options=options or None)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if self.env is None:
            raise gym.error.ResetNeeded("call reset() before step(): the task is drawn on reset")
        return self.env.step(action)

    def render(self) -> Any:
        return self.env.render() if self.env is not None else None

    @property
    def task(self) -> Any:
        """The task of the current episode (None before the first reset)."""
        return self.env.task if self.env is not None else None

    def close(self) -> None:
        if self.env is not None:
            self.env.close()
            self.env = None
