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
- ``kappa``: Cohen's kappa of the majority verdict against the true score (items without a
  verdict left out, as in ``eval.metrics``).

Every metric comes with a 95 % interval: the 2.5th and 97.5th percentiles over
``BOOTSTRAP_RESAMPLES`` resamples of the proofs (seeded, so the same records give the same
interval). Proofs are resampled, not analyses, because the n analyses of one proof are not
independent. ``majority_class`` is the baseline a verifier must beat: always answering the
most common true score (accuracy = that class's share, balanced accuracy 1/classes, kappa 0).
``random_step`` is the baseline for localisation: an analysis that blames one step of the
proof drawn uniformly (a proof of k steps: localisation 1/k, localised by any of n
1 − (1 − 1/k)^n, averaged over the flawed proofs whose step count is known). World proofs
are short (2–4 steps), so this bar is high.

An item without a truth (data that is not from the world) is left out and counted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from data.world.blame import blamed_step
from eval.intervals import BOOTSTRAP_RESAMPLES, bootstrap_intervals
from eval.metrics import cohen_kappa, confusion_matrix, majority_class, majority_score, rate, sample_counts

SCALE = (0.0, 0.5, 1.0)
METRICS = ("accuracy", "balanced_accuracy", "kappa", "localisation", "localised_by_any", "invented_defect_rate",
           "format_failure_rate")


@dataclass(frozen=True)
class Truth:
    score: float
    first_bad_step: int | None
    steps: int | None = None
    """How many steps the proof has (None when unknown): for the random-step baseline."""

    @property
    def flawed(self) -> bool:
        return self.score < 1.0 and self.first_bad_step is not None


@dataclass(frozen=True)
class ProofFacts:
    """What the first n analyses of one proof did, against its truth: the counts every metric sums."""

    truth: Truth
    verdict: float | None
    analyses: int
    failures: int
    parsed: int
    invented: int
    localising: int

    @property
    def flawed(self) -> bool:
        return self.truth.flawed


@dataclass(frozen=True)
class TruthReport:
    n: int
    items: int
    flawed: int
    correct: int
    accuracy: float | None
    balanced_accuracy: float | None
    kappa: float | None
    localisation: float | None
    localised_by_any: float | None
    invented_defect_rate: float | None
    format_failure_rate: float | None
    intervals: dict[str, tuple[float, float] | None] = field(default_factory=dict)
    """Metric name -> its 95 % bootstrap interval (None where the metric is undefined)."""
    majority_class: dict[str, Any] = field(default_factory=dict)
    """The always-the-commonest-score baseline: its score, accuracy, balanced_accuracy and kappa."""
    random_step: dict[str, float] = field(default_factory=dict)
    """The blame-a-uniformly-random-step baseline: its localisation and localised_by_any at this n."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def invents(analysis: Mapping[str, Any], truth: Truth) -> bool:
    blamed = blamed_step(str(analysis.get("analysis") or ""))
    if truth.first_bad_step is None and truth.score == 1.0:
        return blamed is not None or (analysis.get("score") is not None and analysis["score"] < 1.0)
    return blamed is not None and truth.first_bad_step is not None and blamed < truth.first_bad_step


def proof_facts(record: Mapping[str, Any], truth: Truth, n: int) -> ProofFacts:
    analyses = list(record.get("analyses") or [])[:n]
    scores = [analysis.get("score") for analysis in analyses]
    parsed = [analysis for analysis in analyses if analysis.get("score") is not None]
    localising = 0
    if truth.flawed:
        localising = sum(blamed_step(str(analysis.get("analysis") or "")) == truth.first_bad_step for analysis in analyses)
    return ProofFacts(truth, majority_score(scores), len(analyses), sum(score is None for score in scores), len(parsed),
                      sum(invents(analysis, truth) for analysis in parsed), localising)


def metric_values(facts: Sequence[ProofFacts]) -> dict[str, float | None]:
    """Every metric of the module docstring over ``facts``."""
    recall: dict[float, list[int]] = {score: [0, 0] for score in SCALE}
    for fact in facts:
        recall[fact.truth.score][0] += fact.verdict == fact.truth.score
        recall[fact.truth.score][1] += 1
    classes = [hits / total for hits, total in recall.values() if total]
    flawed = [fact for fact in facts if fact.flawed]
    return {
        "accuracy": rate(sum(fact.verdict == fact.truth.score for fact in facts), len(facts)),
        "balanced_accuracy": sum(classes) / len(classes) if classes else None,
        "kappa": cohen_kappa(confusion_matrix([fact.truth.score for fact in facts], [fact.verdict for fact in facts])),
        "localisation": rate(sum(fact.localising for fact in flawed), sum(fact.analyses for fact in flawed)),
        "localised_by_any": rate(sum(fact.localising > 0 for fact in flawed), len(flawed)),
        "invented_defect_rate": rate(sum(fact.invented for fact in facts), sum(fact.parsed for fact in facts)),
        "format_failure_rate": rate(sum(fact.failures for fact in facts), sum(fact.analyses for fact in facts)),
    }


def random_step_baseline(truths: Sequence[Truth], n: int) -> dict[str, float]:
    """Localisation of an analysis that blames a uniformly drawn step, over the flawed proofs with a known step count."""
    counts = [truth.steps for truth in truths if truth.flawed and truth.steps]
    if not counts:
        return {}
    return {"localisation": sum(1 / k for k in counts) / len(counts),
            "localised_by_any": sum(1 - (1 - 1 / k) ** n for k in counts) / len(counts)}


def truth_report(records: Sequence[Mapping[str, Any]], truths: Mapping[str, Truth], n: int,
                 resamples: int = BOOTSTRAP_RESAMPLES) -> TruthReport:
    """The metrics of the module docstring over ``records`` that have a truth, using their first ``n`` analyses."""
    facts = [proof_facts(record, truths[record["id"]], n) for record in records
             if record["id"] in truths and not record.get("error")]
    return TruthReport(
        n=n, items=len(facts), flawed=sum(fact.flawed for fact in facts),
        correct=sum(fact.truth.score == 1.0 for fact in facts), **metric_values(facts),
        intervals=bootstrap_intervals(facts, metric_values, resamples),
        majority_class=majority_class([fact.truth.score for fact in facts], "score"),
        random_step=random_step_baseline([fact.truth for fact in facts], n),
    )


def truth_by_sample_count(records: Sequence[Mapping[str, Any]], truths: Mapping[str, Truth]) -> dict[int, TruthReport]:
    """:func:`truth_report` at n = 1, 2, 4, ... up to the fewest analyses any judged item has."""
    judged = [record for record in records if record["id"] in truths and not record.get("error")]
    if not judged:
        return {}
    fewest = min(len(record.get("analyses") or []) for record in judged)
    return {n: truth_report(judged, truths, n) for n in sample_counts(fewest)} if fewest else {}


def truths_from(fields: Mapping[str, Mapping[str, Any]], scores: Mapping[str, float],
                proofs: Mapping[str, str] | None = None) -> dict[str, Truth]:
    """Truths of the items whose source row carries ``first_bad_step`` (world data), by id; ``proofs`` (by id) give
    each its step count."""
    if not any("first_bad_step" in row for row in fields.values()):
        return {}
    from data.world.steps import step_count  # here, not at the top: data.world loads sympy, which only world data needs

    found = {}
    for item_id, row in fields.items():
        if "first_bad_step" in row:
            step = row["first_bad_step"]
            steps = step_count(proofs[item_id]) if proofs and item_id in proofs else None
            found[item_id] = Truth(scores[item_id], int(step) if step is not None else None, steps or None)
    return found
