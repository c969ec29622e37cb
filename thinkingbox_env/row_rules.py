"""Compatibility name: the row rules now live in ``thinkingbox_env.state.row_rules``, beside the fast path that uses them."""

from __future__ import annotations

from .state.row_rules import IDENTIFIER, INT_BOUNDS, UNSURE, Check, RowRules, coerce, literal_value, parse_check, parse_default

__all__ = ["IDENTIFIER", "INT_BOUNDS", "UNSURE", "Check", "RowRules", "coerce", "literal_value", "parse_check", "parse_default"]
