"""The shaping experiment's rewards: what each arm trains on, and the components every arm logs with weight 0."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import shaping_report as report  # noqa: E402 - the folder is put on the path first
from shaping_config import ArmConfig, ExperimentConfig  # noqa: E402

# logged on every arm with weight 0: the arms differ only in what trains
LOGGED = ("verdict", "effects", "no_collateral", "dialogue", "progress")


def arm_reward(arm: ArmConfig, check_weights: dict[str, float], max_steps: int, group: int) -> Any:
    """The reward an arm trains on; it also logs a(t) and the rollouts' collapse and hacking indicators."""
    from thinkingbox_env.integrations import trl as tb_trl

    shaping = tb_trl.reward_checks(arm.weights or check_weights) if arm.shaping == "checks" else (
        tb_trl.reward_progress if arm.shaping == "progress" else None)

    def reward_arm(completions: list[Any], environments: list[Any] | None = None, trainer_state: Any = None,
                   log_metric: Any = None, **kwargs: Any) -> list[float | None]:
        envs = environments or []
        verdicts = tb_trl.reward_verdict(completions, envs)
        extra = shaping(completions, envs) if shaping is not None else [0.0] * len(verdicts)
        step = int(getattr(trainer_state, "global_step", 0) or 0)
        a = arm.share(step, max_steps)
        values = [None if v is None else a * v + (1 - a) * float(s or 0.0) for v, s in zip(verdicts, extra)]
        if log_metric is not None:
            closings = [report.closing_text(c) for c in completions]
            for name, value in report.rollout_indicators(values, verdicts, closings, group).items():
                log_metric(f"shaping/{name}", value)
            log_metric("shaping/verdict_share", a)
        return values

    return reward_arm


def reward_functions(cfg: ExperimentConfig, arm: ArmConfig) -> tuple[list[Any], list[float]]:
    """The arm's reward (weight 1) and every logged component (weight 0), the same on every arm."""
    from thinkingbox_env.integrations import trl as tb_trl

    funcs = [arm_reward(arm, cfg.check_weights, cfg.grpo.max_steps, cfg.grpo.num_generations)]
    funcs += [getattr(tb_trl, f"reward_{n}") for n in LOGGED]
    funcs.append(tb_trl.reward_checks(cfg.check_weights))  # the experiment's weighting, logged on every arm
    return funcs, [1.0] + [0.0] * (len(funcs) - 1)
