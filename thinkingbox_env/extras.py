"""Optional dependencies: a clear message naming the extra to install, instead of an import error deep in a script."""

from __future__ import annotations

import importlib.util
import sys

# what the training scripts import, by the name pip knows them under in the ``train`` extra
TRAIN_MODULES = ("torch", "transformers", "trl", "peft", "datasets", "accelerate")
# what MCP serving (serving/) and the published benchmark's MCP servers (tbbench/) import: the ``mcp`` extra. It is not a
# core dependency because the trainers pin mcp themselves (verifiers 0.4: mcp==2.0.0; OpenEnv 0.10, through fastmcp: mcp<2)
MCP_MODULES = ("mcp", "mcp_types")


class MissingExtraError(ImportError):
    """A part of the package was used whose optional extra is not installed; the message names the extra to install."""


def missing(modules: tuple[str, ...]) -> list[str]:
    """The modules of ``modules`` that are not installed (looked up, not imported: torch takes seconds to import).

    A module blocked in ``sys.modules`` (set to None, which makes every import of it fail) counts as missing.
    """
    out = []
    for name in modules:
        blocked = name in sys.modules and sys.modules[name] is None
        if blocked or importlib.util.find_spec(name) is None:
            out.append(name)
    return out


def require_train_extra(script: str) -> None:
    """Stop ``script`` with one line naming the install command when the ``train`` extra is not installed."""
    absent = missing(TRAIN_MODULES)
    if absent:
        raise SystemExit(f"{script} needs the train extra ({', '.join(absent)} not installed): "
                         'pip install -e ".[train]" in the thinkingbox-env checkout')


def require_extra(extra: str, modules: tuple[str, ...], what: str) -> None:
    """Raise :class:`MissingExtraError` naming ``extra`` when a module of it is missing, before ``what`` imports one.

    An ``ImportError`` (not ``SystemExit``): library code calls this, and a caller may catch it to fall back.
    """
    absent = missing(modules)
    if absent:
        raise MissingExtraError(f"{what} needs the {extra} extra ({', '.join(absent)} not installed): "
                                f"pip install 'thinkingbox-env[{extra}]' (or pip install -e \".[{extra}]\" in a checkout)")
