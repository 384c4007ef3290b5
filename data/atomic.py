"""Whole-file writes that a kill cannot leave half-done: write beside, then rename over."""

from __future__ import annotations

import os
from pathlib import Path


def write_text_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text``; readers see the old file or the new one, never a part."""
    partial = path.with_name(path.name + ".partial")
    try:
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)  # a full disk must not leave a stray half file behind
        raise
