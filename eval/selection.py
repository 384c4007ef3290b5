"""Selection between two proofs by mean verifier score: the pick rule, and records in, metrics out.

The verifier scores each proof of a pair n times, independently (one verification prompt
per proof, so the order of the pair cannot sway a score). The pick (:func:`pick`):

- each proof's score is the mean of its samples that parsed (format failures are left out,
  never counted as 0);
- the higher mean is picked; a proof with no parsed score loses to one with a score;
- equal means are a **tie** and neither is picked; no parsed score on either side is a
  **no pick**.

A record is one line of ``items.jsonl`` as ``eval selection`` writes it: ``id``,
``correct_index`` (1 or 2), ``scores_1`` / ``scores_2`` (the n sampled scores, None for a
format failure), ``pick`` (1, 2 or None) and ``outcome`` (correct, wrong, tie, no_pick);
or, for a pair whose prompt does not fit the model, ``error`` instead (counted, left out).

Metrics over the judged pairs, each with a 95 % bootstrap interval over pairs:

- ``selection_accuracy``: the pick is the correct proof; a tie or no pick counts as a miss.
- ``accuracy_ties_as_half``: the same with a tie or no pick counting 1/2, what breaking them
  with a fair coin would score on average.
- ``decided_accuracy``: accuracy among the pairs with a pick.
- ``tie_rate``, ``no_pick_rate``; ``format_failure_rate`` over all sampled scores.

``always_first`` and ``always_second`` are the baselines of a selector that ignores the proofs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from data.records import check_score, mean_score
from eval.intervals import bootstrap_intervals
from eval.metrics import rate

OUTCOMES = ("correct", "wrong", "tie", "no_pick")
METRICS = ("selection_accuracy", "accuracy_ties_as_half", "decided_accuracy", "tie_rate", "no_pick_rate",
           "format_failure_rate")


def pick(scores_1: Sequence[float | None], scores_2: Sequence[float | None]) -> tuple[int | None, str | None]:
    """(the picked proof 1 or 2, None) or (None, "tie" / "no_pick") under the rule of the module docstring."""
    mean_1, mean_2 = mean_score(scores_1), mean_score(scores_2)
    if mean_1 is None and mean_2 is None:
        return None, "no_pick"
    if mean_2 is None or (mean_1 is not None and mean_1 > mean_2):
        return 1, None
    if mean_1 is None or mean_2 > mean_1:
        return 2, None
    return None, "tie"


def outcome(correct_index: int, scores_1: Sequence[float | None], scores_2: Sequence[float | None]) -> tuple[int | None, str]:
    """(pick, outcome): one of OUTCOMES."""
    chosen, undecided = pick(scores_1, scores_2)
    if chosen is None:
        return None, undecided or "no_pick"
    return chosen, "correct" if chosen == correct_index else "wrong"


@dataclass(frozen=True)
class JudgedPair:
    """One pair's reference and its sampled scores."""

    correct_index: int
    scores_1: tuple[float | None, ...]
    scores_2: tuple[float | None, ...]

    def __post_init__(self) -> None:
        if self.correct_index not in (1, 2):
            raise ValueError(f"correct_index must be 1 or 2, got {self.correct_index!r}")
        for score in (*self.scores_1, *self.scores_2):
            check_score(score, "sampled score")

    @property
    def outcome(self) -> str:
        return outcome(self.correct_index, self.scores_1, self.scores_2)[1]


def metric_values(pairs: Sequence[JudgedPair]) -> dict[str, float | None]:
    """Every metric of the module docstring over ``pairs``."""
    counts = {name: sum(pair.outcome == name for pair in pairs) for name in OUTCOMES}
    undecided = counts["tie"] + counts["no_pick"]
    scores = [score for pair in pairs for score in (*pair.scores_1, *pair.scores_2)]
    return {
        "selection_accuracy": rate(counts["correct"], len(pairs)),
        "accuracy_ties_as_half": (counts["correct"] + undecided / 2) / len(pairs) if pairs else None,
        "decided_accuracy": rate(counts["correct"], counts["correct"] + counts["wrong"]),
        "tie_rate": rate(counts["tie"], len(pairs)),
        "no_pick_rate": rate(counts["no_pick"], len(pairs)),
        "format_failure_rate": rate(scores.count(None), len(scores)),
    }


def judged_pairs(records: Sequence[Mapping[str, Any]]) -> list[JudgedPair]:
    """The judged records (those without ``error``)."""
    return [JudgedPair(int(record["correct_index"]), tuple(record["scores_1"]), tuple(record["scores_2"]))
            for record in records if not record.get("error")]


def selection_metrics(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """What metrics.json holds besides the settings: counts, each metric with its interval, the baselines, the tokens."""
    pairs = judged_pairs(records)
    values = metric_values(pairs)
    intervals = bootstrap_intervals(pairs, metric_values)
    judged = [record for record in records if not record.get("error")]
    first = sum(pair.correct_index == 1 for pair in pairs)
    picks = [outcome(pair.correct_index, pair.scores_1, pair.scores_2)[0] for pair in pairs]
    return {
        "counts": {"records": len(records), "judged": len(pairs), "prompt_too_long": len(records) - len(judged),
                   **{name: sum(pair.outcome == name for pair in pairs) for name in OUTCOMES},
                   "correct_index_1": first, "correct_index_2": len(pairs) - first,
                   "picked_1": picks.count(1), "picked_2": picks.count(2)},
        "metrics": {name: {"value": values[name], "interval": intervals.get(name)} for name in METRICS},
        "baselines": {"always_first": rate(first, len(pairs)), "always_second": rate(len(pairs) - first, len(pairs))},
        "tokens": {"prompt": sum(record.get("prompt_tokens") or 0 for record in judged),
                   "completion": sum(record.get("completion_tokens") or 0 for record in judged)},
    }
