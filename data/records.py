"""Records shared by every role: scores and the proofs to score or label.

Scores are always one of {0, 0.5, 1}; a record holding anything else cannot be built.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import fmean

ALLOWED_SCORES: tuple[float, ...] = (0.0, 0.5, 1.0)


def check_score(value: float | None, what: str = "score", allow_none: bool = True) -> None:
    """Raise ``ValueError`` unless ``value`` is one of {0, 0.5, 1} (or None when allowed)."""
    if value is None:
        if not allow_none:
            raise ValueError(f"{what} is required")
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)) or float(value) not in ALLOWED_SCORES:
        raise ValueError(f"{what} must be one of 0, 0.5, 1; got {value!r}")


def mean_score(scores: Sequence[float | None]) -> float | None:
    """The mean of the scores that parsed; None when none did (a format failure is never averaged in as 0)."""
    parsed = [score for score in scores if score is not None]
    return fmean(parsed) if parsed else None


def stable_id(*parts: str) -> str:
    """A short content hash: the same text always gets the same id."""
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()
    return digest[:16]


@dataclass(frozen=True)
class ProofItem:
    """A proof to score or label, with the human score when the data has one."""

    id: str
    problem: str
    proof: str
    human_score: float | None = None

    def __post_init__(self) -> None:
        if not self.id:
            raise ValueError("a proof item needs an id")
        if not self.problem.strip() or not self.proof.strip():
            raise ValueError(f"item {self.id}: problem and proof must not be empty")
        check_score(self.human_score, "human score")
