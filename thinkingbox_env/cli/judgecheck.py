"""``thinkingbox judge-check``: what a judge's verdicts are worth, measured on the package's labelled closings."""

from __future__ import annotations

import argparse
import json
from typing import Any

from .common import UserError, add_command, console, new_progress

DOMAINS = ("retail", "insurance", "travel", "neobank", "consulting")


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.1f}"


def _judge(args: argparse.Namespace) -> Any:
    """The judge, after one short request: a dead or refusing endpoint is reported before any item is asked."""
    import openai

    from ..eval.runner import EndpointConfig, _endpoint_error, preflight_timeout
    from ..judge import RubricJudge
    from ..llm import openai_client

    ep = EndpointConfig(model=args.judge_model, base_url=args.judge_base_url, api_key=args.judge_api_key,
                        timeout=args.timeout, max_retries=0)
    probe = openai_client("judge", ep.base_url, ep.api_key, timeout=preflight_timeout(ep), max_retries=0)
    where = args.judge_base_url or str(probe.base_url)
    try:
        probe.chat.completions.create(model=args.judge_model, messages=[{"role": "user", "content": "Reply with OK."}],
                                      max_tokens=16)
    except openai.OpenAIError as exc:
        raise UserError(f"the judge endpoint {where} failed a test request for model '{args.judge_model}': "
                        f"{_endpoint_error(exc)}") from exc
    return RubricJudge(model=args.judge_model, base_url=args.judge_base_url, api_key=args.judge_api_key,
                       timeout=args.timeout, max_retries=args.max_retries)


def _table(title: str, first: str, rows: dict[str, dict[str, Any]], overall: dict[str, Any] | None = None) -> Any:
    from rich.table import Table

    t = Table(first, "items", "judged", "accuracy %", "false-yes %", "false-no %", "unparsed", "failed", title=title)

    def add(name: str, f: dict[str, Any]) -> None:
        t.add_row(name, str(f["items"]), str(f["judged"]), _pct(f["accuracy"]), _pct(f["false_yes"]), _pct(f["false_no"]),
                  str(f["unparsed"]), str(f["failed"]))
    for name, f in rows.items():
        add(name, f)
    if overall is not None:
        add("[b]overall[/]", overall)
    return t


def cmd_judge_check(args: argparse.Namespace) -> int:
    """Ask the judge the selected items and print its figures.

    Exits 2 (a user error) when the endpoint does not answer the test request, and 1 when
    it answered but judged nothing: figures over no item measure nothing, and the first
    failure says why.
    """
    from rich.markup import escape

    from ..judge_check import load_items, run_judge_check, select, summarise, why_unjudged

    if args.limit is not None and args.limit < 1:
        raise UserError(f"--limit must be at least 1, not {args.limit}")
    if args.workers < 1:
        raise UserError(f"--workers must be at least 1, not {args.workers}")
    items = select(load_items(), domain=args.domain, limit=args.limit)
    judge = _judge(args)
    with new_progress() as progress:
        bar = progress.add_task("judging closings", total=len(items))
        answers = run_judge_check(judge, items, on_item=lambda _: progress.advance(bar), workers=args.workers)
    s = summarise(answers)
    o = s["overall"]
    console.print(f"judge {judge.identity()} on {o['items']} labelled closings "
                  f"({o['expected_yes']} judged items should be yes, {o['expected_no']} no)", highlight=False)
    console.print(_table("by domain", "domain", s["by_domain"], o))
    console.print(_table("by class (correct, paraphrased: should be yes; the others: no)", "class", s["by_class"], o))
    if o["unparsed"] or o["failed"]:
        first = next((a.error for a in answers if a.error not in (None, "unparsed")), None)
        console.print(f"[yellow]unjudged: {o['unparsed']} replies did not parse and {o['failed']} requests failed; "
                      "they are left out of every rate above (a rubric the judge does not answer is unevaluated)"
                      + (f"; the first failure: {escape(first)}" if first else "") + "[/]", highlight=False)
    if args.json:
        out = {"judge": judge.identity(), **s,
               "items": [{"id": a.item["id"], "expected": a.item["expected"], "answer": a.answer, "error": a.error}
                         for a in answers]}
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(out, fh, indent=2)
    reason = why_unjudged(answers)
    if reason is not None:
        console.print(f"[red]error:[/] nothing was judged, so nothing was measured: {escape(reason)}", highlight=False)
        return 1
    return 0


def add_judge_check_command(sub: argparse._SubParsersAction) -> None:
    """Register ``judge-check`` on the ``thinkingbox`` parser."""
    p = add_command(sub, "judge-check", "measure a rubric judge on the package's labelled closings",
                    "Ask a judge model the package's labelled closings (correct, paraphrased, opposite outcome, invented, "
                    "leaking a confidential fact, carrying judge-steering text) through the rubric prompt, and print its "
                    "accuracy, false-yes and false-no rates overall, per domain and per class. Replies that do not parse "
                    "and failed requests are counted apart as unjudged.",
                    ["thinkingbox judge-check --judge-model qwen3 --judge-base-url http://localhost:8000/v1",
                     "thinkingbox judge-check --judge-model gpt-4.1-mini --domain retail --limit 60"])
    p.add_argument("--judge-model", required=True, help="the judge model's name at the endpoint")
    p.add_argument("--judge-base-url", help="OpenAI-compatible endpoint (default: $THINKINGBOX_JUDGE_BASE_URL, "
                                            "then $OPENAI_BASE_URL, then the OpenAI API)")
    p.add_argument("--judge-api-key", help="API key (default: $THINKINGBOX_JUDGE_API_KEY, then $OPENAI_API_KEY)")
    p.add_argument("--domain", choices=DOMAINS, help="only this domain's closings")
    p.add_argument("--limit", type=int, help="ask at most N closings, spread evenly over the set")
    p.add_argument("--workers", type=int, default=4, help="judge requests in flight at once")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds per judge request")
    p.add_argument("--max-retries", type=int, default=2, help="retries per judge request")
    p.add_argument("--json", metavar="PATH", help="also write the figures and every item's answer as JSON")
    p.set_defaults(func=cmd_judge_check)
