"""Tasks: domain discovery, task lookup, the per-task runtime and its load-time checks, rationales and task-set statistics."""
