"""The auto-labeling rule of DESIGN.md, as pure functions.

Each analysis that reports issues (score < 1) gets a critique status from its meta ratings:

- **confirmed**: more than ``majority`` of its parsed ratings are at least ``confirm_rating``;
- **refuted**: more than ``majority`` of its parsed ratings are 0 (its defects are not real);
- **unknown**: anything else: split votes, 0.5 ratings, no parsable rating, or a meta
  prompt that does not fit the context;
- **unchecked**: meta-verification is off (m = 0); the critique is taken at its word and
  counts as confirmed.

For one proof, with L the lowest score among its scored analyses: at least k confirmed
analyses at L → label L. No analysis reports an issue, or every one that does is refuted →
label 1. Otherwise the proof is left for a human (label None): "not confirmed" never
counts as "no issue". Analyses without a score are not counted, and a proof with no scored
analysis stays unlabeled.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

CritiqueStatus = Literal["confirmed", "refuted", "unknown", "unchecked"]
TOO_LONG_RULE = "prompt-too-long"
"""The rule of a proof that could not be verified because its prompt does not fit the model."""
RULES = ("k-confirmed-at-lowest", "no-issue", "issues-refuted", "needs-human", "no-scored-analysis", TOO_LONG_RULE)


@dataclass(frozen=True)
class LabelDecision:
    label: float | None
    rule: str
    """Which branch decided: one of ``RULES``."""
    lowest: float | None
    confirmed_at_lowest: int

    def __post_init__(self) -> None:
        if self.rule not in RULES:
            raise ValueError(f"unknown rule {self.rule!r}")


def critique_status(ratings: Sequence[float | None], confirm_rating: float, majority: float) -> CritiqueStatus:
    """Confirmed, refuted or unknown, from the meta ratings of one issue-reporting analysis."""
    parsed = [rating for rating in ratings if rating is not None]
    if not parsed:
        return "unknown"
    if sum(rating >= confirm_rating for rating in parsed) > majority * len(parsed):
        return "confirmed"
    if sum(rating == 0.0 for rating in parsed) > majority * len(parsed):
        return "refuted"
    return "unknown"


def decide(scores: Sequence[float | None], statuses: Sequence[CritiqueStatus | None], k: int) -> LabelDecision:
    """Label a proof from its analyses' scores and critique statuses (the status of a score-1 analysis is ignored)."""
    if len(scores) != len(statuses):
        raise ValueError("one critique status per analysis is required")
    scored = [(score, status) for score, status in zip(scores, statuses) if score is not None]
    if not scored:
        return LabelDecision(None, "no-scored-analysis", None, 0)
    lowest = min(score for score, _ in scored)
    issues = [(score, status) for score, status in scored if score < 1.0]
    confirmed = sum(1 for score, status in issues if score == lowest and status in ("confirmed", "unchecked"))
    if lowest < 1.0 and confirmed >= k:
        return LabelDecision(lowest, "k-confirmed-at-lowest", lowest, confirmed)
    if not issues:
        return LabelDecision(1.0, "no-issue", lowest, confirmed)
    if all(status == "refuted" for _, status in issues):
        return LabelDecision(1.0, "issues-refuted", lowest, confirmed)
    return LabelDecision(None, "needs-human", lowest, confirmed)
