"""The auto-labeling rule of DESIGN.md, as pure functions.

For one proof: L is the lowest score among its n analyses. If at least k analyses that
give L are valid, the label is L. If no analysis is valid (no legitimate issue found in
any attempt, including when every analysis gives 1), the label is 1. Otherwise the proof
is left for a human (label None). An analysis that reports issues is valid when more than
``majority`` of its parsed meta ratings are at least ``confirm_rating``; analyses without
a score are not counted, and a proof with no scored analysis stays unlabeled.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


TOO_LONG_RULE = "prompt-too-long"
"""The rule of a proof that could not be verified because its prompt does not fit the model."""


@dataclass(frozen=True)
class LabelDecision:
    label: float | None
    rule: str
    """Which branch decided: 'k-valid-at-lowest', 'no-valid-issue', 'needs-human', 'no-scored-analysis' or 'prompt-too-long'."""
    lowest: float | None
    valid_at_lowest: int


def is_valid(ratings: Sequence[float | None], confirm_rating: float, majority: float) -> bool:
    """Whether the meta ratings of one analysis confirm it."""
    parsed = [rating for rating in ratings if rating is not None]
    if not parsed:
        return False
    confirming = sum(1 for rating in parsed if rating >= confirm_rating)
    return confirming > majority * len(parsed)


def decide(scores: Sequence[float | None], validity: Sequence[bool], k: int) -> LabelDecision:
    """Label a proof from its analyses' scores and validity (validity of score-1 analyses is ignored)."""
    if len(scores) != len(validity):
        raise ValueError("one validity flag per analysis is required")
    scored = [(score, valid) for score, valid in zip(scores, validity) if score is not None]
    if not scored:
        return LabelDecision(None, "no-scored-analysis", None, 0)
    lowest = min(score for score, _ in scored)
    issues = [(score, valid) for score, valid in scored if score < 1.0]
    valid_at_lowest = sum(1 for score, valid in issues if score == lowest and valid)
    if lowest < 1.0 and valid_at_lowest >= k:
        return LabelDecision(lowest, "k-valid-at-lowest", lowest, valid_at_lowest)
    if not any(valid for _, valid in issues):
        return LabelDecision(1.0, "no-valid-issue", lowest, valid_at_lowest)
    return LabelDecision(None, "needs-human", lowest, valid_at_lowest)
