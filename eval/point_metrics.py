"""Verifier agreement on the IMO 0-7 point scale, as IMO-GradingBench and IMO-ProofBench report graders.

Only items whose human grade is in points out of 7 enter (``human_points`` with
``max_points`` 7: GradingBench, and DeepSeekMath-V2's IMO and IMO-ProofBench outputs);
items on another scale (CMO out of 21, Putnam out of 10) are counted in ``off_scale`` and
left out rather than rescaled; data without points (OPC, plain JSONL) gives a report whose
metrics are None, with the reason.

Our verdict becomes points by ``VERDICT_POINTS``: 1 -> 7 (Correct), 0.5 -> 6 (Almost: sound
with minor errors, the grade the default ``almost-half`` mapping reads as 0.5), 0 -> 0
(Incorrect). Our scale has no "Partial" (1 point) verdict, so a humanly Partial proof is
never classified right, and is 1 point away when we say 0. The verdict of n samples is
their majority score (``eval.votes.majority_score``, ties to the lowest).

* ``four_class_accuracy``: over the items whose human points are one of 0, 1, 6, 7
  (GradingBench's Incorrect/Partial/Almost/Correct), the share whose verdict points equal
  them; an item without a verdict counts as wrong.
* ``mae_points``: mean |verdict points - human points| over the on-scale items with a
  verdict (ProofBench's grader MAE on 0-7); ``nmae`` = ``mae_points`` / 7, the error as a
  share of the scale (IMO-GradingBench's MAE, reported in percent of the 7 points: our
  reading of the paper, to be checked against it).
* ``mae_points_mean_score``: mean |7 x mean score - human points|: the unrounded mean of the
  n samples read linearly on the scale (0.5 -> 3.5 here, not 6).

Items without a verdict are left out of the MAEs (never read as 0 points) and counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from data.records import mean_score
from eval.votes import majority_score

if TYPE_CHECKING:
    from eval.votes import VerifiedItem

SCALE_POINTS = 7.0
"""Full marks of the IMO scale; the only scale these metrics read."""
VERDICT_POINTS: dict[float, float] = {1.0: 7.0, 0.5: 6.0, 0.0: 0.0}
FOUR_CLASSES: tuple[float, ...] = (0.0, 1.0, 6.0, 7.0)
"""GradingBench's points: Incorrect, Partial, Almost, Correct."""
POINT_RULE = ("majority verdict -> points 1->7, 0.5->6, 0->0; four-class accuracy over human points in {0,1,6,7}, "
              "no verdict wrong; MAE over items with a verdict; NMAE = MAE / 7")
NO_POINTS = "no item has a human grade in points out of 7"


@dataclass(frozen=True)
class PointReport:
    """Point-scale agreement of one set of items at one n (module docstring: the rules)."""

    on_scale: int
    """Items graded in points out of 7."""
    off_scale: int
    """Items without points or graded on another scale; left out."""
    four_class_items: int
    """On-scale items whose human points are 0, 1, 6 or 7."""
    four_class_accuracy: float | None
    mae_points: float | None
    nmae: float | None
    mae_points_mean_score: float | None
    items_without_verdict: int
    """On-scale items whose samples all failed the format."""
    reason: str | None = None
    """Why the metrics are None, when they are."""
    rule: str = POINT_RULE

    def __post_init__(self) -> None:
        if self.four_class_items > self.on_scale or self.items_without_verdict > self.on_scale:
            raise ValueError("a subset of the on-scale items cannot outnumber them")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def verdict_points(score: float | None) -> float | None:
    """Our verdict in points (1 -> 7, 0.5 -> 6, 0 -> 0); None stays None."""
    return None if score is None else VERDICT_POINTS[score]


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def point_report(items: Sequence[VerifiedItem]) -> PointReport:
    """Point-scale metrics of ``items`` with all their samples."""
    scaled = [item for item in items if item.max_points == SCALE_POINTS and item.human_points is not None]
    humans = [float(item.human_points) for item in scaled]  # type: ignore[arg-type]
    predicted = [verdict_points(majority_score(item.sample_scores)) for item in scaled]
    means = [mean_score(item.sample_scores) for item in scaled]
    four = [(human, guess) for human, guess in zip(humans, predicted) if human in FOUR_CLASSES]
    errors = [abs(guess - human) for human, guess in zip(humans, predicted) if guess is not None]
    mae = _mean(errors)
    reason = None
    if not scaled:
        reason = NO_POINTS
    elif not errors:
        reason = "no item graded in points has a verdict (every sample failed the format)"
    return PointReport(
        on_scale=len(scaled),
        off_scale=len(items) - len(scaled),
        four_class_items=len(four),
        four_class_accuracy=_mean([float(guess == human) for human, guess in four]),
        mae_points=mae,
        nmae=None if mae is None else mae / SCALE_POINTS,
        mae_points_mean_score=_mean([abs(SCALE_POINTS * mean - human) for human, mean in zip(humans, means)
                                     if mean is not None]),
        items_without_verdict=sum(1 for guess in predicted if guess is None),
        reason=reason,
    )
