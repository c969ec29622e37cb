"""Run files: one JSON row per trial, appended as trials finish, locked, read back in bounded lines, resumable.

Each finished trial becomes one line of a JSONL file, written in one ``write`` and
flushed to disk, so a run killed at any moment loses at most the trial in flight (and
perhaps a torn last line). ``--resume`` drops a torn line and the rows that ended in a
system error, then runs exactly the missing pairs: the file ends with one row per pair.

Rows of schema 2 leave out the chat ``messages`` (they repeat the trace; see
:func:`~thinkingbox_env.eval.metrics.row_messages`), and the long system texts (the agent's instructions and the
policy, the same in every trial of a task) are stored once per file as ``text``
records that rows refer to by hash (:func:`compact_row`); :func:`scan_rows` puts them
back, so every reader sees whole rows. Schema 1 rows, which carry both in full, read
as before.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..contracts.events import is_message
from ..contracts.records import EvalRow
from .config import EvalConfig, config_changes

log = logging.getLogger(__name__)


ROW_SCHEMA_VERSION = 2
SHARED_TEXT_MIN_CHARS = 256  # system texts this long are stored once per run file, not once per row


class RunFileError(RuntimeError):
    """A run that cannot go on for a reason the user must fix (the file exists, another process writes it, Ray is missing)."""
    pass


def row_problem(row: Any) -> str | None:
    """Why a parsed line is not a usable row (None if it is): the fields every reader relies on."""
    if not isinstance(row, dict):
        return f"a row must be a JSON object, got {type(row).__name__}"
    if not isinstance(row.get("task_id"), str):
        return "no task_id string"
    if isinstance(row.get("trial"), bool) or not isinstance(row.get("trial"), int):
        return "no integer trial"
    if not isinstance(row.get("status"), str):
        return "no status string"
    if row["status"] == "ok" and (isinstance(row.get("verdict"), bool) or not isinstance(row.get("verdict"), (int, float))):
        return "status ok without a numeric verdict"
    return None


@dataclass
class RowScan:
    """A run file read line by line: its good rows and, by line number, every line that is not one."""

    path: str
    rows: list[dict[str, Any]]
    malformed: list[tuple[int, str]]

    def describe(self, limit: int = 10) -> list[str]:
        lines = [f"{self.path}:{n}: {why}" for n, why in self.malformed[:limit]]
        if len(self.malformed) > limit:
            lines.append(f"... and {len(self.malformed) - limit} more")
        return lines


def _text_ref(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]


def compact_row(row: dict[str, Any], written: set[str]) -> list[str]:
    """The lines that store ``row``: a ``text`` record for each long system text not yet in ``written``, then the row.

    The row's copy refers to those texts by ``content_ref``; ``row`` itself is left as it
    is (callbacks see whole rows). ``written`` is updated, so one writer stores each text once.
    """
    lines: list[str] = []
    trace: list[Any] = []
    for event in row.get("trace") or []:
        content = event.get("content") if isinstance(event, dict) else None
        if isinstance(content, str) and len(content) >= SHARED_TEXT_MIN_CHARS \
                and is_message(event) and event.get("role") == "system":
            ref = _text_ref(content)
            if ref not in written:
                lines.append(json.dumps({"kind": "text", "ref": ref, "content": content}))
                written.add(ref)
            event = {k: v for k, v in event.items() if k != "content"} | {"content_ref": ref}
        trace.append(event)
    lines.append(json.dumps({**row, "trace": trace} if "trace" in row else row, default=str))
    return lines


def _resolve_texts(row: dict[str, Any], texts: dict[str, str]) -> str | None:
    """Put the shared texts back into ``row``'s trace; the reason it cannot be done, if one is missing."""
    trace = row.get("trace")
    if not isinstance(trace, list):
        return None
    for i, event in enumerate(trace):
        if isinstance(event, dict) and "content_ref" in event:
            ref = event["content_ref"]
            if ref not in texts:
                return f"refers to a shared text {ref} that is not in the file (was the file cut or its lines reordered?)"
            trace[i] = {k: v for k, v in event.items() if k != "content_ref"} | {"content": texts[ref]}
    return None


MAX_ROW_CHARS = 64 * 1024 * 1024  # a row holds one trial's trace; the longest a run of the package writes is far below


def _bounded_lines(fh: Any) -> Iterator[str | None]:
    """The file's lines, each read in at most :data:`MAX_ROW_CHARS` characters; ``None`` for a longer line.

    A longer line is read past in pieces, so a run file that is not ours (or a damaged one)
    cannot take memory without bound.
    """
    while True:
        line = fh.readline(MAX_ROW_CHARS + 1)
        if not line:
            return
        if len(line) <= MAX_ROW_CHARS or line.endswith("\n"):
            yield line
            continue
        while line and not line.endswith("\n"):
            line = fh.readline(MAX_ROW_CHARS)
        yield None


def scan_rows(path: str | Path) -> RowScan:
    """Every line of a run file, sorted into rows and named problems; nothing is dropped without a record.

    ``text`` records (schema 2) are not rows: their texts are put back into the rows that refer to them.
    """
    numbered: list[tuple[int, dict[str, Any]]] = []
    texts: dict[str, str] = {}
    malformed: list[tuple[int, str]] = []
    with open(path, encoding="utf-8", errors="replace") as fh:
        for number, line in enumerate(_bounded_lines(fh), start=1):
            if line is None:
                malformed.append((number, f"longer than {MAX_ROW_CHARS:,} characters (not a row this package writes); skipped"))
                continue
            if not line.endswith("\n"):
                malformed.append((number, "torn last line (its writer stopped mid-row; --resume repairs the file)"))
                break
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except (ValueError, RecursionError) as exc:
                malformed.append((number, f"not valid JSON ({str(exc)[:80]})"))
                continue
            if isinstance(row, dict) and row.get("kind") == "text" and "task_id" not in row:
                if isinstance(row.get("ref"), str) and isinstance(row.get("content"), str):
                    texts[row["ref"]] = row["content"]
                else:
                    malformed.append((number, "a text record needs a string ref and content"))
                continue
            problem = row_problem(row)
            if problem is not None:
                malformed.append((number, problem))
                continue
            numbered.append((number, row))
    rows: list[dict[str, Any]] = []
    for number, row in numbered:
        problem = _resolve_texts(row, texts)
        if problem is not None:
            malformed.append((number, problem))
        else:
            rows.append(row)
    malformed.sort()
    return RowScan(str(path), rows, malformed)


def read_rows(path: str | Path) -> list[dict[str, Any]]:
    """Every good row of a run file; a torn last line (a killed writer) and malformed lines are logged and skipped."""
    scan = scan_rows(path)
    for line in scan.describe():
        log.warning("skipping %s", line)
    return scan.rows



def prepare_resume(path: Path, config: EvalConfig) -> set[tuple[str, int]]:
    """Rewrite the file with its good rows only (no torn line, no system errors, no repeats); return their keys."""
    rows = read_rows(path)
    kept: list[dict[str, Any]] = []
    done: set[tuple[str, int]] = set()
    want = config.public()
    for row in rows:
        if row.get("config") != want:
            changes = "; ".join(config_changes(row.get("config") or {}, want)) or "the configuration"
            raise RunFileError(
                f"{path} was written with a different configuration: {changes}. "
                "Resume with the options the file was written with, or write to a new file (-o)"
            )
        key = (row["task_id"], row["trial"])
        if row.get("status") != "ok" or key in done:
            continue
        done.add(key)
        kept.append(row)
    tmp = path.with_name(path.name + ".resume-tmp")
    written: set[str] = set()
    with open(tmp, "w", encoding="utf-8") as fh:
        for row in kept:
            fh.write("".join(line + "\n" for line in compact_row(row, written)))
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    return done


class RunLock:
    """An exclusive lock on a run file for the life of a run, naming its holder to whoever is refused.

    Two writers appending to one file double its rows, and a ``--resume`` that rewrites
    the file while another run appends loses that run's rows; both are refused. The lock
    is ``flock`` on a sidecar ``<file>.lock`` (the run file itself is replaced by a
    resume, which would drop a lock held on it); the kernel releases it when its
    process dies, so a killed run never leaves a stale lock. The sidecar stays behind
    on purpose: deleting it would let a third process lock a fresh file while a
    second still holds the old one.

    The sidecar sits beside the file's real path (``os.path.realpath``: symlinks and
    ``..`` resolved), not the string given, so a second writer or a ``--resume`` that
    names the same file through a symlink meets the same lock. Hard links are distinct
    paths to one inode and are not recognised; ``evaluate`` writes through the real path.
    """

    def __init__(self, path: str | Path):
        import fcntl

        self.path = Path(path)
        self.real_path = Path(os.path.realpath(self.path))
        self.lock_path = self.real_path.with_name(self.real_path.name + ".lock")
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            try:
                holder = json.loads(os.pread(fd, 4096, 0) or b"{}")
            except ValueError:
                holder = {}
            os.close(fd)
            who = (f"pid {holder.get('pid', '?')} on host {holder.get('host', '?')}, started {holder.get('started', '?')}"
                   if holder else "another process")
            shown = str(self.path) if self.real_path == self.path.absolute() else f"{self.path} (the file {self.real_path})"
            raise RunFileError(f"{shown} is being written by {who} (lock {self.lock_path}); "
                               "wait for that run to finish, or write to another file") from None
        self.fd: int | None = fd
        info = {"pid": os.getpid(), "host": socket.gethostname(),
                "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "file": str(self.real_path)}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(info).encode(), 0)

    def release(self) -> None:
        if self.fd is not None:
            os.ftruncate(self.fd, 0)
            os.close(self.fd)  # closing the descriptor releases the flock
            self.fd = None

    def __enter__(self) -> RunLock:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release()


class RowWriter:
    """Appends one row per line; each row is one write, flushed and synced before the next.

    The writer holds the run's :class:`RunLock` (its own unless the caller already took
    one, e.g. before resuming) until :meth:`close`.
    """

    def __init__(self, path: Path, lock: RunLock | None = None):
        self._own_lock = lock is None
        self.lock = lock if lock is not None else RunLock(path)
        self.fh = open(path, "a", encoding="utf-8")  # noqa: SIM115 - held open for the whole run
        self.written: set[str] = set()  # shared texts this writer stored (a resumed file may hold a second copy)

    def write(self, row: EvalRow) -> None:
        """One write for the row and the shared texts it is the first to need, so a killed run tears at most one line."""
        self.fh.write("".join(line + "\n" for line in compact_row(row.to_json(), self.written)))
        self.fh.flush()
        os.fsync(self.fh.fileno())

    def close(self) -> None:
        self.fh.close()
        if self._own_lock:
            self.lock.release()
