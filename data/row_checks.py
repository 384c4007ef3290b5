"""What the fixed-column readers share: column renames, the first bad row as an error.

A reader of a named format (``data.verifier_rows``, ``data.pairwise``) builds each row with
its own ``build(row) -> record`` (raising ValueError with the reason; text columns through
:func:`data.readers.text_field`), through :func:`data.readers.built_rows` as ``read_items``
does, and :func:`read_checked` turns the first failure into one
:class:`~data.errors.InputError` naming the file and the row's line (:class:`BadRow`), so a
bad file fails whole, before any model loads.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from data.errors import InputError
from data.readers import BadRow, Record, built_rows

Columns = TypeVar("Columns")


def renamed(columns: Columns, entries: Sequence[str], what: str = "--column") -> Columns:
    """``columns`` (a dataclass of column names) with each ``FIELD=COLUMN`` entry applied; InputError when malformed."""
    fields = [item.name for item in dataclasses.fields(columns)]  # type: ignore[arg-type]
    changes: dict[str, str] = {}
    for entry in entries:
        name, equals, column = (part.strip() for part in entry.partition("="))
        if not equals or not column:
            raise InputError(f"{what} {entry!r} is not FIELD=COLUMN")
        if name not in fields:
            raise InputError(f"{what} {entry!r}: unknown field {name!r}; fields: {', '.join(fields)}")
        changes[name] = column
    return dataclasses.replace(columns, **changes)  # type: ignore[type-var]


def read_checked(path: str | Path, build: Callable[[dict[str, Any]], Record]) -> list[Record]:
    """Every row of ``path`` built into a record; InputError naming the first bad row (or duplicate id)."""
    source = Path(path)
    if not source.exists():
        raise InputError(f"input not found: {path}")
    records: list[Record] = []
    for line, record, reason in built_rows(source, build):
        if record is None:
            raise InputError(f"{path}: {BadRow(line, reason)}")
        records.append(record)
    if not records:
        raise InputError(f"no rows in {path}")
    return records
