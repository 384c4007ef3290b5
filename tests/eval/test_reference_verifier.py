"""The reference verifier (DeepSeekMath-V2's own mean rating) against the humans, beside ours, by hand."""

from __future__ import annotations

import pytest

from eval.reference_verifier import reference_comparison, rounded_reference
from eval.votes import VerifiedItem


@pytest.mark.parametrize(("rating", "score"), [(0.0, 0.0), (0.2, 0.0), (0.25, 0.0), (0.3, 0.5), (0.5, 0.5),
                                               (0.75, 0.5), (0.76, 1.0), (0.9375, 1.0), (1.0, 1.0)])
def test_rounded_reference_goes_low_at_halfway(rating: float, score: float) -> None:
    assert rounded_reference(rating) == score


ITEMS = [
    VerifiedItem(1.0, (1, 0), "a", 7, 7, 0.9375),  # reference 1: right; ours: tie 1/0 -> 0
    VerifiedItem(0.0, (0, 0), "b", 0, 7, 1.0),  # reference 1: wrong (a false pass); ours 0
    VerifiedItem(0.5, (None, 0.5), "c", 6, 7, 0.75),  # reference 0.5: right; ours 0.5
    VerifiedItem(0.0, (1, 1), "d", 0, 7),  # no reference: left out of the comparison
]


def test_reference_comparison_by_hand() -> None:
    comparison = reference_comparison(ITEMS, 2)
    assert comparison is not None and comparison.items == 3 and comparison.n == 2
    reference, ours = comparison.reference, comparison.ours
    assert reference.accuracy_majority == pytest.approx(2 / 3)
    assert reference.binary.accuracy_majority == pytest.approx(2 / 3)  # a right, b wrong, c (not correct) right
    assert reference.binary.balanced_accuracy == pytest.approx((1 + 1 / 2) / 2)
    assert reference.points.mae_points == pytest.approx(7 / 3)  # 0, 7, 0
    assert reference.points.nmae == pytest.approx(1 / 3) and reference.points.four_class_accuracy == pytest.approx(2 / 3)
    assert ours.accuracy_majority == pytest.approx(2 / 3)  # a wrong (tie goes low), b, c right
    assert comparison.mae_reference_score == pytest.approx((0.0625 + 1 + 0.25) / 3)
    assert comparison.mae_reference_points == pytest.approx((0.4375 + 7 + 0.75) / 3)  # |7r - points|
    # n = 1: our means a 1, b 0, c none -> (0.0625 + 1) / 2; n = 2: a 0.5, b 0, c 0.5 -> (0.4375 + 1 + 0.25) / 3
    assert comparison.ours_vs_reference_mae == pytest.approx({1: 1.0625 / 2, 2: 1.6875 / 3})


def test_no_reference_gives_none() -> None:
    assert reference_comparison(ITEMS[3:], 2) is None
    assert reference_comparison([], None) is None
