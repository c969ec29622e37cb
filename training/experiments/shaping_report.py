"""Measures and plots of the shaping experiment: what one evaluation shows, across seeds and arms.

Kept apart from the training code so the numbers of a finished run can be recomputed
from its evaluation rows without touching a model. Held-out train variants are
evaluated through the evaluation library like any task: a task source named
``variant`` serves ``variant/<domain>/<family>/<seed>``.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from thinkingbox_env.eval.metrics import (
    bootstrap_interval,
    bootstrap_mean_interval,
    check_family,
    final_agent_text,
    pass_at_1,
    task_outcomes,
)

NAMESPACE = "variant"
# closings this many times longer (in words) than the task's golden reply count as abnormally long
LONG_CLOSING_FACTOR = 3.0
# a word repeated this often in one closing counts as keyword stuffing
STUFFING_REPEATS = 3
_WORD = re.compile(r"[a-z][a-z'-]{2,}")
_STOP = frozenset(["the", "and", "you", "your", "for", "was", "has", "have", "with", "that", "this", "are", "our", "can", "will", "not"])


# --------------------------------------------------------------------------- held-out variants as tasks


def variant_id(domain: str, family: str, seed: int) -> str:
    return f"{NAMESPACE}/{domain}/{family}/{seed}"


class VariantSource:
    """Generated train variants under ids of their own, so the evaluation library runs them like frozen tasks."""

    def make(self, name: str, **kwargs: Any) -> Any:
        from thinkingbox_env.envs.env import ThinkingboxEnv

        return ThinkingboxEnv(_variant(name), **kwargs)

    def suites(self) -> list[str]:
        return []

    def suite_tasks(self, suite: str, **options: Any) -> list[str]:
        raise KeyError(f"the {NAMESPACE} source offers no suites, got {suite!r}")


def _variant(name: str) -> Any:
    from thinkingbox_env.tasks.lookup import generate_variant

    parts = name.split("/")
    if len(parts) != 3 or not parts[2].isdigit():
        raise ValueError(f"a variant id is {NAMESPACE}/<domain>/<family>/<seed>, got {NAMESPACE}/{name}")
    return generate_variant(parts[0], parts[1], int(parts[2]))


def register_variant_source() -> None:
    from thinkingbox_env.envs.registration import register_task_source

    register_task_source(NAMESPACE, VariantSource())


def golden_reply(task_id: str) -> str:
    from thinkingbox_env.tasks.lookup import load_task

    if task_id.startswith(NAMESPACE + "/"):
        return str(_variant(task_id.split("/", 1)[1]).golden_reply or "")
    return str(load_task(task_id).golden_reply or "")


# --------------------------------------------------------------------------- closings


def closing_text(completion: Any) -> str:
    """The closing message of a TRL rollout: its last assistant turn without tool calls."""
    if isinstance(completion, str):
        return completion
    for message in reversed(completion if isinstance(completion, list) else []):
        if isinstance(message, dict) and message.get("role") == "assistant" and not message.get("tool_calls"):
            content = message.get("content")
            if isinstance(content, list):
                content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
            return str(content or "")
    return ""


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def stuffed(text: str) -> bool:
    """Keyword stuffing: one content word said ``STUFFING_REPEATS`` times or more in one closing."""
    counts = Counter(w for w in words(text) if w not in _STOP)
    return bool(counts) and max(counts.values()) >= STUFFING_REPEATS


def rollout_indicators(values: list[float | None], verdicts: list[float | None], closings: list[str],
                       group: int) -> dict[str, float]:
    """Collapse and hacking signs of one GRPO batch (groups are consecutive runs of ``group`` rollouts)."""
    def zero_std(xs: list[float | None]) -> float:
        chunks = [[x for x in xs[i:i + group] if x is not None] for i in range(0, len(xs), group)]
        chunks = [c for c in chunks if c]
        return float(np.mean([max(c) - min(c) < 1e-6 for c in chunks])) if chunks else float("nan")

    n = max(1, len(closings))
    return {
        "zero_std_groups_trained": zero_std(values),
        "zero_std_groups_verdict": zero_std(verdicts),
        "closing_words": float(np.mean([len(words(c)) for c in closings])) if closings else 0.0,
        "closing_stuffed": sum(stuffed(c) for c in closings) / n,
        "closing_empty": sum(not c.strip() for c in closings) / n,
    }


# --------------------------------------------------------------------------- one evaluation


def split_metrics(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """pass@1 with its interval, per-check pass rates, tokens per episode and hacking signs of one split."""
    ok = [r for r in rows if r.get("status") == "ok"]
    outcomes = task_outcomes(rows)
    checks: dict[str, list[bool]] = {}
    kinds: dict[str, list[bool]] = {}
    per_task_checks: dict[str, dict[str, list[int]]] = {}  # task -> check -> [passed, graded]
    for row in ok:
        for d in row.get("check_details") or []:
            if d.get("passed") is None:
                continue
            checks.setdefault(check_family(d["name"]), []).append(bool(d["passed"]))
            kinds.setdefault(d["kind"], []).append(bool(d["passed"]))
            tally = per_task_checks.setdefault(row["task_id"], {}).setdefault(check_family(d["name"]), [0, 0])
            tally[0] += bool(d["passed"])
            tally[1] += 1
    closings = [final_agent_text(r) for r in ok]
    golden = [len(words(golden_reply(r["task_id"]))) for r in ok]
    long = [len(words(c)) > LONG_CLOSING_FACTOR * max(1, g) for c, g in zip(closings, golden)]

    def group_pass(row: dict[str, Any], group: tuple[str, ...]) -> bool | None:
        chosen = [d["passed"] for d in row.get("check_details") or [] if d["kind"] in group and d["passed"] is not None]
        return None if not chosen else all(chosen)

    said_not_done = [group_pass(r, ("mentions", "withholds", "grounded_values")) is True
                     and group_pass(r, ("effect", "sql")) is False for r in ok]
    tokens = [float((r.get("usage") or {}).get("output") or 0) for r in ok]
    return {
        "pass1": pass_at_1(outcomes.values()),
        "per_task": {t: [o.c, o.n] for t, o in outcomes.items()},
        "per_task_checks": per_task_checks,
        "checks": {k: float(np.mean(v)) for k, v in sorted(checks.items())},
        "check_kinds": {k: float(np.mean(v)) for k, v in sorted(kinds.items())},
        "tokens_per_episode": float(np.mean(tokens)) if tokens else 0.0,
        "model_calls_per_episode": float(np.mean([(r.get("usage") or {}).get("model_calls", 0) for r in ok])) if ok else 0.0,
        "tool_calls_per_episode": float(np.mean([(r.get("counts") or {}).get("tool_calls", 0) for r in ok])) if ok else 0.0,
        "finish_reasons": dict(Counter(str(r.get("finish_reason")) for r in ok)),
        "closing_words": float(np.mean([len(words(c)) for c in closings])) if closings else 0.0,
        "closing_long": float(np.mean(long)) if long else 0.0,
        "closing_stuffed": float(np.mean([stuffed(c) for c in closings])) if closings else 0.0,
        "said_but_not_done": float(np.mean(said_not_done)) if said_not_done else 0.0,
        "system_errors": len(rows) - len(ok),
    }


# --------------------------------------------------------------------------- across seeds and arms


def _curve(seeds: dict[str, Any], split: str, pick: Any) -> dict[str, dict[str, float]]:
    """Per step: mean, min and max over seeds of ``pick(metrics)`` (steps every seed reached)."""
    by_step: dict[int, list[float]] = {}
    for run in seeds.values():
        for ev in run["evals"]:
            if split in ev:
                value = pick(ev[split])
                if value is not None:
                    by_step.setdefault(int(ev["step"]), []).append(float(value))
    n = len(seeds)
    return {str(s): {"mean": float(np.mean(v)), "min": float(np.min(v)), "max": float(np.max(v)),
                     "sd": float(np.std(v, ddof=1)) if len(v) > 1 else 0.0, "seeds": len(v)}
            for s, v in sorted(by_step.items()) if len(v) == n}


def _pooled(seeds: dict[str, Any], split: str, step: int) -> dict[str, np.ndarray]:
    """Per task, successes and trials pooled over the seeds' evaluations at ``step``."""
    tasks: dict[str, list[int]] = {}
    for run in seeds.values():
        for ev in run["evals"]:
            if int(ev["step"]) == step and split in ev:
                for t, (c, n) in ev[split]["per_task"].items():
                    acc = tasks.setdefault(t, [0, 0])
                    acc[0] += c
                    acc[1] += n
    return {t: np.array(v, dtype=float) for t, v in tasks.items()}


def aggregate(results: dict[str, Any]) -> dict[str, Any]:
    """Curves per arm and split with seed bands, and the final step compared arm by arm with the verdict arm."""
    curves: dict[str, Any] = {}
    final: dict[str, Any] = {}
    splits = [s for s, ids in results["splits"].items() if ids]
    for name, arm in results["arms"].items():
        seeds = arm["seeds"]
        if not seeds:
            continue
        curves[name] = {}
        final[name] = {}
        last = _last_step(seeds)
        for split in splits:
            checks = sorted({c for run in seeds.values() for ev in run["evals"] for c in ev.get(split, {}).get("checks", {})})
            curves[name][split] = {
                "pass1": _curve(seeds, split, lambda m: m["pass1"]["value"]),
                "checks": {c: _curve(seeds, split, lambda m, c=c: m["checks"].get(c)) for c in checks},
                "tokens_per_episode": _curve(seeds, split, lambda m: m["tokens_per_episode"]),
                "closing_words": _curve(seeds, split, lambda m: m["closing_words"]),
                "closing_stuffed": _curve(seeds, split, lambda m: m["closing_stuffed"]),
                "said_but_not_done": _curve(seeds, split, lambda m: m["said_but_not_done"]),
            }
            pooled = _pooled(seeds, split, last)
            c = np.array([v[0] for v in pooled.values()])
            n = np.array([v[1] for v in pooled.values()])
            final[name][split] = {
                "step": last,
                "pass1_per_seed": {s: next(e[split]["pass1"]["value"] for e in run["evals"] if int(e["step"]) == last)
                                   for s, run in seeds.items()},
                "pass1_pooled": float(c.sum() / n.sum()) if n.sum() else float("nan"),
                "pass1_pooled_ci95": list(bootstrap_interval(c, n)) if n.sum() else [float("nan")] * 2,
                "minus_warm": _difference(_pooled(seeds, split, 0), pooled) or {"tasks": 0},
            }
        curves[name]["train"] = _train_curves(seeds)
    baseline = next((a for a in ("verdict",) if a in final), None)
    if baseline:
        for name in final:
            for split in splits:
                final[name][split]["minus_verdict"] = _paired(results["arms"][baseline]["seeds"],
                                                              results["arms"][name]["seeds"], split)
                final[name][split]["checks_minus_verdict"] = _paired_checks(results["arms"][baseline]["seeds"],
                                                                            results["arms"][name]["seeds"], split)
    return {"curves": curves, "final": final}


def _paired(base: dict[str, Any], other: dict[str, Any], split: str) -> dict[str, Any]:
    """pass@1 difference at the last step, per task pooled over seeds, with a bootstrap interval over tasks."""
    a, b = _pooled(base, split, _last_step(base)), _pooled(other, split, _last_step(other))
    return _difference(a, b) or {"tasks": 0}


def _difference(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any] | None:
    """Mean over the tasks both hold of b's rate minus a's ([passed, runs] per task), with a bootstrap interval."""
    tasks = sorted(set(a) & set(b))
    if not tasks:
        return None
    diffs = np.array([b[t][0] / b[t][1] - a[t][0] / a[t][1] for t in tasks])
    lo, hi = bootstrap_mean_interval(diffs)
    return {"mean": float(diffs.mean()), "ci95": [lo, hi], "tasks": len(tasks)}


def _last_step(seeds: dict[str, Any]) -> int:
    return min(max(int(e["step"]) for e in run["evals"]) for run in seeds.values())


def _pooled_checks(seeds: dict[str, Any], split: str, step: int) -> dict[str, dict[str, list[int]]]:
    """Per check and task, passes and graded runs pooled over the seeds' evaluations at ``step``."""
    pooled: dict[str, dict[str, list[int]]] = {}
    for run in seeds.values():
        for ev in run["evals"]:
            if int(ev["step"]) == step and split in ev:
                for task, checks in (ev[split].get("per_task_checks") or {}).items():
                    for check, (passed, graded) in checks.items():
                        acc = pooled.setdefault(check, {}).setdefault(task, [0, 0])
                        acc[0] += passed
                        acc[1] += graded
    return pooled


def _paired_checks(base: dict[str, Any], other: dict[str, Any], split: str) -> dict[str, Any]:
    """Each check's pass-rate difference at the last step, per task pooled over seeds, with a bootstrap interval over tasks.

    Only tasks graded on the check in both arms count: a check a run never reached says nothing.
    """
    a, b = _pooled_checks(base, split, _last_step(base)), _pooled_checks(other, split, _last_step(other))
    out: dict[str, Any] = {}
    for check in sorted(set(a) & set(b)):
        difference = _difference(a[check], b[check])
        if difference is not None:
            out[check] = difference
    return out


def _train_curves(seeds: dict[str, Any]) -> dict[str, Any]:
    keys = sorted({k for run in seeds.values() for h in run["train"] for k in h if k != "step"})
    out: dict[str, Any] = {}
    for key in keys:
        by_step: dict[int, list[float]] = {}
        for run in seeds.values():
            for h in run["train"]:
                if key in h:
                    by_step.setdefault(int(h["step"]), []).append(float(h[key]))
        out[key] = {str(s): {"mean": float(np.nanmean(v)), "min": float(np.nanmin(v)), "max": float(np.nanmax(v))}
                    for s, v in sorted(by_step.items())}
    return out


# --------------------------------------------------------------------------- plots


_STYLES = [("-", "o"), ("--", "s"), (":", "^"), ("-.", "D")]  # arms that coincide stay visible


def _band(ax: Any, curve: dict[str, dict[str, float]], label: str, color: Any, style: int = 0) -> None:
    if not curve:
        return
    steps = [int(s) for s in curve]
    mean = [curve[s]["mean"] for s in curve]
    from matplotlib.ticker import MaxNLocator

    line, marker = _STYLES[style % len(_STYLES)]
    ax.plot(steps, mean, linestyle=line, marker=marker, ms=4, label=label, color=color, alpha=0.85)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.fill_between(steps, [curve[s]["min"] for s in curve], [curve[s]["max"] for s in curve], alpha=0.2, color=color)


def plot_all(results: dict[str, Any], out: Path) -> list[str]:
    """pass@1, each check's pass rate and the training signals against steps, per arm, with min-max seed bands."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    curves = results["summary"]["curves"]
    arms = list(curves)
    colors = {a: plt.get_cmap("tab10")(i % 10) for i, a in enumerate(arms)}
    splits = [s for s, ids in results["splits"].items() if ids]
    folder = out / "plots"
    folder.mkdir(parents=True, exist_ok=True)
    written: list[str] = []
    seeds = len(results["config"]["seeds"])

    fig, axes = plt.subplots(1, len(splits), figsize=(5.5 * len(splits), 4), squeeze=False)
    for ax, split in zip(axes[0], splits):
        for arm in arms:
            _band(ax, curves[arm][split]["pass1"], arm, colors[arm], arms.index(arm))
        ax.set(title=f"pass@1, {split} ({len(results['splits'][split])} tasks)", xlabel="GRPO step", ylabel="pass@1",
               ylim=(-0.02, 1.02))
        ax.legend(fontsize=8)
    fig.suptitle(f"mean over {seeds} seeds, band: min to max")
    fig.tight_layout()
    written.append(_save(fig, folder / "pass1.png"))

    for split in splits:
        checks = sorted({c for arm in arms for c in curves[arm][split]["checks"]})
        if not checks:
            continue
        cols = min(3, len(checks))
        rows = (len(checks) + cols - 1) // cols
        fig, axes = plt.subplots(rows, cols, figsize=(5 * cols, 3.3 * rows), squeeze=False)
        for i, check in enumerate(checks):
            ax = axes[i // cols][i % cols]
            for arm in arms:
                _band(ax, curves[arm][split]["checks"].get(check, {}), arm, colors[arm], arms.index(arm))
            ax.set(title=check, xlabel="GRPO step", ylabel="pass rate", ylim=(-0.02, 1.02))
            ax.title.set_fontsize(8)
        for j in range(len(checks), rows * cols):
            axes[j // cols][j % cols].axis("off")
        axes[0][0].legend(fontsize=7)
        fig.suptitle(f"per-check pass rate, {split}; mean over {seeds} seeds, band: min to max")
        fig.tight_layout()
        written.append(_save(fig, folder / f"checks_{split}.png"))

    panels = [("reward", "trained reward"), ("rewards/reward_verdict/mean", "verdict (rollouts)"),
              ("shaping/zero_std_groups_trained", "share of zero-std groups (trained reward)"),
              ("shaping/zero_std_groups_verdict", "share of zero-std groups (verdict)"),
              ("shaping/closing_words", "closing words (rollouts)"), ("shaping/closing_stuffed", "stuffed closings (rollouts)")]
    fig, axes = plt.subplots(2, 3, figsize=(15, 7), squeeze=False)
    for i, (key, title) in enumerate(panels):
        ax = axes[i // 3][i % 3]
        for arm in arms:
            _band(ax, curves[arm]["train"].get(key, {}), arm, colors[arm], arms.index(arm))
        ax.set(title=title, xlabel="GRPO step")
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    written.append(_save(fig, folder / "training.png"))
    return written


def _save(fig: Any, path: Path) -> str:
    import matplotlib.pyplot as plt

    fig.savefig(path, dpi=110)
    plt.close(fig)
    return str(path)


def remeasure(results: dict[str, Any], out: Path) -> None:
    """Recompute each evaluation's split metrics from the rows the run kept (step 0: the warm start's)."""
    from thinkingbox_env.eval.run_files import read_rows

    for name, arm in results["arms"].items():
        for seed, run in arm["seeds"].items():
            warm_seed = (results.get("warm_start", {}).get(seed) or {}).get("warm_seed", seed)
            for ev in run["evals"]:
                step = int(ev["step"])
                folder = out / "warm" / f"seed{warm_seed}" / "eval" if step == 0 else \
                    out / "arms" / name / f"seed{seed}" / f"eval_step{step}"
                for split in [k for k in ev if k != "step"]:
                    path = folder / f"{split}.jsonl"
                    if not path.is_file():
                        raise FileNotFoundError(f"arm {name} seed {seed} step {step}: no evaluation rows at {path}")
                    ev[split] = split_metrics(list(read_rows(path)))


def pool_seeds(results: dict[str, Any], other: dict[str, Any]) -> None:
    """Add ``other``'s seeds and arms (a run of the same configuration for other seeds or arms) to ``results``, in place.

    Runs of some arms (``shaping.py --arms``) pool with runs of others: the configurations must agree on
    everything but the seeds and the list of arms, and an arm in both must be the same arm.
    """
    def settings(r: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in (r.get("config") or {}).items() if k not in ("seeds", "path", "arms")}

    def arms(r: dict[str, Any]) -> dict[str, Any]:
        return {a["name"]: a for a in (r.get("config") or {}).get("arms", [])}

    if settings(results) != settings(other):
        raise ValueError("its configuration differs from the first folder's (only the seeds and arms may differ)")
    mine_arms, their_arms = arms(results), arms(other)
    differing = sorted(n for n in set(mine_arms) & set(their_arms) if mine_arms[n] != their_arms[n])
    if differing:
        raise ValueError(f"arms {differing} are configured differently in the two folders")
    if results.get("config") is not None:
        results["config"]["arms"] = [*mine_arms.values(), *(a for n, a in their_arms.items() if n not in mine_arms)]
    if results.get("splits") != other.get("splits"):
        raise ValueError("its evaluation splits differ from the first folder's")
    for name, arm in other.get("arms", {}).items():
        mine = results.setdefault("arms", {}).setdefault(name, {"seeds": {}})["seeds"]
        clash = set(mine) & set(arm["seeds"])
        if clash:
            raise ValueError(f"arm {name}: seeds {sorted(clash)} are in both folders")
        mine.update(arm["seeds"])
    results.setdefault("warm_start", {}).update(other.get("warm_start", {}))


def arm_claims(results: dict[str, Any], split: str = "heldout") -> dict[str, Any]:
    """Every arm's learning claim (warm start against its last step), and its last step against the verdict arm's,
    paired by task and seed, so the shaping comparison reads from the same file as the claim."""
    out: dict[str, Any] = {}
    base = results["arms"].get("verdict")
    for name, arm in results["arms"].items():
        if not arm.get("seeds"):
            continue
        claim = learning_summary(results, arm=name, split=split)
        entry = {k: claim[k] for k in ("seeds", "heldout_pass1_warm", "heldout_pass1_final", "heldout_pass1_final_ci95",
                                        "final_step", "diff_mean", "diff_ci_low", "diff_ci_high", "cleared", "per_step")}
        if base is not None and name != "verdict":
            paired = _paired(base["seeds"], arm["seeds"], split) or {}
            entry["minus_verdict"] = paired
        out[name] = entry
    return out


def learning_summary(results: dict[str, Any], arm: str = "verdict", split: str = "heldout") -> dict[str, Any]:
    """The learning claim of one arm: held-out pass@1 of the warm start (step 0) and of the last step, per seed and
    pooled, and the per-task difference pooled over seeds with its bootstrap interval over tasks."""
    seeds = results["arms"][arm]["seeds"]
    curve = {}
    for step in sorted({int(e["step"]) for run in seeds.values() for e in run["evals"]}):
        pooled = _pooled(seeds, split, step)
        c = np.array([v[0] for v in pooled.values()])
        n = np.array([v[1] for v in pooled.values()])
        if n.sum():
            curve[step] = {"pass1": float(c.sum() / n.sum()), "ci95": [float(x) for x in bootstrap_interval(c, n)],
                           "per_seed": {s: next((e[split]["pass1"]["value"] for e in run["evals"]
                                                 if int(e["step"]) == step and split in e), None)
                                        for s, run in seeds.items()}}
    last = _last_step(seeds)
    warm, final = curve.get(0), curve.get(last)
    difference = _difference(_pooled(seeds, split, 0), _pooled(seeds, split, last)) or {}
    return {
        "arm": arm,
        "split": split,
        "seeds": sorted(int(s) for s in seeds),
        "heldout_tasks": len(_pooled(seeds, split, 0)),
        "heldout_pass1_warm": warm["pass1"] if warm else None,
        "heldout_pass1_warm_ci95": warm["ci95"] if warm else None,
        "heldout_pass1_final": final["pass1"] if final else None,
        "heldout_pass1_final_ci95": final["ci95"] if final else None,
        "final_step": last,
        "diff_mean": difference.get("mean"),
        "diff_ci_low": (difference.get("ci95") or [None, None])[0],
        "diff_ci_high": (difference.get("ci95") or [None, None])[1],
        "cleared": bool(difference.get("ci95") and difference["ci95"][0] > 0),
        "per_step": curve,
    }


def main(argv: list[str] | None = None) -> int:
    """Recompute the summary and redraw the plots of a finished (or partly finished) run folder."""
    import argparse
    import json

    parser = argparse.ArgumentParser(description="Recompute summary and plots of a shaping run from its results.json.")
    parser.add_argument("out", help="the run folder (holds results.json)")
    parser.add_argument("more", nargs="*", help="folders of the same configuration run for other seeds (shaping.py "
                                                "--seeds): their seeds are pooled into OUT's results.json")
    parser.add_argument("--rows", action="store_true",
                        help="recompute every evaluation's metrics from its evaluation rows in the folder first "
                             "(a run written by an older version of this script gains the newer metrics)")
    parser.add_argument("--learning", metavar="JSON",
                        help="also write the learning claim of the verdict arm (held-out pass@1 of the warm start and "
                             "the last step, the difference and its 95%% interval) to this file")
    args = parser.parse_args(argv)
    path = Path(args.out) / "results.json"
    if not path.is_file():
        parser.error(f"no results.json in {args.out}")
    results = json.loads(path.read_text(encoding="utf-8"))
    for folder in args.more:
        other_path = Path(folder) / "results.json"
        if not other_path.is_file():
            parser.error(f"no results.json in {folder}")
        try:
            pool_seeds(results, json.loads(other_path.read_text(encoding="utf-8")))
        except ValueError as exc:
            parser.error(f"{folder}: {exc}")
    if args.rows:
        remeasure(results, Path(args.out))
    done = {name: {"seeds": arm["seeds"]} for name, arm in results["arms"].items() if arm["seeds"]}
    results["arms"] = done
    results["summary"] = aggregate(results)
    results["plots"] = plot_all(results, Path(args.out)) if done else []
    path.write_text(json.dumps(results, indent=1, default=str), encoding="utf-8")
    if args.learning:
        claim = learning_summary(results)
        config = results.get("config") or {}
        summary = {"status": "cleared" if claim["cleared"] else "not cleared", **claim,
                   "config": config.get("path"), "config_values": config,
                   "model_parameters": results.get("model_parameters"), "wall_seconds": results.get("wall_seconds"),
                   "arms": arm_claims(results)}
        Path(args.learning).write_text(json.dumps(summary, indent=1, default=str) + "\n", encoding="utf-8")
    print("\n".join(results["plots"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
