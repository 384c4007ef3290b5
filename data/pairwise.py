"""The pairwise format: two proofs of one problem, one of them the right pick, for evaluating selection.

One row per pair: ``problem``, ``proof_1``, ``proof_2``, ``correct_index`` and an optional
``id`` (a content hash when absent); JSONL, CSV or Parquet, other column names through
:class:`PairColumns`. ``correct_index`` is 1-based and nothing else: 1 (``proof_1`` is the
better proof) or 2 (``proof_2``), written as a number or its text ("1", 1.0). A 0 is
refused rather than guessed at (0-based 0 = ``proof_1``, or "neither"?), as are booleans,
other values, empty proofs and two identical proofs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from data.records import stable_id
from data.readers import text_field
from data.row_checks import read_checked


@dataclass(frozen=True)
class PairColumns:
    problem: str = "problem"
    """Column with the problem statement."""
    proof_1: str = "proof_1"
    """Column with the first proof."""
    proof_2: str = "proof_2"
    """Column with the second proof."""
    correct_index: str = "correct_index"
    """Column saying which proof is the right pick: 1 or 2."""
    id: str = "id"
    """Column with a row id (optional: a content hash of the problem and both proofs when absent)."""


@dataclass(frozen=True)
class ProofPair:
    """Two proofs of ``problem``; ``correct_index`` (1 or 2) names the one a selector should pick."""

    id: str
    problem: str
    proof_1: str
    proof_2: str
    correct_index: int

    def __post_init__(self) -> None:
        if not self.id:
            raise ValueError("a proof pair needs an id")
        if self.correct_index not in (1, 2) or isinstance(self.correct_index, bool):
            raise ValueError(f"pair {self.id}: correct_index must be 1 or 2, got {self.correct_index!r}")
        if not self.problem.strip() or not self.proof_1.strip() or not self.proof_2.strip():
            raise ValueError(f"pair {self.id}: problem and proofs must not be empty")

    def proof(self, index: int) -> str:
        return self.proof_1 if index == 1 else self.proof_2


def parse_index(value: Any, column: str) -> int:
    """``correct_index`` as 1 or 2; ValueError for anything else (0 included: the index is 1-based)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        raise ValueError(f"missing field {column!r}")
    number = None
    if not isinstance(value, bool):
        try:
            number = float(value)
        except (TypeError, ValueError):
            pass
    if number not in (1.0, 2.0):
        raise ValueError(f"{column} {value!r} is not 1 or 2 (1-based: 1 = proof_1, 2 = proof_2)")
    return int(number)  # type: ignore[arg-type]


def proof_pair(row: dict[str, Any], columns: PairColumns = PairColumns()) -> ProofPair:
    """One raw row as a :class:`ProofPair`; ValueError naming what is wrong with it."""
    problem = text_field(row, columns.problem)
    first, second = text_field(row, columns.proof_1), text_field(row, columns.proof_2)
    index = parse_index(row.get(columns.correct_index), columns.correct_index)
    if first.strip() == second.strip():
        raise ValueError(f"{columns.proof_1} and {columns.proof_2} are the same proof")
    raw_id = row.get(columns.id)
    return ProofPair(str(raw_id) if raw_id not in (None, "") else stable_id(problem, first, second), problem, first,
                     second, index)


def read_pairs(path: str | Path, columns: PairColumns = PairColumns()) -> list[ProofPair]:
    """Every pair of a JSONL / CSV / Parquet file; InputError naming the first bad row's line."""
    return read_checked(path, lambda row: proof_pair(row, columns))
