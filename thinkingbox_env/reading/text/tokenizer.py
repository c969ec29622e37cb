"""Splitting lower-cased English text into tokens: words, clitics, numbers, punctuation, whitespace.

The text is cut at single spaces (a space belongs to the token before it; other whitespace,
a second space or a newline, is a token of its own). Each piece is then split from the
outside in: a special case ("don't", "e.g.", ":)") is taken whole as its rule says;
otherwise punctuation, quotes and currency signs come off its front, and punctuation,
quotes, clitic "'s", units after a number and a final full stop come off its back, one at a
time, until a special case or nothing more to strip remains. What is left stays whole if it
is a web address or an email address, else it is cut at joiners inside it (hyphens between
letters, "/" and ":" before a letter, "-" or "+" between digits, "..." and symbols
anywhere). Last, runs of tokens that spell a special case with nothing between them are
rejoined by its rule (":" and ")" are ":)").
"""

from __future__ import annotations

import re
from functools import lru_cache

from .chars import (
    ASCII_DIGITS,
    CURRENCY,
    DASHES,
    DIGIT_JOINERS,
    HYPHENS,
    LONGEST_UNIT,
    PREFIX_ONLY,
    PUNCT,
    QUOTES,
    STOP_AFTER,
    UNITS,
    WORD_JOINERS,
    is_icon,
    is_letter,
    is_lower,
    is_upper,
)
from .special_cases import special_cases

Piece = tuple[str, bool]  # a token's text and whether a space follows it

_FRONT = PUNCT | QUOTES | CURRENCY | PREFIX_ONLY
_BACK = PUNCT | QUOTES | DASHES
_SCALE_LETTERS = frozenset("FfCcKk")  # "30°c."


def prefix_length(s: str) -> int:
    """How many characters come off the front of ``s`` as one token (0: none)."""
    c = s[0]
    if c == "." and s[1:2] == ".":
        return len(s) - len(s.lstrip("."))  # an ellipsis written as dots
    if c in _FRONT or is_icon(c):
        return 1
    if c == "+" and s[1:2] not in ASCII_DIGITS:  # "+" before a digit is the number's sign
        return 1
    return 0


def suffix_length(s: str) -> int:
    """How many characters come off the back of ``s`` as one token (0: none); the longest that any rule allows."""
    n = len(s)
    if not n:
        return 0
    best = n  # the start of the suffix; n means none
    last = s[-1]
    if last in _BACK or is_icon(last):
        best = n - 1
    if n >= 2 and s.endswith("……"):
        best = n - 2
    if n >= 2 and last == "." and s[-2] == ".":
        best = min(best, len(s.rstrip(".")))
    if n >= 2 and s[-1] in "sS" and s[-2] in "'\u2019":
        best = min(best, n - 2)
    if n >= 2 and s[-2] in ASCII_DIGITS and (last == "+" or last in CURRENCY):
        best = min(best, n - 1)
    if last == ".":
        before = s[-2] if n >= 2 else ""
        if before and (before in STOP_AFTER or is_lower(before)) or s[-3:-1] in _degree_scales() or \
                n >= 3 and is_upper(s[-2]) and is_upper(s[-3]):
            best = min(best, n - 1)
    for k in range(min(LONGEST_UNIT, n - 1), 0, -1):  # "10kg", "5km/h", "100%": a unit right after a digit
        if n - k < best and s[n - k - 1] in ASCII_DIGITS and s[n - k:] in UNITS:
            best = n - k
            break
    return n - best


@lru_cache(maxsize=1)
def _degree_scales() -> frozenset[str]:
    return frozenset("°" + c for c in _SCALE_LETTERS)


def _infix_at(s: str, i: int) -> int:
    """The length of a joiner that starts at ``s[i]`` and splits the word there (0: none)."""
    c = s[i]
    if c == "." and s[i + 1:i + 2] == ".":
        return len(s[i:]) - len(s[i:].lstrip("."))
    if c == "…" or is_icon(c):
        return 1
    if not i:
        return 0
    before, after = s[i - 1], s[i + 1:i + 2]
    if c in DIGIT_JOINERS and before in ASCII_DIGITS and after and (after in ASCII_DIGITS or after == "-"):
        return 1
    if c == "." and after and (is_lower(before) or before in QUOTES) and (is_upper(after) or after in QUOTES):
        return 1
    if c == "," and after and is_letter(before) and is_letter(after):
        return 1
    if is_letter(before) or before in ASCII_DIGITS:
        for h in HYPHENS:
            if s.startswith(h, i) and is_letter(s[i + len(h):i + len(h) + 1] or "0"):
                return len(h)
        if c in WORD_JOINERS and after and is_letter(after):
            return 1
    return 0


_MAY_JOIN = re.compile(r"[^\x00-\x7f]|[.+\-*^,~:<>=/]")  # characters that may begin a joiner


def has_infix(s: str) -> bool:
    """Whether any joiner occurs in ``s``, even one at the start that does not cut."""
    return _MAY_JOIN.search(s) is not None and any(_infix_at(s, i) for i in range(len(s)))


def split_infixes(s: str) -> list[str]:
    """``s`` cut at its joiners, each joiner a token of its own; a joiner at the very start does not cut."""
    if not _MAY_JOIN.search(s):
        return [s]
    out, start, i = [], 0, 0
    while i < len(s):
        k = _infix_at(s, i)
        if not k:
            i += 1
            continue
        if i:
            if i != start:
                out.append(s[start:i])
            out.append(s[i:i + k])
            start = i + k
        i += k
    if start < len(s):
        out.append(s[start:])
    return out


# --------------------------------------------------------------------------- web and email addresses


@lru_cache(maxsize=1)
def _address_patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """The scheme, the private and the public IPv4 address forms, and what may follow a host (port, path)."""
    scheme = re.compile(r"[\w+\-.]{2,}://")
    private = re.compile(r"(?:10|127)(?:\.\d{1,3}){3}|(?:169\.254|192\.168)(?:\.\d{1,3}){2}"
                         r"|172\.(?:1[6-9]|2\d|3[01])(?:\.\d{1,3}){2}")
    public = re.compile(r"(?:22[0-3]|2[01]\d|1\d\d|[1-9]\d?)(?:\.(?:25[0-5]|2[0-4]\d|1?\d{1,2})){2}"
                        r"\.(?:25[0-4]|2[0-4]\d|1\d\d|[1-9]\d?)")
    tail = re.compile(r"(?::\d{2,5})?(?:[/?#]\S*)?")
    return scheme, private, public, tail


def _label_char(c: str) -> bool:
    """A character a domain label may hold: an ASCII letter or digit, or any character past Latin-1's symbols."""
    return c.isascii() and c.isalnum() or "\u00a1" <= c <= "\uffff"


def _is_domain(host: str) -> bool:
    """Labels (1 to 64 characters, "-" and "_" only inside) joined by dots, then a top-level name of 2 to 63 lower-case letters."""
    *labels, top = host.split(".")
    if not labels or not 2 <= len(top) <= 63 or not all(is_lower(c) for c in top):
        return False
    return all(0 < len(lb) <= 64 and _label_char(lb[0]) and _label_char(lb[-1])
               and all(_label_char(c) or c in "-_" for c in lb) for lb in labels)


def _is_site(s: str) -> bool:
    """``s`` is a host (a public IPv4 address or a domain), then optionally a port and a path."""
    _, private, public, tail = _address_patterns()
    if private.match(s):
        return False
    m = public.match(s)
    if m is not None and tail.fullmatch(s, m.end()):
        return True
    end = next((i for i, c in enumerate(s) if not (_label_char(c) or c in "-_.")), len(s))
    return _is_domain(s[:end]) and tail.fullmatch(s, end) is not None


def is_address(s: str) -> bool:
    """A web address ("www.shop.com/returns", "https://x.io") or an email address, which stays one token."""
    scheme = _address_patterns()[0].match(s)
    for body in ([s[scheme.end():]] if scheme else []) + [s]:
        if _is_site(body):
            return True
        at = body.find("@", 1)  # "name@host": whatever comes before an "@" is the user's part
        while at != -1:
            if _is_site(body[at + 1:]):
                return True
            at = body.find("@", at + 1)
    return False


# --------------------------------------------------------------------------- pieces of a chunk


@lru_cache(maxsize=65_536)  # words recur: a closing's chunks are mostly ones already split
def _split_known(chunk: str) -> tuple[str, ...]:
    """One chunk as token texts, special cases applied."""
    specials = special_cases()
    if chunk in specials:
        return specials[chunk]
    if chunk.isascii() and chunk.isalpha():  # a plain word: nothing to split
        return (chunk,)
    return tuple(_split(chunk, specials))


def _split(chunk: str, specials: dict[str, tuple[str, ...]] | None) -> list[str]:
    """One whitespace-free chunk (or one run of whitespace) as token texts; ``specials`` None splits by affixes alone."""
    if specials is not None and chunk in specials:
        return list(specials[chunk])
    front: list[str] = []
    back: list[str] = []
    rest, last = chunk, -1
    while rest and len(rest) != last:
        if specials is not None and rest in specials:
            break
        last = len(rest)
        p = prefix_length(rest)
        if p and specials is not None and rest[p:] in specials:
            front.append(rest[:p])
            rest = rest[p:]
            break
        s = suffix_length(rest[p:])
        if s and specials is not None and rest[:-s] in specials:
            back.append(rest[-s:])
            rest = rest[:-s]
            break
        if p:
            front.append(rest[:p])
        if s:
            back.append(rest[-s:])
        rest = rest[p:len(rest) - s]
    if not rest:
        middle: list[str] = []
    elif specials is not None and rest in specials:
        middle = list(specials[rest])
    elif is_address(rest):
        middle = [rest]
    else:
        middle = split_infixes(rest)
    return front + middle + back[::-1]


def _split_text(text: str, specials: dict[str, tuple[str, ...]] | None) -> list[Piece]:
    """The whole text as pieces: a space after a token is its trailing space; any other whitespace is a token."""
    out: list[Piece] = []
    for m in _RUNS.finditer(text):
        run = m.group()
        if run[0].isspace():
            if out and run[0] == " ":
                out[-1] = (out[-1][0], True)
                run = run[1:]
            if not run:
                continue
        out.extend((t, False) for t in (_split(run, None) if specials is None else _split_known(run)))
    return out


_RUNS = re.compile(r"\s+|\S+")


@lru_cache(maxsize=1)
def _rejoin_rules() -> dict[str, list[tuple[tuple[str, ...], str]]]:
    """Special cases that affix splitting would cut apart, by their first piece: (the pieces, the special case)."""
    specials = special_cases()
    rules: dict[str, list[tuple[tuple[str, ...], str]]] = {}
    for s in sorted(specials):
        if " " in s or prefix_length(s) or suffix_length(s) or has_infix(s):
            pieces = tuple(t for t, _ in _split_text(s, None))
            rules.setdefault(pieces[0], []).append((pieces, s))
    return rules


def _rejoin(pieces: list[Piece]) -> list[Piece]:
    """Runs of pieces that spell a special case with no space inside, replaced by that case's tokens."""
    rules = _rejoin_rules()
    found: list[tuple[int, int]] = []
    texts = [t for t, _ in pieces]
    for i, t in enumerate(texts):
        for seq, _ in rules.get(t, ()):
            if tuple(texts[i:i + len(seq)]) == seq:
                found.append((i, i + len(seq)))
    if not found:
        return pieces
    found.sort(key=lambda se: (se[0] - se[1], se[0]))  # longest first, then leftmost
    seen: set[int] = set()
    keep = []
    for start, end in found:
        if start not in seen and end - 1 not in seen:
            keep.append((start, end))
        seen.update(range(start, end))  # a run passed over still blocks the runs it overlaps
    specials = special_cases()
    out: list[Piece] = []
    i = 0
    for start, end in sorted(keep):
        out.extend(pieces[i:start])
        written = "".join(t + (" " if sp else "") for t, sp in pieces[start:end - 1]) + pieces[end - 1][0]
        rule = specials.get(written)
        if rule is None:
            out.extend(pieces[start:end])
        else:
            out.extend((t, False) for t in rule[:-1])
            out.append((rule[-1], pieces[end - 1][1]))
        i = end
    out.extend(pieces[i:])
    return out


def tokenize(text: str) -> list[Piece]:
    """The tokens of lower-cased ``text``: each token's text and whether a space follows it."""
    if not text:
        return []
    return _rejoin(_split_text(text, special_cases()))
