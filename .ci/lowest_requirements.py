"""Print the lowest versions pyproject.toml allows for the direct dependencies, one ``name==version`` a line.

CI installs these in a separate virtual environment and runs a smoke subset, so a
lower bound that no longer works fails CI instead of a user's install. The ``mcp`` extra
is lowered too: the smoke subset serves tasks over MCP.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

EXTRAS = ("mcp",)  # the extras the smoke subset needs, lowered with the core


def lowest(pyproject: str, extras: tuple[str, ...] = EXTRAS) -> list[str]:
    """``name==lower bound`` of every core dependency and of the ``extras``' requirements."""
    block = re.search(r"^dependencies = \[(.*?)^\]", pyproject, re.DOTALL | re.MULTILINE)
    if block is None:
        raise SystemExit("pyproject.toml has no dependencies list")
    specs = re.findall(r'"([^"]+)"', block.group(1))
    for extra in extras:
        line = re.search(rf"^{re.escape(extra)} = \[(.*?)\]$", pyproject, re.MULTILINE)
        if line is None:
            raise SystemExit(f"pyproject.toml has no '{extra}' extra")
        specs += re.findall(r'"([^"]+)"', line.group(1))
    pins = []
    for spec in specs:
        match = re.match(r"([A-Za-z0-9_.\-\[\]]+)\s*>=\s*([0-9][^,;\s]*)", spec)
        if match is None:
            raise SystemExit(f"dependency '{spec}' has no lower bound (>=); give it one")
        pins.append(f"{match.group(1)}=={match.group(2)}")
    return pins


if __name__ == "__main__":
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1]
    print("\n".join(lowest((root / "pyproject.toml").read_text(encoding="utf-8"))))
