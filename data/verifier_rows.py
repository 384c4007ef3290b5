"""The verifier-row format: graded proofs with a reference critique, as proof-RL recipes write verifier data.

One row per proof: ``problem``, ``proof``, ``ground_truth_judgement`` (a written critique of
the proof) and ``ground_truth_verify_score`` (its score, one of 0, 0.5, 1), and an optional
``id`` (a content hash when absent); JSONL, CSV or Parquet. :class:`VerifierRowColumns`
names other columns where a file's differ. The commands that read the format:
``eval verifier`` (the score is the human grade), ``eval meta-verifier`` and the training
rows (``training.role_data.rows``: the critique is the cold start's verifier target, and
the analysis a meta-verifier rates, assumed reasonable). This module only reads and checks
rows; what a critique becomes in a role's format is decided above the ground floor.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from data.readers import parse_score, text_field
from data.records import check_score, stable_id
from data.row_checks import read_checked

FORMAT_NAME = "verifier-rows"


@dataclass(frozen=True)
class VerifierRowColumns:
    problem: str = "problem"
    """Column with the problem statement."""
    proof: str = "proof"
    """Column with the proof that was judged."""
    judgement: str = "ground_truth_judgement"
    """Column with the reference critique of the proof."""
    score: str = "ground_truth_verify_score"
    """Column with the proof's reference score, 0, 0.5 or 1."""
    id: str = "id"
    """Column with a row id (optional: a content hash of problem and proof when absent)."""


@dataclass(frozen=True)
class VerifierRow:
    """A proof with its reference critique and score."""

    id: str
    problem: str
    proof: str
    judgement: str
    score: float

    def __post_init__(self) -> None:
        if not self.id:
            raise ValueError("a verifier row needs an id")
        if not self.problem.strip() or not self.proof.strip() or not self.judgement.strip():
            raise ValueError(f"row {self.id}: problem, proof and judgement must not be empty")
        check_score(self.score, f"row {self.id}: score", allow_none=False)


def is_verifier_rows(columns: Iterable[str], names: VerifierRowColumns = VerifierRowColumns()) -> bool:
    """Whether a file with these columns is in the verifier-row format (it has the critique and score columns)."""
    return {names.judgement, names.score} <= set(columns)


def reference_score(value: Any, column: str) -> float:
    """A reference score cell as 0, 0.5 or 1; ValueError when missing or anything else."""
    score = None if isinstance(value, bool) else parse_score(value)
    if isinstance(value, bool) or isinstance(score, str):
        raise ValueError(f"{column} {value!r} is not one of 0, 0.5, 1")
    if score is None:
        raise ValueError(f"missing field {column!r}")
    return score


def verifier_row(row: dict[str, Any], columns: VerifierRowColumns = VerifierRowColumns()) -> VerifierRow:
    """One raw row as a :class:`VerifierRow`; ValueError naming what is wrong with it."""
    problem, proof = text_field(row, columns.problem), text_field(row, columns.proof)
    judgement = text_field(row, columns.judgement)
    score = reference_score(row.get(columns.score), columns.score)
    raw_id = row.get(columns.id)
    return VerifierRow(str(raw_id) if raw_id not in (None, "") else stable_id(problem, proof), problem, proof,
                       judgement, score)


def read_verifier_rows(path: str | Path, columns: VerifierRowColumns = VerifierRowColumns()) -> list[VerifierRow]:
    """Every row of a JSONL / CSV / Parquet file; InputError naming the first bad row's line."""
    return read_checked(path, lambda row: verifier_row(row, columns))
