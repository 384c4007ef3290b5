"""0-7 point-scale metrics (GradingBench 4-class accuracy, NMAE, ProofBench MAE) against values computed by hand."""

from __future__ import annotations

import pytest

from eval.point_metrics import NO_POINTS, point_report, verdict_points
from eval.votes import VerifiedItem


def test_verdict_points() -> None:
    assert [verdict_points(score) for score in (1.0, 0.5, 0.0, None)] == [7.0, 6.0, 0.0, None]


def test_point_report_by_hand() -> None:
    items = [
        VerifiedItem(1.0, (1, 1, 0.5), "p", 7, 7),  # majority 1 -> 7: error 0, 4-class right; 7 x mean = 17.5/3
        VerifiedItem(0.0, (0, 0), "q", 1, 7),  # Partial: 0 -> 0 points, error 1, 4-class wrong; 7 x mean = 0
        VerifiedItem(0.5, (0.5, 1), "r", 6, 7),  # tie 0.5 / 1 goes low: 6, error 0, right; 7 x 0.75 = 5.25
        VerifiedItem(0.0, (1,), "s", 2, 7),  # 2 points is not one of the four classes; error 5
        VerifiedItem(0.0, (None,), "t", 0, 7),  # no verdict: wrong for 4-class, out of the MAEs
        VerifiedItem(0.0, (1,), "u", 9, 21),  # CMO scale: left out
        VerifiedItem(0.0, (1,), "v"),  # no points: left out
    ]
    report = point_report(items)
    assert (report.on_scale, report.off_scale, report.four_class_items, report.items_without_verdict) == (5, 2, 4, 1)
    assert report.four_class_accuracy == pytest.approx(2 / 4)  # p, r of p, q, r, t
    assert report.mae_points == pytest.approx(6 / 4)  # (0 + 1 + 0 + 5) / 4
    assert report.nmae == pytest.approx(6 / 4 / 7)
    # |17.5/3 - 7| = 7/6, |0 - 1| = 1, |5.25 - 6| = 0.75, |7 - 2| = 5
    assert report.mae_points_mean_score == pytest.approx((7 / 6 + 1 + 0.75 + 5) / 4)
    assert report.reason is None


def test_missing_points_or_verdicts_give_none_with_a_reason() -> None:
    report = point_report([VerifiedItem(1.0, (1,), "a"), VerifiedItem(0.0, (0,), "b")])
    assert report.reason == NO_POINTS and report.on_scale == 0 and report.off_scale == 2
    assert (report.four_class_accuracy, report.mae_points, report.nmae, report.mae_points_mean_score) == (None,) * 4
    silent = point_report([VerifiedItem(1.0, (None, None), "a", 7, 7)])
    assert silent.four_class_accuracy == 0.0  # no verdict is wrong, as for accuracy
    assert silent.mae_points is None and silent.nmae is None and "format" in (silent.reason or "")


def test_points_are_checked() -> None:
    with pytest.raises(ValueError, match="go together"):
        VerifiedItem(1.0, (1,), "a", 7, None)
    with pytest.raises(ValueError, match="outside"):
        VerifiedItem(1.0, (1,), "a", 8, 7)
    with pytest.raises(ValueError, match="reference"):
        VerifiedItem(1.0, (1,), "a", reference_score=1.5)
