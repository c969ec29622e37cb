"""Print the lowest versions pyproject.toml allows for the direct dependencies, one ``name==version`` a line.

CI installs these in a separate virtual environment and runs a smoke subset, so a
lower bound that no longer works fails CI instead of a user's install.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path


def lowest(pyproject: str) -> list[str]:
    block = re.search(r"^dependencies = \[(.*?)^\]", pyproject, re.DOTALL | re.MULTILINE)
    if block is None:
        raise SystemExit("pyproject.toml has no dependencies list")
    pins = []
    for spec in re.findall(r'"([^"]+)"', block.group(1)):
        match = re.match(r"([A-Za-z0-9_.\-\[\]]+)\s*>=\s*([0-9][^,;\s]*)", spec)
        if match is None:
            raise SystemExit(f"dependency '{spec}' has no lower bound (>=); give it one")
        pins.append(f"{match.group(1)}=={match.group(2)}")
    return pins


if __name__ == "__main__":
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1]
    print("\n".join(lowest((root / "pyproject.toml").read_text(encoding="utf-8"))))
