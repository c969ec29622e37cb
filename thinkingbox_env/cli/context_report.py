"""What ``thinkingbox eval`` says before its first trial about the openings and the served context.

A run on a short-context model is only worth reading with these figures beside it:
how close the longest opening came to the window, which tasks were left out, and what
the compact tool schemas saved.
"""

from __future__ import annotations

from typing import Any


def _saved(full: int, compact: int) -> str:
    share = (full - compact) / full if full else 0.0
    return f"{full:,} -> {compact:,} (-{full - compact:,}, {100 * share:.0f}%)"


def context_lines(summary: Any, on_overflow: str) -> list[str]:
    """Rich-markup lines on the context check and the compact tool schemas of an ``EvalSummary``."""
    lines: list[str] = []
    fit = summary.context
    if fit is not None and fit.openings:
        sizes = [o.prompt_tokens for o in fit.openings if o.prompt_tokens is not None]
        fitting = sum(1 for o in fit.openings if o.fits)
        longest = f", the longest opening {max(sizes):,} prompt tokens" if sizes else ""
        lines.append(f"openings measured against the served context of {fit.context.tokens:,} tokens ({fit.context.source}): "
                     f"{fitting} of {len(fit.openings)} tasks fit{longest}, with {fit.budget:,} tokens left for the answer")
        if fit.overflowing and on_overflow == "run":
            lines.append(f"[yellow]{len(fit.overflowing)} task(s) cannot fit their opening and run anyway: their trials "
                         "end as context_overflow failures[/]")
    elif summary.context_note:
        lines.append(f"[yellow]note: {summary.context_note}[/]")
    if summary.skipped:
        shown = ", ".join(summary.skipped[:10]) + (f" and {len(summary.skipped) - 10} more" if len(summary.skipped) > 10 else "")
        lines.append(f"[yellow]left out, their opening cannot fit the context: {shown}[/]")
    return lines + savings_lines(summary.compact_savings)


def savings_lines(savings: dict[str, dict[str, Any]]) -> list[str]:
    """One line per domain: what the compact tool schemas save on its longest opening (printed even when the run is refused)."""
    lines = []
    for domain, saved in savings.items():
        tokens = f"; tokens {_saved(*saved['tokens'])}" if saved.get("tokens") else ""
        lines.append(f"compact tool schemas, {domain}'s longest opening ({saved['task']}): characters {_saved(*saved['chars'])}"
                     f"{tokens}")
    return lines
