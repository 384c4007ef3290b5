"""Read user-supplied text files with errors a user can act on."""

from __future__ import annotations

import sys
from pathlib import Path

from data.errors import InputError


def read_text(path: str | Path, what: str) -> str:
    """The UTF-8 text of ``path`` (``-``: standard input); InputError when missing, unreadable or empty."""
    if str(path) == "-":
        raw = sys.stdin.buffer.read()
    else:
        file = Path(path)
        if not file.exists():
            raise InputError(f"{what} file not found: {path}")
        if file.is_dir():
            raise InputError(f"{what} path is a directory, not a file: {path}")
        try:
            raw = file.read_bytes()
        except OSError as error:
            raise InputError(f"cannot read {what} file {path}: {error.strerror or error}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(f"{what} file {path} is not UTF-8 text (byte {raw[error.start]:#04x} at offset {error.start})") from None
    if not text.strip():
        raise InputError(f"{what} file {path} is empty")
    return text.strip()
