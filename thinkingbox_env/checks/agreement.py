"""Whether a user's reply agrees to a proposal: the consent check's reader of replies, replaceable."""

from __future__ import annotations

import re
from collections.abc import Callable

from ..users.acts import read_customer_answer

_YES = re.compile(
    r"\b(yes|yeah|yep|sure|ok(ay)?|please (do|go ahead|proceed)|go ahead|proceed|do it|that'?s (fine|right|correct)|"
    r"sounds good|agreed|i agree|confirm(ed)?|correct|please)\b", re.IGNORECASE)
_NO = re.compile(
    r"\b(no|nope|don'?t|do not|stop|wait|hold on|not (now|yet)|never ?mind|i('d| would) rather not|decline|refuse)\b",
    re.IGNORECASE)


def _agreed_by_words(reply: str) -> bool | None:
    no, yes = _NO.search(reply), _YES.search(reply)
    if no and (not yes or no.start() <= yes.start()):
        return False
    if yes:
        return True
    return None


def _agreed_by_acts(reply: str) -> bool | None:
    """The simulated user's dialogue-act reader, so a scripted and an LLM user's replies read alike."""
    answer = read_customer_answer(reply)
    return True if answer == "agree" else False if answer == "refuse" else _agreed_by_words(reply)


AgreementReader = Callable[[str], "bool | None"]
_reader: AgreementReader = _agreed_by_acts


def set_agreement_reader(reader: AgreementReader | None) -> None:
    """Point the consent check at another reader of user replies (None restores the default)."""
    global _reader
    _reader = reader if reader is not None else _agreed_by_acts


def agreed(reply: str) -> bool | None:
    """True when the reply agrees to a proposal, False when it refuses, None when it says neither."""
    return _reader(reply)
