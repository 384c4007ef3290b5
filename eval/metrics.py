"""How well n sampled verifier scores agree with a human grade; pure functions, no model.

Input: one :class:`VerifiedItem` per proof (``eval.votes``, re-exported here), holding the
human score and the verifier's n sample scores, each 0, 0.5, 1 or None, and where the data
has them the human points and a reference verifier's score. The rules, decided once here
(the vote rules in ``eval.votes``):

* A None sample is a *format failure* (the verdict could not be parsed). It is counted in
  ``format_failures`` and left out of the mean and the majority; it is never read as 0
  (DESIGN.md, "Parsing").
* An item whose samples are all None (or that has none) has *no verdict*. Accuracy counts
  it as wrong, because a verifier that cannot answer is not right; every other metric needs
  a prediction and leaves it out; ``items_without_verdict`` says how many were left out.
* Majority score: the most frequent valid score; a tie goes to the lowest tied score.
  Rounded mean: the nearest of 0, 0.5, 1; a mean exactly halfway (0.25, 0.75) rounds down.
  Both ties lean low because a split verifier should not pass a proof: false passes are
  what corrupt rewards and auto-labels.
* The confusion matrix (rows human, columns predicted, order 0, 0.5, 1), Cohen's kappa and
  per-class precision/recall use the majority score.
* Balanced accuracy: the mean, over the human score classes present, of the share of that
  class's items whose majority score equals it (its recall; an item without a verdict counts
  as a miss, as in accuracy). Always answering one class scores 1 / classes present.
* The field's binary judge metrics (``eval.binary_metrics``: correct = score 1, one sample
  and majority of n) and 0-7 point metrics (``eval.point_metrics``: 4-class accuracy, NMAE,
  MAE) are computed from the same items and sit in every report.
* AUROC ranks "human == 1" against the rest by the mean score; ties count one half
  (Mann-Whitney). It is None when either class is empty.
* An item *passes all samples* when it has samples and every one is 1; a format failure
  is not a pass.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from data.records import ALLOWED_SCORES, mean_score
from eval.binary_metrics import BinaryReport, binary_report
from eval.point_metrics import PointReport, point_report
from eval.votes import VerifiedItem, majority_score, rounded_mean_score

SCALE: tuple[float, ...] = ALLOWED_SCORES
"""The score scale in matrix order: 0, 0.5, 1."""


def rate(numerator: int, denominator: int) -> float | None:
    """numerator / denominator; None when there is nothing to divide by."""
    return numerator / denominator if denominator else None


def majority_class(labels: Sequence[float], name: str) -> dict[str, Any]:
    """The baseline of always answering the commonest of ``labels`` (the lowest on a tie), under the key ``name``:
    its accuracy, balanced accuracy (1 / classes present) and kappa (0)."""
    if not labels:
        return {}
    counts = Counter(labels)
    commonest = min(counts, key=lambda label: (-counts[label], label))
    return {name: commonest, "accuracy": counts[commonest] / len(labels), "balanced_accuracy": 1 / len(counts),
            "kappa": 0.0}


def accuracy(humans: Sequence[float], predictions: Sequence[float | None]) -> float | None:
    """Fraction of items predicted exactly; a None prediction is wrong. None for no items."""
    if not humans:
        return None
    return sum(1 for human, predicted in zip(humans, predictions, strict=True) if predicted == human) / len(humans)


def balanced_accuracy(humans: Sequence[float], predictions: Sequence[float | None]) -> float | None:
    """Mean over the human classes present of the recall of ``predictions`` (None is a miss); None for no items."""
    by_class: dict[float, list[bool]] = {}
    for human, predicted in zip(humans, predictions, strict=True):
        by_class.setdefault(human, []).append(predicted == human)
    if not by_class:
        return None
    return sum(sum(hits) / len(hits) for hits in by_class.values()) / len(by_class)


def mean_absolute_error(humans: Sequence[float], predictions: Sequence[float | None]) -> float | None:
    """Mean |prediction - human| over the items with a prediction; None when there is none."""
    errors = [abs(predicted - human) for human, predicted in zip(humans, predictions, strict=True) if predicted is not None]
    return sum(errors) / len(errors) if errors else None


def confusion_matrix(humans: Sequence[float], predictions: Sequence[float | None]) -> tuple[tuple[int, ...], ...]:
    """3x3 counts, rows human and columns predicted, both in the order 0, 0.5, 1; None predictions skipped."""
    counts = [[0] * len(SCALE) for _ in SCALE]
    for human, predicted in zip(humans, predictions, strict=True):
        if predicted is not None:
            counts[SCALE.index(human)][SCALE.index(predicted)] += 1
    return tuple(tuple(row) for row in counts)


def cohen_kappa(confusion: Sequence[Sequence[int]], weighting: str = "none") -> float | None:
    """Cohen's kappa of a square confusion matrix, unweighted ("none") or "quadratic".

    None when it is undefined: no items, or chance agreement is already perfect.
    """
    if weighting not in ("none", "quadratic"):
        raise ValueError(f"weighting must be 'none' or 'quadratic', got {weighting!r}")
    size, total = len(confusion), sum(map(sum, confusion))
    if size < 2:
        raise ValueError("a confusion matrix needs at least two classes")
    if total == 0:
        return None
    rows = [sum(row) for row in confusion]
    columns = [sum(row[j] for row in confusion) for j in range(size)]

    def disagreement(i: int, j: int) -> float:
        # Unweighted kappa is weighted kappa with every disagreement weighing 1.
        return ((i - j) / (size - 1)) ** 2 if weighting == "quadratic" else float(i != j)

    observed = sum(disagreement(i, j) * confusion[i][j] for i in range(size) for j in range(size)) / total
    expected = sum(disagreement(i, j) * rows[i] * columns[j] for i in range(size) for j in range(size)) / total**2
    return None if expected == 0 else 1 - observed / expected


@dataclass(frozen=True)
class ClassStats:
    """Precision and recall of one score class (None where the denominator is 0)."""

    precision: float | None
    recall: float | None
    support: int
    """Items whose human score is this class."""


def class_precision_recall(confusion: Sequence[Sequence[int]]) -> dict[str, ClassStats]:
    """Per-class precision/recall keyed "0", "0.5", "1" (JSON-ready keys)."""
    stats = {}
    for index, score in enumerate(SCALE):
        hits = confusion[index][index]
        predicted = sum(row[index] for row in confusion)
        actual = sum(confusion[index])
        stats[f"{score:g}"] = ClassStats(
            precision=hits / predicted if predicted else None,
            recall=hits / actual if actual else None,
            support=actual,
        )
    return stats


def auroc(labels: Sequence[bool], scores: Sequence[float]) -> float | None:
    """Probability that a random positive outscores a random negative, ties one half; None if a class is empty."""
    positives = [score for label, score in zip(labels, scores, strict=True) if label]
    negatives = sorted(score for label, score in zip(labels, scores, strict=True) if not label)
    if not positives or not negatives:
        return None
    wins = 0.0
    for score in positives:
        below = bisect_left(negatives, score)
        wins += below + 0.5 * (bisect_right(negatives, score) - below)
    return wins / (len(positives) * len(negatives))


@dataclass(frozen=True)
class AllPassStats:
    """The verifier's strongest "correct": every sample scored 1."""

    passed: int
    """Items where every sample is 1."""
    false_positives: int
    """Passed items whose human score is below 1."""
    false_positive_rate: float | None
    """false_positives / passed; None when nothing passed."""


def all_samples_pass(items: Sequence[VerifiedItem]) -> AllPassStats:
    """How often "all n samples say 1" is wrong about the human grade."""
    passed = [item for item in items if item.sample_scores and all(score == 1 for score in item.sample_scores)]
    wrong = sum(1 for item in passed if item.human_score < 1)
    return AllPassStats(len(passed), wrong, wrong / len(passed) if passed else None)


@dataclass(frozen=True)
class AgreementReport:
    """Every agreement metric for one set of items; ``to_dict`` is what metrics.json holds."""

    items: int
    samples: int
    samples_per_item: int | None
    """The common number of samples per item; None when items differ."""
    format_failures: int
    format_failure_rate: float | None
    items_without_verdict: int
    accuracy_majority: float | None
    accuracy_rounded_mean: float | None
    balanced_accuracy: float | None
    """Of the majority score: mean recall over the human classes present."""
    mean_absolute_error: float | None
    """Of the unrounded mean score."""
    confusion_matrix: tuple[tuple[int, ...], ...]
    cohen_kappa: float | None
    quadratic_kappa: float | None
    per_class: dict[str, ClassStats] = field(hash=False)
    auroc: float | None
    all_pass: AllPassStats
    binary: BinaryReport
    """Correct (score 1) vs not, as binary judges are reported (``eval.binary_metrics``)."""
    points: PointReport
    """On the IMO 0-7 point scale where the data has points (``eval.point_metrics``)."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def agreement(items: Sequence[VerifiedItem]) -> AgreementReport:
    """All metrics of ``items`` (see the module docstring for the rules)."""
    humans = [item.human_score for item in items]
    means = [mean_score(item.sample_scores) for item in items]
    majorities = [majority_score(item.sample_scores) for item in items]
    confusion = confusion_matrix(humans, majorities)
    counts = {len(item.sample_scores) for item in items}
    samples = sum(len(item.sample_scores) for item in items)
    failures = sum(item.sample_scores.count(None) for item in items)
    scored = [(human, mean) for human, mean in zip(humans, means) if mean is not None]
    return AgreementReport(
        items=len(items),
        samples=samples,
        samples_per_item=counts.pop() if len(counts) == 1 else None,
        format_failures=failures,
        format_failure_rate=failures / samples if samples else None,
        items_without_verdict=sum(1 for mean in means if mean is None),
        accuracy_majority=accuracy(humans, majorities),
        accuracy_rounded_mean=accuracy(humans, [rounded_mean_score(item.sample_scores) for item in items]),
        balanced_accuracy=balanced_accuracy(humans, majorities),
        mean_absolute_error=mean_absolute_error(humans, means),
        confusion_matrix=confusion,
        cohen_kappa=cohen_kappa(confusion),
        quadratic_kappa=cohen_kappa(confusion, "quadratic"),
        per_class=class_precision_recall(confusion),
        auroc=auroc([human == 1 for human, _ in scored], [mean for _, mean in scored]),
        all_pass=all_samples_pass(items),
        binary=binary_report(items),
        points=point_report(items),
    )


def sample_counts(largest: int) -> list[int]:
    """1, 2, 4, ... below ``largest``, then ``largest`` itself (empty when it is 0)."""
    counts, count = [], 1
    while count < largest:
        counts.append(count)
        count *= 2
    return counts + [largest] if largest > 0 else []


def agreement_by_sample_count(items: Sequence[VerifiedItem]) -> dict[int, AgreementReport]:
    """Metrics using the first k samples of each item, for k = 1, 2, 4, ... up to n.

    n is the smallest sample count among the items, so that every point of the curve has
    exactly k samples per item.
    """
    smallest = min((len(item.sample_scores) for item in items), default=0)
    return {
        count: agreement([item.first(count) for item in items])
        for count in sample_counts(smallest)
    }
