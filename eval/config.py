"""Settings of ``proofsmith eval verifier``. Pure data, no torch."""

from __future__ import annotations

from dataclasses import dataclass

from eval.human_grades import FORMATS, GRADE_MAPPINGS


@dataclass
class VerifierEvalConfig:
    data: str = ""
    """Human-graded proofs: a file or a folder of them (the command's DATA argument)."""
    format: str = ""
    """Format of the data: imo-gradingbench, open-proof-corpus, deepseek-math-v2 or jsonl; empty: detect from the columns."""
    mapping: str = "almost-half"
    """How point grades become 0 / 0.5 / 1: almost-half (7-6-1-0 -> 1, 0.5, 0, 0) or partial-half (-> 1, 0.5, 0.5, 0)."""
    samples: int = 4
    """Verifier analyses per proof (n); metrics are reported at n = 1, 2, 4, ... up to this."""
    meta: int = 0
    """Meta-verifications per analysis that reports issues (m); 0: none, and no meta-filtered metrics."""
    confirm_rating: float = 1.0
    """A meta rating at or above this confirms an analysis (as in `label`)."""
    majority: float = 0.5
    """An analysis is valid when more than this fraction of its parsed meta ratings confirm it (as in `label`)."""
    max_items: int = 0
    """Evaluate only the first K proofs of the data; 0: all of them."""
    chunk_size: int = 16
    """Proofs per engine call with in-process engines (a server gets each proof as soon as a slot is free)."""

    def __post_init__(self) -> None:
        if self.format and self.format not in FORMATS:
            raise ValueError(f"unknown format {self.format!r}; choose one of {', '.join(FORMATS)}")
        if self.mapping not in GRADE_MAPPINGS:
            raise ValueError(f"unknown grade mapping {self.mapping!r}; choose one of {', '.join(GRADE_MAPPINGS)}")
        for name in ("samples", "chunk_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1")
        for name in ("meta", "max_items"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0")
        if self.confirm_rating not in (0.0, 0.5, 1.0):
            raise ValueError("confirm_rating must be one of 0, 0.5, 1")
        if not 0 <= self.majority < 1:
            raise ValueError("majority must be in [0, 1)")
