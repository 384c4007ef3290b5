"""One proof's sampled verdicts and the vote rules every agreement metric shares; pure, no model.

* A None sample is a *format failure*: it is not a vote, never read as 0 (DESIGN.md, "Parsing").
* Majority score: the most frequent valid score; a tie goes to the lowest tied score.
* Rounded mean: the nearest of 0, 0.5, 1; a mean exactly halfway (0.25, 0.75) rounds down.

Both ties lean low because a split verifier should not pass a proof: false passes are what
corrupt rewards and auto-labels.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace

from data.records import check_score


@dataclass(frozen=True)
class VerifiedItem:
    """One proof: its human score and the verifier's sampled scores (None = format failure)."""

    human_score: float
    sample_scores: tuple[float | None, ...]
    id: str = ""
    human_points: float | None = None
    """The human grade in points, when the data has points (GradingBench, DeepSeekMath-V2 outputs)."""
    max_points: float | None = None
    """Full marks of ``human_points`` (7 on the IMO scale); set together with it."""
    reference_score: float | None = None
    """Another verifier's mean score in [0, 1] for the same proof (DeepSeekMath-V2's ``average_automatic_rating``)."""

    def __post_init__(self) -> None:
        check_score(self.human_score, "human score", allow_none=False)
        object.__setattr__(self, "sample_scores", tuple(self.sample_scores))
        for score in self.sample_scores:
            check_score(score, f"sample score of item {self.id or '?'}")
        if (self.human_points is None) != (self.max_points is None):
            raise ValueError(f"item {self.id or '?'}: human_points and max_points go together")
        if self.max_points is not None and self.human_points is not None and not (
                self.max_points > 0 and 0 <= self.human_points <= self.max_points):
            raise ValueError(f"item {self.id or '?'}: {self.human_points:g} points is outside 0..{self.max_points:g}")
        if self.reference_score is not None and not 0 <= self.reference_score <= 1:
            raise ValueError(f"item {self.id or '?'}: reference score {self.reference_score!r} is outside [0, 1]")

    def first(self, count: int) -> VerifiedItem:
        """The same item with only its first ``count`` samples."""
        return replace(self, sample_scores=self.sample_scores[:count])


def valid_scores(samples: Sequence[float | None]) -> list[float]:
    """The samples that parsed, in order."""
    return [score for score in samples if score is not None]


def majority_score(samples: Sequence[float | None]) -> float | None:
    """Most frequent valid score, the lowest one on a tie; None when there is none."""
    counts = Counter(valid_scores(samples))
    if not counts:
        return None
    return min(counts, key=lambda score: (-counts[score], score))


def rounded_mean_score(samples: Sequence[float | None]) -> float | None:
    """The mean rounded to the nearest of 0, 0.5, 1, halfway rounding down; None when no valid sample."""
    scores = valid_scores(samples)
    if not scores:
        return None
    # Integer arithmetic in halves: a float mean of 0.25 could land a hair either side.
    halves, count = sum(round(2 * score) for score in scores), len(scores)
    best = min(range(3), key=lambda step: (abs(halves - step * count), step))
    return best / 2
