"""eval.truth: verifier metrics against the checker's truth, on hand-made records."""

from __future__ import annotations

import pytest

from eval.truth import Truth, truth_by_sample_count, truth_report, truths_from


def analysis(score: float | None, text: str) -> dict:
    return {"score": score, "analysis": text}


RECORDS = [
    # flawed at step 2: the first analysis localises, the second blames the (correct) step 1, the third fails the format
    {"id": "f", "analyses": [analysis(0.0, "Step 1 is correct. Step 2 is false."), analysis(0.0, "Step 1 is wrong."),
                             analysis(None, "rambling"), analysis(0.0, "The error is in Step 2.")]},
    # correct: one clean pass, one invented defect, one mark-down without naming a step, one pass
    {"id": "c", "analyses": [analysis(1.0, "Every step is correct."), analysis(0.0, "Step 3 has a sign error."),
                             analysis(0.5, "Some details are missing."), analysis(1.0, "Fine.")]},
    # a half-credit proof whose leap is at step 1, never found
    {"id": "h", "analyses": [analysis(1.0, "All correct."), analysis(1.0, "No issues."), analysis(0.5, "Minor gaps."),
                             analysis(0.5, "Looks fine.")]},
    {"id": "elsewhere", "analyses": [analysis(1.0, "ok")]},  # no truth: left out
]
TRUTHS = {"f": Truth(0.0, 2), "c": Truth(1.0, None), "h": Truth(0.5, 1)}


def test_metrics_at_one_sample() -> None:
    report = truth_report(RECORDS, TRUTHS, 1)
    assert (report.items, report.flawed, report.correct) == (3, 2, 1)
    assert report.accuracy == pytest.approx(2 / 3)  # f: 0 right, c: 1 right, h: 1 wrong
    assert report.balanced_accuracy == pytest.approx((1 + 1 + 0) / 3)
    assert report.localisation == pytest.approx(1 / 2) and report.localised_by_any == pytest.approx(1 / 2)
    assert report.invented_defect_rate == 0.0 and report.format_failure_rate == 0.0


def test_more_samples_find_more_and_invent_more() -> None:
    report = truth_report(RECORDS, TRUTHS, 4)
    assert report.localisation == pytest.approx(2 / 8)  # 2 of the 8 analyses of flawed proofs blame the first bad step
    assert report.localised_by_any == pytest.approx(1 / 2)  # f is found, h never
    # parsed analyses: f 3, c 4, h 4 = 11; invented: f's "Step 1 is wrong", c's sign error and c's mark-down = 3
    assert report.invented_defect_rate == pytest.approx(3 / 11)
    assert report.format_failure_rate == pytest.approx(1 / 12)
    assert sorted(truth_by_sample_count(RECORDS, TRUTHS)) == [1, 2, 4]


def test_truths_come_only_from_rows_that_carry_them() -> None:
    fields = {"w": {"first_bad_step": 3, "family": "identity"}, "x": {"first_bad_step": None}, "y": {"guidelines": "..."}}
    assert truths_from(fields, {"w": 0.0, "x": 1.0, "y": 0.5}) == {"w": Truth(0.0, 3), "x": Truth(1.0, None)}
    assert truth_by_sample_count(RECORDS, {}) == {}
    proofs = {"w": "Step 1: a = a.\nStep 2: b = b.\nStep 3: c = d.", "x": "Step 1: a = a."}
    assert truths_from(fields, {"w": 0.0, "x": 1.0, "y": 0.5}, proofs) == {"w": Truth(0.0, 3, 3), "x": Truth(1.0, None, 1)}


def test_the_random_step_baseline() -> None:
    truths = {"f": Truth(0.0, 2, 2), "c": Truth(1.0, None, 3), "h": Truth(0.5, 1, 4)}  # flawed: f (2 steps), h (4 steps)
    assert truth_report(RECORDS, truths, 1).random_step == pytest.approx(
        {"localisation": (1 / 2 + 1 / 4) / 2, "localised_by_any": (1 / 2 + 1 / 4) / 2})
    assert truth_report(RECORDS, truths, 4).random_step["localised_by_any"] == pytest.approx(
        (1 - (1 / 2) ** 4 + 1 - (3 / 4) ** 4) / 2)
    assert truth_report(RECORDS, TRUTHS, 1).random_step == {}  # no step counts: no baseline


def test_kappa_and_the_majority_class_baseline() -> None:
    report = truth_report(RECORDS, TRUTHS, 1)
    # verdicts (truth -> majority of one): f 0 -> 0, c 1 -> 1, h 0.5 -> 1; observed agreement 2/3
    rows, columns = (1, 1, 1), (1, 0, 2)  # truth 0, 0.5, 1 once each; verdicts 0 once, 1 twice
    chance = sum(r * c for r, c in zip(rows, columns)) / 9
    assert report.kappa == pytest.approx((2 / 3 - chance) / (1 - chance))
    assert report.majority_class == {"score": 0.0, "accuracy": pytest.approx(1 / 3), "balanced_accuracy": pytest.approx(1 / 3),
                                     "kappa": 0.0}


def test_intervals_hold_the_value_and_are_reproducible() -> None:
    records = [*RECORDS[:3]] * 10
    records = [{**record, "id": f"{record['id']}{index}"} for index, record in enumerate(records)]
    truths = {record["id"]: TRUTHS[record["id"][0]] for record in records}
    for n, names in ((1, ("accuracy", "kappa", "localisation")),
                     (4, ("invented_defect_rate", "format_failure_rate"))):
        report = truth_report(records, truths, n, resamples=200)
        for name in names:  # each of these varies from proof to proof at this n
            low, high = report.intervals[name]
            assert low <= getattr(report, name) <= high and low < high
    assert report.intervals == truth_report(records, truths, 4, resamples=200).intervals
    single = truth_report(RECORDS[:1], {"f": TRUTHS["f"]}, 4, resamples=50)
    assert single.intervals["localisation"] == (single.localisation, single.localisation)  # one proof: nothing varies
    assert single.intervals["kappa"] is None  # one class: kappa is undefined in every resample
