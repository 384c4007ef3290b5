"""Re-deciding labels at smaller (n, m, k) from one record, and the trust metrics, on hand-made records."""

from __future__ import annotations

import pytest

from training.auto_labeling.sweep import decide_at, largest_settings, trust_metrics, trust_with_intervals


def analysis(score: float | None, ratings: list[float | None] = ()) -> dict:
    return {"score": score, "analysis": "...", "meta": [{"score": rating} for rating in ratings]}


# Four analyses: a 0 whose critique the meta-verifier confirms, a 0 it refutes, a 1, a 0.5 split 2-2.
RECORD = {
    "id": "p",
    "rule": "k-confirmed-at-lowest",
    "analyses": [analysis(0.0, [1, 1, 1, 0]), analysis(0.0, [0, 0, 0, 1]), analysis(1.0), analysis(0.5, [1, 1, 0, 0])],
}


@pytest.mark.parametrize(
    "n, m, k, label, rule",
    [
        (1, 0, 1, 0.0, "k-confirmed-at-lowest"),  # the first critique, taken at its word
        (2, 0, 2, 0.0, "k-confirmed-at-lowest"),  # both zeros unchecked
        (2, 4, 2, None, "needs-human"),  # one confirmed, one refuted: fewer than k
        (2, 4, 1, 0.0, "k-confirmed-at-lowest"),
        (2, 1, 1, 0.0, "k-confirmed-at-lowest"),  # first ratings only: 1 (confirmed) and 0 (refuted)
        (2, 2, 2, None, "needs-human"),
        (3, 4, 1, 0.0, "k-confirmed-at-lowest"),
        (4, 4, 2, None, "needs-human"),
    ],
)
def test_decide_at_uses_the_first_n_analyses_and_m_ratings(n: int, m: int, k: int, label: float | None, rule: str) -> None:
    decision = decide_at(RECORD, n, m, k)
    assert (decision.label, decision.rule) == (label, rule)


def test_every_issue_refuted_at_small_m_labels_1() -> None:
    record = {"id": "q", "rule": "needs-human", "analyses": [analysis(0.0, [0, 1, 1, 1]), analysis(1.0)]}
    assert decide_at(record, 2, 1, 1).rule == "issues-refuted"  # one rating, a 0: refuted
    assert decide_at(record, 2, 4, 1).rule == "k-confirmed-at-lowest"  # 3 of 4 confirm


def test_a_critique_whose_meta_prompt_did_not_fit_stays_unknown() -> None:
    record = {"id": "r", "rule": "needs-human", "analyses": [{**analysis(0.0), "meta_error": "too long"}]}
    assert decide_at(record, 1, 2, 1).rule == "needs-human"
    assert decide_at(record, 1, 0, 1).rule == "k-confirmed-at-lowest"


def test_a_proof_too_long_to_verify_stays_unlabelled() -> None:
    assert decide_at({"id": "s", "rule": "prompt-too-long", "analyses": []}, 8, 4, 2).label is None


@pytest.mark.parametrize("n, m, k", [(5, 4, 1), (2, 5, 1), (2, 4, 3), (2, 4, 0)])
def test_settings_beyond_the_record_are_refused(n: int, m: int, k: int) -> None:
    with pytest.raises(ValueError):
        decide_at(RECORD, n, m, k)


def test_largest_settings_are_the_fewest_any_record_holds() -> None:
    short = {"id": "t", "rule": "no-issue", "analyses": [analysis(0.0, [1, 1]), analysis(1.0), analysis(1.0)]}
    assert largest_settings([RECORD, short]) == (3, 2)
    assert largest_settings([{"id": "u", "rule": "no-issue", "analyses": [analysis(1.0)]}]) == (1, 0)


def test_trust_metrics_count_what_they_say() -> None:
    # (label, reference): a right 0, a flawed proof labelled 1, a right 1, one left for a human, a wrong 0.5.
    pairs = [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (None, 0.5), (0.5, 1.0)]
    assert trust_metrics(pairs) == {
        "coverage": 4 / 5, "agreement": 2 / 4, "precision_of_1": 1 / 2, "flawed_labelled_1": 1 / 3,
    }


def test_trust_metrics_without_labels_are_undefined_not_zero() -> None:
    assert trust_metrics([(None, 1.0)]) == {"coverage": 0.0, "agreement": None, "precision_of_1": None, "flawed_labelled_1": None}


def test_trust_intervals_bracket_the_point_estimate() -> None:
    pairs = [(0.0, 0.0)] * 30 + [(1.0, 0.0)] * 10 + [(1.0, 1.0)] * 10 + [(None, 0.5)] * 10
    trust = trust_with_intervals(pairs)
    assert (trust["proofs"], trust["labelled"], trust["labelled_1"]) == (60, 50, 20)
    for name, value in trust["metrics"].items():
        low, high = trust["intervals"][name]
        assert low <= value <= high and low < high
