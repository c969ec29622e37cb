"""The evaluation commands: ``eval``, ``agg``, ``compare``, ``report`` and ``show``.

``add_eval_commands(subparsers)`` registers them on the ``thinkingbox`` parser.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import signal
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rich.console import Console

from ..users import PERSONAS
from .common import UserError, add_command, console, new_progress

err_console = Console(stderr=True)  # diagnostics stay off stdout, which may carry --json -


def _task_list_file(path: str) -> list[str]:
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return [ln.strip() for ln in lines if ln.strip() and not ln.strip().startswith("#")]


def _select(args: argparse.Namespace) -> list[str]:
    from ..registry import list_tasks
    from .common import select_tasks

    patterns = list(args.tasks or []) + list(args.task_patterns or [])
    if args.task_file:
        patterns += _task_list_file(args.task_file)
    chosen = select_tasks(patterns)
    if args.split:
        allowed = set(list_tasks(split=args.split))
        chosen = [t for t in chosen if t in allowed]
    return chosen


def _endpoint(model: str | None, base_url: str | None, api_key: str | None, timeout: float, retries: int) -> Any:
    from ..eval.config import EndpointConfig

    return EndpointConfig(model=model, base_url=base_url, api_key=api_key, timeout=timeout, max_retries=retries)


def _extra_body(text: str | None) -> dict[str, Any]:
    if not text:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(f"--extra-body is not valid JSON ({exc.msg} at character {exc.pos}); pass a JSON object, "
                        """e.g. --extra-body '{"chat_template_kwargs": {"enable_thinking": false}}'""") from exc
    if not isinstance(value, dict):
        raise UserError(f"--extra-body must be a JSON object ({{...}}), not {type(value).__name__}; "
                        """e.g. --extra-body '{"top_k": 20}'""")
    return value


@contextmanager
def _stop_on_signals(stop: Callable[[str], None]) -> Iterator[None]:
    """SIGINT and SIGTERM ask the run to stop cleanly; a second one stops at once."""
    seen: list[int] = []

    def handler(signum: int, frame: Any) -> None:
        if seen:
            raise KeyboardInterrupt
        seen.append(signum)
        console.print(f"[yellow]{signal.Signals(signum).name}: stopping; trials in flight are dropped "
                      "(send it again to quit at once)[/]")
        stop(signal.Signals(signum).name)

    try:
        old = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def _backend_options(flag: str, items: list[str] | None) -> dict[str, Any]:
    """``KEY=VALUE`` pairs for a backend; a value is read as JSON where it parses (numbers, true, lists), else as text."""
    out: dict[str, Any] = {}
    for item in items or []:
        key, sep, text = item.partition("=")
        if not sep or not key.strip():
            raise UserError(f"{flag} takes KEY=VALUE, got {item!r}; e.g. {flag} temperature=0.2")
        try:
            out[key.strip()] = json.loads(text)
        except json.JSONDecodeError:
            out[key.strip()] = text
    return out


def _option_hint(exc: ValueError) -> str:
    """The message of a refused backend option, with the command-line flag that sets each bad field."""
    from ..eval.config import OPTION_OF
    from ..plugins import BackendOptionError

    if not isinstance(exc, BackendOptionError):
        return str(exc)
    flags = sorted({OPTION_OF.get(f"{exc.kind}.{name}", f"--{exc.kind}-option {name.split('.')[0]}=...") for name in exc.fields})
    return f"{exc} (set with {', '.join(flags)})"


def eval_config(args: argparse.Namespace) -> Any:
    """Translate the command line into the library's ``EvalConfig``, so training and the CLI run evaluations from the same record."""
    from ..agents.openai_chat import SamplingConfig
    from ..eval.config import EvalConfig

    extra = _extra_body(args.extra_body)
    if args.max_completion_tokens is not None:
        args.max_tokens = None  # the two limits are alternatives; servers that take one refuse the other
    sampling = SamplingConfig(temperature=args.temperature, top_p=args.top_p, max_tokens=args.max_tokens,
                              max_completion_tokens=args.max_completion_tokens,
                              reasoning_effort=args.reasoning_effort, extra_body=extra)
    judge = None
    if args.judge_base_url or args.judge_model:
        judge = _endpoint(args.judge_model, args.judge_base_url, args.judge_api_key, args.timeout, args.max_retries)
    reader = None
    if getattr(args, "reader_base_url", None) or getattr(args, "reader_model", None):
        reader = _endpoint(args.reader_model, args.reader_base_url, args.reader_api_key, args.timeout, args.max_retries)
    return EvalConfig(
        agent=args.agent,
        agent_endpoint=_endpoint(args.model, args.base_url, args.api_key, args.timeout, args.max_retries),
        sampling=sampling,
        backoff=args.backoff,
        send_reasoning=args.send_reasoning,
        user=args.user,
        user_endpoint=_endpoint(args.user_model, args.user_base_url, args.user_api_key, args.timeout, args.max_retries),
        user_temperature=args.user_temperature,
        persona=args.persona,
        judge_endpoint=judge,
        max_actions=args.max_actions,
        seed=args.seed,
        protocol=args.protocol,
        include_policy=not args.no_policy,
        judge=args.judge,
        compact_tools=args.compact_tools,
        agent_options=_backend_options("--agent-option", args.agent_option),
        user_options=_backend_options("--user-option", args.user_option),
        judge_options=_backend_options("--judge-option", args.judge_option),
        strict_dialogue=getattr(args, "strict_dialogue", False),
        reader_endpoint=reader,
    )


def _require_judge_for_rubrics(tasks: list[str], config: Any, no_judge: bool) -> None:
    """Refuse a run whose task-authored rubrics would all be unevaluated by oversight.

    Without a judge a rubric is not evaluated and the trial's verdict is 0, so such a run
    measures nothing about the agent on those tasks; ``--no-judge`` says it is meant and
    marks every row. (The automatic truthfulness rubric is only reported as skipped.)
    """
    from ..eval.config import judge_runs
    from ..registry import load_task

    if no_judge:
        if config.judge_endpoint is not None:
            raise UserError("--no-judge contradicts --judge-model/--judge-base-url; give one or the other")
        config.no_judge = True
        return
    if judge_runs(config):
        return
    with_rubrics = [t for t in tasks if load_task(t).checks.rubric]
    if with_rubrics:
        shown = ", ".join(with_rubrics[:5]) + (f" and {len(with_rubrics) - 5} more" if len(with_rubrics) > 5 else "")
        raise UserError(f"{len(with_rubrics)} selected task(s) have rubric checks that need a judge ({shown}); "
                        "pass --judge-model/--judge-base-url, or --no-judge to run them unjudged (their verdict is then 0 "
                        "and every row is marked no_judge)")


def _skip_rubric_tasks(tasks: list[str], suite: bool) -> list[str]:
    """``--skip-rubric``: the selected tasks without rubric checks, and a line saying how many were left out.

    Without a judge a rubric task's trials are unjudged whenever nothing else failed, so its
    counted trials differ from the other tasks' and pass@k / pass^k cannot be computed; leaving
    those tasks out of the run keeps every task at the same number of trials.
    """
    from ..registry import load_task

    if suite:
        raise UserError("--skip-rubric selects among this package's tasks; a tbbench suite is graded by its own harness")
    kept = [t for t in tasks if not load_task(t).checks.rubric]
    if not kept:
        raise UserError(f"every selected task ({len(tasks)}) has rubric checks; --skip-rubric leaves nothing to run")
    if len(kept) < len(tasks):
        console.print(f"--skip-rubric: left out {len(tasks) - len(kept)} of {len(tasks)} selected task(s) with rubric checks; "
                      f"running {len(kept)}", highlight=False)
    return kept


def cmd_eval(args: argparse.Namespace) -> int:
    """Parse, run through :func:`~thinkingbox_env.eval.evaluate`, and turn its summary into messages and an exit code.

    The run itself (lock, resume, preflight, stopping) lives in the library so that
    training and the command line share one path; what stays here is what only a
    terminal needs: signal handlers, the progress bar and the exit codes (2 a refused
    run, 130 stopped by a signal, 1 stopped by errors or no valid trial).
    """
    from rich.markup import escape

    from ..eval.api import ContextTooShortError, EvalSummary, evaluate
    from ..eval.config import check_config
    from ..eval.executors import RunControl
    from ..eval.preflight import PreflightError
    from ..eval.run_files import RunFileError
    from ..records import EvalRow
    from . import tbbench
    from .context_report import context_lines, savings_lines

    options = tbbench.task_options(args)
    suite = tbbench.select(args, options)
    tasks = suite if suite is not None else _select(args)
    if not tasks:
        console.print("[red]error:[/] no tasks selected")
        return 2
    if args.reference_check:
        return tbbench.reference_check(args, tasks, options)
    config = eval_config(args)
    config.task_options = options
    try:  # an unknown backend, a refused option, a missing extra: named before anything runs
        check_config(config)
    except ValueError as exc:
        console.print(f"[red]error:[/] {escape(_option_hint(exc))}", highlight=False)
        return 2
    if args.skip_rubric:
        tasks = _skip_rubric_tasks(tasks, suite is not None)
    if suite is None:
        _require_judge_for_rubrics(tasks, config, args.no_judge)
    if (args.ray or args.ray_address) and importlib.util.find_spec("ray") is None:
        raise UserError("--ray needs Ray, which is not installed: pip install -e '.[ray]' in the thinkingbox-env checkout "
                        "(or leave out --ray: trials then run on local threads, -c at a time)")
    from ..eval.run_dir import is_run_dir, rows_path

    out = rows_path(args.output)  # -o runs/NAME/ : a run directory (eval/run_dir.py), the rows in its rows.jsonl
    if is_run_dir(args.output):
        out.parent.mkdir(parents=True, exist_ok=True)
    if not out.parent.exists():
        raise UserError(f"the folder of -o {out} does not exist; create it (mkdir -p {out.parent}) or choose another file")
    if args.context_length is not None and args.context_length < 1:
        raise UserError(f"--context-length must be a positive number of tokens, not {args.context_length}")
    control = RunControl(max_consecutive_errors=args.max_consecutive_errors)
    with new_progress(transient=False) as progress, _stop_on_signals(control.stop):
        bar = progress.add_task("eval", total=len(tasks) * args.trials)

        live: list[EvalSummary] = []  # the summary evaluate() fills in as rows arrive

        def on_start(summary: EvalSummary) -> None:
            live.append(summary)
            for line in context_lines(summary, args.on_overflow):
                progress.console.print(line, highlight=False)
            progress.update(bar, total=summary.total, completed=summary.kept)

        # without a terminal (a log file, CI) the bar is painted only at the end: a line every tenth of the run or
        # every 30 s instead, so a long run shows it is moving
        plain = not console.is_terminal
        last_line = [time.monotonic()]

        def on_row(row: EvalRow) -> None:
            s = live[0]
            progress.update(bar, advance=1, description=f"pass {s.pass_rate:.3f}  unjudged {s.unjudged}  "
                                                         f"system errors {s.system_errors}")
            if plain:
                done, total = int(progress.tasks[bar].completed), int(progress.tasks[bar].total or 0)
                if done >= total or done % max(1, total // 10) == 0 or time.monotonic() - last_line[0] >= 30:
                    last_line[0] = time.monotonic()
                    console.print(f"eval: {done}/{total} trials; pass {s.pass_rate:.3f}, unjudged {s.unjudged}, "
                                  f"system errors {s.system_errors}", highlight=False)

        try:
            summary = evaluate(tasks, config, out=out, trials=args.trials, resume=args.resume,
                               concurrency=args.concurrency, ray=args.ray, ray_address=args.ray_address,
                               on_start=on_start, on_row=on_row, control=control,
                               check_endpoint=not args.no_preflight, check_tools=not args.no_tool_check,
                               context_length=args.context_length, on_overflow=args.on_overflow, label=args.label)
        except (RunFileError, PreflightError) as exc:
            progress.stop()
            for line in savings_lines(exc.fit.savings if isinstance(exc, ContextTooShortError) else {}):
                console.print(line, highlight=False)
            console.print(f"[red]error:[/] {escape(str(exc))}", highlight=False)
            return 2
    if is_run_dir(args.output) and out.is_file():
        from ..eval.run_dir import write_run_files
        from ..eval.run_files import read_rows

        files = write_run_files(out.parent, read_rows(out))
        console.print(f"run directory {out.parent}: {', '.join(f.name for f in [out, *files])}", highlight=False)
    saved = f"{summary.saved} of {summary.total} trials saved"
    if summary.stop_reason not in (None, "errors", "crash"):
        console.print(f"[yellow]stopped by {summary.stop_reason}: {saved}; rerun with --resume to complete {out}[/]", highlight=False)
        return 130
    if summary.stop_reason == "errors":
        first = summary.first_error or {}
        console.print(f"[red]error:[/] stopped after {args.max_consecutive_errors} system errors in a row; the first "
                      f"({first.get('where')}): {first.get('message')}", highlight=False)
        console.print(f"{saved}; fix the cause, then rerun with --resume to complete {out} "
                      "(system-error trials are run again)", highlight=False)
        return 1
    console.print(f"{summary.planned} trials run ({summary.kept} kept from before) -> {out}; "
                  f"pass@1 of this session {summary.pass_rate:.3f} over {summary.judged} judged trials; "
                  f"unjudged {summary.unjudged}; dialogue unverified {summary.unverified}; system errors {summary.system_errors}",
                  highlight=False)
    if summary.unjudged:
        console.print(f"[yellow]{summary.unjudged} trial(s) unjudged: their only open checks are rubric questions left "
                      "unevaluated; they are neither passed nor failed (add a judge: --judge-model/--judge-base-url)[/]",
                      highlight=False)
    if summary.judge_unparsed:
        console.print(f"[yellow]{summary.judge_unparsed} judge answer(s) did not parse; those checks stay unjudged "
                      "(thinkingbox show ... --trial N prints the raw answers)[/]", highlight=False)
    if summary.planned and summary.valid == 0:
        first = summary.first_error or {}
        console.print(f"[red]error:[/] no trial was valid: all {summary.planned} ended in system errors; the first "
                      f"({first.get('where')}): {first.get('message')}")
        return 1
    return 0


def _add_eval(sub: Any) -> None:
    from ..agents.registry import AGENTS
    from ..eval.config import PROTOCOLS
    from ..judges import DEFAULT_JUDGE, JUDGES
    from ..users.registry import USERS

    def listing(registry: Any) -> str:
        return "; ".join(f"{name}: {line}" for name, line in registry.describe_all())

    p = add_command(sub, "eval", "run trials of an agent over tasks and write one JSON row per trial",
                    "Run trials of an agent over tasks and append one JSON row per finished trial to the run file. "
                    "Before the run a test request with one tool goes to the agent endpoint (without --model, the only "
                    "model it serves is used); an endpoint that returns no tool call is refused. Ctrl-C stops cleanly: finished trials are kept and --resume completes the run.",
                    ["thinkingbox eval retail --base-url http://localhost:8000/v1 -n 4 --skip-rubric -o runs/qwen.jsonl",
                     "thinkingbox eval retail --base-url http://localhost:8000/v1 -n 4 --judge-model gpt-4o-mini "
                     "--judge-base-url https://api.openai.com/v1 -o runs/qwen-judged.jsonl",
                     "thinkingbox eval 'retail/ST030_*' --agent oracle -o runs/oracle.jsonl",
                     "thinkingbox eval retail --base-url http://localhost:8000/v1 -n 4 --skip-rubric -o runs/qwen.jsonl --resume"])
    p.add_argument("tasks", nargs="*", help="task ids, domains or globs, with @v<N> for an earlier task set (retail@v2); default: all")
    p.add_argument("--tasks", dest="task_patterns", nargs="+", metavar="PATTERN", help="the same as the positional task arguments")
    p.add_argument("--task-file", help="file with one task id, domain or glob per line")
    p.add_argument("--split", choices=["test", "train"], help="keep only tasks of this split")
    p.add_argument("--agent", choices=AGENTS.names(), default="openai", metavar="NAME",
                   help=f"the agent backend, one of: {listing(AGENTS)}")
    p.add_argument("--agent-option", action="append", metavar="KEY=VALUE",
                   help="an option of the agent backend beyond the flags below (repeatable; VALUE read as JSON where it parses)")
    p.add_argument("--model", help="agent model name (or THINKINGBOX_AGENT_MODEL); for --agent transformers a checkpoint path")
    p.add_argument("--protocol", choices=PROTOCOLS, default="chat",
                   help="chat: the environment's protocol; customer-tool: the one TRL training uses (reply_to_customer tool, "
                        "a plain-text turn ends) -- evaluate trained checkpoints with it")
    p.add_argument("--no-policy", action="store_true", help="customer-tool protocol: leave the policy out of the system prompt "
                   "(for models trained without it)")
    p.add_argument("--base-url", help="agent endpoint, e.g. http://localhost:8000/v1 (or THINKINGBOX_AGENT_BASE_URL)")
    p.add_argument("--api-key", help="agent API key (or THINKINGBOX_AGENT_API_KEY / OPENAI_API_KEY)")
    p.add_argument("--temperature", type=float, default=0.0, help="agent sampling temperature")
    p.add_argument("--top-p", type=float, help="agent nucleus sampling (left out of requests unless given)")
    p.add_argument("--max-tokens", type=int, default=4096, help="output token limit per agent turn (sent as max_tokens)")
    p.add_argument("--max-completion-tokens", type=int,
                   help="send this limit as max_completion_tokens instead of max_tokens (OpenAI reasoning models)")
    p.add_argument("--reasoning-effort", help="low, medium or high, for models that take it")
    p.add_argument("--extra-body", help="JSON object merged into each agent request (e.g. vLLM chat_template_kwargs)")
    p.add_argument("--send-reasoning", action="store_true", help="send the model's reasoning back in later turns")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds per model request")
    p.add_argument("--max-retries", type=int, default=5, help="retries on 502/503/504 and timeouts")
    p.add_argument("--backoff", type=float, default=1.0, help="first retry delay in seconds (doubles each retry)")
    p.add_argument("--user", choices=USERS.names(), default="scripted", metavar="NAME",
                   help=f"the simulated user, one of: {listing(USERS)}")
    p.add_argument("--user-option", action="append", metavar="KEY=VALUE", help="an option of the user backend (repeatable)")
    p.add_argument("--user-model", help="--user llm: the user's model (or THINKINGBOX_USER_MODEL)")
    p.add_argument("--user-base-url", help="--user llm: its endpoint (or THINKINGBOX_USER_BASE_URL)")
    p.add_argument("--user-api-key", help="--user llm: its API key (or THINKINGBOX_USER_API_KEY)")
    p.add_argument("--user-temperature", type=float, default=0.3, help="--user llm: sampling temperature")
    p.add_argument("--persona", choices=PERSONAS, default="plain", help="how the simulated user behaves")
    p.add_argument("--judge", choices=JUDGES.names(), default=DEFAULT_JUDGE, metavar="NAME",
                   help=f"the judge of rubric checks, one of: {listing(JUDGES)}")
    p.add_argument("--judge-option", action="append", metavar="KEY=VALUE", help="an option of the judge backend (repeatable)")
    p.add_argument("--judge-model", help="rubric judge model (a judge runs when this or --judge-base-url is given)")
    p.add_argument("--judge-base-url", help="rubric judge endpoint")
    p.add_argument("--judge-api-key", help="rubric judge API key")
    p.add_argument("--reader-model", help="a model that reads the sentences the rule reader cannot into claims, so the "
                                          "dialogue checks decide on them (a reader runs when this or --reader-base-url is given)")
    p.add_argument("--reader-base-url", help="the reader's OpenAI-compatible endpoint")
    p.add_argument("--reader-api-key", help="the reader's API key")
    p.add_argument("--no-judge", action="store_true",
                   help="run tasks with rubric checks without a judge (they stay unevaluated; rows are marked)")
    p.add_argument("--skip-rubric", action="store_true",
                   help="leave the selected tasks with rubric checks out of the run, so a run without a judge counts "
                        "the same trials on every task and gets pass@k and pass^k")
    p.add_argument("--strict-dialogue", action="store_true",
                   help="count a dialogue check the reader could not decide (dialogue unverified) as failed")
    p.add_argument("-n", "--trials", type=int, default=1, help="trials per task")
    p.add_argument("-c", "--concurrency", type=int, default=4, help="trials in flight")
    p.add_argument("--seed", type=int, default=0, help="trial i uses seed + i")
    p.add_argument("--max-actions", type=int, default=50, help="agent actions before a trial is truncated")
    p.add_argument("-o", "--output", required=True,
                   help="run file (JSONL), or a run directory (a folder, or a path ending in /): rows.jsonl as the run goes, "
                        "then config.json, summary.json and report.html")
    p.add_argument("--resume", action="store_true", help="complete an interrupted run; system-error rows are retried")
    p.add_argument("--label", help="a name for this run in reports (stored in every row; default: the file name)")
    p.add_argument("--max-consecutive-errors", type=int, default=5, metavar="K",
                   help="stop the run after K system errors in a row, printing the first (0: never stop)")
    p.add_argument("--no-preflight", action="store_true",
                   help="skip the test requests sent to the agent endpoint before the run")
    p.add_argument("--context-length", type=int, metavar="TOKENS",
                   help="the agent model's context, where its server does not state it (llama.cpp's server and vLLM do); "
                        "each task's opening plus --max-tokens is measured against it before the run")
    p.add_argument("--on-overflow", choices=["stop", "skip", "run"], default="stop",
                   help="tasks whose opening cannot fit the context: stop before the run naming them (default), skip them, "
                        "or run them (they end as context_overflow failures)")
    p.add_argument("--compact-tools", action="store_true",
                   help="show the agent compact tool schemas (first sentences, no argument docs the name says), for "
                        "small-context models; prints what it saves on each domain's opening")
    p.add_argument("--no-tool-check", action="store_true",
                   help="run even when the endpoint returns no tool call for a request that needs its one tool "
                        "(the test request is then a plain one)")
    p.add_argument("--ray", action="store_true", help="run trials as Ray tasks (local Ray unless --ray-address)")
    p.add_argument("--ray-address", help="address of an existing Ray cluster, e.g. ray://head:10001 or auto")
    from .tbbench import add_arguments

    add_arguments(p)
    p.set_defaults(func=cmd_eval)


def add_eval_commands(subparsers: Any) -> None:
    """Register ``eval``, ``agg``, ``compare``, ``report`` and ``show``."""
    _add_eval(subparsers)
    _add_views(subparsers)


# --------------------------------------------------------------------------- agg


def _load_runs(paths: list[str], skip_malformed: bool = False) -> list[dict[str, Any]]:
    """The rows of run files; a line that is not a row is named, and stops the command unless skipping was asked for."""
    from ..eval.run_files import scan_rows

    rows: list[dict[str, Any]] = []
    bad: list[str] = []
    count = 0
    from ..eval.run_dir import rows_path

    for p in [str(rows_path(q)) for q in paths]:  # a run directory stands for its rows.jsonl
        if not Path(p).is_file():
            raise UserError(f"no such run file: {p}; pass a file that thinkingbox eval -o wrote")
        scan = scan_rows(p)
        if not scan.rows:
            json_lines = any(not why.startswith(("not valid JSON", "torn")) for _, why in scan.malformed)
            what = "holds JSON, but no eval rows (no task_id or status)" if json_lines else "has no JSON lines"
            raise UserError(f"{p} is not a run file: it {what}; pass a JSONL file that thinkingbox eval -o wrote")
        rows += scan.rows
        count += len(scan.malformed)
        bad += scan.describe()
    if count:
        verb = "skipped" if skip_malformed else "found"
        err_console.print(f"{'warning' if skip_malformed else 'error'}: {count} malformed row(s) {verb}:")
        for line in bad:
            err_console.print(f"  {line}", markup=False, highlight=False, soft_wrap=True)
        if not skip_malformed:
            raise UserError("the figures would leave these rows out: repair the file(s), or pass --skip-malformed to skip them")
    return rows


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

    rows = _load_runs(args.runs, args.skip_malformed)
    summary = summarize(rows, prices=_parse_prices(args.prices), system_errors_as_failures=args.system_errors_as_failures)
    if args.json == "-":
        sys.stdout.write(json.dumps(summary, indent=2) + "\n")
        return 0
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=2), encoding="utf-8")
    print_summary(summary, ", ".join(args.runs))
    return 0


# --------------------------------------------------------------------------- compare


def cmd_compare(args: argparse.Namespace) -> int:
    """``thinkingbox compare``: the paired per-task difference of two runs, the honest way to tell whether a change helped."""
    from rich.table import Table

    from ..eval.metrics import compare_runs

    result = compare_runs(_load_runs([args.a], args.skip_malformed), _load_runs([args.b], args.skip_malformed))
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


# --------------------------------------------------------------------------- show


def render_transcript(row: dict[str, Any], width: int = 2000) -> list[str]:
    """The trial as readable lines (rich markup): dialogue, tool calls and results, diff and failed checks."""
    from rich.markup import escape

    from ..eval.metrics import row_outcome
    from ..eval.transcript import render_trace

    status = {"pass": "PASS", "fail": "FAIL", "unjudged": "UNJUDGED", "system_error": "SYSTEM ERROR"}[row_outcome(row)]
    from ..eval.metrics import row_unverified

    unverified = row_unverified(row)
    lines = [f"[b]{row['task_id']}[/] trial {row['trial']} (seed {row['seed']}): [b]{status}[/]"
             + (" [yellow](dialogue unverified)[/]" if unverified else "")
             + f"  finish {row.get('finish_reason')}  category {row.get('failure_category')}"]
    for t in render_trace(row.get("trace") or [], width):
        text = escape(t.text)
        if t.kind == "reasoning":
            lines.append(f"[dim]  (reasoning) {text}[/]")
        elif t.kind == "said":
            lines.append(f"[b]{t.speaker}:[/] {text}")
        elif t.kind == "call":
            mark = "" if t.error is None else f" [red]({escape(t.error)})[/]"
            lines.append(f"[cyan]  call[/] {escape(t.name)}({text}){mark}")
        else:
            lines.append(f"[dim]  result[/] {text}")
    if row.get("system_error"):
        lines.append(f"[red]system error ({row['system_error'].get('where')}): {escape(row['system_error'].get('message', ''))}[/]")
    if row.get("context_overflow"):
        lines.append(f"[red]context overflow: {escape(str(row['context_overflow'].get('message', '')))}[/]")
    replies = row.get("user_replies") or {}
    if replies.get("quoted_prompt") or replies.get("cut"):
        lines.append(f"[yellow]simulated user: of {replies.get('replies')} replies, {replies.get('quoted_prompt')} quoted its "
                     f"prompt and {replies.get('cut')} were cut at its token cap (0-based)[/]")
    if row.get("diff") is not None:
        lines.append("[b]final diff:[/] " + (escape(json.dumps(row["diff"], indent=1, default=str)) if row["diff"] else "no changes"))
    for d in row.get("check_details") or []:
        if d["passed"] is not True:
            what = ("[red]failed check[/]" if d["passed"] is False else "[yellow]undetermined check[/]" if d.get("undetermined")
                    else "[yellow]unevaluated check[/]")
            lines.append(f"{what} {escape(d['name'])}: {escape(str(d.get('detail', '')))}")
    if row.get("judge_calls"):
        for j in row["judge_calls"]:
            lines.append(f"[magenta]judge[/] {escape(j['question'])} -> {j.get('answer')} ({escape(str(j.get('reason', j.get('error'))))})")
    return lines


def cmd_show(args: argparse.Namespace) -> int:
    """``thinkingbox show``: replay one recorded trial's dialogue and checks, to read why it failed (or, without a run, show the task)."""
    if args.run is None:
        from .tasks import show_task

        return show_task(args.task)
    rows = [r for r in _load_runs([args.run], args.skip_malformed) if r["task_id"] == args.task]
    if not rows:
        console.print(f"[red]error:[/] no trials of '{args.task}' in {args.run}")
        return 2
    if args.trial is None:
        from ..eval.metrics import row_outcome, row_unverified

        for r in sorted(rows, key=lambda r: r["trial"]):
            outcome = row_outcome(r)
            status = f"fail ({r.get('failure_category')})" if outcome == "fail" else outcome.replace("_", " ")
            if row_unverified(r):
                status += ", dialogue unverified"
            console.print(f"trial {r['trial']}: {status}")
        return 0
    chosen = [r for r in rows if r["trial"] == args.trial]
    if not chosen:
        console.print(f"[red]error:[/] {args.task} has no trial {args.trial}; trials: {sorted(r['trial'] for r in rows)}")
        return 2
    for line in render_transcript(chosen[-1]):
        console.print(line, soft_wrap=True)
    return 0


# --------------------------------------------------------------------------- report


def run_labels(paths: list[str], runs: list[list[dict[str, Any]]]) -> list[str]:
    """A distinct name per run: the label given at eval time, else the file name, else its folder.

    ``runs/base/eval.jsonl`` and ``runs/trained/eval.jsonl`` become ``base`` and ``trained``.
    """
    stems = [Path(p).stem for p in paths]
    out = []
    for p, stem, rows in zip(paths, stems, runs):
        given = next((r["label"] for r in rows if r.get("label")), None)
        if given:
            out.append(str(given))
        elif stems.count(stem) > 1:
            parent = Path(p).resolve().parent.name
            out.append(parent if parent else stem)
        else:
            out.append(stem)
    return out


def cmd_report(args: argparse.Namespace) -> int:
    """``thinkingbox report``: one self-contained HTML page comparing run files, to share without the tool installed."""
    from ..eval.report import build_report

    if args.label and len(args.label) != len(args.runs):
        raise UserError(f"{len(args.label)} --label for {len(args.runs)} runs; give one --label per run file, in order")
    loaded = [_load_runs([p], args.skip_malformed) for p in args.runs]
    runs = {}
    for name, rows in zip(args.label or run_labels(args.runs, loaded), loaded):
        while name in runs:
            name += "'"
        runs[name] = rows
    out = Path(args.output)
    if not out.parent.is_dir():
        raise UserError(f"the folder of -o {out} does not exist; create it (mkdir -p {out.parent}) or choose another path")
    html = build_report(runs, title=args.title)
    out.write_text(html, encoding="utf-8")
    console.print(f"wrote {args.output} ({len(html) // 1024} KiB, {len(runs)} runs)")
    return 0


def _add_views(sub: Any) -> None:
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

    p = add_command(sub, "compare", "paired per-task comparison of two runs, with a bootstrap interval for the lift",
                    "Compare run B with run A task by task: the lift in pass rate with a paired bootstrap interval, "
                    "and the tasks that flipped.",
                    ["thinkingbox compare runs/base.jsonl runs/trained.jsonl"])
    p.add_argument("a", help="the baseline run file")
    p.add_argument("b", help="the run compared with it")
    p.add_argument("--json", help="also write the comparison as JSON ('-': print only the JSON)")
    p.add_argument("--skip-malformed", action="store_true", help="leave out (and name) lines that are not rows instead of stopping")
    p.set_defaults(func=cmd_compare)

    p = add_command(sub, "report", "one self-contained HTML report of one or more runs",
                    "Write one self-contained HTML file with plots and tables of one or more runs, a task x run pass "
                    "table and every trial's transcript.",
                    ["thinkingbox report runs/base.jsonl runs/trained.jsonl -o report.html",
                     "thinkingbox report runs/*/eval.jsonl --label base --label trained -o report.html"])
    p.add_argument("runs", nargs="+", help="run files (JSONL)")
    p.add_argument("-o", "--output", default="report.html", help="the HTML file to write")
    p.add_argument("--title", default="thinkingbox evaluation report", help="the report's title")
    p.add_argument("--label", action="append", help="a name for each run, in order (repeatable; default: from the file names)")
    p.add_argument("--skip-malformed", action="store_true", help="leave out (and name) lines that are not rows instead of stopping")
    p.set_defaults(func=cmd_report)

    p = add_command(sub, "show", "a readable transcript of one trial, or a task's golden trajectory",
                    "Print one trial as a readable transcript: dialogue, tool calls and results, the final diff and "
                    "the failed checks; without --trial, list the task's trials. Without a run file, print the task: "
                    "its golden turns and calls, with the policy source of every written value.",
                    ["thinkingbox show runs/qwen.jsonl --task retail/ST030_001", "thinkingbox show runs/qwen.jsonl --task retail/ST030_001 --trial 0",
                     "thinkingbox show --task retail/ST030_001"])
    p.add_argument("run", nargs="?", help="run file (JSONL); leave out to show the task itself")
    p.add_argument("--task", required=True, help="task id, e.g. retail/ST030_001")
    p.add_argument("--trial", type=int, help="trial index (default: list the task's trials)")
    p.add_argument("--skip-malformed", action="store_true", help="leave out (and name) lines that are not rows instead of stopping")
    p.set_defaults(func=cmd_show)
