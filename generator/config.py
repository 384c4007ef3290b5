"""Settings of sequential refinement (``proofsmith prove``). Pure data, no torch."""

from __future__ import annotations

from dataclasses import dataclass

FEEDBACK_SOURCES: tuple[str, ...] = ("self", "verifier")


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
