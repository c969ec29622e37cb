"""Character classes of the tokenizer: which characters split off a word's front, back or middle.

The tokenizer reads lower-cased English text, so the classes are exact for the Latin script
(ASCII, Latin-1, Latin Extended) and the punctuation, quotes, currency signs and symbols that
appear around it; letters of other scripts are taken by Unicode's own letter property.
"""

from __future__ import annotations

import unicodedata

# punctuation that splits off either end of a word: brackets, stops, marks
PUNCT = frozenset(",:;!?¿¡()[]{}<>_#*&·…" "。？！，、；：～" "؟।،۔؛٪")
# quotation marks, straight and typographic, the low comma quote's look-alike, and the bracket-like quotes of CJK text
QUOTES = frozenset("'\"“”‘’‚„`´«»," "「」『』（）〔〕【】《》〈〉" "\u2329\u232a⟦⟧")
# currency signs split off the front of an amount ("$1,234.50"), or its back after a digit ("50€")
CURRENCY = frozenset("$£€¥฿﷼" + "".join(chr(c) for c in range(0x20A0, 0x20C0)))
# signs that split off the front only ("%off", "=x", "§2")
PREFIX_ONLY = frozenset("§%=—–")
# the dashes that also split off the back of a word ("now—")
DASHES = frozenset("—–")
# what may stand before a final full stop that is split off ("done.", "10.", "ok).")
STOP_AFTER = frozenset("0123456789%²-+|(?:)") | PUNCT | QUOTES
# joiners between letters or digits and a letter ("check-in", "x-ray", "3-day")
HYPHENS = ("---", "--", "——", "-", "–", "—", "~")
# joiners between digits ("2026-03-02", "2*3")
DIGIT_JOINERS = frozenset("+-*^")
# joiners between a letter or digit and a letter ("and/or", "key:value", "a=b")
WORD_JOINERS = frozenset(":<>=/")
# letters that Unicode calls alphabetic but the tokenizer reads as symbols
_NOT_LETTERS = frozenset("ªµºǀǁǂǃ")
ASCII_DIGITS = frozenset("0123456789")

# units written right after a number ("10kg", "5km", "30mb", "100%"), split off it: lengths, weights, data sizes,
# speeds and the percent sign, and the areas and volumes of the metric lengths
UNITS = frozenset((
    "km", "m", "cm", "mm", "ft", "in", "yd", "mi",
    *(f"{u}{p}" for u in ("km", "m", "cm", "mm") for p in ("²", "³")),
    "kg", "g", "mg", "lb", "lbs", "oz",
    "kb", "mb", "gb", "tb",
    "mph", "km/h",
    "%",
))
LONGEST_UNIT = max(len(u) for u in UNITS)

# tokens that end a sentence when they stand alone (the historic scripts of the supplementary planes are left out)
SENTENCE_ENDS = frozenset(
    "!.?"  # Latin
    "‼‽⁇⁈⁉⸮⸼"  # general punctuation
    "。｡．！？﹒﹖﹗"  # CJK and its full-width and small forms
    "։؟۔܀܁܂߹।॥၊။።፧፨"  # Armenian, Arabic, Syriac, NKo, Devanagari, Myanmar, Ethiopic
    "᙮᜵᜶᠃᠉᥄᥅᪨᪩᪪᪫᭚᭛᭞᭟᰻᰼᱾᱿"  # Canadian syllabics, Philippine, Mongolian, Limbu, Tai Tham, Balinese, Lepcha, Ol Chiki
    "꓿꘎꘏꛳꛷꡶꡷꣎꣏꤯꧈꧉꩝꩞꩟꫰꫱꯫"  # Lisu, Vai, Bamum, Phags-pa, Saurashtra, Kayah Li, Javanese, Cham, Meetei Mayek
)


def is_letter(c: str) -> bool:
    """A letter of any script (the ordinal indicators, the micro sign and the click letters are not)."""
    return c.isalpha() and c not in _NOT_LETTERS


def _uncased_letter(c: str) -> bool:
    """A letter of a script without case; the few caseless letters of the Latin and phonetic blocks are not counted."""
    return c >= "\u0370" and unicodedata.category(c) == "Lo"


def is_lower(c: str) -> bool:
    """A lower-case letter; a letter of a script without case (Hebrew, Arabic, Devanagari, CJK) counts as both cases."""
    return c.islower() and c not in _NOT_LETTERS or _uncased_letter(c)


def is_upper(c: str) -> bool:
    """An upper-case letter, or a letter of a script without case."""
    return c.isupper() or _uncased_letter(c)


def is_icon(c: str) -> bool:
    """A pictographic symbol (emoji, check marks, the degree sign), which stands as a token of its own."""
    return unicodedata.category(c) == "So"


def is_punct_char(c: str) -> bool:
    """Punctuation in Unicode's sense (every P category): dashes, stops, quotes, brackets, bullets."""
    return unicodedata.category(c)[0] == "P"
