"""Binary judge metrics (correct = score 1) against values computed by hand."""

from __future__ import annotations

import pytest

from eval.binary_metrics import binary_majority, binary_report
from eval.votes import VerifiedItem


@pytest.mark.parametrize(("samples", "verdict"), [
    ((1, 1, 0), True),
    ((1, 1, 0, 0.5), False),  # 2 correct against 2 not: a tie is incorrect (the 3-class majority would be 1)
    ((1, 0, None, None), False),  # format failures are not votes: 1 against 1
    ((1, None), True),
    ((0.5,), False),  # 0.5 is not "correct"
    ((None, None), None),
    ((), None),
])
def test_binary_majority(samples: tuple[float | None, ...], verdict: bool | None) -> None:
    assert binary_majority(samples) is verdict


def test_binary_report_by_hand() -> None:
    items = [
        VerifiedItem(1.0, (1, 0, 0, 0.5), "a"),  # per sample 1/4 right; vote 1 vs 3: incorrect (wrong)
        VerifiedItem(1.0, (1, 1, 1, None), "b"),  # 3/4 (the failure is wrong); vote correct (right)
        VerifiedItem(0.0, (0, 0.5, 1, 0), "c"),  # 3/4; vote 1 vs 3: incorrect (right)
        VerifiedItem(0.5, (None, None, None, None), "d"),  # 0/4; no verdict (wrong)
        VerifiedItem(0.0, (0, 0, 0, 0), "e"),  # 4/4; right
    ]
    report = binary_report(items)
    assert report.items == 5 and report.humanly_correct == 2 and report.items_without_verdict == 1
    assert report.accuracy_per_sample == pytest.approx(11 / 20)  # (1 + 3 + 3 + 0 + 4) / 20
    assert report.accuracy_majority == pytest.approx(3 / 5)  # b, c, e
    assert report.true_positive_rate == pytest.approx(1 / 2)  # a missed, b found
    assert report.true_negative_rate == pytest.approx(2 / 3)  # c and e; d has no verdict
    assert report.balanced_accuracy == pytest.approx((1 / 2 + 2 / 3) / 2)


def test_one_class_only_and_no_items() -> None:
    report = binary_report([VerifiedItem(0.0, (0,), "a"), VerifiedItem(0.5, (1,), "b")])
    assert report.true_positive_rate is None and report.true_negative_rate == 0.5 and report.balanced_accuracy == 0.5
    empty = binary_report([])
    assert (empty.accuracy_per_sample, empty.accuracy_majority, empty.balanced_accuracy) == (None, None, None)
