"""The short import name: ``import thinkingbox; env = thinkingbox.make("retail/ST030_001")``.

The package itself is ``thinkingbox_env``; this name re-exports its public API so the usage
line from the paper and the README works as written.
"""

from __future__ import annotations

from thinkingbox_env import *  # noqa: F403 - the public API, by design
from thinkingbox_env import __all__, __version__  # noqa: F401
