"""Verifier agreement from per-proof verification records: records in, metrics.json and report.html out.

A record is one line of ``items.jsonl`` as ``proofsmith eval verifier`` writes it (the
``label`` pipeline's record): ``id``, ``human_score``, ``analyses`` (each with ``score``,
None for a format failure; ``valid``; ``meta``, the meta ratings, each with ``score``) and,
for a proof whose prompt does not fit the model's context, ``error``. This module reads
records only; it runs no model. The rules, decided once here:

* A record with ``error`` has no analyses: it is counted in ``prompt_too_long`` and left
  out of every metric (it says nothing about the verifier's judgement, and an item without
  samples would empty the curve over n). A record without a human score is counted in
  ``without_human_score`` and left out.
* Raw metrics (``metrics_by_n``): :func:`eval.metrics.agreement_by_sample_count` over the
  analyses' scores, in the order they were sampled; the None and tie rules are
  ``eval.metrics``'.
* Meta-filtered metrics (``meta_filtered``, only when meta-verification ran): at each n,
  take the item's first n analyses and remove those whose critique the meta-verifier
  *refuted* (``critique`` is ``refuted``: a majority of its ratings say its defects are not
  real; ``training.auto_labeling.rule``). The rest is scored exactly like the raw metrics. So:

  - a removed analysis is absent, not a format failure (format failures are the
    unparsable verifier analyses that remain);
  - an analysis giving 1 is never meta-verified (``critique`` None) and always stays;
  - a flagged analysis that was neither confirmed nor refuted (split or 0.5 ratings, none
    parsed, or a meta prompt that did not fit: ``critique`` ``unknown``) stays, and is
    counted as ``unjudged``;
  - records written before critique statuses existed are read by their ``valid`` flag:
    removed when not valid with a parsed rating, unjudged when no rating parsed;
  - an item whose n analyses were all removed has no verdict (``items_without_verdict``;
    wrong for accuracy), as with all-None samples.

  Filtering at each n separately keeps the curve meaning "n verifications, then the
  meta-verifier's veto", and ``samples_per_item`` of a filtered report is therefore None
  when items lost different numbers of analyses.
* Point grades and a reference verifier's score are not in the records (they are the
  ``label`` pipeline's): they come from the data, joined by id (:func:`grade_facts`), into
  each item, for ``eval.point_metrics`` and ``eval.reference_verifier``. Token costs come
  from the records (``eval.judge_cost``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from data.atomic import write_text_atomic
from data.jsonl import read_jsonl
from eval.judge_cost import JudgeCost, judge_cost
from eval.metrics import AgreementReport, VerifiedItem, agreement, agreement_by_sample_count, sample_counts
from eval.reference_verifier import NO_REFERENCE, ReferenceComparison, reference_comparison
from eval.report import write_verifier_report
from eval.truth import TruthReport

if TYPE_CHECKING:
    from eval.human_grades import HumanGrade

METRICS_NAME = "metrics.json"
META_FILTER_RULE = (
    "at each n, the first n analyses of an item minus those the meta-verifier refuted "
    "(critique == refuted: most ratings say the defects are not real); removed analyses are not format failures"
)


@dataclass(frozen=True)
class GradeFacts:
    """What the data says of one proof beyond its 0/0.5/1 score."""

    human_points: float | None = None
    max_points: float | None = None
    reference_score: float | None = None
    """Another verifier's mean score in [0, 1] (DeepSeekMath-V2's ``average_automatic_rating``)."""

    def __post_init__(self) -> None:
        if (self.human_points is None) != (self.max_points is None):
            raise ValueError("human_points and max_points go together")


NO_FACTS = GradeFacts()


def grade_facts(grade: HumanGrade) -> GradeFacts:
    """Points (GradingBench: out of 7; DeepSeekMath-V2: out of the contest's maximum) and reference score of a grade."""
    points = maximum = None
    if grade.source == "imo-gradingbench":
        points, maximum = float(grade.raw_grade), 7.0
    elif grade.source == "deepseek-math-v2":
        points, maximum = (float(part) for part in grade.raw_grade.split("/"))
    rating = grade.source_fields.get("average_automatic_rating")
    return GradeFacts(points, maximum, None if rating is None else float(rating))


@dataclass(frozen=True)
class FilteredReport:
    """Meta-filtered metrics at one n, with how many analyses the filter removed or could not judge."""

    report: AgreementReport
    removed: int
    """Analyses among the first n whose critique the meta-verifier refuted, left out."""
    unjudged: int
    """Flagged analyses kept because no meta rating parsed (or the meta prompt did not fit)."""

    def to_dict(self) -> dict[str, Any]:
        return {**self.report.to_dict(), "removed_analyses": self.removed, "unjudged_analyses": self.unjudged}


@dataclass(frozen=True)
class VerifierEvaluation:
    """Everything computed from one run's records."""

    items: tuple[VerifiedItem, ...]
    """The evaluated proofs with their raw sample scores."""
    metrics_by_n: dict[int, AgreementReport]
    meta_filtered: dict[int, FilteredReport] | None
    """None when meta-verification did not run (m = 0)."""
    counts: dict[str, int]
    """``records``, ``evaluated``, ``prompt_too_long``, ``without_human_score``."""
    reference: ReferenceComparison | None = None
    """The data's reference verifier against the humans, beside ours; None when the data has none."""
    cost: JudgeCost | None = None

    @property
    def n(self) -> int | None:
        """The largest n with metrics (the headline)."""
        return max(self.metrics_by_n, default=None)


def read_records(path: Path, ids: Sequence[str]) -> list[dict[str, Any]]:
    """The records of ``ids`` in ``path``, in the order of ``ids`` (first record per id; missing ids skipped).

    A cut-off last line is skipped and any other bad line is an error naming it (``data.jsonl``).
    """
    wanted = set(ids)
    found: dict[str, dict[str, Any]] = {}
    for record in read_jsonl(path):
        if record.get("id") in wanted and record["id"] not in found:
            found[record["id"]] = record
    return [found[item_id] for item_id in ids if item_id in found]


def judged_invalid(analysis: Mapping[str, Any]) -> bool:
    """The meta-verifier refuted this critique (records before critique statuses: not confirmed, with a parsed rating)."""
    if "critique" in analysis:
        return analysis["critique"] == "refuted"
    return analysis.get("valid") is False and any(rating.get("score") is not None for rating in analysis.get("meta") or [])


def unjudged(analysis: Mapping[str, Any]) -> bool:
    """A critique that reports issues but that the meta-verifier neither confirmed nor refuted (kept)."""
    if "critique" in analysis:
        return analysis["critique"] == "unknown"
    flagged = analysis.get("score") is not None and analysis["score"] < 1
    return flagged and not any(rating.get("score") is not None for rating in analysis.get("meta") or [])


def usable(records: Iterable[Mapping[str, Any]]) -> tuple[list[Mapping[str, Any]], dict[str, int]]:
    """The records that enter the metrics, and the counts of those left out."""
    records = list(records)
    kept = [record for record in records if "error" not in record and record.get("human_score") is not None]
    counts = {
        "records": len(records),
        "evaluated": len(kept),
        "prompt_too_long": sum(1 for record in records if "error" in record),
        "without_human_score": sum(1 for record in records if "error" not in record and record.get("human_score") is None),
    }
    return kept, counts


def raw_item(record: Mapping[str, Any], facts: GradeFacts = NO_FACTS, scores: Sequence[float | None] | None = None) -> VerifiedItem:
    """The record's item: its analyses' scores (or ``scores``), with the data's ``facts``."""
    samples = tuple(analysis["score"] for analysis in record["analyses"]) if scores is None else tuple(scores)
    return VerifiedItem(record["human_score"], samples, record["id"], facts.human_points, facts.max_points,
                        facts.reference_score)


def filtered_item(record: Mapping[str, Any], count: int, facts: GradeFacts = NO_FACTS) -> tuple[VerifiedItem, int, int]:
    """The item's first ``count`` analyses without those the meta-verifier refuted; (item, removed, unjudged)."""
    first = record["analyses"][:count]
    kept = [analysis["score"] for analysis in first if not judged_invalid(analysis)]
    return (raw_item(record, facts, kept), len(first) - len(kept), sum(1 for analysis in first if unjudged(analysis)))


def meta_filtered_by_sample_count(records: Sequence[Mapping[str, Any]],
                                  facts: Mapping[str, GradeFacts] | None = None) -> dict[int, FilteredReport]:
    """Meta-filtered metrics at n = 1, 2, 4, ... up to the smallest analysis count among ``records``."""
    smallest = min((len(record["analyses"]) for record in records), default=0)
    facts = facts or {}
    reports = {}
    for count in sample_counts(smallest):
        filtered = [filtered_item(record, count, facts.get(record["id"], NO_FACTS)) for record in records]
        reports[count] = FilteredReport(agreement([item for item, _, _ in filtered]),
                                        sum(removed for _, removed, _ in filtered), sum(left for _, _, left in filtered))
    return reports


def evaluate(records: Iterable[Mapping[str, Any]], meta: bool,
             facts: Mapping[str, GradeFacts] | None = None) -> VerifierEvaluation:
    """Raw and (with ``meta``) meta-filtered metrics of a run's records; ``facts`` by id from :func:`grade_facts`."""
    kept, counts = usable(records)
    facts = facts or {}
    items = tuple(raw_item(record, facts.get(record["id"], NO_FACTS)) for record in kept)
    by_n = agreement_by_sample_count(items)
    return VerifierEvaluation(items, by_n, meta_filtered_by_sample_count(kept, facts) if meta else None, counts,
                              reference_comparison(items, max(by_n, default=None)), judge_cost(kept))


def metrics_document(evaluation: VerifierEvaluation, settings: Mapping[str, Any], counts: Mapping[str, int],
                     truth: Mapping[int, TruthReport] | None = None) -> dict[str, Any]:
    """What ``metrics.json`` holds: settings, counts, metrics by n, the meta-filtered variant when it ran, and the
    metrics against the world's checker (``eval.truth``) when the data has its truth."""
    document: dict[str, Any] = {
        "settings": dict(settings),
        "counts": {**counts, **evaluation.counts},
        "metrics_by_n": {str(n): report.to_dict() for n, report in sorted(evaluation.metrics_by_n.items())},
        "reference_verifier": evaluation.reference.to_dict() if evaluation.reference else {"reason": NO_REFERENCE},
        "cost": evaluation.cost.to_dict() if evaluation.cost else None,
    }
    if truth:
        document["truth_by_n"] = {str(n): report.to_dict() for n, report in sorted(truth.items())}
    if evaluation.meta_filtered is not None:
        document["meta_filtered"] = {
            "rule": META_FILTER_RULE,
            "by_n": {str(n): report.to_dict() for n, report in sorted(evaluation.meta_filtered.items())},
        }
    return document


def write_outputs(out_dir: Path, evaluation: VerifierEvaluation, settings: Mapping[str, Any],
                  counts: Mapping[str, int], truth: Mapping[int, TruthReport] | None = None) -> dict[str, Any]:
    """Write ``metrics.json`` and ``report.html`` (each atomically) into ``out_dir``; returns the metrics document.

    ``settings`` and count keys are snake_case (``data_path``); the page shows them with spaces.
    """
    document = metrics_document(evaluation, settings, counts, truth)
    write_text_atomic(out_dir / METRICS_NAME, json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    filtered = evaluation.meta_filtered
    write_verifier_report(
        out_dir, {key.replace("_", " "): value for key, value in settings.items()}, evaluation.metrics_by_n, evaluation.items,
        meta_filtered={n: report.report for n, report in filtered.items()} if filtered is not None else None,
        meta_removed={n: report.removed for n, report in filtered.items()} if filtered is not None else None,
        counts={key.replace("_", " "): value for key, value in document["counts"].items()},
        truth=truth, reference=evaluation.reference, cost=evaluation.cost,
    )
    return document


HEADLINE_KEYS = ("accuracy_majority", "accuracy_rounded_mean", "balanced_accuracy", "mean_absolute_error", "cohen_kappa",
                 "quadratic_kappa", "auroc", "format_failure_rate", "items_without_verdict")
BINARY_KEYS = ("accuracy_per_sample", "accuracy_majority", "balanced_accuracy")
POINT_KEYS = ("four_class_accuracy", "nmae", "mae_points", "reason")


def field_metrics(report: Mapping[str, Any]) -> dict[str, Any]:
    """The field's figures of one metrics_by_n entry: binary judge and point-scale metrics (``binary_``/``points_``)."""
    return {**{f"binary_{key}": report["binary"][key] for key in BINARY_KEYS},
            **{f"points_{key}": report["points"][key] for key in POINT_KEYS}}


def reference_headline(reference: Mapping[str, Any]) -> dict[str, Any]:
    """The reference verifier beside ours, for the summary: its metrics, ours on the same proofs, the gap."""
    if "reference" not in reference:
        return {"reason": reference.get("reason")}
    pick = ("accuracy_majority", "balanced_accuracy", "mean_absolute_error")
    gaps = reference["ours_vs_reference_mae"]
    return {"items": reference["items"], "n": reference["n"],
            **{side: {**{key: reference[side][key] for key in pick}, **field_metrics(reference[side])}
               for side in ("reference", "ours")},
            "mae_reference_points": reference["mae_reference_points"],
            "ours_vs_reference_mae": gaps[max(gaps, key=int)] if gaps else None}


def headline(document: Mapping[str, Any]) -> dict[str, Any]:
    """The summary a user reads first: counts and the main metrics at the largest n (raw and meta-filtered)."""
    by_n = document["metrics_by_n"]
    summary: dict[str, Any] = {"counts": document["counts"], "n": None}
    if by_n:
        n = max(by_n, key=int)
        report = by_n[n]
        summary.update(n=int(n), **{key: report[key] for key in HEADLINE_KEYS},
                       all_pass_false_positive_rate=report["all_pass"]["false_positive_rate"], **field_metrics(report),
                       binary_accuracy_one_sample=by_n["1"]["binary"]["accuracy_per_sample"] if "1" in by_n else None,
                       tokens_per_judgement=(document.get("cost") or {}).get("tokens_per_judgement"),
                       reference_verifier=reference_headline(document.get("reference_verifier") or {}))
        truth = document.get("truth_by_n", {})
        if truth:
            summary["truth"] = truth[max(truth, key=int)]
        filtered = document.get("meta_filtered", {}).get("by_n", {}).get(n)
        if filtered is not None:
            summary["meta_filtered"] = {
                **{key: filtered[key] for key in HEADLINE_KEYS},
                "all_pass_false_positive_rate": filtered["all_pass"]["false_positive_rate"],
                "removed_analyses": filtered["removed_analyses"], "unjudged_analyses": filtered["unjudged_analyses"],
            }
    return summary
