"""Read (problem, proof[, human score]) rows from JSONL, CSV, Parquet or a ``datasets`` folder.

Every row is checked before any model runs: a missing field, an empty proof, a score not
in {0, 0.5, 1} or undecodable bytes make a :class:`BadRow` that names the row's line (JSONL,
CSV: the physical line it starts on) or index (Parquet, datasets: 1-based row number).
Column names are mapped by :class:`ColumnMap`; a row without an id gets a content hash.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from data.errors import InputError
from data.records import ProofItem, stable_id

FORMATS = ("jsonl", "csv", "parquet", "datasets")


class HasId(Protocol):
    @property
    def id(self) -> str: ...


Record = TypeVar("Record", bound=HasId)


@dataclass(frozen=True)
class ColumnMap:
    problem: str = "problem"
    """Column holding the problem statement."""
    proof: str = "proof"
    """Column holding the proof to label."""
    id: str = "id"
    """Column holding a stable row id (optional: a content hash is used when absent)."""
    score: str = "score"
    """Column holding a human score in {0, 0.5, 1} (optional)."""
    score_map: tuple[tuple[str, float], ...] = ()
    """Raw human grade -> score, e.g. (("7", 1.0), ("6", 0.5), ("1", 0.0), ("0", 0.0)); empty: scores are 0/0.5/1 already."""


def parse_score_map(text: str) -> tuple[tuple[str, float], ...]:
    """``"7=1,6=0.5,1=0,0=0"`` as pairs; InputError when malformed or a target is not 0/0.5/1."""
    pairs = []
    for part in filter(None, (piece.strip() for piece in text.split(","))):
        raw, _, target = part.partition("=")
        try:
            score = float(target)
        except ValueError:
            raise InputError(f"--score-map entry {part!r} is not RAW=SCORE") from None
        if not raw.strip() or score not in (0.0, 0.5, 1.0):
            raise InputError(f"--score-map entry {part!r} must map a grade to 0, 0.5 or 1")
        pairs.append((_grade_key(raw.strip()), score))
    return tuple(pairs)


def _grade_key(value: object) -> str:
    """"7", 7 and 7.0 are the same grade."""
    try:
        number = float(str(value))
    except ValueError:
        return str(value).strip()
    return f"{number:g}"


@dataclass(frozen=True)
class BadRow:
    line: int
    """1-based line (JSONL, CSV) or row number (Parquet, datasets) of the offending row."""
    reason: str

    def __str__(self) -> str:
        return f"row at line {self.line}: {self.reason}"


def detect_format(path: Path) -> str:
    if path.is_dir():
        return "datasets"
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".json", ".ndjson"):
        return "jsonl"
    if suffix in (".csv", ".parquet"):
        return suffix[1:]
    raise InputError(f"cannot tell the format of {path}: use .jsonl, .csv, .parquet or a datasets directory")


def raw_rows(path: Path, kind: str, split: str | None = None) -> Iterator[tuple[int, dict[str, Any] | None, str | None]]:
    """(line, row, error) for every record in the file; ``split`` picks one split of a datasets folder."""
    if kind == "jsonl":
        with open(path, "rb") as handle:
            for number, raw in enumerate(handle, start=1):
                if not raw.strip():
                    continue
                try:
                    value = json.loads(raw.decode("utf-8"))
                except UnicodeDecodeError:
                    yield number, None, "not UTF-8 text"
                    continue
                except json.JSONDecodeError as error:
                    yield number, None, f"not valid JSON ({error.msg})"
                    continue
                yield (number, value, None) if isinstance(value, dict) else (number, None, "not a JSON object")
    elif kind == "csv":
        try:
            text = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError as error:
            line = path.read_bytes()[: error.start].count(b"\n") + 1
            yield line, None, "not UTF-8 text"
            return
        reader = csv.DictReader(io.StringIO(text, newline=""))
        _ = reader.fieldnames  # reads the header, so the first row's line number is right
        line = reader.line_num + 1
        for row in reader:
            yield line, dict(row), None
            line = reader.line_num + 1
    else:
        table = _load_table(path, kind, split)
        for number, row in enumerate(table, start=1):
            yield number, dict(row), None


def _load_table(path: Path, kind: str, split: str | None = None) -> Any:
    try:
        if kind == "parquet":
            import pyarrow.parquet as parquet

            return parquet.read_table(path).to_pylist()
        import datasets

        loaded = datasets.load_from_disk(str(path))
        if isinstance(loaded, datasets.DatasetDict):
            if split is not None and split in loaded:
                return loaded[split]
            if len(loaded) != 1:
                raise InputError(f"{path} holds splits {sorted(loaded)}: point at one split's folder")
            loaded = next(iter(loaded.values()))
        return loaded
    except InputError:
        raise
    except Exception as error:  # pyarrow and datasets raise many types for a bad file
        raise InputError(f"cannot read {path} as {kind}: {type(error).__name__}: {error}") from None


def parse_score(value: Any, score_map: tuple[tuple[str, float], ...] = ()) -> float | None | str:
    """The human score, None when absent, or an error string."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if score_map:
        mapped = dict(score_map).get(_grade_key(value))
        return mapped if mapped is not None else f"grade {value!r} is not in the score map"
    try:
        number = float(value)
    except (TypeError, ValueError):
        return f"score {value!r} is not a number"
    if number not in (0.0, 0.5, 1.0):
        return f"score {value!r} is not one of 0, 0.5, 1"
    return number


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


def proof_item(row: dict[str, Any], columns: ColumnMap = ColumnMap()) -> ProofItem:
    """One row as a :class:`ProofItem` under ``columns``; ValueError with the reason when the row is bad."""
    problem, proof = text_field(row, columns.problem), text_field(row, columns.proof)
    score = parse_score(row.get(columns.score), columns.score_map)
    if isinstance(score, str):
        raise ValueError(score)
    raw_id = row.get(columns.id)
    return ProofItem(str(raw_id) if raw_id not in (None, "") else stable_id(problem, proof), problem, proof, score)


def built_rows(path: Path, build: Callable[[dict[str, Any]], Record]) -> Iterator[tuple[int, Record | None, str]]:
    """Each row of ``path`` as (line, ``build(row)``, "") or, when bad, (line, None, the reason).

    Bad: unreadable, ``build`` raised ValueError, or its record's id came earlier in the file.
    """
    seen: set[str] = set()
    for line, row, error in raw_rows(path, detect_format(path)):
        try:
            if row is None:
                raise ValueError(error or "unreadable")
            record = build(row)
            if record.id in seen:
                raise ValueError(f"duplicate id {record.id!r}")
        except ValueError as problem:
            yield line, None, str(problem)
            continue
        seen.add(record.id)
        yield line, record, ""


def read_items(path: str | Path, columns: ColumnMap = ColumnMap()) -> tuple[list[ProofItem], list[BadRow]]:
    """All good items and all bad rows of ``path`` (``label --on-bad-row skip`` goes on past them); InputError if unusable.

    The fixed-format readers fail at their first bad row instead (``data.row_checks.read_checked``).
    """
    source = Path(path)
    if not source.exists():
        raise InputError(f"input not found: {path}")
    items: list[ProofItem] = []
    bad: list[BadRow] = []
    for line, item, reason in built_rows(source, lambda row: proof_item(row, columns)):
        if item is None:
            bad.append(BadRow(line, reason))
        else:
            items.append(item)
    return items, bad
