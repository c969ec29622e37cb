"""The ``eval`` command's arguments turned into what the library runs: the task list and an ``EvalConfig``.

Kept apart from the command itself so that the translation (which training scripts mirror, and
``tests/eval/test_evaluate.py`` compares with theirs) reads on its own, without the terminal
handling around a run.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from .common import UserError, console


def _task_list_file(path: str) -> list[str]:
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return [ln.strip() for ln in lines if ln.strip() and not ln.strip().startswith("#")]


def selected_tasks(args: argparse.Namespace) -> list[str]:
    """The tasks the positional arguments, ``--tasks`` and ``--task-file`` name, kept to ``--split`` where given."""
    from ..tasks.lookup import list_tasks
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


def option_hint(exc: ValueError) -> str:
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


def require_judge_for_rubrics(tasks: list[str], config: Any, no_judge: bool) -> None:
    """Refuse a run whose task-authored rubrics would all be unevaluated by oversight.

    Without a judge a rubric is not evaluated and the trial's verdict is 0, so such a run
    measures nothing about the agent on those tasks; ``--no-judge`` says it is meant and
    marks every row. (The automatic truthfulness rubric is only reported as skipped.)
    """
    from ..eval.config import judge_runs
    from ..tasks.lookup import load_task

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


def skip_rubric_tasks(tasks: list[str], suite: bool) -> list[str]:
    """``--skip-rubric``: the selected tasks without rubric checks, and a line saying how many were left out.

    Without a judge a rubric task's trials are unjudged whenever nothing else failed, so its
    counted trials differ from the other tasks' and pass@k / pass^k cannot be computed; leaving
    those tasks out of the run keeps every task at the same number of trials.
    """
    from ..tasks.lookup import load_task

    if suite:
        raise UserError("--skip-rubric selects among this package's tasks; a tbbench suite is graded by its own harness")
    kept = [t for t in tasks if not load_task(t).checks.rubric]
    if not kept:
        raise UserError(f"every selected task ({len(tasks)}) has rubric checks; --skip-rubric leaves nothing to run")
    if len(kept) < len(tasks):
        console.print(f"--skip-rubric: left out {len(tasks) - len(kept)} of {len(tasks)} selected task(s) with rubric checks; "
                      f"running {len(kept)}", highlight=False)
    return kept
