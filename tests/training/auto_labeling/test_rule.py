"""The labeling rule, table-driven."""

from __future__ import annotations

import pytest

from training.auto_labeling.config import LabelConfig
from training.auto_labeling.rule import critique_status, decide


C, R, U, X = "confirmed", "refuted", "unknown", "unchecked"


@pytest.mark.parametrize(
    "scores, statuses, k, label, rule",
    [
        pytest.param([1, 1, 1], [None] * 3, 2, 1.0, "no-issue", id="all-say-1"),
        pytest.param([0, 0, 1], [C, C, None], 2, 0.0, "k-confirmed-at-lowest", id="two-confirmed-zeros"),
        pytest.param([0, 0, 1], [C, U, None], 2, None, "needs-human", id="fewer-than-k-confirmed"),
        pytest.param([0, 0, 1], [R, R, None], 2, 1.0, "issues-refuted", id="every-issue-refuted"),
        pytest.param([0, 0, 0, 0], [U] * 4, 2, None, "needs-human", id="probe-all-meta-0.5-is-not-no-issue"),
        pytest.param([0, 0, 0, 0], [U] * 4, 1, None, "needs-human", id="probe-all-meta-unparsable"),
        pytest.param([0, 0.5, 1], [R, U, None], 1, None, "needs-human", id="one-refuted-one-unknown"),
        pytest.param([0, 0.5, 1], [R, C, None], 1, None, "needs-human", id="confirmed-only-above-the-lowest"),
        pytest.param([0, 0.5, 1], [R, R, None], 1, 1.0, "issues-refuted", id="refuted-at-every-score"),
        pytest.param([0.5, 0.5, 0.5], [C] * 3, 3, 0.5, "k-confirmed-at-lowest", id="all-confirmed-halves"),
        pytest.param([0, 0.5, 0.5], [C, C, C], 1, 0.0, "k-confirmed-at-lowest", id="k1-lowest-wins"),
        pytest.param([0, 0, 0.5], [C, C, R], 2, 0.0, "k-confirmed-at-lowest", id="confirmed-at-lowest-beats-a-refuted-half"),
        pytest.param([None, None], [None, None], 1, None, "no-scored-analysis", id="nothing-scored"),
        pytest.param([None, 0, 1], [None, C, None], 1, 0.0, "k-confirmed-at-lowest", id="format-failures-ignored"),
        pytest.param([0, 0, 1], [X, X, None], 2, 0.0, "k-confirmed-at-lowest", id="unchecked-taken-at-their-word"),
        pytest.param([1, 1], [R, C], 1, 1.0, "no-issue", id="status-of-1s-ignored"),
    ],
)
def test_decide(scores: list, statuses: list, k: int, label: float | None, rule: str) -> None:
    decision = decide(scores, statuses, k)
    assert (decision.label, decision.rule) == (label, rule)


@pytest.mark.parametrize(
    "ratings, confirm, majority, status",
    [
        ([1, 1, 1, 0], 1.0, 0.5, "confirmed"),
        ([1, 1, 0, 0], 1.0, 0.5, "unknown"),  # a tie is neither a confirming nor a refuting majority
        ([0, 0, 0, 1], 1.0, 0.5, "refuted"),
        ([0.5, 0.5, 0.5, 0.5], 1.0, 0.5, "unknown"),  # "some defect wrong or the score off" is no verdict on the defects
        ([1, 0.5, 0.5, 0], 0.5, 0.5, "confirmed"),
        ([1, 0.5, 0.5, 0], 1.0, 0.5, "unknown"),
        ([1, None, None], 1.0, 0.5, "confirmed"),  # format failures do not vote
        ([0, None, None], 1.0, 0.5, "refuted"),
        ([None, None], 1.0, 0.5, "unknown"),
        ([1, 1, 0], 1.0, 0.7, "unknown"),
        ([], 1.0, 0.5, "unknown"),
    ],
)
def test_critique_status(ratings: list, confirm: float, majority: float, status: str) -> None:
    assert critique_status(ratings, confirm, majority) == status


def test_decide_needs_one_status_per_analysis() -> None:
    with pytest.raises(ValueError):
        decide([0, 1], [C], 1)


@pytest.mark.parametrize(
    "settings",
    [{"n": 0}, {"k": 9, "n": 8}, {"confirm_rating": 0.7}, {"majority": 1.0}, {"on_bad_row": "ignore"}],
)
def test_label_config_rejects_bad_settings(settings: dict) -> None:
    with pytest.raises(ValueError):
        LabelConfig(**settings)
