"""The package version, in one place that every part may import."""

__version__ = "0.1.0"
