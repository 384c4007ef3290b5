"""Settings of auto-labeling (``proofsmith label``). Pure data, no torch.

Defaults n=8, m=4, k=2 (the paper does not publish its values): 8 verifications give
each proof several chances to have a real flaw found; 4 meta-verifications per critique
make "confirmed" (and "refuted") a 3-of-4 vote; k=2 asks for two independently confirmed
critiques at the lowest score before a proof is labeled below 1, so a single lucky
critique cannot.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class LabelConfig:
    n: int = 8
    """Verifications per proof."""
    m: int = 4
    """Meta-verifications per analysis that reports issues (score < 1); 0 turns meta-verification off (every critique is then taken at its word)."""
    k: int = 2
    """Confirmed analyses at the lowest score needed to label the proof with that score."""
    confirm_rating: float = 1.0
    """A meta rating at or above this confirms an analysis (1: every defect real and the score fits)."""
    majority: float = 0.5
    """A critique is confirmed when more than this fraction of its parsed meta ratings confirm it, refuted when more than this fraction are 0."""
    chunk_size: int = 16
    """Proofs per engine call with in-process engines (a server gets each proof as soon as a slot is free)."""
    on_bad_row: str = "fail"
    """What a bad input row does: 'fail' (stop before any model call) or 'skip' (report and go on)."""

    def __post_init__(self) -> None:
        for name in ("n", "k", "chunk_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1")
        if self.m < 0:
            raise ValueError("m must be >= 0 (0: no meta-verification)")
        if self.k > self.n:
            raise ValueError(f"k ({self.k}) cannot exceed n ({self.n})")
        if self.confirm_rating not in (0.0, 0.5, 1.0):
            raise ValueError("confirm_rating must be one of 0, 0.5, 1")
        if not 0 <= self.majority < 1:
            raise ValueError("majority must be in [0, 1)")
        if self.on_bad_row not in ("fail", "skip"):
            raise ValueError("on_bad_row must be fail or skip")
