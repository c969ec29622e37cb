"""``agg`` and ``compare``: the metrics of run files (``eval/metrics.py``) printed as tables, or written as JSON.

The two commands share the formatting of rates and amounts, and nothing else of the other views.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .common import add_command, console
from .runs import load_runs


def _pct(x: float | None) -> str:
    return "no data" if x is None or x != x else f"{100 * x:.2f}"


def _num(x: float | None, digits: int = 2, prefix: str = "") -> str:
    return "no data" if x is None or x != x else f"{prefix}{x:.{digits}f}"


def _parse_prices(text: str | None) -> dict[str, float] | None:
    """``input,cached,output`` in dollars per million tokens."""
    if not text:
        return None
    parts = [float(p) for p in text.split(",")]
    if len(parts) == 2:
        parts = [parts[0], parts[0], parts[1]]
    if len(parts) != 3:
        raise SystemExit("--prices takes INPUT,CACHED,OUTPUT (or INPUT,OUTPUT) in dollars per million tokens")
    return {"input": parts[0], "cached": parts[1], "output": parts[2]}


def print_summary(s: dict[str, Any], title: str) -> None:
    """Print the headline numbers of ``summarize`` as tables; the JSON output carries the full summary."""
    from rich.table import Table

    p1 = s["pass@1"]
    t = Table("domain", "tasks", "trials", "pass@1 %", "95% CI", title=f"{title}: pass@1 (micro-averaged)")
    for d, v in s["pass@1"]["by_domain"].items():
        t.add_row(d, str(v["tasks"]), str(v["trials"]), _pct(v["value"]), f"{_pct(v['ci95'][0])}-{_pct(v['ci95'][1])}")
    o = p1["overall"]
    t.add_row("[b]overall[/]", str(o["tasks"]), str(o["trials"]), f"[b]{_pct(o['value'])}[/]", f"{_pct(o['ci95'][0])}-{_pct(o['ci95'][1])}")
    console.print(t)
    se = s["system_errors"]
    if se["count"]:
        how = "counted as failures" if se["counted_as_failures"] else "left out of every rate above"
        console.print(f"[yellow]system errors: {se['count']} trials ({how}); by source {se['by_source']}[/]")
    uj = s.get("unjudged") or {}
    if uj.get("count"):
        why = "the run was started with --no-judge" if uj.get("no_judge") else "their rubric questions went unevaluated"
        console.print(f"[yellow]unjudged: {uj['count']} trials of {len(uj['tasks'])} tasks, left out of every rate above "
                      f"({why}; neither passed nor failed)[/]", highlight=False)
    uv = s.get("unverified") or {}
    if uv.get("count"):
        how = ("counted as failed (--strict-dialogue)" if uv.get("strict")
               else f"{uv['passed']} of them passed: {_pct(uv['passes_share'])} of the passes rest on text no reader decided")
        checks = ", ".join(f"{k} {v}" for k, v in list(uv["checks"].items())[:6])
        console.print(f"[yellow]dialogue unverified: {uv['count']} trials ({_pct(uv['share'])}) have a dialogue check the "
                      f"reader could not decide; {how}; checks: {checks}[/]", highlight=False)
    jd = s.get("judge") or {}
    if jd.get("calls"):
        who = "; ".join(f"{i.get('model')} at {i.get('host')} (prompt v{i.get('prompt_version')})" for i in jd.get("identities", []))
        console.print(f"judge: {jd['calls']} answers, {jd['unparsed']} did not parse (left unjudged), {jd['failed']} failed"
                      + (f"; {who}" if who else ""), highlight=False)
    ur = s.get("user_replies") or {}
    if ur.get("trials"):
        colour = "yellow" if ur["quoted_prompt"] or ur["cut"] else "default"
        console.print(f"[{colour}]simulated user: of {ur['replies']} replies in {ur['trials']} trials, {ur['quoted_prompt']} quoted "
                      f"its prompt and {ur['cut']} were cut at its token cap ({ur['trials_flagged']} trials with such a reply)[/]",
                      highlight=False)
    if s.get("pass_k"):
        t = Table("k", "pass@k (unbiased)", "pass@k (plug-in)", "pass^k (unbiased)", "pass^k (plug-in)", title="repeated trials")
        for k in s["pass_k"]["pass@k"]:
            t.add_row(k, *(_pct(s["pass_k"][name][k]) for name in ("pass@k", "pass@k_plugin", "pass^k", "pass^k_plugin")))
        console.print(t)
    elif s.get("pass_k_refused"):
        console.print(f"[yellow]pass@k / pass^k not computed: {s['pass_k_refused']}[/]")
    left = s.get("pass_k_tasks_left_out") or []
    if left and not s.get("pass_k_refused"):
        console.print(f"[yellow]pass@k / pass^k are over the {s['tasks'] - len(left)} tasks whose every trial was judged: "
                      f"{len(left)} task(s) with unjudged trials left out (a judge, or eval --skip-rubric, counts them)[/]",
                      highlight=False)
    n = s.get("trials_per_task") or "n"
    console.print(f"tasks never passed (0/{n}): {s['tasks_never_passed']}; always passed ({n}/{n}): {s['tasks_always_passed']}")
    never = s.get("tasks_never_passed_ids") or []
    if never:
        shown = ", ".join(never[:20]) + (f" and {len(never) - 20} more" if len(never) > 20 else "")
        console.print(f"never passed: {shown}", highlight=False)
    failing = s.get("failing_checks") or []
    if failing:
        console.print("most failed checks: " + "; ".join(
            f"{c['name']} ({c['failed']}x in {', '.join(c['tasks'][:3])}{' ...' if len(c['tasks']) > 3 else ''})"
            for c in failing[:5]), highlight=False)
    fc = s["failure_categories"]
    cats = list(fc["overall"])
    t = Table("domain", *cats, title=f"failure categories, % of {fc['failed_trials']} failed trials")
    for d, shares in fc["by_domain"].items():
        t.add_row(d, *(_pct(shares.get(c, 0.0)) for c in cats))
    t.add_row("[b]overall[/]", *(_pct(fc["overall"].get(c, 0.0)) for c in cats))
    console.print(t)
    t = Table("check", "passed", "evaluated", "rate %", "unevaluated", title="checks (pooled across tasks)")
    for name, v in s["checks"].items():
        t.add_row(name, str(v["passed"]), str(v["total"]), _pct(v["rate"]), str(v.get("unevaluated", 0)))
    console.print(t)
    pt, tok = s["per_trial"], s["tokens"]["overall"]
    console.print("per trial: " + ", ".join(f"{k} {_num(v)}" for k, v in pt.items())
                  + f"; tokens/turn {_num(tok['tokens_per_turn'], 0)} x turns/trial {_num(tok['turns_per_trial'])}"
                  f" ({tok['trials_with_tokens']} trials with token counts)", highlight=False)
    w = s["weak_evaluator"]
    console.print(f"of {w['failed_trials']} failed trials: clean termination {_pct(w['clean_termination'])}%, "
                  f"+ write call {_pct(w['clean_and_write'])}%, + no final tool error {_pct(w['clean_write_no_error'])}%; "
                  f"diffs show a wrong field value {_pct(w['wrong_field_value'])}%, a missing effect {_pct(w['missing_effect'])}%, "
                  f"an extra effect {_pct(w['extra_effect'])}%")
    if "cost" in s:
        c = s["cost"]
        console.print(f"cost: total {_num(c['total'], 4, '$')}; per trial {_num(c['per_trial'], 4, '$')}; "
                      f"per success {_num(c['per_success'], 4, '$')}; "
                      f"per task solved in all trials {_num(c['per_task_solved_in_all_trials'], 4, '$')}", highlight=False)


def cmd_agg(args: argparse.Namespace) -> int:
    """``thinkingbox agg``: aggregate run files into pass@k, intervals and costs, as tables or JSON."""
    from ..eval.metrics import summarize

    rows = load_runs(args.runs, args.skip_malformed)
    summary = summarize(rows, prices=_parse_prices(args.prices), system_errors_as_failures=args.system_errors_as_failures)
    if args.json == "-":
        sys.stdout.write(json.dumps(summary, indent=2) + "\n")
        return 0
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=2), encoding="utf-8")
    print_summary(summary, ", ".join(args.runs))
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    """``thinkingbox compare``: the paired per-task difference of two runs, the honest way to tell whether a change helped."""
    from rich.table import Table

    from ..eval.metrics import compare_runs

    result = compare_runs(load_runs([args.a], args.skip_malformed), load_runs([args.b], args.skip_malformed))
    if args.json:
        out = json.dumps(result, indent=2)
        if args.json == "-":
            sys.stdout.write(out + "\n")
            return 0
        Path(args.json).write_text(out, encoding="utf-8")
    console.print(f"{result['tasks']} tasks in both runs; A {_pct(result['a_pass_rate'])}%, B {_pct(result['b_pass_rate'])}%; "
                  f"lift (B - A) {_pct(result['lift'])} points, 95% CI {_pct(result['lift_ci95'][0])} to {_pct(result['lift_ci95'][1])}")
    changed = [p for p in result["per_task"] if p["diff"] != 0]
    if changed:
        t = Table("task", "A %", "B %", "B - A", title="tasks whose pass rate changed")
        for p in sorted(changed, key=lambda p: p["diff"]):
            t.add_row(p["task_id"], _pct(p["a"]), _pct(p["b"]), f"{100 * p['diff']:+.1f}")
        console.print(t)
    console.print(f"flipped to pass (pass rate crossed 50% upwards): {', '.join(result['flipped_to_pass']) or 'none'}")
    console.print(f"flipped to fail: {', '.join(result['flipped_to_fail']) or 'none'}")
    uj = result.get("unjudged") or {}
    if uj.get("a") or uj.get("b"):
        console.print(f"[yellow]unjudged trials left out of both sides: A {uj.get('a', 0)}, B {uj.get('b', 0)}[/]", highlight=False)
    uv = result.get("unverified") or {}
    if uv.get("a") or uv.get("b"):
        console.print(f"[yellow]dialogue unverified trials (counted, a reader decided none of their open dialogue checks): "
                      f"A {uv.get('a', 0)}, B {uv.get('b', 0)}[/]", highlight=False)
    for side in ("only_in_a", "only_in_b"):
        if result[side]:
            console.print(f"[yellow]{len(result[side])} tasks {side.replace('_', ' ')}, not compared[/]")
    if result.get("not_compared"):
        console.print(f"[yellow]{len(result['not_compared'])} tasks in both runs not compared: on one side no trial was "
                      "judged (all unjudged or system errors)[/]", highlight=False)
    return 0



def add_agg_command(sub: Any) -> None:
    """Register ``agg``."""
    p = add_command(sub, "agg", "metrics of a run: pass@1, pass@k / pass^k, intervals, failure shares, costs",
                    "Metrics of a run: pass@1 with intervals by domain, pass@k and pass^k over repeated trials, tasks "
                    "never passed, failure categories, failing checks, tokens and costs.",
                    ["thinkingbox agg runs/qwen.jsonl", "thinkingbox agg runs/qwen.jsonl --prices 0.15,0.075,0.6",
                     "thinkingbox agg runs/qwen.jsonl --json -"])
    p.add_argument("runs", nargs="+", help="run files (JSONL); several are read as one run")
    p.add_argument("--json", help="also write the metrics as JSON to this file ('-': print only the JSON)")
    p.add_argument("--prices", help="INPUT,CACHED,OUTPUT dollars per million tokens, for the cost columns")
    p.add_argument("--system-errors-as-failures", action="store_true",
                   help="count system-error trials as failed trials instead of leaving them out")
    p.add_argument("--skip-malformed", action="store_true", help="leave out (and name) lines that are not rows instead of stopping")
    p.set_defaults(func=cmd_agg)


def add_compare_command(sub: Any) -> None:
    """Register ``compare``."""
    p = add_command(sub, "compare", "paired per-task comparison of two runs, with a bootstrap interval for the lift",
                    "Compare run B with run A task by task: the lift in pass rate with a paired bootstrap interval, "
                    "and the tasks that flipped.",
                    ["thinkingbox compare runs/base.jsonl runs/trained.jsonl"])
    p.add_argument("a", help="the baseline run file")
    p.add_argument("b", help="the run compared with it")
    p.add_argument("--json", help="also write the comparison as JSON ('-': print only the JSON)")
    p.add_argument("--skip-malformed", action="store_true", help="leave out (and name) lines that are not rows instead of stopping")
    p.set_defaults(func=cmd_compare)
