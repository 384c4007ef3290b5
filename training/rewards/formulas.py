"""The GRPO rewards of DESIGN.md, as pure functions of parsed scores.

    verifier        R = R_format · (1 − |s' − s|) · R_meta
    meta-verifier   R = R_format · (1 − |ms' − ms|)
    generator       R = R_format(Y, Z) · (α · s + β · (1 − |s' − s|) · ms)

``s`` is a reference (human, auto-label or verifier) score, ``s'`` the model's own score,
``ms`` a meta-verifier rating. Single scores lie in {0, 0.5, 1}; a reference may also be
the mean of several samples, so every input is accepted in [0, 1]. A format failure (the model gave no
parsable score) yields 0 regardless of the rest: that is the format term. What these
functions never do is invent a missing *reference*: when the verifier or meta-verifier
call that should supply ``s`` or ``ms`` failed, the caller skips the sample (``None``)
instead of calling them.
"""

from __future__ import annotations

from dataclasses import dataclass

ALPHA = 0.76
"""Weight of the verifier's score of the proof in the generator reward (DESIGN.md)."""
BETA = 0.24
"""Weight of the self-evaluation's accuracy in the generator reward (DESIGN.md)."""


def check_unit(value: float, what: str) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
        raise ValueError(f"{what} must be a number in [0, 1], got {value!r}")


def score_agreement(predicted: float, reference: float) -> float:
    """1 − |predicted − reference|."""
    check_unit(predicted, "predicted score")
    check_unit(reference, "reference score")
    return 1.0 - abs(predicted - reference)


def verifier_reward(predicted: float | None, reference: float, meta_rating: float = 1.0) -> float:
    """R_format · (1 − |s' − s|) · R_meta; ``predicted`` is None when the analysis failed the format."""
    check_unit(meta_rating, "meta rating")
    check_unit(reference, "reference score")
    if predicted is None:
        return 0.0
    return score_agreement(predicted, reference) * meta_rating


def meta_verifier_reward(predicted: float | None, reference: float) -> float:
    """R_format · (1 − |ms' − ms|)."""
    check_unit(reference, "reference rating")
    return 0.0 if predicted is None else score_agreement(predicted, reference)


@dataclass(frozen=True)
class GeneratorRewardParts:
    """The generator reward with its parts, each logged on its own."""

    total: float
    format: float
    proof_score: float
    """α-weighted term: the verifier's score s of the proof."""
    self_accuracy: float
    """β-weighted term: (1 − |s' − s|) · ms."""


def generator_reward(
    format_ok: bool, proof_score: float, self_score: float | None, meta_rating: float,
    alpha: float = ALPHA, beta: float = BETA,
) -> GeneratorRewardParts:
    """R_format(Y, Z) · (α · s + β · (1 − |s' − s|) · ms).

    ``format_ok`` covers both the proof section Y and the self-evaluation Z; when it is
    False the reward is 0 (and ``self_score`` may be None).
    """
    check_unit(proof_score, "proof score")
    check_unit(meta_rating, "meta rating")
    if alpha < 0 or beta < 0:
        raise ValueError("alpha and beta must be >= 0")
    if not format_ok or self_score is None:
        return GeneratorRewardParts(0.0, 0.0, proof_score, 0.0)
    accuracy = score_agreement(self_score, proof_score) * meta_rating
    return GeneratorRewardParts(alpha * proof_score + beta * accuracy, 1.0, proof_score, accuracy)
