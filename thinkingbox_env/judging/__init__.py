"""Judges: the rubric judge, the judges' registry, and the conformance check a judge is measured with (and its data)."""
