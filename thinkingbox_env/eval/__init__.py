"""Evaluation: trial runner and run files, metrics, reports and task validation. May import the engine and agents."""
