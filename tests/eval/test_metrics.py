"""Verifier-agreement metrics against values computed by hand (the arithmetic is in the comments)."""

from __future__ import annotations

import json

import pytest

from eval.metrics import (
    VerifiedItem,
    accuracy,
    agreement,
    agreement_by_sample_count,
    all_samples_pass,
    balanced_accuracy,
    auroc,
    class_precision_recall,
    cohen_kappa,
    confusion_matrix,
    majority_score,
    mean_absolute_error,
    mean_score,
    rounded_mean_score,
    sample_counts,
)
from eval.point_metrics import NO_POINTS

# Human scores and predictions used for the confusion-matrix examples.
HUMANS = [1, 1, 1, 0, 0, 0.5, 0.5, 0]
PREDICTED = [1, 1, 0, 0, 1, 0.5, 1, 0]
# rows human 0 / 0.5 / 1, columns predicted 0 / 0.5 / 1:
#   human 0   -> predicted 0, 1, 0  -> [2, 0, 1]
#   human 0.5 -> predicted 0.5, 1   -> [0, 1, 1]
#   human 1   -> predicted 1, 1, 0  -> [1, 0, 2]
CONFUSION = ((2, 0, 1), (0, 1, 1), (1, 0, 2))


def test_mean_and_majority_skip_format_failures() -> None:
    assert mean_score([1, None, 0.5]) == 0.75
    assert mean_score([None, None]) is None
    assert majority_score([0.5, 1, None, 1, None, None]) == 1  # None is not a vote
    assert majority_score([]) is None


def test_majority_tie_goes_to_lowest_score() -> None:
    assert majority_score([1, 0]) == 0
    assert majority_score([1, 0.5, 1, 0.5]) == 0.5
    assert majority_score([1, 0.5, 0, 1, 0.5, 0]) == 0


def test_rounded_mean_rounds_halfway_down() -> None:
    assert rounded_mean_score([0, 0.5]) == 0  # mean 0.25, halfway: down
    assert rounded_mean_score([0.5, 1]) == 0.5  # mean 0.75, halfway: down
    assert rounded_mean_score([1, 1, 0.5]) == 1  # mean 0.833 -> 1
    assert rounded_mean_score([0, 0, 1]) == 0.5  # mean 0.333 -> 0.5
    assert rounded_mean_score([0, 0, 0, 1]) == 0  # mean 0.25 exactly: down
    assert rounded_mean_score([None]) is None


def test_accuracy_counts_missing_predictions_as_wrong() -> None:
    assert accuracy([1, 0, 0.5, 1], [1, 0, 1, None]) == 0.5
    assert accuracy([], []) is None


def test_mean_absolute_error_skips_missing_predictions() -> None:
    # |0.75 - 1| + |0 - 0| + |1 - 0.5| = 0.25 + 0 + 0.5 = 0.75 over 3 items
    assert mean_absolute_error([1, 0, 0.5, 1], [0.75, 0, 1, None]) == pytest.approx(0.25)
    assert mean_absolute_error([1], [None]) is None


def test_confusion_matrix_rows_are_human_columns_predicted() -> None:
    assert confusion_matrix(HUMANS, PREDICTED) == CONFUSION
    assert confusion_matrix([1, 0], [None, 0]) == ((1, 0, 0), (0, 0, 0), (0, 0, 0))


def test_cohen_kappa_unweighted_by_hand() -> None:
    # N = 8; observed agreement po = (2 + 1 + 2) / 8 = 5/8
    # row totals (3, 2, 3), column totals (3, 1, 4): pe = (3*3 + 2*1 + 3*4) / 64 = 23/64
    # kappa = (5/8 - 23/64) / (1 - 23/64) = (17/64) / (41/64) = 17/41
    assert cohen_kappa(CONFUSION) == pytest.approx(17 / 41)


def test_cohen_kappa_quadratic_by_hand() -> None:
    # disagreement weights ((i - j) / 2)^2: neighbours 0.25, 0 vs 1 weighs 1
    # observed: O[0][2]*1 + O[1][2]*0.25 + O[2][0]*1 = 1 + 0.25 + 1 = 2.25
    # expected counts E[i][j] = row_i * col_j / 8; weighted sum
    #   = (0.25*3*1 + 1*3*4 + 0.25*2*3 + 0.25*2*4 + 1*3*3 + 0.25*3*1) / 8 = 26/8 = 3.25
    # kappa_w = 1 - 2.25 / 3.25 = 4/13
    assert cohen_kappa(CONFUSION, "quadratic") == pytest.approx(4 / 13)


def test_cohen_kappa_edge_cases() -> None:
    assert cohen_kappa(((3, 0, 0), (0, 0, 0), (0, 0, 0))) is None  # chance agreement is already 1
    assert cohen_kappa(((0, 0, 0), (0, 0, 0), (0, 0, 0))) is None
    assert cohen_kappa(((2, 0, 0), (0, 0, 0), (0, 0, 3))) == 1.0
    with pytest.raises(ValueError):
        cohen_kappa(CONFUSION, "linear")


def test_class_precision_recall_by_hand() -> None:
    stats = class_precision_recall(CONFUSION)
    # class 0: 2 hits of 3 predicted 0 and of 3 humans 0
    assert (stats["0"].precision, stats["0"].recall, stats["0"].support) == pytest.approx((2 / 3, 2 / 3, 3))
    # class 0.5: 1 hit of 1 predicted, of 2 humans
    assert (stats["0.5"].precision, stats["0.5"].recall) == (1.0, 0.5)
    # class 1: 2 hits of 4 predicted, of 3 humans
    assert (stats["1"].precision, stats["1"].recall) == pytest.approx((0.5, 2 / 3))
    empty = class_precision_recall(((1, 0, 0), (0, 0, 0), (0, 0, 0)))
    assert empty["1"].precision is None and empty["1"].recall is None


def test_auroc_by_hand_with_ties() -> None:
    # positives 1.0, 0.75, 0.5 against negatives 0.5, 0.25, 0.0, 1.0 (12 pairs):
    #   1.0  beats 0.5, 0.25, 0.0 and ties 1.0 -> 3.5
    #   0.75 beats 0.5, 0.25, 0.0              -> 3
    #   0.5  ties 0.5, beats 0.25, 0.0         -> 2.5
    # AUROC = 9 / 12 = 0.75
    labels = [True, True, True, False, False, False, False]
    scores = [1.0, 0.75, 0.5, 0.5, 0.25, 0.0, 1.0]
    assert auroc(labels, scores) == 0.75
    assert auroc([True, False], [0.5, 0.5]) == 0.5
    assert auroc([True, True], [1.0, 0.0]) is None
    assert auroc([], []) is None


def test_all_samples_pass_false_positive_rate() -> None:
    items = [
        VerifiedItem(1, (1, 1, 1)),
        VerifiedItem(0.5, (1, 1, 1)),  # passes, human < 1: false positive
        VerifiedItem(0, (1, 1, None)),  # a format failure is not a pass
        VerifiedItem(0, ()),  # no samples: no pass
        VerifiedItem(0, (1, 0.5, 1)),
    ]
    stats = all_samples_pass(items)
    assert (stats.passed, stats.false_positives, stats.false_positive_rate) == (2, 1, 0.5)
    assert all_samples_pass([VerifiedItem(1, (0,))]).false_positive_rate is None


def test_verified_item_rejects_scores_off_the_scale() -> None:
    with pytest.raises(ValueError):
        VerifiedItem(0.7, (1,))
    with pytest.raises(ValueError):
        VerifiedItem(1, (1, 2))
    with pytest.raises(ValueError):
        VerifiedItem(None, (1,))  # type: ignore[arg-type]


ITEMS = [
    VerifiedItem(1, (1, 1, 1, 1), "a"),
    VerifiedItem(1, (1, 0.5, 1, None), "b"),
    VerifiedItem(0, (1, 1, 1, 1), "c"),
    VerifiedItem(0, (0, 0, 0.5, 0), "d"),
    VerifiedItem(0.5, (0.5, 1, 0.5, 0), "e"),
    VerifiedItem(0.5, (None, None, None, None), "f"),
]


def test_agreement_report_by_hand() -> None:
    report = agreement(ITEMS)
    # means: a 1, b 2.5/3, c 1, d 0.125, e 0.5, f None; majorities: 1, 1, 1, 0, 0.5, None
    assert (report.items, report.samples, report.samples_per_item) == (6, 24, 4)
    assert (report.format_failures, report.items_without_verdict) == (5, 1)
    assert report.format_failure_rate == pytest.approx(5 / 24)
    # majority right on a, b, d, e (f has no verdict and counts as wrong): 4/6
    assert report.accuracy_majority == pytest.approx(4 / 6)
    # rounded means 1, 1, 1, 0, 0.5, None: also a, b, d, e
    assert report.accuracy_rounded_mean == pytest.approx(4 / 6)
    # errors 0, 1/6, 1, 0.125, 0 over the 5 items with a verdict
    assert report.mean_absolute_error == pytest.approx((1 / 6 + 1 + 0.125) / 5)
    assert report.confusion_matrix == ((1, 0, 1), (0, 1, 0), (0, 0, 2))
    # positives a (1), b (5/6) vs negatives c (1), d (0.125), e (0.5):
    # a: tie c, beats d, e -> 2.5; b: loses c, beats d, e -> 2; (2.5 + 2) / 6 = 0.75
    assert report.auroc == pytest.approx(0.75)
    assert (report.all_pass.passed, report.all_pass.false_positives) == (2, 1)
    # recall of the majority per human class: 1 -> a, b both right (1); 0 -> c wrong, d right (1/2);
    # 0.5 -> e right, f without a verdict (1/2)
    assert report.balanced_accuracy == pytest.approx((1 + 1 / 2 + 1 / 2) / 3)
    # binary votes: a, b correct (right), c correct (wrong), d, e not (right), f none (wrong)
    assert report.binary.accuracy_majority == pytest.approx(4 / 6) and report.binary.humanly_correct == 2
    assert report.points.reason == NO_POINTS and report.points.nmae is None


def test_balanced_accuracy_by_hand() -> None:
    # recalls: human 1 -> 2 of 3, human 0 -> 2 of 3, human 0.5 -> 1 of 2
    assert balanced_accuracy(HUMANS, PREDICTED) == pytest.approx((2 / 3 + 2 / 3 + 1 / 2) / 3)
    assert balanced_accuracy([1, 0], [None, 0]) == pytest.approx(0.5)  # no prediction is a miss
    assert balanced_accuracy([0, 0, 0], [0, 0, 0]) == 1.0  # one class present
    assert balanced_accuracy([], []) is None


def test_the_curve_keeps_points_and_reference() -> None:
    item = VerifiedItem(0.5, (0.5, 1, 1), "a", 6, 7, 0.75)
    curve = agreement_by_sample_count([item])
    assert item.first(1) == VerifiedItem(0.5, (0.5,), "a", 6, 7, 0.75)
    assert curve[1].points.mae_points == 0 and curve[3].points.mae_points == 1  # 0.5 -> 6; then the majority 1 -> 7


def test_agreement_report_serializes_to_json() -> None:
    data = json.loads(json.dumps(agreement(ITEMS).to_dict()))
    assert data["confusion_matrix"] == [[1, 0, 1], [0, 1, 0], [0, 0, 2]]
    assert set(data["per_class"]) == {"0", "0.5", "1"}
    assert data["all_pass"]["false_positive_rate"] == 0.5


def test_agreement_of_nothing_is_empty_not_an_error() -> None:
    report = agreement([])
    assert report.items == 0 and report.accuracy_majority is None and report.auroc is None


def test_sample_counts_are_powers_of_two_then_n() -> None:
    assert sample_counts(0) == []
    assert sample_counts(1) == [1]
    assert sample_counts(4) == [1, 2, 4]
    assert sample_counts(6) == [1, 2, 4, 6]


def test_agreement_by_sample_count_uses_the_first_k_samples() -> None:
    curve = agreement_by_sample_count(ITEMS)
    assert list(curve) == [1, 2, 4]
    first = curve[1]
    # first samples 1, 1, 1, 0, 0.5, None: right on a, b, d, e
    assert first.samples_per_item == 1 and first.accuracy_majority == pytest.approx(4 / 6)
    # first two samples: b is (1, 0.5), a tie that goes to 0.5 -> wrong; e is (0.5, 1) -> 0.5, right
    assert curve[2].accuracy_majority == pytest.approx(3 / 6)
    assert curve[4] == agreement(ITEMS)


def test_agreement_by_sample_count_stops_at_the_smallest_item() -> None:
    items = [VerifiedItem(1, (1, 1, 1)), VerifiedItem(0, (0, 0, 0, 0, 0))]
    assert list(agreement_by_sample_count(items)) == [1, 2, 3]
