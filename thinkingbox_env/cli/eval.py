"""The evaluation commands: ``eval`` here, and the views of its run files beside it.

``add_eval_commands(subparsers)`` registers ``eval``, ``agg``, ``compare``, ``report`` and ``show`` on
the ``thinkingbox`` parser. This module holds what only a terminal run needs (the arguments, signal
handling, the progress bar and exit codes); the translation of the arguments into an ``EvalConfig``
is in ``eval_options.py``, the views in ``metrics.py``, ``report.py`` and ``show.py``.
"""

from __future__ import annotations

import argparse
import importlib.util
import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ..users import PERSONAS
from .common import UserError, add_command, console, new_progress
from .eval_options import eval_config, option_hint, require_judge_for_rubrics, selected_tasks, skip_rubric_tasks
from .metrics import add_agg_command, add_compare_command
from .report import add_report_command
from .show import add_show_command


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



def cmd_eval(args: argparse.Namespace) -> int:
    """Parse, run through :func:`~thinkingbox_env.eval.evaluate`, and turn its summary into messages and an exit code.

    The run itself (lock, resume, preflight, stopping) lives in the library so that
    training and the command line share one path; what stays here is what only a
    terminal needs: signal handlers, the progress bar and the exit codes (2 a refused
    run, 130 stopped by a signal, 1 stopped by errors or no valid trial).
    """
    from rich.markup import escape

    from ..contracts.records import EvalRow
    from ..eval.api import ContextTooShortError, EvalSummary, evaluate
    from ..eval.config import check_config
    from ..eval.executors import RunControl
    from ..eval.preflight import PreflightError
    from ..eval.run_files import RunFileError
    from . import tbbench
    from .context_report import context_lines, savings_lines

    options = tbbench.task_options(args)
    suite = tbbench.select(args, options)
    tasks = suite if suite is not None else selected_tasks(args)
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
        console.print(f"[red]error:[/] {escape(option_hint(exc))}", highlight=False)
        return 2
    if args.skip_rubric:
        tasks = skip_rubric_tasks(tasks, suite is not None)
    if suite is None:
        require_judge_for_rubrics(tasks, config, args.no_judge)
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
    from ..judging.registry import DEFAULT_JUDGE, JUDGES
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
    add_agg_command(subparsers)
    add_compare_command(subparsers)
    add_report_command(subparsers)
    add_show_command(subparsers)
