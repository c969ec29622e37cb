"""Serving episodes over MCP: the server and the client-side tool backend. May import the engine only."""
