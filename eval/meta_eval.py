"""The meta-verifier against reference ratings of critiques: records in, metrics.json out.

A record is one line of ``items.jsonl`` as ``proofsmith eval meta-verifier`` writes it:
``id``, ``reference`` (the critique's reference rating, 0 / 0.5 / 1), ``ratings`` (the m
sampled ratings, None for a format failure) and token counts; or, for a critique whose
prompt does not fit the model's context, ``error`` instead of ratings (counted, left out).

The verdict on a critique is the majority of its ratings (``eval.metrics.majority_score``:
the lowest on a tie; all ratings unparsable = no verdict, wrong for accuracy). Metrics:

- ``accuracy``: verdict equals the reference; ``balanced_accuracy``: the mean over the
  reference ratings present of their recall; ``kappa``: Cohen's kappa.
- ``recall_0``, ``recall_half``, ``recall_1``: among critiques whose reference is 0 / 0.5 /
  1, the share rated exactly that. On the ground-truth world's rated critiques these read:
  catches invented defects (0), flags a right step with a wrong score (0.5), accepts a true
  critique (1).
- ``confirms_unreasonable``: among reference-0 critiques, the share rated 1: an invented
  defect the meta-verifier vouches for (auto-labeling would then label a correct proof
  down). ``refutes_sound``: among reference-1 critiques, the share rated 0: a real defect
  thrown out (auto-labeling would then pass a flawed proof).
- ``format_failure_rate``: unparsable ratings over all ratings.

Each comes with a 95 % bootstrap interval over critiques (``eval.intervals``), and
``majority_class`` is the baseline of always answering the commonest reference rating.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from data.records import check_score
from eval.intervals import bootstrap_intervals
from eval.metrics import cohen_kappa, confusion_matrix, majority_class, majority_score, rate

METRICS = ("accuracy", "balanced_accuracy", "kappa", "recall_0", "recall_half", "recall_1", "confirms_unreasonable",
           "refutes_sound", "format_failure_rate")
RECALL_NAMES = {0.0: "recall_0", 0.5: "recall_half", 1.0: "recall_1"}


@dataclass(frozen=True)
class RatedCritique:
    """One critique: its reference rating and the meta-verifier's sampled ratings (None = format failure)."""

    reference: float
    ratings: tuple[float | None, ...]

    def __post_init__(self) -> None:
        check_score(self.reference, "reference rating", allow_none=False)
        for rating in self.ratings:
            check_score(rating, "meta rating")

    @property
    def verdict(self) -> float | None:
        return majority_score(self.ratings)


def metric_values(critiques: Sequence[RatedCritique]) -> dict[str, float | None]:
    """Every metric of the module docstring over ``critiques``."""
    by_reference: dict[float, list[RatedCritique]] = {rating: [] for rating in RECALL_NAMES}
    for critique in critiques:
        by_reference[critique.reference].append(critique)
    recalls = {rating: rate(sum(c.verdict == rating for c in group), len(group)) for rating, group in by_reference.items()}
    present = [value for value in recalls.values() if value is not None]
    ratings = [rating for critique in critiques for rating in critique.ratings]
    return {
        "accuracy": rate(sum(critique.verdict == critique.reference for critique in critiques), len(critiques)),
        "balanced_accuracy": sum(present) / len(present) if present else None,
        "kappa": cohen_kappa(confusion_matrix([c.reference for c in critiques], [c.verdict for c in critiques])),
        **{RECALL_NAMES[rating]: value for rating, value in recalls.items()},
        "confirms_unreasonable": rate(sum(c.verdict == 1.0 for c in by_reference[0.0]), len(by_reference[0.0])),
        "refutes_sound": rate(sum(c.verdict == 0.0 for c in by_reference[1.0]), len(by_reference[1.0])),
        "format_failure_rate": rate(ratings.count(None), len(ratings)),
    }


def critiques_from(records: Sequence[Mapping[str, Any]]) -> list[RatedCritique]:
    """The judged records (those without ``error``) as rated critiques."""
    return [RatedCritique(float(record["reference"]), tuple(record["ratings"])) for record in records
            if not record.get("error")]


def meta_metrics(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """What metrics.json holds besides the settings: counts, each metric with its interval, the confusion
    matrix (rows reference, columns verdict, order 0, 0.5, 1), the baseline and the tokens."""
    critiques = critiques_from(records)
    values = metric_values(critiques)
    intervals = bootstrap_intervals(critiques, metric_values)
    judged = [record for record in records if not record.get("error")]
    completion = sum(record.get("completion_tokens") or 0 for record in judged)
    ratings = sum(len(record["ratings"]) for record in judged)
    return {
        "counts": {"records": len(records), "judged": len(critiques), "prompt_too_long": len(records) - len(judged),
                   "without_verdict": sum(critique.verdict is None for critique in critiques),
                   "by_reference": {f"{rating:g}": sum(c.reference == rating for c in critiques) for rating in RECALL_NAMES}},
        "metrics": {name: {"value": values[name], "interval": intervals.get(name)} for name in METRICS},
        "confusion_matrix": confusion_matrix([c.reference for c in critiques], [c.verdict for c in critiques]),
        "majority_class": majority_class([critique.reference for critique in critiques], "rating"),
        "tokens": {"prompt": sum(record.get("prompt_tokens") or 0 for record in judged), "completion": completion,
                   "completion_per_rating": completion / ratings if ratings else None},
    }
