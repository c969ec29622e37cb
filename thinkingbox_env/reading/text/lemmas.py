"""Lemmas by lookup in the English table of spacy-lookups-data, read without spaCy.

The table (``en_lemma_lookup.json.gz``: about 41,000 inflected forms and their lemmas) takes
20-40 ms to decompress and parse into a dict, a third of a fresh process's first grading,
which looks up a few hundred words. The first process to need it therefore writes it once,
sorted, under the user's cache directory: the forms and lemmas as "form<TAB>lemma" lines and
the offset of each line, so that a later process reads the file in about a millisecond and
finds a word by binary search in microseconds. The file's name and first line carry the
table file's path, size and modification time, this package's version and the format, so a
new table or package is read afresh; where the cache cannot be read or written, the table
itself is read into a dict, as before.
"""

from __future__ import annotations

import array
import contextlib
import importlib.util
import os
import sys
import zlib
from functools import lru_cache
from pathlib import Path
from typing import Protocol

from ...version import __version__

_TABLE = "en_lemma_lookup.json.gz"
_FORMAT = 2
_CACHE_ENV = "THINKINGBOX_CACHE_DIR"


class _Lookup(Protocol):
    def get(self, word: str, default: str, /) -> str: ...


@lru_cache(maxsize=65_536)
def lemma(word: str) -> str:
    """The lemma of one lower-cased word ("orders" is "order", "was" is "be"); the word itself where the table has none."""
    return _lookup().get(word, word)


def table() -> dict[str, str]:
    """The whole table, form -> lemma, read from spacy-lookups-data (for callers that need every entry)."""
    import gzip
    import json

    data: dict[str, str] = json.loads(gzip.decompress(table_path().read_bytes()))
    return data


def table_path() -> Path:
    """Where spacy-lookups-data keeps the English lemma table (found without importing the package)."""
    spec = importlib.util.find_spec("spacy_lookups_data")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("the claim reader's lemmas need spacy-lookups-data: pip install spacy-lookups-data")
    return Path(next(iter(spec.submodule_search_locations))) / "data" / _TABLE


def cache_dir() -> Path:
    """The user's cache directory for this package ($THINKINGBOX_CACHE_DIR where set)."""
    if os.environ.get(_CACHE_ENV):
        return Path(os.environ[_CACHE_ENV])
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "thinkingbox-env"


class _SortedTable:
    """The cached table: "form<TAB>lemma<NL>" lines sorted by form, and where each line starts; read by binary search."""

    def __init__(self, offsets: array.array[int], lines: bytes) -> None:
        self._offsets = offsets
        self._lines = lines

    def get(self, word: str, default: str, /) -> str:
        key, offsets, lines = word.encode(), self._offsets, self._lines
        lo, hi = 0, len(offsets)
        while lo < hi:
            mid = (lo + hi) // 2
            start = offsets[mid]
            if lines[start:lines.index(b"\t", start)] < key:
                lo = mid + 1
            else:
                hi = mid
        if lo == len(offsets):
            return default
        start = offsets[lo]
        tab = lines.index(b"\t", start)
        if lines[start:tab] != key:
            return default
        return lines[tab + 1:lines.index(b"\n", tab)].decode()


@lru_cache(maxsize=1)
def _lookup() -> _Lookup:
    """The cached table where it is current, else the table itself (then cached for the next process)."""
    src = table_path()
    st = src.stat()
    key = f"{_FORMAT}|{__version__}|{sys.byteorder}|{src.resolve()}|{st.st_size}|{st.st_mtime_ns}"
    try:
        cached: Path | None = cache_dir() / f"en_lemma_lookup.{zlib.crc32(key.encode()):08x}.bin"
    except RuntimeError:  # no home directory to find a cache in
        cached = None
    found = None if cached is None else _read_cache(cached, key)
    if found is not None:
        return found
    data = table()
    if cached is not None:
        _write_cache(cached, key, data)
    return data


def _read_cache(path: Path, key: str) -> _SortedTable | None:
    try:
        raw = path.read_bytes()
    except OSError:
        return None
    head = key.encode() + b"\n"
    if not raw.startswith(head):
        return None
    at = len(head)
    n = int.from_bytes(raw[at:at + 4], "little")
    offsets = array.array("I")
    if offsets.itemsize != 4 or len(raw) < at + 4 + 4 * n:
        return None
    offsets.frombytes(raw[at + 4:at + 4 + 4 * n])
    lines = raw[at + 4 + 4 * n:]
    if n and (offsets[-1] >= len(lines) or not lines.endswith(b"\n")):
        return None
    return _SortedTable(offsets, lines)


def _write_cache(path: Path, key: str, data: dict[str, str]) -> None:
    """Best effort: a cache that cannot be written costs only time."""
    if any(c in k or c in v for k, v in data.items() for c in "\t\n"):
        return
    offsets = array.array("I")
    if offsets.itemsize != 4:
        return
    lines = bytearray()
    for form, lem in sorted((k.encode(), v.encode()) for k, v in data.items()):
        offsets.append(len(lines))
        lines += form + b"\t" + lem + b"\n"
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")  # written aside, then renamed: a reader never sees half
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(key.encode() + b"\n" + len(offsets).to_bytes(4, "little") + offsets.tobytes() + lines)
        os.replace(tmp, path)
        for stale in path.parent.glob("en_lemma_lookup.*"):  # an earlier table's or package's copy
            if stale != path and not stale.name.endswith(".tmp"):
                stale.unlink(missing_ok=True)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
