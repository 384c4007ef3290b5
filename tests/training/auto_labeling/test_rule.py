"""The labeling rule, table-driven."""

from __future__ import annotations

import pytest

from training.auto_labeling.config import LabelConfig
from training.auto_labeling.rule import decide, is_valid


@pytest.mark.parametrize(
    "scores, validity, k, label, rule",
    [
        pytest.param([1, 1, 1], [False] * 3, 2, 1.0, "no-valid-issue", id="all-say-1"),
        pytest.param([0, 0, 1], [True, True, False], 2, 0.0, "k-valid-at-lowest", id="two-valid-zeros"),
        pytest.param([0, 0, 1], [True, False, False], 2, None, "needs-human", id="fewer-than-k-valid"),
        pytest.param([0, 0, 1], [False, False, False], 2, 1.0, "no-valid-issue", id="none-valid"),
        pytest.param([0.5, 0.5, 0.5], [True] * 3, 3, 0.5, "k-valid-at-lowest", id="all-valid-halves"),
        pytest.param([0, 0.5, 0.5], [False, True, True], 2, None, "needs-human", id="valid-only-above-the-lowest"),
        pytest.param([0, 0.5, 0.5], [True, True, True], 1, 0.0, "k-valid-at-lowest", id="k1-lowest-wins"),
        pytest.param([0, 0, 0.5], [True, True, True], 2, 0.0, "k-valid-at-lowest", id="tie-at-lowest"),
        pytest.param([None, None], [False, False], 1, None, "no-scored-analysis", id="every-analysis-failed-format"),
        pytest.param([None, 0, 1], [False, True, False], 1, 0.0, "k-valid-at-lowest", id="format-failures-ignored"),
        pytest.param([1, 1, 1], [True, True, True], 1, 1.0, "no-valid-issue", id="validity-of-1s-ignored"),
    ],
)
def test_decide(scores: list, validity: list, k: int, label: float | None, rule: str) -> None:
    decision = decide(scores, validity, k)
    assert (decision.label, decision.rule) == (label, rule)


@pytest.mark.parametrize(
    "ratings, confirm, majority, valid",
    [
        ([1, 1, 1, 0], 1.0, 0.5, True),
        ([1, 1, 0, 0], 1.0, 0.5, False),  # a tie is not a majority
        ([1, 0.5, 0.5, 0], 0.5, 0.5, True),
        ([1, 0.5, 0.5, 0], 1.0, 0.5, False),
        ([1, None, None], 1.0, 0.5, True),  # format failures do not vote
        ([None, None], 1.0, 0.5, False),
        ([1, 1, 0], 1.0, 0.7, False),
        ([], 1.0, 0.5, False),
    ],
)
def test_is_valid(ratings: list, confirm: float, majority: float, valid: bool) -> None:
    assert is_valid(ratings, confirm, majority) is valid


def test_decide_needs_one_flag_per_analysis() -> None:
    with pytest.raises(ValueError):
        decide([0, 1], [True], 1)


@pytest.mark.parametrize(
    "settings",
    [{"n": 0}, {"k": 9, "n": 8}, {"confirm_rating": 0.7}, {"majority": 1.0}, {"on_bad_row": "ignore"}],
)
def test_label_config_rejects_bad_settings(settings: dict) -> None:
    with pytest.raises(ValueError):
        LabelConfig(**settings)
