"""JSONL run files: one JSON object per line, appended and flushed record by record.

Every run file of the project (labels, eval items, the search pool, rollouts, metrics, the
rounds of ``prove --out``) is written here, so one rule holds for all of them:

* A writer appends each record as one whole line and flushes it, so a kill loses at most
  the line being written, and that line can only be the last one, with no newline after it.
* Readers therefore skip a last line that has no newline and does not parse (cut off by a
  kill), and only that: a line that does not parse anywhere else is corruption, an
  :class:`InputError` naming the file and the line. A last line without its newline that
  does parse is a whole record and is kept.
* Opening a writer on an existing file first repairs its tail (drops a cut-off last line,
  or adds the missing newline after a whole one), so the next record starts on its own line.
* :func:`resume_ids` is what a resumable run skips: the ids of the records already there.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from data.atomic import write_text_atomic
from data.errors import InputError

_TAIL_BLOCK = 1 << 16


def _record(line: bytes) -> dict[str, Any] | None:
    """The JSON object on ``line``; None when it does not parse as one."""
    try:
        value = json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    return value if isinstance(value, dict) else None


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Every record of ``path`` in order (none when it does not exist); blank lines and a cut-off last line are skipped."""
    if not path.exists():
        return []
    lines = path.read_bytes().split(b"\n")
    records = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        record = _record(line)
        if record is None:
            if number == len(lines):  # no newline after it: the write a kill interrupted
                continue
            raise InputError(f"{path} line {number} is not JSON (a corrupt run file: repair or remove it)")
        records.append(record)
    return records


def repair_tail(path: Path) -> None:
    """Make ``path`` end at a line boundary: drop a cut-off last line, or end a whole one with its newline."""
    if not path.exists():
        return
    with open(path, "rb+") as handle:
        size = handle.seek(0, os.SEEK_END)
        if size == 0:
            return
        handle.seek(size - 1)
        if handle.read(1) == b"\n":
            return
        start = size
        while start > 0:  # read backwards to the last newline; only the tail is touched
            block = min(_TAIL_BLOCK, start)
            handle.seek(start - block)
            newline = handle.read(block).rfind(b"\n")
            if newline >= 0:
                start = start - block + newline + 1
                break
            start -= block
        handle.seek(start)
        tail = handle.read()
        if tail.strip() and _record(tail) is not None:
            handle.write(b"\n")
        else:
            handle.truncate(start)


def write_jsonl(path: Path, records: Iterable[dict[str, Any]]) -> None:
    """Replace ``path`` with ``records`` in one atomic write (readers see the old file or the new one)."""
    write_text_atomic(path, "".join(_line(record) for record in records))


def resume_ids(path: Path, key: str = "id") -> set[str]:
    """The ids of the records already in ``path``, after repairing its tail.

    Where an id occurs twice (two runs appended to one file), later copies are removed,
    so that counting the file counts each item once; readers keep the first record per id.
    """
    repair_tail(path)
    records = read_jsonl(path)
    seen: set[str] = set()
    first = []
    for record in records:
        if record[key] not in seen:
            seen.add(record[key])
            first.append(record)
    if len(first) != len(records):
        write_jsonl(path, first)
    return seen


def _line(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False) + "\n"


class JsonlWriter:
    """Appends records to a JSONL file, one flushed line each; safe to share between threads.

    ``truncate`` starts the file empty instead of appending (a run that never resumes). The
    folder is made if missing: the commands check their output paths before any work.
    """

    def __init__(self, path: Path, truncate: bool = False) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        if not truncate:
            repair_tail(path)
        self._handle: IO[str] | None = open(path, "w" if truncate else "a", encoding="utf-8")
        self._lock = threading.Lock()

    def write(self, record: dict[str, Any]) -> None:
        line = _line(record)  # serialised outside the lock: a bad record fails without touching the file
        with self._lock:
            if self._handle is None:
                raise ValueError(f"{self.path} is closed")
            self._handle.write(line)
            self._handle.flush()

    def sync(self) -> None:
        """Force what was written onto the disk (before a state file that says it is there)."""
        with self._lock:
            if self._handle is not None:
                os.fsync(self._handle.fileno())

    def close(self) -> None:
        with self._lock:
            if self._handle is not None:
                self._handle.close()
                self._handle = None

    def __enter__(self) -> JsonlWriter:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        self.close()
