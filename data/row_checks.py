"""What the fixed-column readers share: column renames, one text field, the first bad row as an error.

A reader of a named format (``data.verifier_rows``, ``data.pairwise``) checks each raw row
of :func:`data.readers.raw_rows` with its own ``build(row) -> record`` (raising ValueError
with the reason), and :func:`read_checked` turns the first failure into one
:class:`~data.errors.InputError` naming the file and the row's line (:class:`BadRow`), so a
bad file fails whole, before any model loads.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar

from data.errors import InputError
from data.readers import BadRow, detect_format, raw_rows

Columns = TypeVar("Columns")


class HasId(Protocol):
    @property
    def id(self) -> str: ...


Record = TypeVar("Record", bound=HasId)


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


def text_field(row: dict[str, Any], column: str) -> str:
    """The row's text in ``column``; ValueError when the column is missing or the text empty."""
    value = row.get(column)
    if value is None:
        raise ValueError(f"missing field {column!r}")
    if isinstance(value, (dict, list, bool)):
        raise ValueError(f"field {column!r} is not text")
    text = str(value)
    if not text.strip():
        raise ValueError(f"empty field {column!r}")
    return text


def read_checked(path: str | Path, build: Callable[[dict[str, Any]], Record]) -> list[Record]:
    """Every row of ``path`` built into a record; InputError naming the first bad row (or duplicate id)."""
    source = Path(path)
    if not source.exists():
        raise InputError(f"input not found: {path}")
    records: list[Record] = []
    seen: set[str] = set()
    for line, row, error in raw_rows(source, detect_format(source)):
        try:
            if row is None:
                raise ValueError(error or "unreadable")
            record = build(row)
            if record.id in seen:
                raise ValueError(f"duplicate id {record.id!r}")
        except ValueError as problem:
            raise InputError(f"{path}: {BadRow(line, str(problem))}") from None
        seen.add(record.id)
        records.append(record)
    if not records:
        raise InputError(f"no rows in {path}")
    return records
