"""``thinkingbox judge-check``: what a judge's verdicts are worth, measured on the package's labelled closings."""

from __future__ import annotations

import argparse
import json
from typing import Any

from .common import UserError, add_command, console, new_progress

DOMAINS = ("retail", "insurance", "travel", "neobank", "consulting")


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.1f}"


def _probe(args: argparse.Namespace, role: str) -> None:
    """One short request to the endpoint: a dead or refusing one is reported (a user error) before any item is asked."""
    import openai

    from ..eval.config import EndpointConfig
    from ..eval.preflight import endpoint_error, preflight_timeout
    from ..llm.client import openai_client

    ep = EndpointConfig(model=args.judge_model, base_url=args.judge_base_url, api_key=args.judge_api_key,
                        timeout=args.timeout, max_retries=0)
    probe = openai_client(role, ep.base_url, ep.api_key, timeout=preflight_timeout(ep), max_retries=0)
    where = args.judge_base_url or str(probe.base_url)
    try:
        probe.chat.completions.create(model=args.judge_model, messages=[{"role": "user", "content": "Reply with OK."}],
                                      max_tokens=16)
    except openai.OpenAIError as exc:
        raise UserError(f"the {role} endpoint {where} failed a test request for model '{args.judge_model}': "
                        f"{endpoint_error(exc)}") from exc


def _judge(args: argparse.Namespace) -> Any:
    """The judge, after one short request: a dead or refusing endpoint is reported before any item is asked."""
    from ..judging.judge import RubricJudge

    _probe(args, "judge")
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

    from ..judging.conformance import load_items, run_judge_check, select, summarise, why_unjudged

    if args.limit is not None and args.limit < 1:
        raise UserError(f"--limit must be at least 1, not {args.limit}")
    if args.workers < 1:
        raise UserError(f"--workers must be at least 1, not {args.workers}")
    if args.reader_set is not None:
        return _reader_check(args)
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


_READER_FIELDS = ("action", "polarity", "modality", "values", "roles", "concepts")


def _reader_tables(by: str, rows: dict[str, dict[str, Any]], overall: dict[str, Any]) -> list[Any]:
    """Two tables per grouping (a terminal holds neither as one): the fields' accuracy, and the verdicts the readings lead to."""
    from rich.table import Table

    fields = Table(by, "read", *_READER_FIELDS, title=f"field accuracy % by {by}")
    verdicts = Table(by, "items", "read", "unread", "false-pass %", "false-fail %", title=f"verdicts by {by}")
    for name, f in [*rows.items(), ("[b]overall[/]", overall)]:
        fields.add_row(name, str(f["read"]), *(_pct(f["accuracy"][k]) for k in _READER_FIELDS))
        verdicts.add_row(name, str(f["items"]), str(f["read"]), str(f["unread"]), _pct(f["false_pass"]), _pct(f["false_fail"]))
    return [fields, verdicts]


def _reader_check(args: argparse.Namespace) -> int:
    """Read the labelled closings of ``--reader-set`` with the model reader and print its per-field accuracy and verdict errors.

    Exit codes as for the judge: 2 when the endpoint fails the test request (or the file is
    malformed), 1 when it answered but read nothing.
    """
    from rich.markup import escape

    from ..judging.conformance import select
    from ..reading.model_reader import ModelReader
    from ..reading.reader_check import DATA_FILE, ReaderCheckDataError, load_items, run_reader_check, summarise, why_unread
    from ..tasks.domain import load_domain

    path = DATA_FILE if args.reader_set == _SHIPPED else args.reader_set
    try:
        items = load_items(path, domains=load_domain)
    except (OSError, ReaderCheckDataError) as exc:
        raise UserError(f"the reader set cannot be used: {exc}") from exc
    items = select(items, domain=args.domain, limit=args.limit)  # spread over (domain, class) as the judge's set is
    _probe(args, "reader")
    reader = ModelReader(model=args.judge_model, base_url=args.judge_base_url, api_key=args.judge_api_key,
                         timeout=args.timeout, retries=args.max_retries)
    with new_progress() as progress:
        bar = progress.add_task("reading closings", total=len(items))
        answers = run_reader_check(reader, items, load_domain, on_item=lambda _: progress.advance(bar), workers=args.workers)
    s = summarise(answers)
    o = s["overall"]
    console.print(f"reader {reader.identity()} on {o['items']} labelled closings ({o['should_pass']} read items should pass, "
                  f"{o['should_fail']} fail)", highlight=False)
    for table in [*_reader_tables("domain", s["by_domain"], o), *_reader_tables("class", s["by_class"], o)]:
        console.print(table)
    console.print("classes correct, negation and proposal should pass; the others should fail", highlight=False)
    if o["unread"]:
        first = next((a.error for a in answers if a.reading is None), None)
        console.print(f"[yellow]unread: {o['unread']} closings got no usable reading; they are left out of every rate above "
                      f"(a check the reader cannot decide stays undetermined); the first: {escape(str(first))}[/]",
                      highlight=False)
    if args.json:
        out = {"reader": reader.identity(), **s,
               "items": [{"id": a.item["id"], "class": a.item["class"], "verdict": a.item["verdict"],
                          "passed": a.passed, "error": a.error, "scores": {k: list(v) for k, v in a.scores.items()}}
                         for a in answers]}
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(out, fh, indent=2)
    reason = why_unread(answers)
    if reason is not None:
        console.print(f"[red]error:[/] nothing was read, so nothing was measured: {escape(reason)}", highlight=False)
        return 1
    return 0


_SHIPPED = "<shipped>"


def add_judge_check_command(sub: argparse._SubParsersAction) -> None:
    """Register ``judge-check`` on the ``thinkingbox`` parser."""
    p = add_command(sub, "judge-check", "measure a rubric judge on the package's labelled closings",
                    "Ask a judge model the package's labelled closings (correct, paraphrased, opposite outcome, invented, "
                    "leaking a confidential fact, carrying judge-steering text) through the rubric prompt, and print its "
                    "accuracy, false-yes and false-no rates overall, per domain and per class. Replies that do not parse "
                    "and failed requests are counted apart as unjudged. With --reader-set, measure a model reader "
                    "instead: the accuracy of each field of its claims and the false-pass and false-fail rates of the "
                    "verdicts they lead to.",
                    ["thinkingbox judge-check --judge-model qwen3 --judge-base-url http://localhost:8000/v1",
                     "thinkingbox judge-check --judge-model gpt-4.1-mini --domain retail --limit 60",
                     "thinkingbox judge-check --reader-set --model qwen3 --base-url http://localhost:8000/v1"])
    p.add_argument("--judge-model", "--model", dest="judge_model", required=True,
                   help="the model's name at the endpoint (the judge's; with --reader-set, the reader's)")
    p.add_argument("--judge-base-url", "--base-url", dest="judge_base_url",
                   help="OpenAI-compatible endpoint (default: $THINKINGBOX_JUDGE_BASE_URL, or $THINKINGBOX_READER_BASE_URL "
                        "with --reader-set, then $OPENAI_BASE_URL, then the OpenAI API)")
    p.add_argument("--judge-api-key", "--api-key", dest="judge_api_key",
                   help="API key (default: $THINKINGBOX_JUDGE_API_KEY or $THINKINGBOX_READER_API_KEY, then $OPENAI_API_KEY)")
    p.add_argument("--reader-set", nargs="?", const=_SHIPPED, metavar="FILE",
                   help="measure a model reader instead of a judge, on labelled closings with their expected claims "
                        "(the package's own set when FILE is left out): per-field accuracy and false-pass/false-fail per class")
    p.add_argument("--domain", choices=DOMAINS, help="only this domain's closings")
    p.add_argument("--limit", type=int, help="ask at most N closings, spread evenly over the set")
    p.add_argument("--workers", type=int, default=4, help="judge requests in flight at once")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds per judge request")
    p.add_argument("--max-retries", type=int, default=2, help="retries per judge request")
    p.add_argument("--json", metavar="PATH", help="also write the figures and every item's answer as JSON")
    p.set_defaults(func=cmd_judge_check)
