"""Serving episodes over MCP: the server and the client-side tool backend. May import the engine only.

MCP is the ``mcp`` extra: importing this package without it raises :class:`~thinkingbox_env.extras.MissingExtraError`
naming the extra, rather than a bare ``ModuleNotFoundError`` from deep inside a module.
"""

from ..extras import MCP_MODULES, require_extra

require_extra("mcp", MCP_MODULES, "MCP serving (thinkingbox_env.serving, thinkingbox serve)")
