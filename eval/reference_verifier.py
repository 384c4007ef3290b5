"""Another verifier's scores on the same proofs, measured like ours: DeepSeekMath-V2's own verifier.

The DeepSeekMath-V2 release rates each of its proofs with its verifier and keeps the mean,
``model_prediction.average_automatic_rating`` r in [0, 1] (multiples of 1/128: about 64
samples of 0 / 0.5 / 1). We have r, not its samples, so its verdict is one per proof:
r rounded to the nearest of 0, 0.5, 1, halfway rounding down (0.25 -> 0, 0.75 -> 0.5), the
rule of our own rounded mean (``eval.votes``). That verdict is scored exactly like one
sample of ours (``eval.metrics.agreement``: 3-class, balanced, binary and point metrics),
beside ours at the headline n on the same proofs. Two unrounded errors complete it:
``mae_reference_score`` = mean |r - human score| and ``mae_reference_points`` = mean
|7 r - human points| (items out of 7 only); and ``ours_vs_reference_mae`` by n = mean |our
mean score over the first n samples - r| over the proofs where ours has a verdict.

Data without a reference gives ``None`` (and metrics.json says why), never a made-up 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from data.records import ALLOWED_SCORES, mean_score
from eval.metrics import AgreementReport, VerifiedItem, agreement, sample_counts
from eval.point_metrics import SCALE_POINTS

REFERENCE_RULE = ("reference verdict = its mean rating r rounded to the nearest of 0, 0.5, 1, halfway down "
                  "(0.25 -> 0, 0.75 -> 0.5); scored like one sample of ours")
NO_REFERENCE = "no item carries a reference verifier score (DeepSeekMath-V2 outputs carry average_automatic_rating)"


def rounded_reference(rating: float) -> float:
    """The nearest of 0, 0.5, 1 to ``rating``; exactly halfway goes to the lower one."""
    return min(ALLOWED_SCORES, key=lambda score: (abs(rating - score), score))


@dataclass(frozen=True)
class ReferenceComparison:
    """The reference verifier against the humans, beside ours on the same proofs."""

    items: int
    """Proofs with a reference score (and in the evaluation)."""
    n: int
    """Our samples per proof in ``ours``."""
    reference: AgreementReport
    ours: AgreementReport
    mae_reference_score: float | None
    mae_reference_points: float | None
    ours_vs_reference_mae: dict[int, float | None] = field(hash=False)
    rule: str = REFERENCE_RULE

    def __post_init__(self) -> None:
        if self.items < 1 or self.reference.items != self.items or self.ours.items != self.items:
            raise ValueError("the reference and ours must cover the same, non-empty set of proofs")

    def to_dict(self) -> dict[str, Any]:
        return {"items": self.items, "n": self.n, "rule": self.rule, "reference": self.reference.to_dict(),
                "ours": self.ours.to_dict(), "mae_reference_score": self.mae_reference_score,
                "mae_reference_points": self.mae_reference_points,
                "ours_vs_reference_mae": {str(n): value for n, value in sorted(self.ours_vs_reference_mae.items())}}


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def reference_comparison(items: Sequence[VerifiedItem], n: int | None) -> ReferenceComparison | None:
    """The comparison over the items with a reference score, ours at ``n`` samples; None without any."""
    covered = [item for item in items if item.reference_score is not None]
    if not covered or not n:
        return None
    ratings = [float(item.reference_score) for item in covered]  # type: ignore[arg-type]
    reference = [VerifiedItem(item.human_score, (rounded_reference(rating),), item.id, item.human_points,
                              item.max_points, rating) for item, rating in zip(covered, ratings)]
    gaps: dict[int, float | None] = {}
    for count in sample_counts(min(len(item.sample_scores) for item in covered)):
        means = [mean_score(item.sample_scores[:count]) for item in covered]
        gaps[count] = _mean([abs(mean - rating) for mean, rating in zip(means, ratings) if mean is not None])
    return ReferenceComparison(
        items=len(covered), n=n, reference=agreement(reference), ours=agreement([item.first(n) for item in covered]),
        mae_reference_score=_mean([abs(rating - item.human_score) for item, rating in zip(covered, ratings)]),
        mae_reference_points=_mean([abs(SCALE_POINTS * rating - float(item.human_points))  # type: ignore[arg-type]
                                    for item, rating in zip(covered, ratings) if item.max_points == SCALE_POINTS]),
        ours_vs_reference_mae=gaps,
    )
