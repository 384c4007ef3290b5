"""The final proof of a run, whichever way it was made: sequential refinement or the pool search.

``RefineResult.final_proof()`` and ``generator.search.final_proof`` both return a
:class:`FinalProof`, so ``prove``, ``prove --search`` and ``eval prover`` report the same
fields under the same names. A run that produced no proof has an empty ``proof`` and says
why in ``format_errors``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class FinalProof:
    proof: str
    """The proof text ('' when the run produced none)."""
    self_evaluation: str
    """The generator's own analysis of that proof."""
    self_score: float | None
    """The score the generator gave itself; None when it broke the format."""
    verifier_mean: float | None
    """Mean verifier score of the proof; None when it was not verified or no analysis parsed."""
    format_errors: tuple[str, ...]
    """What was wrong with the completion's format."""
    rounds: int
    """Rounds run: refinement rounds of the winning thread, or search rounds completed."""
    stopped: str
    """Why the run ended: 'score 1' / 'full pass' (the goal was reached) or 'round limit'."""
    completion_tokens: int
    """Tokens the whole run generated, proofs and verifications."""
    tokens_estimated: bool = False
    """True when part of ``completion_tokens`` was split from a server's total over n choices (the sum is still the server's)."""

    def __post_init__(self) -> None:
        if self.verifier_mean is not None and not 0.0 <= self.verifier_mean <= 1.0:
            raise ValueError(f"a verifier mean lies in [0, 1], not {self.verifier_mean}")
        if self.rounds < 0 or self.completion_tokens < 0:
            raise ValueError(f"rounds and completion tokens cannot be negative: {self.rounds}, {self.completion_tokens}")

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "format_errors": list(self.format_errors)}
