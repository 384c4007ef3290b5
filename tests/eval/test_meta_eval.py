"""The meta-verifier's metrics against reference ratings, on hand-made critiques."""

from __future__ import annotations

import pytest

from eval.meta_eval import METRICS, RatedCritique, critiques_from, meta_metrics, metric_values


def critique(reference: float, *ratings: float | None) -> RatedCritique:
    return RatedCritique(reference, tuple(ratings))


def test_recalls_and_the_two_errors_that_corrupt_labels() -> None:
    critiques = [
        critique(0.0, 0.0), critique(0.0, 1.0), critique(0.0, 0.5), critique(0.0, 0.0),  # invented: 2 caught, 1 vouched for
        critique(0.5, 0.5), critique(0.5, 1.0),  # wrong score: 1 of 2 flagged
        critique(1.0, 1.0), critique(1.0, 0.0), critique(1.0, 1.0),  # true: 2 accepted, 1 thrown out
    ]
    values = metric_values(critiques)
    assert values["recall_0"] == 0.5 and values["recall_half"] == 0.5 and values["recall_1"] == pytest.approx(2 / 3)
    assert values["confirms_unreasonable"] == 0.25 and values["refutes_sound"] == pytest.approx(1 / 3)
    assert values["accuracy"] == pytest.approx(5 / 9)
    assert values["balanced_accuracy"] == pytest.approx((0.5 + 0.5 + 2 / 3) / 3)
    assert values["format_failure_rate"] == 0.0
    assert set(values) == set(METRICS)


def test_the_verdict_is_the_majority_lowest_on_a_tie_and_no_verdict_is_wrong() -> None:
    tie = critique(1.0, 1.0, 0.0)  # one each: the lower rating, 0, wins
    unparsed = critique(0.0, None, None)
    majority = critique(0.5, 0.5, 0.5, 1.0)
    assert tie.verdict == 0.0 and unparsed.verdict is None and majority.verdict == 0.5
    values = metric_values([tie, unparsed, majority])
    assert values["accuracy"] == pytest.approx(1 / 3)
    assert values["refutes_sound"] == 1.0 and values["recall_0"] == 0.0
    assert values["format_failure_rate"] == pytest.approx(2 / 7)


def test_a_reference_rating_absent_from_the_data_has_no_recall() -> None:
    values = metric_values([critique(1.0, 1.0), critique(1.0, 1.0)])
    assert values["recall_0"] is None and values["recall_half"] is None and values["confirms_unreasonable"] is None
    assert values["balanced_accuracy"] == 1.0 and values["recall_1"] == 1.0


def test_ratings_outside_the_scale_are_refused() -> None:
    with pytest.raises(ValueError):
        critique(0.7, 1.0)
    with pytest.raises(ValueError):
        critique(1.0, 2.0)


def test_metrics_from_records_count_prompts_that_did_not_fit_and_carry_intervals_and_the_baseline() -> None:
    records = [
        {"id": "a", "reference": 0.0, "ratings": [0.0], "prompt_tokens": 100, "completion_tokens": 40},
        {"id": "b", "reference": 0.0, "ratings": [1.0], "prompt_tokens": 100, "completion_tokens": 60},
        {"id": "c", "reference": 1.0, "ratings": [1.0], "prompt_tokens": 90, "completion_tokens": 50},
        {"id": "d", "reference": 0.5, "error": "prompt does not fit the model's context"},
    ]
    document = meta_metrics(records)
    assert document["counts"]["judged"] == 3 and document["counts"]["prompt_too_long"] == 1
    assert document["counts"]["by_reference"] == {"0": 2, "0.5": 0, "1": 1}
    assert document["metrics"]["accuracy"]["value"] == pytest.approx(2 / 3)
    low, high = document["metrics"]["accuracy"]["interval"]
    assert 0.0 <= low <= 2 / 3 <= high <= 1.0
    assert document["confusion_matrix"] == ((1, 0, 1), (0, 0, 0), (0, 0, 1))
    assert document["majority_class"] == {"rating": 0.0, "accuracy": pytest.approx(2 / 3), "balanced_accuracy": 0.5,
                                          "kappa": 0.0}
    assert document["tokens"] == {"prompt": 290, "completion": 150, "completion_per_rating": 50.0}
    assert meta_metrics(records) == document  # seeded intervals: the same records, the same document
    assert len(critiques_from(records)) == 3
