"""Verifier metrics against the ground-truth world's checker: does the verifier find the real flaw?

Input: ``items.jsonl`` records of ``eval verifier`` (each analysis with its ``score`` and
its text) and, per proof, the checker's truth: the score and the first bad step
(``data.world``; the world's JSONL carries ``first_bad_step``). At each n, using every
item's first n analyses:

- ``balanced_accuracy``: mean over the true score classes present of the recall of the
  majority verdict (``eval.metrics.majority_score``; no verdict counts as wrong). Beside
  plain accuracy it does not reward always answering the majority class (0 here).
- ``localisation``: over flawed proofs (true score < 1), the share of their analyses that
  blame the first bad step (``data.world.blame.blamed_step``); an analysis that blames no
  step, or fails the format, does not localise.
- ``localised_by_any``: the share of flawed proofs with at least one localising analysis
  among the n: what scaling verification buys.
- ``invented_defect_rate``: over every analysis that parsed, the share that claims a
  defect where there is none: it blames a step of a correct proof or a step before the
  first bad one, or gives a correct proof a score below 1.
- ``format_failure_rate``: the share of analyses without a parsable score.

An item without a truth (data that is not from the world) is left out and counted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from data.world.blame import blamed_step
from eval.metrics import majority_score, sample_counts

SCALE = (0.0, 0.5, 1.0)


@dataclass(frozen=True)
class Truth:
    score: float
    first_bad_step: int | None


@dataclass(frozen=True)
class TruthReport:
    n: int
    items: int
    flawed: int
    correct: int
    accuracy: float | None
    balanced_accuracy: float | None
    localisation: float | None
    localised_by_any: float | None
    invented_defect_rate: float | None
    format_failure_rate: float | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def rate(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


def invents(analysis: Mapping[str, Any], truth: Truth) -> bool:
    blamed = blamed_step(str(analysis.get("analysis") or ""))
    if truth.first_bad_step is None and truth.score == 1.0:
        return blamed is not None or (analysis.get("score") is not None and analysis["score"] < 1.0)
    return blamed is not None and truth.first_bad_step is not None and blamed < truth.first_bad_step


def truth_report(records: Sequence[Mapping[str, Any]], truths: Mapping[str, Truth], n: int) -> TruthReport:
    """The metrics of the module docstring over ``records`` that have a truth, using their first ``n`` analyses."""
    judged = [(record, truths[record["id"]]) for record in records if record["id"] in truths and not record.get("error")]
    correct_verdicts = 0
    recall: dict[float, list[int]] = {score: [0, 0] for score in SCALE}
    flawed = flawed_analyses = localising = any_localising = 0
    parsed = invented = failures = analyses_seen = 0
    for record, truth in judged:
        analyses = list(record.get("analyses") or [])[:n]
        scores = [analysis.get("score") for analysis in analyses]
        verdict = majority_score(scores)
        hit = verdict == truth.score
        correct_verdicts += hit
        recall[truth.score][0] += hit
        recall[truth.score][1] += 1
        analyses_seen += len(analyses)
        failures += sum(score is None for score in scores)
        parsed_here = [analysis for analysis in analyses if analysis.get("score") is not None]
        parsed += len(parsed_here)
        invented += sum(invents(analysis, truth) for analysis in parsed_here)
        if truth.score < 1.0 and truth.first_bad_step is not None:
            flawed += 1
            flawed_analyses += len(analyses)
            found = [blamed_step(str(analysis.get("analysis") or "")) == truth.first_bad_step for analysis in analyses]
            localising += sum(found)
            any_localising += any(found)
    classes = [hits / total for hits, total in recall.values() if total]
    return TruthReport(
        n=n, items=len(judged), flawed=flawed, correct=sum(truth.score == 1.0 for _, truth in judged),
        accuracy=rate(correct_verdicts, len(judged)), balanced_accuracy=sum(classes) / len(classes) if classes else None,
        localisation=rate(localising, flawed_analyses), localised_by_any=rate(any_localising, flawed),
        invented_defect_rate=rate(invented, parsed), format_failure_rate=rate(failures, analyses_seen),
    )


def truth_by_sample_count(records: Sequence[Mapping[str, Any]], truths: Mapping[str, Truth]) -> dict[int, TruthReport]:
    """:func:`truth_report` at n = 1, 2, 4, ... up to the fewest analyses any judged item has."""
    judged = [record for record in records if record["id"] in truths and not record.get("error")]
    if not judged:
        return {}
    fewest = min(len(record.get("analyses") or []) for record in judged)
    return {n: truth_report(judged, truths, n) for n in sample_counts(fewest)} if fewest else {}


def truths_from(fields: Mapping[str, Mapping[str, Any]], scores: Mapping[str, float]) -> dict[str, Truth]:
    """Truths of the items whose source row carries ``first_bad_step`` (world data), by id."""
    found = {}
    for item_id, row in fields.items():
        if "first_bad_step" in row:
            step = row["first_bad_step"]
            found[item_id] = Truth(scores[item_id], int(step) if step is not None else None)
    return found
