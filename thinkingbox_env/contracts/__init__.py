"""What crosses the engine's boundaries: task and domain specs, the typed records, the trace events, the canonical action and the agent-facing protocol words."""
