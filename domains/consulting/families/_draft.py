"""The consulting desk's task draft: the kit's :class:`TaskDraft` with the request's family, branch and clause.

A family writes its task with the kit's methods (calls, turns, facts, decisions, rows, checks,
replies); what the desk adds is what a request knows about itself: the family and branch it
exercises, and its clause, the request as a phrase that the opening of a two-request
conversation is written from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from thinkingbox_env.authoring import TaskDraft


@dataclass
class DeskDraft(TaskDraft):
    """One request to the service desk being written."""

    code: str = ""
    branch: str = ""
    clause: str = ""  # the request as a phrase ("a Quietline headset"), for a conversation of two requests
    # a lookup's optional filter the request lacks (no engagement for an internal report) is left out, as the desk types it
    omit_none: ClassVar[bool] = True


__all__ = ["DeskDraft"]
