"""Output files that never look complete when they are not.

A :class:`JsonlRecorder` writes to ``PATH.partial``, one flushed JSON line per record, and
renames it to ``PATH`` only on :meth:`commit`. A run that fails or is killed leaves the
records it finished in ``PATH.partial`` and no file at ``PATH``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from data.errors import InputError


def check_output_path(path: str | Path) -> Path:
    """Fail before any work when ``path`` cannot be written."""
    target = Path(path)
    if target.is_dir():
        raise InputError(f"output path is a directory: {path}")
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir():
        raise InputError(f"output directory does not exist: {parent}")
    if not os.access(parent, os.W_OK):
        raise InputError(f"output directory is not writable: {parent}")
    return target


class JsonlRecorder:
    def __init__(self, path: str | Path) -> None:
        self.path = check_output_path(path)
        self.partial_path = self.path.with_name(self.path.name + ".partial")
        self._handle: IO[str] | None = open(self.partial_path, "w", encoding="utf-8")

    def write(self, record: dict[str, Any]) -> None:
        assert self._handle is not None, "recorder already closed"
        self._handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        self._handle.flush()

    def commit(self) -> Path:
        """Close and move the finished file into place."""
        if self._handle is not None:
            self._handle.close()
            self._handle = None
        os.replace(self.partial_path, self.path)
        return self.path

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def __enter__(self) -> JsonlRecorder:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        self.close()
