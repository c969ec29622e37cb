"""What a token's text is, regardless of context: punctuation, whitespace, a number."""

from __future__ import annotations

from functools import lru_cache

from .chars import is_punct_char

_UNITS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
          "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen")
_TENS = ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
_SCALES = ("hundred", "thousand", *(p + "illion" for p in ("m", "b", "tr", "quadr", "quint", "sext", "sept", "oct", "non",
                                                         "dec", "gaj", "baz")))
_IRREGULAR_ORDINALS = {"one": "first", "two": "second", "three": "third", "five": "fifth", "eight": "eighth",
                       "nine": "ninth", "twelve": "twelfth"}


def _ordinal(cardinal: str) -> str:
    if cardinal in _IRREGULAR_ORDINALS:
        return _IRREGULAR_ORDINALS[cardinal]
    if cardinal.endswith("ty"):
        return cardinal[:-1] + "ieth"
    return cardinal + "th"


_CARDINALS = frozenset((*_UNITS, *_TENS, *_SCALES))
# "zeroth" is not read as a number
_NUMBER_WORDS = _CARDINALS | frozenset(_ordinal(c) for c in _CARDINALS if c != "zero")


@lru_cache(maxsize=65_536)
def like_num(text: str) -> bool:
    """Digits (with separators, a sign, a fraction bar or an ordinal ending: "1,234.50", "-3", "1/2", "21st") or a number word."""
    if text[:1] in ("+", "-", "±", "~"):
        text = text[1:]
    bare = text.replace(",", "").replace(".", "")
    if bare.isdigit():
        return True
    if bare.count("/") == 1:
        num, den = bare.split("/")
        if num.isdigit() and den.isdigit():
            return True
    low = bare.lower()
    return low in _NUMBER_WORDS or low[-2:] in ("st", "nd", "rd", "th") and low[:-2].isdigit()


@lru_cache(maxsize=65_536)
def is_punct(text: str) -> bool:
    """Every character is punctuation in Unicode's sense: stops, dashes, quotes, brackets, bullets, "%" (not "$" or "+")."""
    return all(is_punct_char(c) for c in text)
