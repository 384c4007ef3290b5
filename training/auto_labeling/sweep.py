"""Labels at smaller settings, re-decided from one labeling run at the largest ones, and
how far labels can be trusted against reference scores.

A proof's n analyses are samples of one prompt, and a critique's m meta ratings samples of
another, so the first n' analyses of a record, each with its first m' ratings, are a draw
of a run at (n', m'): one expensive run at (n, m) answers every smaller setting and every
k, without sampling again. ``decide_at`` re-applies the rule (``training.auto_labeling.rule``)
to that subset; m' = 0 takes every critique at its word, as ``label --m 0`` does.

``trust_metrics`` compares labels with reference scores (the world's truth, or human
grades) over proofs that have one:

- ``coverage``: the share labelled (not left for a human);
- ``agreement``: among those labelled, the share whose label equals the reference;
- ``precision_of_1``: among those labelled 1, the share whose reference is 1: how much of the
  "correct" pile fed to verifier training is really correct;
- ``flawed_labelled_1``: among proofs whose reference is below 1, the share labelled 1: the
  flawed proofs the labels would teach the verifier to pass.

Each comes with a 95 % bootstrap interval over proofs (``eval.intervals``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from eval.intervals import bootstrap_intervals
from training.auto_labeling.rule import TOO_LONG_RULE, CritiqueStatus, LabelDecision, critique_status, decide

TRUST_METRICS = ("coverage", "agreement", "precision_of_1", "flawed_labelled_1")


def largest_settings(records: Sequence[Mapping[str, Any]]) -> tuple[int, int]:
    """The (n, m) every record can answer: its fewest analyses, and the fewest ratings of any meta-verified critique."""
    verified = [record for record in records if record.get("rule") != TOO_LONG_RULE]
    if not verified:
        raise ValueError("no record was verified (every prompt was too long)")
    n = min(len(record["analyses"]) for record in verified)
    rated = [len(analysis["meta"]) for record in verified for analysis in record["analyses"] if analysis["meta"]]
    return n, min(rated) if rated else 0


def statuses_at(record: Mapping[str, Any], n: int, m: int, confirm_rating: float,
                majority: float) -> tuple[list[float | None], list[CritiqueStatus | None]]:
    """Scores of the record's first n analyses and their critique statuses from each one's first m ratings."""
    analyses = record["analyses"]
    if n > len(analyses):
        raise ValueError(f"record {record['id']!r} has {len(analyses)} analyses, fewer than n = {n}")
    scores: list[float | None] = []
    statuses: list[CritiqueStatus | None] = []
    for analysis in analyses[:n]:
        score = analysis["score"]
        scores.append(score)
        if score is None or score >= 1.0:
            statuses.append(None)
        elif m == 0:
            statuses.append("unchecked")
        elif "meta_error" in analysis:
            statuses.append("unknown")  # its meta prompt did not fit: as in the labeling run
        else:
            ratings = analysis["meta"]
            if len(ratings) < m:
                raise ValueError(f"record {record['id']!r} has a critique with {len(ratings)} meta ratings, fewer than m = {m}")
            statuses.append(critique_status([rating["score"] for rating in ratings[:m]], confirm_rating, majority))
    return scores, statuses


def decide_at(record: Mapping[str, Any], n: int, m: int, k: int, confirm_rating: float = 1.0,
              majority: float = 0.5) -> LabelDecision:
    """The label a run at (n, m, k) would have given, from a record labeled at settings at least as large."""
    if record.get("rule") == TOO_LONG_RULE:
        return LabelDecision(None, TOO_LONG_RULE, None, 0)
    if not 1 <= k <= n:
        raise ValueError(f"k must be in [1, n]; got k = {k}, n = {n}")
    scores, statuses = statuses_at(record, n, m, confirm_rating, majority)
    return decide(scores, statuses, k)


def trust_metrics(pairs: Sequence[tuple[float | None, float]]) -> dict[str, float | None]:
    """Coverage, agreement, precision of label 1 and flawed-labelled-1 of (label, reference) pairs."""
    labelled = [(label, reference) for label, reference in pairs if label is not None]
    ones = [reference for label, reference in labelled if label == 1.0]
    flawed = [label for label, reference in pairs if reference < 1.0]

    def share(hits: int, total: int) -> float | None:
        return hits / total if total else None

    return {
        "coverage": share(len(labelled), len(pairs)),
        "agreement": share(sum(label == reference for label, reference in labelled), len(labelled)),
        "precision_of_1": share(sum(reference == 1.0 for reference in ones), len(ones)),
        "flawed_labelled_1": share(sum(label == 1.0 for label in flawed), len(flawed)),
    }


def trust_with_intervals(pairs: Sequence[tuple[float | None, float]]) -> dict[str, Any]:
    """``trust_metrics`` with counts and a 95 % bootstrap interval per metric."""
    return {
        "proofs": len(pairs),
        "labelled": sum(label is not None for label, _ in pairs),
        "labelled_1": sum(label == 1.0 for label, _ in pairs),
        "metrics": trust_metrics(pairs),
        "intervals": bootstrap_intervals(pairs, trust_metrics),
    }
