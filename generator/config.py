"""Settings of sequential refinement (``proofsmith prove``). Pure data, no torch."""

from __future__ import annotations

from dataclasses import dataclass

FEEDBACK_SOURCES: tuple[str, ...] = ("self", "verifier")

REFINE_ROUND_SEED_STRIDE = 100_003
"""Refinement's seeds of round r start at ``seed + r × REFINE_ROUND_SEED_STRIDE`` (thread i: + i)."""
REFINE_VERIFICATION_SEED_OFFSET = 50_000
"""Within a refinement round's block, the verification samples start here (thread i's N: + i·N)."""


@dataclass
class RefineConfig:
    max_rounds: int = 8
    """Most generate-then-refine rounds per thread; a thread stops early once its feedback score is 1."""
    samples: int = 1
    """Independent refinement threads; the best final proof is kept."""
    feedback: str = "self"
    """What the refinement prompt quotes: 'self' (the proof's own self-evaluation) or 'verifier' (fresh verifier analyses)."""
    verify_samples: int = 4
    """Verifier analyses per proof when feedback is 'verifier'; their mean is the proof's score."""
    max_evaluations: int = 8
    """Most analyses quoted in one refinement prompt (issue-finding ones first)."""

    def __post_init__(self) -> None:
        if self.feedback not in FEEDBACK_SOURCES:
            raise ValueError(f"unknown feedback {self.feedback!r}; choose self or verifier")
        for name in ("max_rounds", "samples", "verify_samples", "max_evaluations"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1")
        if self.feedback == "verifier" and self.samples * self.verify_samples > REFINE_VERIFICATION_SEED_OFFSET:
            # more would run a round's verification seeds into the next round's block
            raise ValueError(f"samples × verify_samples must be <= {REFINE_VERIFICATION_SEED_OFFSET:,}")


ANALYSIS_ORDERS: tuple[str, ...] = ("issues-first", "sampled")

SEARCH_ROUND_SEED_STRIDE = 1_000_003
"""The search's seeds of round r start at ``seed + r × SEARCH_ROUND_SEED_STRIDE``."""
SEARCH_VERIFICATION_SEED_OFFSET = 500_000
"""Within a round's block: slot i's proof has seed offset i; its N verification samples 500,000 + i·N … + i·N + N − 1."""


@dataclass
class SearchConfig:
    pool: int = 16
    """Proofs generated for the initial pool (paper: 64; public release: 128)."""
    verify_samples: int = 8
    """Verifications per proof, N; a proof's score is their mean (paper: 64)."""
    top_k: int = 4
    """Proofs refined each round, by mean score (ties: self-score) (paper: 64; release: 32)."""
    analyses_per_prompt: int = 8
    """Most of a proof's analyses quoted in its refinement prompt."""
    analysis_order: str = "issues-first"
    """Which analyses are quoted first: 'issues-first' (score 0, then 0.5, then 1) or 'sampled' (as generated)."""
    samples_per_pair: int = 1
    """Refinements generated per (proof, analyses) pair (paper: 1; release: 4)."""
    rounds: int = 4
    """Most refinement rounds after the initial pool (paper: 16)."""
    stop_at_full_pass: bool = True
    """Stop as soon as a proof passes all N verifications."""

    def __post_init__(self) -> None:
        if self.analysis_order not in ANALYSIS_ORDERS:
            raise ValueError(f"unknown analysis_order {self.analysis_order!r}; choose issues-first or sampled")
        for name in ("pool", "verify_samples", "top_k", "analyses_per_prompt", "samples_per_pair"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1")
        if self.rounds < 0:
            raise ValueError("rounds must be >= 0")
        if max(self.pool, self.top_k * self.samples_per_pair) * self.verify_samples > SEARCH_VERIFICATION_SEED_OFFSET:
            # beyond this a round's seeds would run into the next block and two samples could share a seed
            raise ValueError(f"a round's proofs × verify_samples must be <= {SEARCH_VERIFICATION_SEED_OFFSET:,}")
