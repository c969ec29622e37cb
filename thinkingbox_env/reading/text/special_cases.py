"""Words the tokenizer splits (or keeps whole) by rule rather than by punctuation.

Contractions split into the word and its clitic ("don't" is "do" + "n't", "i'm" is "i" + "'m",
"can't" is "ca" + "n't", "won't" is "wo" + "n't"), with the typographic apostrophe and without
any apostrophe ("dont", "youre"; not where that spelling is a word of its own: "ill", "well",
"were", "its"); times run together with their number ("3pm" is "3" + "pm"); abbreviations
whose full stop belongs to them ("e.g.", "a.m.", a single letter and a stop); emoticons and
whitespace marks, kept whole. Only lower-case forms: the claim reader lower-cases first.
"""

from __future__ import annotations

from functools import lru_cache

_APOSTROPHES = ("'", "\u2019")

# clitics a subject or question word takes; "'d've" is two clitics, "'ma" is "'m" + "a"
_ALL_CLITICS = ("s", "re", "ve", "d", "d've", "ll", "ll've")
_CLITICS: dict[str, tuple[str, ...]] = {
    "i": ("m", "ma", "ve", "d", "d've", "ll", "ll've"),
    **{w: ("s", "d", "d've", "ll", "ll've") for w in ("he", "she", "it", "that", "this")},
    **{w: ("re", "ve", "d", "d've", "ll", "ll've") for w in ("we", "you", "they", "these", "those")},
    **{w: _ALL_CLITICS for w in ("there", "what", "when", "where", "who", "why")},
    "how": (*_ALL_CLITICS, "d'y"),
}
# spellings without the apostrophe that are words in their own right, so stay whole
_REAL_WORDS = frozenset(("ill", "hell", "shell", "shed", "well", "were", "its", "whore", "howdy"))

# negated auxiliaries: the written stem before "n't", and whether "'ve" may follow ("couldn't've")
_NEGATED: dict[str, bool] = {
    "ca": True, "wo": True, "sha": True, "could": True, "did": True, "does": True, "do": True, "had": True,
    "may": True, "might": True, "must": True, "need": True, "ought": True, "should": True, "would": True,
    "ai": False, "are": False, "dare": False, "has": False, "have": False, "is": False, "was": False, "were": False,
}
_PERFECT_MODALS = ("could", "might", "must", "should", "would", "not")  # "could've"

# whole words that start with an apostrophe ("'cause", "'em") or drop a final g ("nothin'")
_APOSTROPHE_WORDS = ("bout", "cause", "cos", "coz", "cuz", "d", "em", "ll", "nuff", "re", "s")
_DROPPED_G = ("doin", "goin", "havin", "lovin", "nothin", "nuthin", "somethin")

_ABBREVIATIONS = ("a.m.", "p.m.", "co.", "e.g.", "i.e.", "vs.", "v.s.", "and/or", "w/o")

# faces common in chat, kept whole so that their brackets are not read as punctuation (":D" is ":d" once lower-cased)
_EMOTICONS = (
    ":)", ":-)", ":))", ":(", ":-(", ":((",  # smile, frown
    ";)", ";-)",  # wink
    ":d", ":-d", ":p", ":-p",  # laugh, tongue
    ":/", ":-/", ":o", ":|",  # unsure, surprised, flat
    ":'(", ":\u2019(",  # tears
    "(:", "):",  # smile and frown drawn right to left
    "<3", "</3", "^_^",  # heart, broken heart, smile
)


@lru_cache(maxsize=1)
def special_cases() -> dict[str, tuple[str, ...]]:
    """Every special case: the string as written and the tokens it is split into."""
    out: dict[str, tuple[str, ...]] = {}

    def add(pieces: tuple[str, ...]) -> None:
        out["".join(pieces)] = pieces

    for ap in _APOSTROPHES:
        for subject, clitics in _CLITICS.items():
            for clitic in clitics:
                if clitic == "ma":
                    add((subject, ap + "m", "a"))
                else:
                    add((subject, *(ap + c for c in clitic.split("'"))))
        for stem, perfect in _NEGATED.items():
            add((stem, f"n{ap}t"))
            if perfect:
                add((stem, f"n{ap}t", ap + "ve"))
        for modal in _PERFECT_MODALS:
            add((modal, ap + "ve"))
        add(("let", ap + "s"))
        add((f"c{ap}m", "on"))
        add((f"y{ap}", "all"))
        for word in _APOSTROPHE_WORDS:
            add((ap + word,))
        for word in _DROPPED_G:
            add((word + ap,))
        add((f"ol{ap}",))
        add((f"ma{ap}am",))
        add((f"o{ap}clock",))
        add((ap,))
        add((ap + ap,))
    for subject, clitics in _CLITICS.items():  # the same without apostrophes: "youre", "idve"
        for clitic in clitics:
            pieces = (subject, "m", "a") if clitic == "ma" else (subject, *clitic.split("'"))
            if "".join(pieces) not in _REAL_WORDS:
                add(pieces)
    for stem, perfect in _NEGATED.items():
        add((stem, "nt"))
        if perfect:
            add((stem, "nt", "ve"))
    for modal in _PERFECT_MODALS:
        add((modal, "ve"))
    add(("y", "all"))
    add(("can", "not"))
    add(("gon", "na"))
    add(("got", "ta"))
    for word in (*_DROPPED_G, "ol", "em", "ll", "nuff", "\u2018s"):  # "‘s": the clitic after an opening quote mark
        add((word,))
    for hour in range(1, 13):
        for suffix in ("am", "pm", "a.m.", "p.m."):
            add((str(hour), suffix))
    for scale in "cfk":
        add(("°", scale, "."))
    for letter in "abcdefghijklmnopqrstuvwxyzäöü":
        add((letter + ".",))
    for word in (*_ABBREVIATIONS, *_EMOTICONS):
        add((word,))
    for mark in (" ", "\t", "\n", "\\t", "\\n", "\u00a0", "<space>", "\u2014"):
        add((mark,))
    return out
