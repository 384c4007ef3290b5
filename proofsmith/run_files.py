"""Output files that never look complete when they are not, and run directories that resume only
under the settings that made them.

A :class:`JsonlRecorder` writes to ``PATH.partial``, one flushed JSON line per record, and
renames it to ``PATH`` only on :meth:`commit`. A run that fails or is killed leaves the
records it finished in ``PATH.partial`` and no file at ``PATH``.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from types import TracebackType
from typing import Any

from data.atomic import write_text_atomic
from data.errors import InputError
from data.jsonl import JsonlWriter
from data.records import stable_id
from proofsmith.config import read_toml, resolve_config, to_toml

CONFIG_NAME = "config.toml"
"""The resolved config of a run directory."""
ITEMS_NAME = "items.jsonl"
"""One flushed record per finished item of a run directory."""


def safe_name(problem_id: str) -> str:
    """A folder name for a problem id (ids may hold slashes or spaces); distinct ids get distinct names."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", problem_id).strip("._") or "problem"
    return cleaned if cleaned == problem_id else f"{cleaned}-{stable_id(problem_id)[:8]}"


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
    """A fresh :class:`data.jsonl.JsonlWriter` on ``PATH.partial`` that becomes ``PATH`` on :meth:`commit`."""

    def __init__(self, path: str | Path) -> None:
        self.path = check_output_path(path)
        self.partial_path = self.path.with_name(self.path.name + ".partial")
        self._writer = JsonlWriter(self.partial_path, truncate=True)

    def write(self, record: dict[str, Any]) -> None:
        self._writer.write(record)

    def commit(self) -> Path:
        """Close and move the finished file into place."""
        self._writer.close()
        os.replace(self.partial_path, self.path)
        return self.path

    def close(self) -> None:
        self._writer.close()

    def __enter__(self) -> JsonlRecorder:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        self.close()


def setting(config: Any, dotted: str) -> Any:
    value: Any = config
    for part in dotted.split("."):
        value = getattr(value, part)
    return value


def check_out_dir(out: Path, config: Any, identity: tuple[str, ...], records: str = ITEMS_NAME) -> None:
    """Fail unless ``out`` can hold this run: new, empty of ``records``, or a run whose ``identity`` settings match."""
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out} exists and is not a directory")
    if not out.exists():
        if not out.parent.is_dir():
            raise InputError(f"output directory does not exist: {out.parent}")
        return
    items = out / records
    if not items.exists() or not items.read_bytes().strip():
        return
    if not (out / CONFIG_NAME).exists():
        raise InputError(f"--out {out} holds {records} but no {CONFIG_NAME}: use another --out")
    previous = resolve_config(None, read_toml(out / CONFIG_NAME))
    changed = [f"{name} {setting(previous, name)!r} -> {setting(config, name)!r}"
               for name in identity if setting(previous, name) != setting(config, name)]
    if changed:
        raise InputError(f"--out {out} holds a run with different settings ({'; '.join(changed)}); "
                         "rerun with its settings to resume, or use another --out")


def write_dry_run(out: Path, config: Any) -> int:
    """``--dry-run``: write ``OUT/config.toml``, print it, and stop (exit 0)."""
    out.mkdir(exist_ok=True)
    write_text_atomic(out / CONFIG_NAME, to_toml(config))
    sys.stdout.write(to_toml(config))
    return 0
