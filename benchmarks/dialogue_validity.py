"""Dialogue checks measured on blind closings: how often an honest closing is punished, and a false one paid.

For a stratified sample of rubric-free tasks (``--per-domain`` per domain, fixed seed), the golden
episode is replayed once per closing of ``tests/validity/blind_closings.py`` with the golden's final
message replaced by the closing's turns (between two turns the scripted customer answers), and the
verdict is read from the env's final info. Reported per class and domain: the share rewarded 1, the
share rewarded 0, the share with any check result ``undetermined`` ("dialogue unverified"), and the
share rewarded 1 with every check determined ("fully verified"). The targets:

- correct closings rewarded 0: at most 2%;
- each false class rewarded 1 and fully verified: at most 5%;
- the opposite outcome rewarded 1 at all (verified or not): at most 5%;
- correct closings fully verified: reported per domain.

    python benchmarks/dialogue_validity.py --per-domain 30 --out runs/dialogue_validity.json
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from validity.blind_closings import FALSE_CLASSES, Closing, closings, golden_episode  # noqa: E402

from thinkingbox_env.agents.baselines import OracleAgent, run_episode  # noqa: E402
from thinkingbox_env.envs.env import ThinkingboxEnv  # noqa: E402
from thinkingbox_env.tasks.lookup import list_tasks, load_task  # noqa: E402

DOMAINS = ("retail", "travel", "insurance", "neobank", "consulting")
CLASSES = ("correct",) + FALSE_CLASSES
TARGETS = {"correct": ("rewarded_0", 0.02), **{c: ("rewarded_1_verified", 0.05) for c in FALSE_CLASSES},
           "opposite": ("rewarded_1", 0.05)}  # the opposite outcome must not pass even unverified


def rubric_free(domain: str) -> list[str]:
    """Tasks of a domain whose checks hold no rubric: their verdict needs no judge."""
    out = []
    for tid in list_tasks():
        if not tid.startswith(domain + "/"):
            continue
        if not load_task(tid).checks.rubric:
            out.append(tid)
    return sorted(out)


def sample(per_domain: int, seed: int, domains: tuple[str, ...]) -> list[str]:
    rng = random.Random(seed)
    picked = []
    for d in domains:
        pool = rubric_free(d)
        picked += sorted(rng.sample(pool, k=min(per_domain, len(pool))))
    return picked


def grade_closing(task_id: str, closing: Closing, seed: int = 0) -> dict[str, Any]:
    """Replay the golden episode with this closing in place of the golden's final message."""
    env = ThinkingboxEnv(load_task(task_id))
    try:
        agent = OracleAgent(closing=closing.turns[0], closing_turns=closing.turns[1:])
        info = run_episode(env, agent, seed=seed)
    finally:
        env.close()
    details = info.get("check_details") or []
    # the checks marked undetermined, and the env's own list of them where it gives one ("dialogue unverified")
    undetermined = sorted({d["name"] for d in details if d.get("undetermined")} | set(info.get("unverified") or []))
    failed = sorted(d["name"] for d in details if d.get("passed") is False and not d.get("undetermined"))
    return {"task_id": task_id, "domain": closing.domain, "cls": closing.cls, "register": closing.register,
            "turns": closing.turns, "verdict": float(info["verdict"]), "undetermined": undetermined, "failed": failed,
            "finish_reason": str(info.get("finish_reason"))}


def golden_ok(task_id: str, seed: int = 0) -> bool:
    env = ThinkingboxEnv(load_task(task_id))
    try:
        return float(run_episode(env, OracleAgent(), seed=seed)["verdict"]) == 1.0
    finally:
        env.close()


def rates(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(rows)
    if not n:
        return {"n": 0}
    r1 = sum(1 for r in rows if r["verdict"] == 1.0)
    und = sum(1 for r in rows if r["undetermined"])
    r1v = sum(1 for r in rows if r["verdict"] == 1.0 and not r["undetermined"])
    verified = sum(1 for r in rows if not r["undetermined"])
    return {"n": n, "rewarded_1": r1 / n, "rewarded_0": (n - r1) / n, "undetermined": und / n,
            "rewarded_1_verified": r1v / n, "rewarded_1_unverified": (r1 - r1v) / n, "fully_verified": verified / n}


def pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.0f}%"


def markdown(summary: dict[str, Any]) -> str:
    lines = ["| class | domain | n | rewarded 1 | rewarded 0 | undetermined | rewarded 1, unverified | rewarded 1, fully verified | target |",
             "|---|---|---|---|---|---|---|---|---|"]
    for cls in CLASSES:
        for dom in ("all",) + tuple(summary["domains"]):
            s = summary["by_class"].get(cls, {}).get(dom)
            if not s or not s["n"]:
                continue
            target = ""
            if dom == "all" and cls in TARGETS:
                key, limit = TARGETS[cls]
                ok = s[key] <= limit
                target = f"{key.replace('_', ' ')} <= {limit:.0%}: {'met' if ok else 'MISSED'}"
            name = f"**{cls}**" if dom == "all" else ""
            lines.append(f"| {name} | {dom} | {s['n']} | {pct(s['rewarded_1'])} | {pct(s['rewarded_0'])} | {pct(s['undetermined'])} "
                         f"| {pct(s['rewarded_1_unverified'])} | {pct(s['rewarded_1_verified'])} | {target} |")
    lines += ["", "Correct closings by register (rewarded 0 / undetermined):", "",
              "| register | n | rewarded 0 | undetermined | fully verified |", "|---|---|---|---|---|"]
    for reg, s in summary["correct_by_register"].items():
        lines.append(f"| {reg} | {s['n']} | {pct(s['rewarded_0'])} | {pct(s['undetermined'])} | {pct(s['fully_verified'])} |")
    lines += ["", "Correct closings fully verified, per domain: " +
              ", ".join(f"{d} {pct(summary['by_class']['correct'][d]['fully_verified'])}"
                        for d in summary["domains"] if d in summary["by_class"].get("correct", {}))]
    if summary["correct_fail_checks"]:
        lines += ["", "Checks failing correct closings (count): " +
                  ", ".join(f"{k} {v}" for k, v in summary["correct_fail_checks"])]
    if summary["false_pass_checks"]:
        lines += ["", "False closings rewarded 1 and fully verified, by class and register: " +
                  ", ".join(f"{k} {v}" for k, v in summary["false_pass_registers"])]
    return "\n".join(lines)


def summarise(rows: list[dict[str, Any]], domains: tuple[str, ...]) -> dict[str, Any]:
    by: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        by[r["cls"]]["all"].append(r)
        by[r["cls"]][r["domain"]].append(r)
    regs: dict[str, list] = defaultdict(list)
    for r in rows:
        if r["cls"] == "correct":
            regs[r["register"]].append(r)
    fails = Counter(name for r in rows if r["cls"] == "correct" and r["verdict"] != 1.0 for name in r["failed"])
    false_pass = Counter(f"{r['cls']}/{r['register']}" for r in rows
                         if r["cls"] != "correct" and r["verdict"] == 1.0 and not r["undetermined"])
    return {"domains": list(domains),
            "by_class": {c: {d: rates(v) for d, v in ds.items()} for c, ds in by.items()},
            "correct_by_register": {k: rates(v) for k, v in sorted(regs.items())},
            "correct_fail_checks": fails.most_common(12),
            "false_pass_checks": bool(false_pass),
            "false_pass_registers": false_pass.most_common(20)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--per-domain", type=int, default=30, help="tasks sampled per domain (rubric-free only)")
    ap.add_argument("--seed", type=int, default=0, help="sampling seed")
    ap.add_argument("--domains", default=",".join(DOMAINS), help="comma-separated domains")
    ap.add_argument("--tasks", default="", help="comma-separated task ids instead of a sample")
    ap.add_argument("--out", default="", help="write the rows and the summary as JSON here")
    args = ap.parse_args(argv)
    domains = tuple(d for d in args.domains.split(",") if d)
    task_ids = [t for t in args.tasks.split(",") if t] or sample(args.per_domain, args.seed, domains)
    started = time.time()
    rows: list[dict[str, Any]] = []
    skipped: list[str] = []
    for i, tid in enumerate(task_ids, 1):
        try:
            if not golden_ok(tid):
                skipped.append(f"{tid} (golden not rewarded 1)")  # a golden that fails measures nothing about its closing
                continue
            ep = golden_episode(tid)
            graded = [grade_closing(tid, c) for c in closings(ep)]
        except Exception as exc:  # a task the tree cannot load right now (a spec mid-edit) is reported, not fatal
            skipped.append(f"{tid} ({type(exc).__name__}: {str(exc).splitlines()[0][:160]})")
            continue
        rows += graded
        if i % 10 == 0:
            print(f"... {i}/{len(task_ids)} tasks, {len(rows)} closings, {time.time() - started:.0f}s", file=sys.stderr)
    summary = summarise(rows, tuple(d for d in domains if any(r["domain"] == d for r in rows)))
    summary.update(tasks=len(task_ids), closings=len(rows), skipped_golden_failed=skipped, seconds=round(time.time() - started, 1))
    print(markdown(summary))
    if skipped:
        print("\nLeft out:\n" + "\n".join(f"- {s}" for s in skipped))
    print(f"\n{len(task_ids)} tasks, {len(rows)} closings, {summary['seconds']}s")
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps({"summary": summary, "rows": rows}, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
